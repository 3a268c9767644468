// The stepper's digits: transform lengths and their plans, packing limbs into digits and back,
// the state's moves between MPFR and digits, and set-up (orbit_internal.h).
#include "orbit_internal.h"

/// The residue of the limbs m[0 ..< n].
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
void orbit_digits_to_mpfr(glint_orbit_stepper *st, const uint32_t *d, long count, int sign, int zero, long grid,
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

// MARK: the state's moves between the forms

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
int orbit_to_digits(glint_orbit_stepper *st) {
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
void orbit_to_mpfr(glint_orbit_stepper *st) {
    for (int i = 0; i < 2; i++) {
        const lane *ln = &st->lanes[i];
        orbit_digits_to_mpfr(st, ln->cur, st->digits + 1, ln->sign, ln->zero, st->grid, i ? st->y : st->x);
    }
    st->in_mpfr = 1;
}

/// After an FFT step both lanes' results become the state: their digits from the lowest kept
/// one of either (so both stay on one grid), in place (the buffers trade roles).
void orbit_commit(glint_orbit_stepper *st) {
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
    if (!plan_step(st)) orbit_to_mpfr(st);
}

/// a's digits for the lane: |a| × 2^r for every r < b, and where its bits lie.
int orbit_setup_a(glint_orbit_stepper *st, int which, mpfr_srcptr a) {
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

// MARK: set-up

/// Sets up the FFT form for the precision; 0 when it cannot (memory, no plan).
int orbit_setup_fft(glint_orbit_stepper *st) {
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

void orbit_free_fft(glint_orbit_stepper *st) {
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
