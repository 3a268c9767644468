// The reference orbit's two forms side by side (CDeepOrbit): µs a step of glint_orbit_run by the
// MPFR form and by the FFT form on one and on two threads, best of three orbits of 8,000 steps from
// M(4,1) (docs/locations/misiurewicz-4-1-1e10000.kfr) at each precision given: where the FFT form
// should start (FFT_THRESHOLD_BITS).
//
// Build and run from the repository's root:
//   cc -O2 -march=haswell -ISources/CDeepOrbit/include scripts/bench/orbit-forms.c Sources/CDeepOrbit/*.c \
//       -o /tmp/orbit-forms -lfftw3 -lmpfr -lgmp -lpthread -lm
//   /tmp/orbit-forms 2000 4000 6000 8000 10000 12000
#include "glint_orbit_step.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/// The value after `key` ("Re: ") in the location file, or NULL.
static char *field(const char *text, const char *key) {
    const char *at = strstr(text, key);
    if (!at) return NULL;
    at += strlen(key);
    size_t n = strcspn(at, "\r\n");
    char *value = malloc(n + 1);
    memcpy(value, at, n);
    value[n] = 0;
    return value;
}

int main(int argc, char **argv) {
    FILE *f = fopen("docs/locations/misiurewicz-4-1-1e10000.kfr", "rb");
    if (!f || argc < 2) {
        fprintf(stderr, "usage (from the repository's root): orbit-forms BITS...\n");
        return 2;
    }
    static char text[1 << 16];
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    char *cre = field(text, "Re: "), *cim = field(text, "Im: ");
    enum { steps = 8000 };
    static double re[steps], im[steps];
    printf("bits | MPFR | FFT, one thread | FFT, two threads (µs a step)\n");
    for (int k = 1; k < argc; k++) {
        long bits = strtol(argv[k], NULL, 10);
        if (bits < 64 || bits > 1000000) { fprintf(stderr, "orbit-forms: %s: bits must be 64 to 1000000\n", argv[k]); return 2; }
        mpfr_t a, b, zero;
        mpfr_inits2(bits, a, b, zero, (mpfr_ptr)0);
        mpfr_set_str(a, cre, 10, MPFR_RNDN);
        mpfr_set_str(b, cim, 10, MPFR_RNDN);
        mpfr_set_zero(zero, 1);
        printf("%ld", bits);
        const int forms[3][2] = {{0, 1}, {1, 1}, {1, 2}};  // (fft, threads)
        for (int form = 0; form < 3; form++) {
            double best = 1e30;
            for (int run = 0; run < 3; run++) {
                glint_orbit_stepper *st = glint_orbit_stepper_create(bits, forms[form][1], forms[form][0]);
                int escaped;
                double t0 = now();
                long n = glint_orbit_run(st, zero, zero, a, b, 0, 0, steps, 1e6, re, im, &escaped);
                double t = (now() - t0) / (double)n * 1e6;
                if (t < best) best = t;
                glint_orbit_stepper_destroy(st);
            }
            printf(" | %.2f", best);
        }
        printf("\n");
        mpfr_clears(a, b, zero, (mpfr_ptr)0);
    }
    return 0;
}
