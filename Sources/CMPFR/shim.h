#ifndef GLINT_CMPFR_SHIM_H
#define GLINT_CMPFR_SHIM_H
// GNU MPFR (arbitrary-precision binary floating point, correctly rounded) over GMP, for the deep
// zoom's reference orbit. stdio.h first so that mpfr.h declares its FILE-based functions too.
#include <stdio.h>
#include <gmp.h>
#include <mpfr.h>
#endif
