#ifndef GLINT_DEEP_POWER_H
#define GLINT_DEEP_POWER_H
/* Mandelbrot's z^POWER + c perturbed: against the reference Z,
   (Z + dz)^N - Z^N = sum over k = 1 .. N of C(N,k) Z^(N-k) dz^k, taken by Horner's rule in dz:
   t = 1, then t = C(N,j) Z^j + dz t for j = 1 .. N-1, and the delta is dz t + dc. Its orbit holds
   z itself (O[0] = 0, O[1] = C), as the quadratic one's does. */
#pragma OPENCL FP_CONTRACT OFF
#include "floatexp.h"

#ifndef POWER
#define POWER 2
#endif

DEEP_INLINE DoubleC Deep_Power_Mul(DoubleC a, DoubleC b)
{
    const DoubleC r = { (a.re * b.re) - (a.im * b.im), (a.re * b.im) + (a.im * b.re) };
    return r;
}

/* The tiny phase, dz = w 2^e and dc = c: the sum taken in units of 2^e, then normalised. */
DEEP_INLINE FloatExpC Deep_Power_TinyStep(DoubleC Z, FloatExpC w, FloatExpC c)
{
    const DoubleC wd = { w.re, w.im };
    DoubleC t = { 1.0, 0.0 };
    DoubleC zp = Z;
    double b = 1.0;
    for (int j = 1; j < POWER; j++) {
        b = (b * (double)(POWER - j + 1)) / (double)j;   /* C(POWER, j), exact */
        const DoubleC u = Deep_Power_Mul(wd, t);
        t.re = (b * zp.re) + ldexp(u.re, w.e);
        t.im = (b * zp.im) + ldexp(u.im, w.e);
        zp = Deep_Power_Mul(zp, Z);
    }
    const DoubleC s = Deep_Power_Mul(wd, t);
    const FloatExpC n = { s.re + ldexp(c.re, c.e - w.e), s.im + ldexp(c.im, c.e - w.e), w.e };
    return FloatExpC_Norm(n);
}

/* The double phase. */
DEEP_INLINE DoubleC Deep_Power_Step(DoubleC Z, DoubleC dz, DoubleC dc)
{
    DoubleC t = { 1.0, 0.0 };
    DoubleC zp = Z;
    double b = 1.0;
    for (int j = 1; j < POWER; j++) {
        b = (b * (double)(POWER - j + 1)) / (double)j;
        const DoubleC u = Deep_Power_Mul(dz, t);
        t.re = (b * zp.re) + u.re;
        t.im = (b * zp.im) + u.im;
        zp = Deep_Power_Mul(zp, Z);
    }
    const DoubleC s = Deep_Power_Mul(dz, t);
    const DoubleC n = { s.re + dc.re, s.im + dc.im };
    return n;
}

#endif
