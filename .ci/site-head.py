# Writes, to standard output, pkgdown's Bootstrap 5 head.html (its path is the first argument)
# made to work offline: the scripts and icons it takes from CDNs are loaded from the site's own
# lib/ (where .ci/site copies the same versions from npm; the integrity hashes stay, so the
# browser proves they are the same bytes); bootstrap-toc is the copy pkgdown ships with its
# Bootstrap 3 template, with .ci/site-toc.html (the second argument) adapting it to Bootstrap 5;
# MathJax, the old-IE shim and analytics are left out, and so are comments naming web addresses.
# Fails when a line it expects is missing, so that a new pkgdown does not go through unseen.
import re
import sys

head, toc = sys.argv[1], sys.argv[2]
lines = open(head, encoding="utf-8").read().split("\n")
local = "{{#site}}{{root}}{{/site}}lib/"
out, skipping, seen = [], None, set()
for line in lines:
    if skipping:
        if skipping in line:
            skipping = None
        continue
    if "{{#ganalytics}}" in line:
        skipping, _ = "{{/ganalytics}}", seen.add("analytics")
        continue
    if line.startswith("<!--[if lt IE"):
        skipping, _ = "<![endif]-->", seen.add("ie")
        continue
    if "mathjax" in line.lower():
        seen.add("mathjax")
        continue
    if "bootstrap-toc" in line and "<script" in line:
        out.append('<script src="' + local + 'bootstrap-toc.js"></script>')
        out.append(open(toc, encoding="utf-8").read().rstrip("\n"))
        seen.add("toc")
        continue
    if line.startswith("<!--") and re.search(r"https?://", line):
        continue
    fa = "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/5.12.1/css/"
    if fa in line:
        line = line.replace(fa, local + "fontawesome/css/")
        seen.add("fontawesome")
    line, n = re.subn(r"https://cdnjs\.cloudflare\.com/ajax/libs/[^/]+/[^/]+/", local, line)
    if n:
        seen.add("cdnjs")
    out.append(line)
missing = {"analytics", "ie", "mathjax", "toc", "fontawesome", "cdnjs"} - seen
if missing:
    sys.exit("site-head.py: pkgdown's head.html has changed; not found: " + ", ".join(sorted(missing)))
sys.stdout.write("\n".join(out))
