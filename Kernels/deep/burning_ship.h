#ifndef GLINT_DEEP_BURNING_SHIP_H
#define GLINT_DEEP_BURNING_SHIP_H
/* The Burning Ship's perturbed step, z' = |Re(z^2 + c)| + i |Im(z^2 + c)|: the delta dw of
   z^2 + c as for the Mandelbrot set, then the fold |S + dw| - |S| per part, where S is the
   reference's z^2 + c. Its orbits hold those signed values before the abs, so S at index m is
   O[m], and the reference's z there is |O[m]| per part; only an orbit's first point (the
   centre, or the critical point 0) is z itself. */
#pragma OPENCL FP_CONTRACT OFF
#include "floatexp.h"

/* |s + w| - |s| from the reference's signed part s, its delta w and a = s + w, by the signs of
   s and a: |a| - |s| itself would lose w's digits whenever w is small against s. */
DEEP_INLINE double Deep_BurningShip_Fold(double s, double a, double w)
{
    if (s < 0.0) return a < 0.0 ? -w : (2.0 * s) + w;
    return a < 0.0 ? -((2.0 * s) + w) : w;
}

/* The reference's z at index m from the signed value S = O[m], past an orbit's first point. */
DEEP_INLINE DoubleC Deep_BurningShip_Z(DoubleC S)
{
    const DoubleC z = { fabs(S.re), fabs(S.im) };
    return z;
}

/* The tiny phase, dz = w 2^e and dc = c, to the reference's S = O[m+1]: dw in units of 2^e, the
   sample's z (*x) from that dw before it is normalised, the fold against S in units of 2^e. */
DEEP_INLINE FloatExpC Deep_BurningShip_TinyStep(DoubleC Z, FloatExpC w, FloatExpC c, DoubleC S, DoubleC* x)
{
    const double pr = ((2.0 * ((Z.re * w.re) - (Z.im * w.im))) + ldexp((w.re * w.re) - (w.im * w.im), w.e)) + ldexp(c.re, c.e - w.e);
    const double pi = ((2.0 * ((Z.re * w.im) + (Z.im * w.re))) + ldexp(2.0 * (w.re * w.im), w.e)) + ldexp(c.im, c.e - w.e);
    x->re = fabs(S.re + ldexp(pr, w.e));
    x->im = fabs(S.im + ldexp(pi, w.e));
    const double tr = ldexp(S.re, -w.e), ti = ldexp(S.im, -w.e);
    const FloatExpC n = { Deep_BurningShip_Fold(tr, tr + pr, pr), Deep_BurningShip_Fold(ti, ti + pi, pi), w.e };
    return FloatExpC_Norm(n);
}

/* The double phase, to the reference's S = O[m+1]; the sample's z goes to *x. */
DEEP_INLINE DoubleC Deep_BurningShip_Step(DoubleC Z, DoubleC dz, DoubleC dc, DoubleC S, DoubleC* x)
{
    const double wr = ((2.0 * ((Z.re * dz.re) - (Z.im * dz.im))) + ((dz.re * dz.re) - (dz.im * dz.im))) + dc.re;
    const double wi = ((2.0 * ((Z.re * dz.im) + (Z.im * dz.re))) + (2.0 * (dz.re * dz.im))) + dc.im;
    const double ar = S.re + wr, ai = S.im + wi;
    x->re = fabs(ar);
    x->im = fabs(ai);
    const DoubleC n = { Deep_BurningShip_Fold(S.re, ar, wr), Deep_BurningShip_Fold(S.im, ai, wi) };
    return n;
}

#endif
