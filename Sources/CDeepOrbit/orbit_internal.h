// The reference orbit's stepper (glint_orbit_step.h), shared by its parts: orbit_step.c (running an
// orbit: the threads, the steps, the derivative the precision follows), orbit_digits.c (digits,
// transform lengths, the state's moves between MPFR and digits, set-up), orbit_fft.c (the FFT
// step, lane by lane) and orbit_mpfr.c (the MPFR form).
//
// The FFT form. Between steps x and y are kept as digits of b bits on one grid (each component
// Σ d_k·2^(b·k + grid), |d_k| < 2^b). One real transform of each, in balanced digits (each in
// [−2^(b−1), 2^(b−1))), gives every product a step needs: X² − Y² and 2XY are pointwise sums of
// products of the two spectra, so two forward and two inverse transforms of length N ≥ 2L + 1 make
// the step, where three separate products would take three of each. The inverse transforms,
// rounded to the nearest integers and carried, are the exact integers as long as double precision
// held: b is chosen per length so that the rounding errors stay far below 1/2 (about 0.15 at
// b = 22, N = 3072), and every result is checked twice before it is used: no coefficient may lie
// more than 0.3 from its integer, and the result's residue modulo 2^64 − 1 must equal the one the
// operands' residues give. a's digits are added to the exact integer, the sum is rounded to the
// precision (to nearest, ties to even) in place, and the digits from the lowest kept one are the
// next step's: no conversion to MPFR between steps. A step that fails a check, or whose operands
// do not fit the transform (exponents too far apart), is computed by MPFR's exact products.
//
// Each component has a lane: x's on the calling thread, y's on a second thread where two are
// allowed, meeting twice a step (both spectra ready; both results ready).
#ifndef GLINT_ORBIT_INTERNAL_H
#define GLINT_ORBIT_INTERNAL_H

#include "glint_orbit_step.h"

#include <fftw3.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

typedef uint64_t u64;
typedef unsigned __int128 u128;

// Below this precision MPFR's own products are faster than the transforms (measured on the 2-core
// EPYC: see docs/PERFORMANCE.md, "The reference orbit").
#define FFT_THRESHOLD_BITS 4000L

// The MPFR form's first try carries this many bits beyond the precision: it fails to prove its
// rounding about once in 2^60 steps (then the exact products decide). It is tried from
// NEAR_MIN_BITS: below, GMP's exact products cost less than MPFR's at one limb more and the check.
#define GUARD_BITS 64
#define NEAR_MIN_BITS 2000L

// Pauses a thread spins for before it yields the processor.
#define SPINS 256

// Two threads in lock step are slower than one where something else keeps one of them off its
// core (or puts both on one), so an orbit times TRIAL steps on two threads and TRIAL on one, after
// WARM_UP steps that let the scheduler place the second thread, goes on with the faster for
// PERIOD steps, and times both again.
#define WARM_UP 64
#define TRIAL 96
#define PERIOD 4096

// A coefficient further than this from its integer fails the step (the check, not the bound: the
// transforms' errors are chosen about half of it at worst).
#define MAX_DISTANCE 0.3

// MARK: residues modulo 2^64 − 1 (where 2^64 ≡ 1, so a number's residue is the sum of its limbs)

static inline u64 res_add(u64 a, u64 b) {
    u64 s = a + b;
    return s + (s < a);
}
static inline u64 res_mul(u64 a, u64 b) {
    u128 t = (u128)a * b;
    return res_add((u64)t, (u64)(t >> 64));
}
static inline u64 res_neg(u64 a) { return ~a; }
static inline u64 res_canonical(u64 a) { return a == UINT64_MAX ? 0 : a; }
/// a × 2^k: a rotation, since 2^64 ≡ 1.
static inline u64 res_shift(u64 a, long k) {
    unsigned r = (unsigned)(k & 63);
    return r ? (a << r) | (a >> (64 - r)) : a;
}
/// One real transform length, with its plans (made once per process, kept).
typedef struct {
    long n;
    fftw_plan forward;   // r2c: n doubles -> n/2 + 1 complex
    fftw_plan backward;  // c2r: n/2 + 1 complex -> n doubles (destroys its input)
} transform;

/// Digits of b bits fall on limb boundaries every 64/gcd(b, 64) digits: a group, which takes
/// b/gcd(b, 64) limbs. Unpacking and packing work group by group with b a compile-time constant
/// (the switches in orbit_digits.c), so that every shift is a constant and the loops unroll.
static inline int group_digits(int b) {
    int g = 64;
    while (b % 2 == 0 && g > 1) { b /= 2; g /= 2; }
    return g;
}
static inline int group_limbs(int b) { return b * group_digits(b) / 64; }

// MARK: the orbit state

/// One component (x for lane 0, y for lane 1) and its buffers.
typedef struct {
    double *coef;              // N (one zero double below): the forward input, then the inverse output
    double *coef_storage;
    fftw_complex *spectrum;    // N/2 + 1: the component's transform
    fftw_complex *product;     // N/2 + 1: the result's transform
    uint32_t *cur;             // |component| as digits on the grid (within cur_buffer; a zero digit below)
    uint32_t *cur_buffer;
    uint32_t *cur_storage;     // cur_buffer's and next's storage, with a zero digit below each
    uint32_t *next;            // the step's result, |x'| or |y'|, as digits on the result's grid
    uint32_t *a_tables;        // |a| × 2^r as digits, for r < b, `a_stride` digits each
    long a_stride, a_count;    // digits in each table
    long a_low;                // a = ±A·2^a_low (A its significand read as an integer)
    u64 a_residue;             // A's residue
    int a_sign, a_zero;        // a's sign (-1 or 1, also for a zero) and whether it is zero
    int sign, zero;            // cur's sign (-1 or 1, also for a zero) and whether it is zero
    int next_sign, next_zero;
    long top, low;             // next's top nonzero digit and lowest kept one (-1: zero)
    double value;              // next rounded to a double, as mpfr_get_d would
    u64 residue;               // cur's residue (with its sign) on the grid
    int ok;
} lane;

struct glint_orbit_stepper {
    long precision, limbs;      // the numbers' precision and their significands' limbs
    int fft, threads;
    int fft_run;                // the FFT form in this run (off where a could not be set up)
    // The FFT form: digit bits, transform length, the most digits a component may have on the
    // grid (the last one kept for the balanced form's carry), and the digits a result may have.
    int b;
    long n, max_digits, result_digits;
    const transform *plans;
    lane lanes[2];
    // The state between steps. In digits: cur holds |x| and |y| on the grid, value Σ d_k·2^(b·k +
    // grid), `digits` of them; or in MPFR (`in_mpfr`): x and y.
    int in_mpfr;
    long grid, digits;
    // The step in progress: its result's grid (2·grid) and how many coefficients each lane reads.
    long result_grid, count[2];
    // A result in `next` (on next_grid) waiting to become cur: the lowest digit kept.
    long next_grid, next_shift, next_digits;
    mpfr_t x, y, xx, yy, xy;    // the MPFR form's numbers and exact products
    mpfr_t near_re, near_yy, near_im;  // its first try, at precision + GUARD_BITS
    u64 *product_limbs;         // 6n limbs: the exact products' significands
    u64 *limbs_buffer;          // conversions between digits and MPFR
    uint32_t *digit_buffer;
    unsigned long mpfr_steps;
    // The second thread (lane 1) during glint_orbit_run: `go` counts the steps handed to it,
    // `done` those it finished; `stop` ends it.
    pthread_t worker;
    _Atomic unsigned long go, done;
    unsigned long worker_start;
    _Atomic int stop;
    _Atomic unsigned barrier_count;
    _Atomic unsigned long barrier_generation;
    // Asked between steps whether the caller wants the orbit ended early (glint_orbit_set_cancel).
    int (*cancelled)(void);
};

// MARK: the parts' functions (each file's own are static)

#define ORBIT_INTERNAL __attribute__((visibility("hidden")))

// orbit_digits.c
ORBIT_INTERNAL void orbit_digits_to_mpfr(glint_orbit_stepper *st, const uint32_t *d, long count, int sign, int zero,
                                         long grid, mpfr_ptr out);
ORBIT_INTERNAL int orbit_setup_a(glint_orbit_stepper *st, int which, mpfr_srcptr a);
ORBIT_INTERNAL int orbit_to_digits(glint_orbit_stepper *st);
ORBIT_INTERNAL void orbit_to_mpfr(glint_orbit_stepper *st);
ORBIT_INTERNAL void orbit_commit(glint_orbit_stepper *st);
ORBIT_INTERNAL int orbit_setup_fft(glint_orbit_stepper *st);
ORBIT_INTERNAL void orbit_free_fft(glint_orbit_stepper *st);
// orbit_fft.c
ORBIT_INTERNAL void orbit_lane_forward(glint_orbit_stepper *st, int which);
ORBIT_INTERNAL void orbit_lane_result(glint_orbit_stepper *st, int which);
// orbit_mpfr.c
ORBIT_INTERNAL void orbit_step_mpfr(glint_orbit_stepper *st, mpfr_ptr x, mpfr_ptr y, mpfr_srcptr a_re, mpfr_srcptr a_im);

#endif
