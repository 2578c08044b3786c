library(testthat)
library(agmem)

test_check("agmem")
