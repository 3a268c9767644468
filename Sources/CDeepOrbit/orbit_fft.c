// The FFT form's step, lane by lane (orbit_internal.h describes the form).
#include "orbit_internal.h"

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
void orbit_lane_forward(glint_orbit_stepper *st, int which) {
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
void orbit_lane_result(glint_orbit_stepper *st, int which) {
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
