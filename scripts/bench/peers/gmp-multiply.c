/* What bounds the deep zoom's reference orbit: GMP's and MPFR's multiplication and squaring at the
   orbit's size, measured alone. LIMBS 64-bit limbs (default 521: 33,283 bits, a view at 1e10000);
   each figure is the best of 7 passes of 2000 operations on full-width operands, in µs.

   Build: gcc -O2 scripts/bench/peers/gmp-multiply.c -o gmp-multiply -lmpfr -lgmp
   Run:   ./gmp-multiply [LIMBS]        (taskset -c 1 ./gmp-multiply keeps it on one core) */
#include <gmp.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>

#include "peer-timing.h"

enum { PASSES = 7, REPS = 2000 };

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 521;
    if (n < 1 || n > 100000) { fprintf(stderr, "gmp-multiply: LIMBS must be 1 to 100000\n"); return 2; }
    mp_limb_t *a = malloc(sizeof *a * n), *b = malloc(sizeof *b * n), *r = malloc(sizeof *r * 2 * n);
    for (int i = 0; i < n; i++) { a[i] = (mp_limb_t)rand() * 7919u + i; b[i] = (mp_limb_t)rand() * 104729u + i; }
    mpfr_t x, y, z;
    mpfr_inits2((mpfr_prec_t)n * 64 - 64, x, y, z, (mpfr_ptr)0);
    mpfr_set_d(x, 0.3, MPFR_RNDN); mpfr_sqrt(x, x, MPFR_RNDN);   /* every bit of the mantissas set */
    mpfr_set_d(y, 0.7, MPFR_RNDN); mpfr_sqrt(y, y, MPFR_RNDN);
    double best[4] = {1e9, 1e9, 1e9, 1e9};
    for (int pass = 0; pass < PASSES; pass++) {
        double t[4];
        t[0] = now(); for (int i = 0; i < REPS; i++) mpn_mul_n(r, a, b, n);     t[0] = now() - t[0];
        t[1] = now(); for (int i = 0; i < REPS; i++) mpn_sqr(r, a, n);          t[1] = now() - t[1];
        t[2] = now(); for (int i = 0; i < REPS; i++) mpfr_mul(z, x, y, MPFR_RNDN); t[2] = now() - t[2];
        t[3] = now(); for (int i = 0; i < REPS; i++) mpfr_sqr(z, x, MPFR_RNDN);    t[3] = now() - t[3];
        for (int k = 0; k < 4; k++) if (t[k] < best[k]) best[k] = t[k];
    }
    printf("%d limbs (MPFR at %d bits), GMP %s, MPFR %s, best of %d x %d, us:\n", n, n * 64 - 64, gmp_version,
           mpfr_get_version(), PASSES, REPS);
    printf("mpn_mul_n %.2f\nmpn_sqr   %.2f\nmpfr_mul  %.2f\nmpfr_sqr  %.2f\n", best[0] / REPS * 1e6,
           best[1] / REPS * 1e6, best[2] / REPS * 1e6, best[3] / REPS * 1e6);
    mpfr_clears(x, y, z, (mpfr_ptr)0);
    free(a); free(b); free(r);
    return 0;
}
