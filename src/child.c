/* child.c: what the R process that measures a training step (R/measure.R) asks of the system. */
#include "agmem.h"
#ifdef __linux__
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>
#endif

/* .Call entry the measuring child calls first, with its parent's process id (a single whole
   number): on Linux, asks the kernel to kill this process (SIGKILL) when its parent dies, so
   that a measurement whose R session is killed does not run on; and kills it at once if the
   parent has died already. Returns TRUE when the request was made, FALSE where it cannot be
   (not Linux, or prctl() refused). Refuses a malformed pid with an R error. */
SEXP agmem_die_with_parent(SEXP parent)
{
    double pid = agmem_arg_finite(parent, "parent");
#ifdef __linux__
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        return Rf_ScalarLogical(FALSE);
    if ((double) getppid() != pid)
        raise(SIGKILL);
    return Rf_ScalarLogical(TRUE);
#else
    (void) pid;
    return Rf_ScalarLogical(FALSE);
#endif
}
