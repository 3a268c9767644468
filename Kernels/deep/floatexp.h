#ifndef GLINT_DEEP_FLOATEXP_H
#define GLINT_DEEP_FLOATEXP_H
/* The extended-range complex number of the deep zoom: a mantissa pair with its own exponent,
   value (re + i im) 2^e, for deltas far below the smallest double. Normalised, the larger part
   of the mantissa is in [1, 2). OpenCL's ldexp and ilogb are exact, as Swift's are, so each
   operation here gives the bits of its Swift twin's (Sources/GlintWorkloads/Fractal/Deep/). */
#pragma OPENCL FP_CONTRACT OFF

#ifndef PERTURB_ZERO_EXPONENT
#error "the perturbation kernels are built with PERTURB_TINY_LIMIT, PERTURB_ZERO_EXPONENT and PERTURB_FIRST_LEVEL"
#endif

/* Every deep/ function is forced inline: PoCL's inliner leaves a step with its many ldexp out of
   line, and the call then passes its struct result through memory. */
#define DEEP_INLINE inline __attribute__((always_inline))

/* Scalar pairs rather than double2, for the reason common/rng.h gives. */
typedef struct { double re, im; } DoubleC;
typedef struct { double re, im; int e; } FloatExpC;

/* x scaled so that the larger magnitude of its mantissa is in [1, 2), e gaining the shift;
   unchanged when that magnitude is 0 or not finite. */
DEEP_INLINE FloatExpC FloatExpC_Norm(FloatExpC x)
{
    const double ar = fabs(x.re), ai = fabs(x.im);
    const double big = ar > ai ? ar : ai;
    if (big == 0.0 || !isfinite(big)) return x;
    const int k = ilogb(big);
    const FloatExpC n = { ldexp(x.re, -k), ldexp(x.im, -k), x.e + k };
    return n;
}

/* x as a plain double pair (each part rounded once, to 0 below the subnormals). */
DEEP_INLINE DoubleC FloatExpC_ToDouble(FloatExpC x)
{
    const DoubleC d = { ldexp(x.re, x.e), ldexp(x.im, x.e) };
    return d;
}

/* ilogb of x's larger part, PERTURB_ZERO_EXPONENT for x = 0: where a sample starts and which
   table steps its dc allows. */
DEEP_INLINE int FloatExpC_Exponent(FloatExpC x)
{
    const double big = fabs(x.re) > fabs(x.im) ? fabs(x.re) : fabs(x.im);
    return big == 0.0 ? PERTURB_ZERO_EXPONENT : ilogb(big) + x.e;
}

/* a x, not normalised: the mantissas multiply, the exponents add. */
DEEP_INLINE FloatExpC FloatExpC_Mul(FloatExpC a, FloatExpC x)
{
    const FloatExpC p = { (a.re * x.re) - (a.im * x.im), (a.re * x.im) + (a.im * x.re), a.e + x.e };
    return p;
}

/* x + y, not normalised: both mantissas are brought to the larger exponent first. */
DEEP_INLINE FloatExpC FloatExpC_Add(FloatExpC x, FloatExpC y)
{
    const int f = x.e > y.e ? x.e : y.e;
    const FloatExpC s = { ldexp(x.re, x.e - f) + ldexp(y.re, y.e - f),
                          ldexp(x.im, x.e - f) + ldexp(y.im, y.e - f), f };
    return s;
}

#endif
