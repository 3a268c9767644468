// The MPFR form of the step: exact products and one rounding (orbit_internal.h).
#include "orbit_internal.h"

// MARK: the MPFR form

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
void orbit_step_mpfr(glint_orbit_stepper *st, mpfr_ptr x, mpfr_ptr y, mpfr_srcptr a_re, mpfr_srcptr a_im) {
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
