/* Shared by the perturbation kernels (perturb.cl, perturb_formulas.cl): the sample's offset, the
   renormalisation of a tiny delta and the exponent that decides where a sample starts. Swift
   twins: PerturbationCPU.sampleDelta, .norm and .offsetExponent. The host passes the constants
   (PerturbationDefines in PerturbationCPU.swift), so both sides read one value:
     PERTURB_TINY_LIMIT      deltas from 2^PERTURB_TINY_LIMIT up are plain doubles
     PERTURB_ZERO_EXPONENT   the exponent given to a zero offset
     PERTURB_FIRST_LEVEL     the shortest stored BLA level (steps of 2^PERTURB_FIRST_LEVEL) */
#ifndef GLINT_PERTURB_H
#define GLINT_PERTURB_H
#pragma OPENCL FP_CONTRACT OFF

#if !defined(PERTURB_TINY_LIMIT) || !defined(PERTURB_ZERO_EXPONENT) || !defined(PERTURB_FIRST_LEVEL)
#error "the perturbation kernels are built with PERTURB_TINY_LIMIT, PERTURB_ZERO_EXPONENT and PERTURB_FIRST_LEVEL"
#endif

/* The sample's offset mantissa: scale_bits holds the pixel spacing's mantissa in [1, 2). */
inline double2 Perturb_SampleDelta(const GlintFractalParams p, int sx, int sy)
{
    const double spacing = as_double(p.scale_bits);
    const double ss = (double)p.ss;
    const double half_w = (double)p.width * 0.5, half_h = (double)p.height * 0.5;
    const double d_re = (((double)sx + 0.5) / ss - half_w) * spacing;
    const double off_im = (((double)sy + 0.5) / ss - half_h) * spacing;
    return (double2)(d_re, -off_im);
}

/* ilogb of the offset d 2^E (its larger part), PERTURB_ZERO_EXPONENT for d = 0. */
inline int Perturb_OffsetExponent(double d_re, double d_im, int E)
{
    const double big = fabs(d_re) > fabs(d_im) ? fabs(d_re) : fabs(d_im);
    return big == 0.0 ? PERTURB_ZERO_EXPONENT : ilogb(big) + E;
}

/* (re, im) scaled so that the larger magnitude is in [1, 2); e gains the shift. Unchanged when
   that magnitude is 0 or not finite. */
inline void Perturb_Norm(double* re, double* im, int* e)
{
    const double ar = fabs(*re), ai = fabs(*im);
    const double big = ar > ai ? ar : ai;
    if (big == 0.0 || !isfinite(big)) return;
    const int k = ilogb(big);
    *re = ldexp(*re, -k);
    *im = ldexp(*im, -k);
    *e += k;
}

#endif
