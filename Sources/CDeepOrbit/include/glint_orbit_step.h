#ifndef GLINT_ORBIT_STEP_H
#define GLINT_ORBIT_STEP_H
// A deep-zoom reference orbit, z <- z² + a step by step, with each part of each step the correctly
// rounded value of the exact one (a single rounding to nearest, ties to even):
//
//     x' = RN(x² − y² + a_re)        y' = RN(2xy + a_im)
//
// Two forms compute it, with the same results by construction (both round the exact value once):
// MPFR (exact products at twice the precision and one correctly rounded sum; from 2,000 bits first
// products rounded 64 bits beyond the precision, kept where mpfr_can_round proves the result),
// and from 4,000 bits up an FFT convolution in double precision that keeps x and y as digits
// between steps: the transforms of x and y are taken once a step and give x² − y² and 2xy
// together, each result verified exact before it is used (the distance of every coefficient from
// its integer and a residue modulo 2^64 − 1); a step that fails either check is computed again
// through MPFR. The FFT form runs on two threads where two are allowed.
#include <stdio.h>
#include <gmp.h>
#include <mpfr.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct glint_orbit_stepper glint_orbit_stepper;

/// A stepper for numbers of `precision` bits (2 or more). `threads` (1 or 2) bounds the threads
/// the FFT form may use; `fft` chooses the form: 1 always FFT where the precision allows it, 0
/// never, -1 from the precision where it is the faster (4,000 bits on the 2-core EPYC). NULL
/// when memory runs out.
glint_orbit_stepper *glint_orbit_stepper_create(long precision, int threads, int fft);
void glint_orbit_stepper_destroy(glint_orbit_stepper *stepper);

/// The orbit from `start`: stores the points (the start first) as doubles (mpfr_get_d's rounding)
/// in re and im, `points` at most, and stops after the first point with |point|² > `limit` (the
/// start only when `testing_start`), setting *escaped (-1 when cancelled). With `fold` each step iterates the abs of
/// both parts (the Burning Ship). Returns the number of points stored. a_re and a_im may have any
/// precision; the steps round to the stepper's.
long glint_orbit_run(glint_orbit_stepper *stepper, mpfr_srcptr start_re, mpfr_srcptr start_im, mpfr_srcptr a_re,
                     mpfr_srcptr a_im, int fold, int testing_start, long points, double limit, double *re, double *im,
                     int *escaped);

/// A run whose precision follows the orbit's derivative (glint_orbit_run_following). A rounding
/// error r at the point z_k moves every later point as a change of the orbit's parameter by
/// about r / |dz_k|: so once dz_k is large the steps may round at fewer bits than the view
/// needs at its start, and the orbit's stored doubles are unchanged. A step's need is
///
///     reference_bits + 64 + B − ⌊log2 |dz|⌋    (B bounds the exponent of a point below the limit)
///
/// with 64 bits to spare. The run stops before a step whose need is above `high` (it must go
/// up) or at most `low` (it may go down), leaving that need in `need`. Since the need falls by a
/// bit for each doubling of |dz|, a segment that starts with its need near `high` lasts until
/// |dz| has grown by about 2^(high − low), so precision changes stay far apart.
typedef struct {
    /// dz_k = (re + i·im)·2^exp with max(|re|, |im|) in [0.5, 1) (both 0 for a zero); a
    /// Mandelbrot orbit from c has dz = 1 at its start.
    double re, im;
    long exp;
    /// 1 for a Mandelbrot orbit, dz' = 2z·dz + 1 (the parameter is added every step).
    int add_one;
    long reference_bits, low, high;
    /// Set by the run: whether it stopped for the precision, and the need it stopped at.
    int stopped;
    long need;
} glint_orbit_following;

/// glint_orbit_run, updating `follow`'s derivative at every point and stopping as it says; the
/// last point stored (the state the run ended in) is copied to end_re and end_im, which must have
/// the stepper's precision.
long glint_orbit_run_following(glint_orbit_stepper *stepper, mpfr_srcptr start_re, mpfr_srcptr start_im,
                               mpfr_srcptr a_re, mpfr_srcptr a_im, int testing_start, long points, double limit,
                               double *re, double *im, int *escaped, glint_orbit_following *follow,
                               mpfr_ptr end_re, mpfr_ptr end_im);

/// Makes glint_orbit_run ask `cancelled` between steps (every step from 4,096 bits, every 256
/// below) and, when it answers non-zero, return the points stored so far with *escaped = -1.
void glint_orbit_set_cancel(glint_orbit_stepper *stepper, int (*cancelled)(void));

/// One step, x + iy <- (x + iy)² + (a_re + i a_im), in place (for tests: an orbit is faster by
/// glint_orbit_run, which keeps the FFT form's digits between steps); x and y must have the
/// stepper's precision.
void glint_orbit_step(glint_orbit_stepper *stepper, mpfr_ptr x, mpfr_ptr y, mpfr_srcptr a_re, mpfr_srcptr a_im);

/// Whether the stepper's steps use the FFT form (0 or 1).
int glint_orbit_stepper_uses_fft(const glint_orbit_stepper *stepper);

/// Steps computed through MPFR although the FFT form was in use: the operands did not fit the
/// transform (their exponents too far apart, or one far below a), or a check failed. For tests.
unsigned long glint_orbit_stepper_mpfr_steps(const glint_orbit_stepper *stepper);

#ifdef __cplusplus
}
#endif
#endif
