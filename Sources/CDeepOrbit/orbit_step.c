// A deep-zoom reference orbit, z <- z² + a step by step, each part of each step correctly rounded
// once (glint_orbit_step.h).
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
static u64 res_limbs(const u64 *m, long n) {
    // Four sums of 128 bits (no carry chain from limb to limb), folded at the end.
    u128 s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    long i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += m[i];
        s1 += m[i + 1];
        s2 += m[i + 2];
        s3 += m[i + 3];
    }
    for (; i < n; i++) s0 += m[i];
    u64 r = 0;
    const u128 sums[4] = {s0, s1, s2, s3};
    for (int k = 0; k < 4; k++) r = res_add(res_add(r, (u64)sums[k]), (u64)(sums[k] >> 64));
    return r;
}

// MARK: transform lengths

/// One real transform length, with its plans (made once per process, kept).
typedef struct {
    long n;
    fftw_plan forward;   // r2c: n doubles -> n/2 + 1 complex
    fftw_plan backward;  // c2r: n/2 + 1 complex -> n doubles (destroys its input)
} transform;

static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;
static transform plans[64];
static int plan_count;

/// The plans for length n, made with FFTW_ESTIMATE on arrays from fftw_malloc (so that any other
/// fftw_malloc'd arrays may be passed to fftw_execute_dft_*: same alignment). FFTW's planner is not
/// thread-safe; its execute functions are.
static const transform *plans_for(long n) {
    pthread_mutex_lock(&plan_lock);
    const transform *found = NULL;
    for (int i = 0; i < plan_count; i++)
        if (plans[i].n == n) found = &plans[i];
    if (!found && plan_count < 64) {
        double *real = fftw_alloc_real((size_t)n);
        fftw_complex *spectrum = fftw_alloc_complex((size_t)(n / 2 + 1));
        if (real && spectrum) {
            transform t = {n, fftw_plan_dft_r2c_1d((int)n, real, spectrum, FFTW_ESTIMATE),
                           fftw_plan_dft_c2r_1d((int)n, spectrum, real, FFTW_ESTIMATE)};
            if (t.forward && t.backward) {
                plans[plan_count] = t;
                found = &plans[plan_count++];
            }
        }
        fftw_free(real);
        fftw_free(spectrum);
    }
    pthread_mutex_unlock(&plan_lock);
    return found;
}

/// Bits per digit for a transform of length n: the largest that keeps the worst rounding error of
/// a product near 0.15 (it grows as 4^b and about as sqrt(n)·log n).
static int digit_bits(long n) {
    // 19 to 22 only: the digit code below is specialised for these.
    if (n <= 4096) return 22;
    if (n <= 3L << 14) return 21;
    if (n <= 3L << 18) return 20;
    return 19;
}

// MARK: digits

#if defined(__clang__)
#define UNROLL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define UNROLL _Pragma("GCC unroll 128")
#else
#define UNROLL
#endif
#define ALWAYS_INLINE inline __attribute__((always_inline))

/// Digits of b bits fall on limb boundaries every 64/gcd(b, 64) digits: a group, which takes
/// b/gcd(b, 64) limbs. Unpacking and packing work group by group with b a compile-time constant
/// (the switches below), so that every shift is a constant and the loops unroll.
static inline int group_digits(int b) {
    int g = 64;
    while (b % 2 == 0 && g > 1) { b /= 2; g /= 2; }
    return g;
}
static inline int group_limbs(int b) { return b * group_digits(b) / 64; }

/// v[i] = bits [i·b, (i + 1)·b) of the limbs x, for `groups` whole groups.
static ALWAYS_INLINE void unpack_groups(const u64 *x, long groups, uint32_t *v, const int b) {
    const int G = group_digits(b), LG = group_limbs(b);
    const u64 mask = (1ULL << b) - 1;
    for (long g = 0; g < groups; g++) {
        const u64 *src = x + g * LG;
        uint32_t *dst = v + g * G;
        UNROLL for (int i = 0; i < G; i++) {
            const int bit = i * b, li = bit >> 6, sh = bit & 63;
            u64 t = src[li] >> sh;
            if (sh + b > 64) t |= src[li + 1] << (64 - sh);
            dst[i] = (uint32_t)(t & mask);
        }
    }
}

/// The limbs of Σ v[i]·2^(b·i) for `groups` whole groups of digits v[i] < 2^b.
static ALWAYS_INLINE void pack_groups(const uint32_t *v, long groups, u64 *x, const int b) {
    const int G = group_digits(b), LG = group_limbs(b);
    for (long g = 0; g < groups; g++) {
        const uint32_t *src = v + g * G;
        u64 *dst = x + g * LG;
        UNROLL for (int w = 0; w < LG; w++) {
            u64 limb = 0;
            UNROLL for (int i = 0; i < G; i++) {
                const int pos = i * b - 64 * w;
                if (pos + b <= 0 || pos >= 64) continue;
                limb |= pos >= 0 ? (u64)src[i] << pos : (u64)src[i] >> -pos;
            }
            dst[w] = limb;
        }
    }
}

/* F(..., b) with b as a constant (19 to 22), so that F's shifts and masks compile to immediates. */
#define WITH_DIGIT_BITS(b, F, ...) do { \
    switch (b) { \
    case 22: F(__VA_ARGS__, 22); break; \
    case 21: F(__VA_ARGS__, 21); break; \
    case 20: F(__VA_ARGS__, 20); break; \
    default: F(__VA_ARGS__, 19); break; \
    } \
} while (0)

static void unpack(const u64 *x, long groups, uint32_t *v, int b) { WITH_DIGIT_BITS(b, unpack_groups, x, groups, v); }

static void pack(const uint32_t *v, long groups, u64 *x, int b) { WITH_DIGIT_BITS(b, pack_groups, v, groups, x); }

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

static inline void pause_or_yield(unsigned *spins) {
    // Steps take microseconds: spin first, yield once a wait is long (a busy machine), and sleep
    // once it is longer (the second thread while the orbit runs on one).
    if (++*spins < SPINS) {
#if defined(__x86_64__)
        _mm_pause();
#endif
    } else if (*spins < 4 * SPINS) {
        sched_yield();
    } else {
        const struct timespec nap = {0, 50000};
        nanosleep(&nap, NULL);
    }
}

static void barrier(glint_orbit_stepper *st) {
    unsigned long generation = atomic_load_explicit(&st->barrier_generation, memory_order_acquire);
    if (atomic_fetch_add_explicit(&st->barrier_count, 1, memory_order_acq_rel) == 1) {
        atomic_store_explicit(&st->barrier_count, 0, memory_order_relaxed);
        atomic_store_explicit(&st->barrier_generation, generation + 1, memory_order_release);
    } else {
        unsigned spins = 0;
        while (atomic_load_explicit(&st->barrier_generation, memory_order_acquire) == generation)
            pause_or_yield(&spins);
    }
}

// MARK: residues of digit sequences

/// The residue of Σ v[k]·2^(b·k), k < count (v integers as doubles, signed, each sum of a group
/// below 2^52 in size): weights repeat every group of digits, so one sum per place in a group.
static u64 res_digits(const double *v, long count, int b) {
    double sums[64] = {0};
    const int G = group_digits(b);
    long k = 0;
    for (; k + G <= count; k += G)
        for (int j = 0; j < G; j++) sums[j] += v[k + j];
    for (int j = 0; k < count; k++, j++) sums[j] += v[k];
    u64 r = 0;
    for (int j = 0; j < G; j++) {
        const int64_t s = (int64_t)sums[j];
        const u64 m = s < 0 ? res_neg((u64)-s) : (u64)s;
        r = res_add(r, res_shift(m, (long)b * j));
    }
    return r;
}

static u64 res_signed(int64_t v) { return v < 0 ? res_neg((u64)-v) : (u64)v; }

// MARK: conversions between MPFR and digits

/// |v| as digits on grid `grid` into d (capacity: whole groups of `digits`), v ≠ 0, with v's
/// lowest significand bit at or above the grid and its top below digit `digits`.
static void digits_from_mpfr(glint_orbit_stepper *st, mpfr_srcptr v, long grid, long digits, uint32_t *d) {
    const int b = st->b, G = group_digits(b);
    const long groups = (digits + G - 1) / G, span = groups * group_limbs(b);
    const long limbs = (mpfr_get_prec(v) + 63) / 64;
    const long shift = mpfr_get_exp(v) - 64 * limbs - grid;   // v = A·2^(shift + grid)
    const long whole = shift >> 6;
    const unsigned part = (unsigned)(shift & 63);
    u64 *x = st->limbs_buffer;
    memset(x, 0, sizeof(u64) * (size_t)span);
    const u64 *m = (const u64 *)mpfr_custom_get_significand(v);
    if (part) {
        const u64 out = mpn_lshift((mp_limb_t *)x + whole, (const mp_limb_t *)m, limbs, part);
        if (whole + limbs < span) x[whole + limbs] = out;
    } else {
        memcpy(x + whole, m, sizeof(u64) * (size_t)limbs);
    }
    unpack(x, groups, d, b);
}

/// v = sign × Σ d[k]·2^(b·k + grid), k < count (exact: at most the precision's bits).
static void digits_to_mpfr(glint_orbit_stepper *st, const uint32_t *d, long count, int sign, int zero, long grid,
                           mpfr_ptr v) {
    if (zero) {
        mpfr_set_zero(v, sign);
        return;
    }
    const int b = st->b, G = group_digits(b), LG = group_limbs(b);
    const long groups = (count + G - 1) / G;
    // Whole groups, zero past `count`.
    uint32_t *padded = st->digit_buffer;
    memcpy(padded, d, sizeof(uint32_t) * (size_t)count);
    memset(padded + count, 0, sizeof(uint32_t) * (size_t)(groups * G - count));
    u64 *x = st->limbs_buffer;
    pack(padded, groups, x, b);
    long top = groups * LG - 1;
    while (top >= 0 && x[top] == 0) top--;
    const int lz = __builtin_clzll(x[top]);
    if (lz) mpn_lshift((mp_limb_t *)x, (const mp_limb_t *)x, top + 1, (unsigned)lz);
    mpfr_t exact;
    mpfr_custom_init_set(exact, sign < 0 ? -MPFR_REGULAR_KIND : MPFR_REGULAR_KIND,
                         (mpfr_exp_t)(64 * (top + 1) - lz + grid), (mpfr_prec_t)(64 * (top + 1)), x);
    mpfr_set(v, exact, MPFR_RNDN);
}

// MARK: the FFT step, lane by lane

/// One carry-save pass over integers c[k] (doubles), in place: each keeps its low b bits and
/// hands the rest, floor(c / 2^b), to the next one up; c[-1] must be 0. The sum Σ c[k]·2^(b·k) is
/// unchanged but for what leaves the top, which is returned. There is no chain: every position
/// reads only the old values of itself and the one below (going down keeps them old).
///
/// With `round`, the pass first rounds each c[k] to the nearest integer and returns in *worst the
/// largest distance moved, or 1 when a coefficient is too large for the distance to mean
/// anything (|c| ≥ 2^50, where a double's spacing is 1/4).
static double carry_pass(double *c, long count, int b, int round, double *worst) {
    const double down = ldexp(1.0, -b), up = ldexp(1.0, b), limit = 1125899906842624.0;
    const double last = round ? rint(c[count - 1]) : c[count - 1];
    const double top = floor(last * down);
    double far = 0, large = 0;
    long k = count;
#if defined(__AVX2__) && defined(__FMA__)
    const __m256d vdown = _mm256_set1_pd(down), vup = _mm256_set1_pd(up), signs = _mm256_set1_pd(-0.0);
    __m256d vfar = _mm256_setzero_pd(), vlarge = _mm256_setzero_pd();
#define NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
    for (; k >= 5; k -= 4) {
        __m256d v = _mm256_loadu_pd(c + k - 4), below = _mm256_loadu_pd(c + k - 5);
        if (round) {
            const __m256d nearest = _mm256_round_pd(v, NEAREST);
            vfar = _mm256_max_pd(vfar, _mm256_andnot_pd(signs, _mm256_sub_pd(v, nearest)));
            vlarge = _mm256_max_pd(vlarge, _mm256_andnot_pd(signs, v));
            v = nearest;
            below = _mm256_round_pd(below, NEAREST);
        }
        const __m256d high = _mm256_floor_pd(_mm256_mul_pd(v, vdown));
        const __m256d carry = _mm256_floor_pd(_mm256_mul_pd(below, vdown));
        _mm256_storeu_pd(c + k - 4, _mm256_add_pd(_mm256_fnmadd_pd(high, vup, v), carry));
    }
#undef NEAREST
    double lanes[4], sizes[4];
    _mm256_storeu_pd(lanes, vfar);
    _mm256_storeu_pd(sizes, vlarge);
    for (int i = 0; i < 4; i++) {
        far = lanes[i] > far ? lanes[i] : far;
        large = sizes[i] > large ? sizes[i] : large;
    }
#endif
    for (k--; k >= 0; k--) {
        double v = c[k], below = c[k - 1];
        if (round) {
            const double nearest = rint(v);
            far = fabs(v - nearest) > far ? fabs(v - nearest) : far;
            large = fabs(v) > large ? fabs(v) : large;
            v = nearest;
            below = rint(below);
        }
        const double high = floor(v * down), carry = floor(below * down);
        c[k] = v - high * up + carry;
    }
    if (round) *worst = large < limit ? far : 1;
    return top;
}

/// a·b for two pairs of complex numbers [re, im, re, im].
#if defined(__AVX2__) && defined(__FMA__)
static inline __m256d complex_mul(__m256d a, __m256d b) {
    const __m256d b_re = _mm256_movedup_pd(b), b_im = _mm256_permute_pd(b, 0xF);
    return _mm256_fmaddsub_pd(a, b_re, _mm256_mul_pd(_mm256_permute_pd(a, 0x5), b_im));
}
#endif

/// P = factor·(X² − Y²) (which 0) or factor·XY (which 1), for the bins of real transforms.
static void pointwise(const fftw_complex *X, const fftw_complex *Y, fftw_complex *P, long bins, int which,
                      double factor) {
    long k = 0;
#if defined(__AVX2__) && defined(__FMA__)
    const __m256d f = _mm256_set1_pd(factor);
    for (; k + 2 <= bins; k += 2) {
        const __m256d x = _mm256_loadu_pd(&X[k][0]), y = _mm256_loadu_pd(&Y[k][0]);
        const __m256d v = which == 0 ? _mm256_sub_pd(complex_mul(x, x), complex_mul(y, y)) : complex_mul(x, y);
        _mm256_storeu_pd(&P[k][0], _mm256_mul_pd(v, f));
    }
#endif
    for (; k < bins; k++) {
        const double xr = X[k][0], xi = X[k][1], yr = Y[k][0], yi = Y[k][1];
        if (which == 0) {
            P[k][0] = ((xr * xr - xi * xi) - (yr * yr - yi * yi)) * factor;
            P[k][1] = (2 * xr * xi - 2 * yr * yi) * factor;
        } else {
            P[k][0] = (xr * yr - xi * yi) * factor;
            P[k][1] = (xr * yi + xi * yr) * factor;
        }
    }
}


/// The lane's component on the grid as balanced digits (each in [−2^(b−1), 2^(b−1)), signed
/// as the component), their residue and their transform. cur[-1] and cur[digits] are 0.
static void lane_forward(glint_orbit_stepper *st, int which) {
    lane *ln = &st->lanes[which];
    const long n = st->n, L = st->digits;
    const int b = st->b;
    double *d = ln->coef;
    const uint32_t *u = ln->cur;
    const double sign = ln->sign;
    long used = 0;
    if (!ln->zero) {
        // A digit of 2^(b−1) or more becomes itself − 2^b and carries 1 up. Without a digit of
        // exactly 2^(b−1) − 1 no carry can make a digit reach 2^(b−1), so each digit's carry in
        // is its lower neighbour's own (a loop without a chain); with one, the chain.
        const uint32_t half = 1u << (b - 1);
        const int32_t whole = (int32_t)1 << b;
        int chain = 0;
        for (long j = 0; j <= L; j++) chain |= u[j] == half - 1;
        if (!chain) {
            for (long j = 0; j <= L; j++)
                d[j] = sign * (double)((int32_t)u[j] + (int32_t)(u[j - 1] >= half) - (u[j] >= half ? whole : 0));
        } else {
            int32_t carry = 0;
            for (long j = 0; j <= L; j++) {
                const int32_t t = (int32_t)u[j] + carry;
                carry = t >= (int32_t)half;
                d[j] = sign * (double)(t - (carry << b));
            }
        }
        used = L + 1;
    }
    memset(d + used, 0, sizeof(double) * (size_t)(n - used));
    ln->residue = res_digits(d, used, b);
    fftw_execute_dft_r2c(st->plans->forward, d, ln->spectrum);
}

/// Rounds the magnitude digits u (top digit `top`) to `p` bits, to nearest with ties to even, in
/// place; returns the lowest digit that may be nonzero and sets *top (a carry may raise it).
static long round_digits(uint32_t *u, long *top, long p, int b) {
    const long t = *top;
    const long msb = (long)b * t + (63 - __builtin_clzll((u64)u[t]));
    const long q = msb - p + 1;   // the lowest bit kept
    if (q <= 0) {
        long low = 0;
        while (u[low] == 0) low++;
        return low;
    }
    const long jq = q / b, r = q - jq * b;
    const long j1 = (q - 1) / b, r1 = (q - 1) - j1 * b;
    const int round_bit = (u[j1] >> r1) & 1;
    int sticky = (u[j1] & ((1u << r1) - 1)) != 0;
    for (long j = j1 - 1; j >= 0 && !sticky; j--) sticky = u[j] != 0;
    const int odd = (u[jq] >> r) & 1;
    u[jq] &= ~((1u << r) - 1);
    memset(u, 0, sizeof(uint32_t) * (size_t)jq);
    if (round_bit && (sticky || odd)) {
        const uint32_t whole = 1u << b;
        u[jq] += 1u << r;
        for (long j = jq; u[j] >= whole; j++) {
            u[j] -= whole;
            u[j + 1] += 1;
            if (j + 1 > *top) *top = j + 1;
        }
    }
    return jq;
}

/// sign × Σ u[k]·2^(b·k + grid) rounded to a double as mpfr_get_d(RNDN) would: the top 64 bits
/// with the rest folded into the lowest (a sticky bit), converted once. NAN where the value is
/// outside the normal doubles (the caller asks MPFR).
static double digits_to_double(const uint32_t *u, long top, long low, int sign, long grid, int b) {
    const int length = 64 - __builtin_clzll((u64)u[top]);
    const long exponent = (long)b * top + length + grid;   // value in [2^(exponent−1), 2^exponent)
    if (exponent < -1020 || exponent > 1023) return NAN;
    u128 bits = u[top];
    int have = length;
    long k = top - 1;
    while (have < 64 && k >= low) {
        bits = (bits << b) | u[k--];
        have += b;
    }
    u64 word;
    int sticky;
    if (have >= 64) {
        word = (u64)(bits >> (have - 64));
        sticky = (bits & (((u128)1 << (have - 64)) - 1)) != 0;
    } else {
        word = (u64)(bits << (64 - have));
        sticky = 0;
        k = low - 1;
    }
    for (; k >= low && !sticky; k--) sticky = u[k] != 0;
    const double v = ldexp((double)(word | (u64)sticky), (int)(exponent - 64));
    return sign < 0 ? -v : v;
}

/// The lane's result: x² − y² + a_re (lane 0) or 2xy + a_im (lane 1) from the two spectra, exact
/// (checked), rounded once to the precision, as digits in `next` on the result's grid.
static void lane_result(glint_orbit_stepper *st, int which) {
    lane *ln = &st->lanes[which];
    const long n = st->n, count = st->count[which];
    const int b = st->b;
    const double inv = 1.0 / (double)n;
    pointwise(st->lanes[0].spectrum, st->lanes[1].spectrum, ln->product, n / 2 + 1, which, which == 0 ? inv : 2 * inv);
    double *c = ln->coef;
    fftw_execute_dft_c2r(st->plans->backward, ln->product, c);
    ln->ok = 0;

    // Integers (the first check: each within MAX_DISTANCE), one carry-save pass, a added, a
    // second pass: every digit then within 2^7 of [0, 2^b).
    double worst = 0;
    double top = carry_pass(c, count, b, 1, &worst);
    if (worst > MAX_DISTANCE) return;
    const long delta = ln->a_low - st->result_grid;   // a = ±A·2^delta on the result's grid
    u64 expected;
    {
        const u64 rx = st->lanes[0].residue, ry = st->lanes[1].residue;
        expected = which == 0 ? res_add(res_mul(rx, rx), res_neg(res_mul(ry, ry)))
                              : res_add(res_mul(rx, ry), res_mul(rx, ry));
    }
    if (!ln->a_zero) {
        const long offset = delta / b, r = delta - offset * b;
        const uint32_t *table = ln->a_tables + r * ln->a_stride;
        const double sa = ln->a_sign;
        for (long j = 0; j < ln->a_count; j++) c[offset + j] += sa * (double)table[j];
        const u64 ra = res_shift(ln->a_residue, delta);
        expected = res_add(expected, ln->a_sign < 0 ? res_neg(ra) : ra);
    }
    top += carry_pass(c, count, b, 0, NULL);

    // The second check: the residue the operands give.
    u64 got = res_add(res_digits(c, count, b), res_shift(res_signed((int64_t)top), (long)b * count));
    if (res_canonical(got) != res_canonical(expected)) return;

    // Digits in [0, 2^b), carrying the few outside it; the sum is negative when the carry above
    // the top is −1 (two's complement), and must be 0 or −1.
    uint32_t *u = ln->next;
    const int32_t whole = (int32_t)1 << b;
    long first = count;
    for (long base = 0; base < count; base += 64) {
        const long end = base + 64 < count ? base + 64 : count;
        int outside = 0;
        for (long k = base; k < end; k++) {
            const int32_t v = (int32_t)c[k];
            outside |= (v < 0) | (v >= whole);
            u[k] = (uint32_t)v;
        }
        if (outside && first == count) first = base;
    }
    int64_t carry = (int64_t)top;
    if (first < count) {
        int32_t *d = (int32_t *)u;
        for (long k = first; k < count; k++) {
            if (d[k] < 0 || d[k] >= whole) {
                const int32_t up = d[k] >> b;   // arithmetic: the floor of d / 2^b
                d[k] -= up * whole;
                if (k + 1 < count) d[k + 1] += up; else carry += up;
            }
        }
    }
    if (carry != 0 && carry != -1) return;
    // Zero above: the state may read this lane up to the other lane's top digit + 1.
    memset(u + count, 0, sizeof(uint32_t) * (size_t)(st->n + 2 - count));
    int sign = 1;
    if (carry < 0) {
        // The magnitude: 2^(b·count) − Σ u[k]·2^(b·k).
        sign = -1;
        const uint32_t mask = (uint32_t)whole - 1;
        for (long k = 0; k < count; k++) u[k] = mask - u[k];
        for (long k = 0; k < count; k++) {
            if (++u[k] < (uint32_t)whole) break;
            u[k] = 0;
        }
    }
    long t = count - 1;
    while (t >= 0 && u[t] == 0) t--;
    if (t < 0) {
        // An exact zero, signed as the MPFR form's: x² − y² + a cancelling is +0; 2xy + a is −0
        // only where 2xy is a zero (x or y is) of sign x's times y's and a is −0.
        const lane *lx = &st->lanes[0], *ly = &st->lanes[1];
        const int negative = which == 1 && (lx->zero || ly->zero) && (lx->sign != ly->sign) && ln->a_zero && ln->a_sign < 0;
        ln->next_zero = 1;
        ln->next_sign = negative ? -1 : 1;
        ln->top = ln->low = -1;
        ln->value = negative ? -0.0 : 0.0;
        ln->ok = 1;
        return;
    }
    ln->low = round_digits(u, &t, st->precision, b);
    ln->top = t;
    ln->next_sign = sign;
    ln->next_zero = 0;
    ln->value = digits_to_double(u, t, ln->low, sign, st->result_grid, b);
    ln->ok = 1;
}

// MARK: the MPFR form and the state's moves between the forms

/// v's significand times w's (or squared), exactly, as an MPFR number over `limbs` (2n limbs of
/// room): GMP's products directly, since mpfr_sqr at twice the precision takes as long as a
/// product and mpn_sqr half that. v and w are nonzero numbers of the stepper's precision.
static void exact_product(glint_orbit_stepper *st, mpfr_srcptr v, mpfr_srcptr w, int negate, u64 *limbs, mpfr_ptr out) {
    const long n = st->limbs;
    const mp_limb_t *a = (const mp_limb_t *)mpfr_custom_get_significand(v);
    if (v == w) mpn_sqr((mp_limb_t *)limbs, a, n);
    else mpn_mul_n((mp_limb_t *)limbs, a, (const mp_limb_t *)mpfr_custom_get_significand(w), n);
    long exponent = mpfr_get_exp(v) + mpfr_get_exp(w);
    if (!(limbs[2 * n - 1] >> 63)) {
        mpn_lshift((mp_limb_t *)limbs, (const mp_limb_t *)limbs, 2 * n, 1);
        exponent--;
    }
    const int negative = (mpfr_signbit(v) != 0) != (mpfr_signbit(w) != 0) ? !negate : negate;
    mpfr_custom_init_set(out, negative ? -MPFR_REGULAR_KIND : MPFR_REGULAR_KIND, (mpfr_exp_t)exponent,
                         (mpfr_prec_t)(128 * n), limbs);
}

/// Whether `v`, within 2^(top − q + slack) of an unknown exact value (q: v's precision), rounds to
/// nearest at `precision` bits as that value does: mpfr_can_round with MPFR's idiom for rounding to
/// nearest (toward zero at one bit more), which also fails wherever the exact value could be a tie.
static int rounds_as_exact(mpfr_srcptr v, long top, long slack, long precision) {
    if (!mpfr_regular_p(v)) return 0;
    const long err = (long)mpfr_get_exp(v) - (top - (long)mpfr_get_prec(v) + slack);
    return err > 0 && mpfr_can_round(v, (mpfr_exp_t)err, MPFR_RNDN, MPFR_RNDZ, (mpfr_prec_t)precision + 1);
}

/// The MPFR form's first try: MPFR's own products and sums, each rounded at precision +
/// GUARD_BITS. Each of x² − y² + a_re's four roundings errs by at most half an ulp of the value it
/// rounds (two of 2xy + a_im's), so the error is at most 2^(top − q + 1) (2^(top − q)) with top the
/// largest of their exponents; where mpfr_can_round proves that rounding to the precision gives
/// the correctly rounded exact value, x and y take it. 0: unproven, x and y untouched.
static int step_mpfr_near(glint_orbit_stepper *st, mpfr_ptr x, mpfr_ptr y, mpfr_srcptr a_re, mpfr_srcptr a_im) {
    mpfr_ptr re = st->near_re, yy = st->near_yy, im = st->near_im;
    mpfr_sqr(re, x, MPFR_RNDN);
    mpfr_sqr(yy, y, MPFR_RNDN);
    mpfr_mul(im, x, y, MPFR_RNDN);
    long top_re = mpfr_get_exp(re) > mpfr_get_exp(yy) ? mpfr_get_exp(re) : mpfr_get_exp(yy);
    mpfr_sub(re, re, yy, MPFR_RNDN);
    mpfr_add(re, re, a_re, MPFR_RNDN);
    mpfr_mul_2ui(im, im, 1, MPFR_RNDN);
    long top_im = mpfr_get_exp(im);
    mpfr_add(im, im, a_im, MPFR_RNDN);
    // The sums' own exponents never exceed their operands' by more than one; rounds_as_exact
    // refuses a zero or a result below them.
    if (mpfr_regular_p(re) && mpfr_get_exp(re) > top_re) top_re = mpfr_get_exp(re);
    if (mpfr_regular_p(im) && mpfr_get_exp(im) > top_im) top_im = mpfr_get_exp(im);
    // One bit beyond each bound: mpfr_can_round's interval is closed, and the imaginary part's bound
    // can be met exactly (x·y and the sum both ties at q bits), where a tie at the precision would pass.
    if (!rounds_as_exact(re, top_re, 2, st->precision) || !rounds_as_exact(im, top_im, 1, st->precision)) return 0;
    mpfr_set(x, re, MPFR_RNDN);
    mpfr_set(y, im, MPFR_RNDN);
    return 1;
}

/// The MPFR form: the products rounded a little beyond the precision where that proves the
/// rounding (step_mpfr_near), else the three products exactly, then each part rounded once
/// (mpfr_sum rounds x² − y² + a_re as one sum).
static void step_mpfr(glint_orbit_stepper *st, mpfr_ptr x, mpfr_ptr y, mpfr_srcptr a_re, mpfr_srcptr a_im) {
    int regular = mpfr_regular_p(x) && mpfr_regular_p(y);
    if (regular) {
        // The products' exponents must be MPFR's to hold (else its own products, which round).
        const long ex = mpfr_get_exp(x), ey = mpfr_get_exp(y);
        const long high = ex > ey ? ex : ey, low = ex < ey ? ex : ey;
        regular = high <= ((long)mpfr_get_emax() - 2) / 2 && low >= ((long)mpfr_get_emin() + 2) / 2;
    }
    if (regular && st->precision >= NEAR_MIN_BITS && step_mpfr_near(st, x, y, a_re, a_im)) return;
    if (regular) {
        const long n = st->limbs;
        mpfr_t xx, yy, xy;
        exact_product(st, x, x, 0, st->product_limbs, xx);
        exact_product(st, y, y, 1, st->product_limbs + 2 * n, yy);
        exact_product(st, x, y, 0, st->product_limbs + 4 * n, xy);
        mpfr_ptr terms[3] = {xx, yy, (mpfr_ptr)a_re};
        mpfr_sum(x, (const mpfr_ptr *)terms, 3, MPFR_RNDN);
        mpfr_mul_2ui(xy, xy, 1, MPFR_RNDN);
        mpfr_add(y, xy, a_im, MPFR_RNDN);
        return;
    }
    // A zero, not a number, or out of range: MPFR's own products at twice the precision.
    mpfr_sqr(st->xx, x, MPFR_RNDN);
    mpfr_sqr(st->yy, y, MPFR_RNDN);
    mpfr_mul(st->xy, x, y, MPFR_RNDN);
    mpfr_neg(st->yy, st->yy, MPFR_RNDN);
    mpfr_ptr terms[3] = {st->xx, st->yy, (mpfr_ptr)a_re};
    mpfr_sum(x, (const mpfr_ptr *)terms, 3, MPFR_RNDN);
    mpfr_mul_2ui(st->xy, st->xy, 1, MPFR_RNDN);
    mpfr_add(y, st->xy, a_im, MPFR_RNDN);
}

/// Whether the FFT form can take the next step from the state in digits, and how many of the
/// result's coefficients each lane reads (the product's, a's digits and a few for the carries).
static int plan_step(glint_orbit_stepper *st) {
    const long L = st->digits;
    if (L + 1 > st->max_digits) return 0;
    // Values far outside MPFR's exponent range (an orbit falling to 0 doubles its exponent each
    // step) are MPFR's to underflow or overflow, and the grid must not overflow a long.
    const long limit = (long)(mpfr_get_emax() < -mpfr_get_emin() ? mpfr_get_emax() : -mpfr_get_emin()) / 4;
    if (st->grid < -limit || st->grid + (long)st->b * (L + 1) > limit) return 0;
    st->result_grid = 2 * st->grid;
    for (int i = 0; i < 2; i++) {
        const lane *ln = &st->lanes[i];
        long count = 2 * L + 4;
        if (!ln->a_zero) {
            const long delta = ln->a_low - st->result_grid;
            if (delta < 0) return 0;
            const long need = delta / st->b + ln->a_count + 3;
            if (need > count) count = need;
        }
        if (count > st->n) return 0;
        st->count[i] = count;
    }
    return 1;
}

/// Each lane's result in `next` becomes its state from digit `low` on (the buffers trade roles).
static void adopt_next(glint_orbit_stepper *st, long low) {
    for (int i = 0; i < 2; i++) {
        lane *ln = &st->lanes[i];
        uint32_t *t = ln->cur_buffer;
        ln->cur_buffer = ln->next;
        ln->next = t;
        ln->cur = ln->cur_buffer + low;
        ln->sign = ln->next_sign;
        ln->zero = ln->next_zero;
    }
}

/// Moves the state from MPFR (st->x, st->y) to digits where the FFT form can take the next step;
/// whether it did.
static int to_digits(glint_orbit_stepper *st) {
    mpfr_srcptr v[2] = {st->x, st->y};
    if (mpfr_zero_p(v[0]) && mpfr_zero_p(v[1])) return 0;
    if (!mpfr_number_p(v[0]) || !mpfr_number_p(v[1])) return 0;
    const long bits = 64 * st->limbs;
    const long ex = mpfr_zero_p(v[0]) ? mpfr_get_exp(v[1]) : mpfr_get_exp(v[0]);
    const long ey = mpfr_zero_p(v[1]) ? ex : mpfr_get_exp(v[1]);
    const long e = ex > ey ? ex : ey, gap = ex > ey ? ex - ey : ey - ex;
    const long L = (bits + gap + 2 + st->b - 1) / st->b;
    if (L + 1 > st->max_digits) return 0;
    const long grid = e + 2 - L * st->b;   // |x|, |y| < 2^(L·b − 2 + grid)
    for (int i = 0; i < 2; i++) {
        lane *ln = &st->lanes[i];
        uint32_t *d = ln->next;
        ln->next_zero = mpfr_zero_p(v[i]) != 0;
        ln->next_sign = mpfr_signbit(v[i]) ? -1 : 1;
        if (ln->next_zero) memset(d, 0, sizeof(uint32_t) * (size_t)(L + 1));
        else digits_from_mpfr(st, v[i], grid, L + 1, d);
    }
    const long saved_grid = st->grid, saved_digits = st->digits;
    st->grid = grid;
    st->digits = L;
    if (!plan_step(st)) {
        st->grid = saved_grid;
        st->digits = saved_digits;
        return 0;
    }
    adopt_next(st, 0);
    st->in_mpfr = 0;
    return 1;
}

/// The state in digits as MPFR numbers in st->x, st->y.
static void to_mpfr(glint_orbit_stepper *st) {
    for (int i = 0; i < 2; i++) {
        const lane *ln = &st->lanes[i];
        digits_to_mpfr(st, ln->cur, st->digits + 1, ln->sign, ln->zero, st->grid, i ? st->y : st->x);
    }
    st->in_mpfr = 1;
}

/// After an FFT step both lanes' results become the state: their digits from the lowest kept
/// one of either (so both stay on one grid), in place (the buffers trade roles).
static void commit(glint_orbit_stepper *st) {
    long low = -1, high = -1;
    for (int i = 0; i < 2; i++) {
        const lane *ln = &st->lanes[i];
        if (ln->next_zero) continue;
        if (low < 0 || ln->low < low) low = ln->low;
        if (ln->top > high) high = ln->top;
    }
    if (low < 0) {
        // Both exactly zero: the MPFR form takes it from here.
        mpfr_set_zero(st->x, st->lanes[0].next_sign);
        mpfr_set_zero(st->y, st->lanes[1].next_sign);
        st->in_mpfr = 1;
        return;
    }
    adopt_next(st, low);
    st->grid = st->result_grid + low * st->b;
    st->digits = high - low + 1;
    if (!plan_step(st)) to_mpfr(st);
}

// MARK: running an orbit

static void *worker_main(void *arg) {
    glint_orbit_stepper *st = arg;
    unsigned long seen = st->worker_start;
    for (;;) {
        unsigned spins = 0;
        unsigned long go;
        while ((go = atomic_load_explicit(&st->go, memory_order_acquire)) == seen) pause_or_yield(&spins);
        seen = go;
        if (atomic_load_explicit(&st->stop, memory_order_acquire)) break;
        lane_forward(st, 1);
        barrier(st);
        lane_result(st, 1);
        atomic_store_explicit(&st->done, go, memory_order_release);
    }
    return NULL;
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int start_worker(glint_orbit_stepper *st) {
    atomic_store(&st->stop, 0);
    st->worker_start = atomic_load(&st->go);
    atomic_store(&st->done, st->worker_start);
    return pthread_create(&st->worker, NULL, worker_main, st) == 0;
}

static void stop_worker(glint_orbit_stepper *st) {
    atomic_store_explicit(&st->stop, 1, memory_order_release);
    atomic_fetch_add_explicit(&st->go, 1, memory_order_release);
    pthread_join(st->worker, NULL);
}

/// One step of the state, z <- z² + a; the new point's parts as doubles (mpfr_get_d's).
static void step(glint_orbit_stepper *st, mpfr_srcptr a_re, mpfr_srcptr a_im, int threaded, double *re, double *im) {
    if (!st->in_mpfr) {
        if (threaded) {
            const unsigned long go = atomic_load_explicit(&st->go, memory_order_relaxed) + 1;
            atomic_store_explicit(&st->go, go, memory_order_release);
            unsigned spins = 0;
            lane_forward(st, 0);
            barrier(st);
            lane_result(st, 0);
            while (atomic_load_explicit(&st->done, memory_order_acquire) != go) pause_or_yield(&spins);
        } else {
            lane_forward(st, 0);
            lane_forward(st, 1);
            lane_result(st, 0);
            lane_result(st, 1);
        }
        if (st->lanes[0].ok && st->lanes[1].ok) {
            *re = st->lanes[0].value;
            *im = st->lanes[1].value;
            if (isnan(*re) || isnan(*im)) {
                // Outside the normal doubles: through MPFR for mpfr_get_d's rounding.
                digits_to_mpfr(st, st->lanes[0].next, st->count[0] + 1, st->lanes[0].next_sign, st->lanes[0].next_zero,
                               st->result_grid, st->x);
                digits_to_mpfr(st, st->lanes[1].next, st->count[1] + 1, st->lanes[1].next_sign, st->lanes[1].next_zero,
                               st->result_grid, st->y);
                *re = mpfr_get_d(st->x, MPFR_RNDN);
                *im = mpfr_get_d(st->y, MPFR_RNDN);
            }
            commit(st);
            return;
        }
        // A check failed: this step through MPFR.
        to_mpfr(st);
    }
    if (st->fft_run) st->mpfr_steps++;
    step_mpfr(st, st->x, st->y, a_re, a_im);
    *re = mpfr_get_d(st->x, MPFR_RNDN);
    *im = mpfr_get_d(st->y, MPFR_RNDN);
    if (st->fft_run) to_digits(st);
}

/// a's digits for the lane: |a| × 2^r for every r < b, and where its bits lie.
static int setup_a(glint_orbit_stepper *st, int which, mpfr_srcptr a) {
    lane *ln = &st->lanes[which];
    ln->a_zero = mpfr_zero_p(a) != 0;
    ln->a_sign = mpfr_signbit(a) ? -1 : 1;
    if (ln->a_zero) return 1;
    if (!mpfr_number_p(a)) return 0;
    const int b = st->b, G = group_digits(b), LG = group_limbs(b);
    const long limbs = (mpfr_get_prec(a) + 63) / 64;
    const long count = (64 * limbs + b - 1) / b + 1;
    const long groups = (count + G - 1) / G;
    if (ln->a_stride < groups * G) {
        free(ln->a_tables);
        ln->a_tables = calloc((size_t)(b * groups * G), sizeof(uint32_t));
        if (!ln->a_tables) { ln->a_stride = 0; return 0; }
        ln->a_stride = groups * G;
    }
    u64 *x = calloc((size_t)(groups * LG + 1), sizeof(u64));
    if (!x) return 0;
    const u64 *m = (const u64 *)mpfr_custom_get_significand(a);
    for (int r = 0; r < b; r++) {
        memset(x, 0, sizeof(u64) * (size_t)(groups * LG + 1));
        if (r) x[limbs] = mpn_lshift((mp_limb_t *)x, (const mp_limb_t *)m, limbs, (unsigned)r);
        else memcpy(x, m, sizeof(u64) * (size_t)limbs);
        unpack(x, groups, ln->a_tables + r * ln->a_stride, b);
    }
    free(x);
    ln->a_count = count;
    ln->a_low = mpfr_get_exp(a) - 64 * limbs;
    ln->a_residue = res_limbs(m, limbs);
    return 1;
}

/// Sets the state to (x, y) for steps adding a, in digits where the FFT form can take them (for
/// this run the FFT form is off if a cannot be set up for it); starts the second thread where it
/// may help, and returns whether it did. end_run undoes both.
static int begin_run(glint_orbit_stepper *st, mpfr_srcptr x, mpfr_srcptr y, mpfr_srcptr a_re, mpfr_srcptr a_im) {
    st->fft_run = st->fft && setup_a(st, 0, a_re) && setup_a(st, 1, a_im);
    mpfr_set(st->x, x, MPFR_RNDN);
    mpfr_set(st->y, y, MPFR_RNDN);
    st->in_mpfr = 1;
    if (st->fft_run) to_digits(st);
    return st->fft_run && !st->in_mpfr && st->threads == 2 && start_worker(st);
}

static void end_run(glint_orbit_stepper *st, int worker) {
    if (worker) stop_worker(st);
}

/// The need (glint_orbit_following) of the step from the point (zr, zi), whose derivative
/// becomes *next.
static long follow_need(const glint_orbit_following *f, double zr, double zi, long bound, glint_orbit_following *next) {
    double r = 2 * (zr * f->re - zi * f->im), i = 2 * (zr * f->im + zi * f->re);
    long e = f->exp;
    if (f->add_one) {
        if (e < -1000 || (r == 0 && i == 0)) {
            // 2z·dz is far below 1 (or nothing): dz' is 1 to a double's precision.
            r = 1;
            i = 0;
            e = 0;
        } else {
            r += ldexp(1.0, (int)(e < 1100 ? -e : -1100));
        }
    }
    const double m = fabs(r) > fabs(i) ? fabs(r) : fabs(i);
    if (m == 0 || !isfinite(m)) {
        next->re = next->im = 0;
        next->exp = 0;
        return LONG_MAX / 2;
    }
    int k;
    frexp(m, &k);
    next->re = ldexp(r, -k);
    next->im = ldexp(i, -k);
    next->exp = e + k;
    // |dz'| ≥ 2^(exp − 1).
    return f->reference_bits + 64 + bound - (next->exp - 1);
}

static long run(glint_orbit_stepper *st, mpfr_srcptr start_re, mpfr_srcptr start_im, mpfr_srcptr a_re,
                mpfr_srcptr a_im, int fold, int testing_start, long points, double limit, double *re, double *im,
                int *escaped, glint_orbit_following *follow, mpfr_ptr end_re, mpfr_ptr end_im);

long glint_orbit_run(glint_orbit_stepper *st, mpfr_srcptr start_re, mpfr_srcptr start_im, mpfr_srcptr a_re,
                     mpfr_srcptr a_im, int fold, int testing_start, long points, double limit, double *re, double *im,
                     int *escaped) {
    return run(st, start_re, start_im, a_re, a_im, fold, testing_start, points, limit, re, im, escaped, NULL, NULL,
               NULL);
}

long glint_orbit_run_following(glint_orbit_stepper *st, mpfr_srcptr start_re, mpfr_srcptr start_im,
                               mpfr_srcptr a_re, mpfr_srcptr a_im, int testing_start, long points, double limit,
                               double *re, double *im, int *escaped, glint_orbit_following *follow,
                               mpfr_ptr end_re, mpfr_ptr end_im) {
    follow->stopped = 0;
    follow->need = 0;
    return run(st, start_re, start_im, a_re, a_im, 0, testing_start, points, limit, re, im, escaped, follow, end_re,
               end_im);
}

static long run(glint_orbit_stepper *st, mpfr_srcptr start_re, mpfr_srcptr start_im, mpfr_srcptr a_re,
                mpfr_srcptr a_im, int fold, int testing_start, long points, double limit, double *re, double *im,
                int *escaped, glint_orbit_following *follow, mpfr_ptr end_re, mpfr_ptr end_im) {
    *escaped = 0;
    if (points < 1) return 0;
    // A point that is stepped from has |z|² ≤ limit, so the next one is below 2^bound (an
    // infinite limit counts as 2^1000, past any a view can set).
    const double bounded = !(limit > 4) ? 4 : limit < 0x1p1000 ? limit : 0x1p1000;
    const long bound = (long)ceil(log2(bounded)) + 3;
    const int worker = begin_run(st, start_re, start_im, a_re, a_im);
    int prefer_two = 1;
    double trial_mark = 0, trial_two = 0;
    double dr = mpfr_get_d(start_re, MPFR_RNDN), di = mpfr_get_d(start_im, MPFR_RNDN);
    long written = 0;
    for (long k = 0; k < points; k++) {
        re[k] = dr;
        im[k] = di;
        written = k + 1;
        if ((k > 0 || testing_start) && !(dr * dr + di * di <= limit)) {
            *escaped = 1;
            break;
        }
        if (k == points - 1) break;
        if (follow) {
            glint_orbit_following next = *follow;
            const long need = follow_need(follow, dr, di, bound, &next);
            if (need > follow->high || need <= follow->low) {
                follow->stopped = 1;
                follow->need = need;
                break;
            }
            *follow = next;
        }
        if (k > 0 && fold) {
            if (st->in_mpfr) {
                mpfr_abs(st->x, st->x, MPFR_RNDN);
                mpfr_abs(st->y, st->y, MPFR_RNDN);
            } else {
                st->lanes[0].sign = st->lanes[1].sign = 1;
            }
        }
        // Which steps run on two threads: the trials' and then the faster's.
        int two = worker;
        if (worker) {
            const long phase = k < WARM_UP ? -1 : (k - WARM_UP) % (2 * TRIAL + PERIOD);
            if (phase >= TRIAL && phase < 2 * TRIAL) two = 0;
            else if (phase >= 2 * TRIAL) two = prefer_two;
            if (phase == 0) {
                trial_mark = now_seconds();
            } else if (phase == TRIAL) {
                const double now = now_seconds();
                trial_two = now - trial_mark;
                trial_mark = now;
            } else if (phase == 2 * TRIAL) {
                prefer_two = trial_two <= now_seconds() - trial_mark;
            }
        }
        // A few thousand bits make a step about a microsecond: then the question is asked every
        // 256 steps; from 64 limbs (4,096 bits) up, at every step.
        if (st->cancelled && (st->limbs >= 64 || (k & 255) == 0) && st->cancelled()) {
            *escaped = -1;
            break;
        }
        step(st, a_re, a_im, two, &dr, &di);
    }
    end_run(st, worker);
    if (end_re) {
        if (!st->in_mpfr) to_mpfr(st);
        mpfr_set(end_re, st->x, MPFR_RNDN);
        mpfr_set(end_im, st->y, MPFR_RNDN);
    }
    return written;
}

void glint_orbit_set_cancel(glint_orbit_stepper *st, int (*cancelled)(void)) { st->cancelled = cancelled; }

void glint_orbit_step(glint_orbit_stepper *st, mpfr_ptr x, mpfr_ptr y, mpfr_srcptr a_re, mpfr_srcptr a_im) {
    const int worker = begin_run(st, x, y, a_re, a_im);
    double re, im;
    step(st, a_re, a_im, worker, &re, &im);
    end_run(st, worker);
    if (!st->in_mpfr) to_mpfr(st);
    mpfr_set(x, st->x, MPFR_RNDN);
    mpfr_set(y, st->y, MPFR_RNDN);
}

// MARK: set-up

/// Sets up the FFT form for the precision; 0 when it cannot (memory, no plan).
static int setup_fft(glint_orbit_stepper *st) {
    // The shortest length of the form 2^k or 3·2^k whose digits hold the significand with at
    // least 64 bits to spare for the operands' exponents to differ.
    const long bits = 64 * st->limbs;
    long n = 0;
    for (long p = 64; !n && p <= (1L << 30); p *= 2) {
        const long candidates[2] = {p, 3 * p / 2};
        for (int i = 0; i < 2 && !n; i++) {
            const long len = candidates[i];
            if ((len + 1) / 2 * digit_bits(len) >= bits + 64 + 2 + 2 * digit_bits(len)) n = len;
        }
    }
    if (!n) return 0;
    st->n = n;
    st->b = digit_bits(n);
    st->max_digits = (n + 1) / 2;
    const int G = group_digits(st->b), LG = group_limbs(st->b);
    const long digit_capacity = (n + 8 + G - 1) / G * G + G;
    st->result_digits = digit_capacity;
    st->plans = plans_for(n);
    if (!st->plans) return 0;
    st->limbs_buffer = calloc((size_t)(digit_capacity / G * LG + 8), sizeof(u64));
    st->digit_buffer = calloc((size_t)digit_capacity, sizeof(uint32_t));
    if (!st->limbs_buffer || !st->digit_buffer) return 0;
    for (int i = 0; i < 2; i++) {
        lane *ln = &st->lanes[i];
        ln->coef_storage = fftw_alloc_real((size_t)n + 4);
        if (ln->coef_storage) memset(ln->coef_storage, 0, sizeof(double) * 4);
        ln->coef = ln->coef_storage ? ln->coef_storage + 4 : NULL;
        ln->spectrum = fftw_alloc_complex((size_t)(n / 2 + 1));
        ln->product = fftw_alloc_complex((size_t)(n / 2 + 1));
        // Two digit buffers that trade roles (cur, next), each with a zero digit below it.
        ln->cur_storage = calloc((size_t)(2 * (digit_capacity + 1)), sizeof(uint32_t));
        if (!ln->coef || !ln->spectrum || !ln->product || !ln->cur_storage) return 0;
        ln->cur_buffer = ln->cur_storage + 1;
        ln->next = ln->cur_storage + digit_capacity + 2;
        ln->cur = ln->cur_buffer;
    }
    return 1;
}

static void free_fft(glint_orbit_stepper *st) {
    for (int i = 0; i < 2; i++) {
        lane *ln = &st->lanes[i];
        fftw_free(ln->coef_storage);
        fftw_free(ln->spectrum);
        fftw_free(ln->product);
        free(ln->cur_storage);
        free(ln->a_tables);
    }
    free(st->limbs_buffer);
    free(st->digit_buffer);
}

glint_orbit_stepper *glint_orbit_stepper_create(long precision, int threads, int fft) {
    if (precision < MPFR_PREC_MIN || precision > MPFR_PREC_MAX / 2) return NULL;
    glint_orbit_stepper *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->precision = precision;
    st->limbs = (precision + 63) / 64;
    st->threads = threads >= 2 ? 2 : 1;
    mpfr_inits2(precision, st->x, st->y, (mpfr_ptr)0);
    mpfr_inits2(2 * precision, st->xx, st->yy, st->xy, (mpfr_ptr)0);
    mpfr_inits2(precision + GUARD_BITS, st->near_re, st->near_yy, st->near_im, (mpfr_ptr)0);  // used from NEAR_MIN_BITS
    st->product_limbs = malloc(sizeof(u64) * (size_t)(6 * st->limbs));
    if (!st->product_limbs) {
        glint_orbit_stepper_destroy(st);
        return NULL;
    }
    st->fft = fft > 0 || (fft < 0 && precision >= FFT_THRESHOLD_BITS);
    if (st->fft && !setup_fft(st)) {
        free_fft(st);
        memset(st->lanes, 0, sizeof st->lanes);
        st->limbs_buffer = NULL;
        st->digit_buffer = NULL;
        st->fft = 0;
    }
    return st;
}

void glint_orbit_stepper_destroy(glint_orbit_stepper *st) {
    if (!st) return;
    if (st->fft) free_fft(st);
    mpfr_clears(st->x, st->y, st->xx, st->yy, st->xy, st->near_re, st->near_yy, st->near_im, (mpfr_ptr)0);
    free(st->product_limbs);
    free(st);
}

int glint_orbit_stepper_uses_fft(const glint_orbit_stepper *st) { return st->fft; }
unsigned long glint_orbit_stepper_mpfr_steps(const glint_orbit_stepper *st) { return st->mpfr_steps; }
