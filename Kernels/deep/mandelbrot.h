#ifndef GLINT_DEEP_MANDELBROT_H
#define GLINT_DEEP_MANDELBROT_H
/* The Mandelbrot set's perturbed step: z' = z^2 + c against the reference Z gives
   dz' = 2 Z dz + dz^2 + dc. Its orbit holds z itself (O[0] = 0, O[1] = C), so Z at index m is
   O[m]. */
#pragma OPENCL FP_CONTRACT OFF
#include "floatexp.h"

/* The tiny phase, dz = w 2^e and dc = c: the sum taken in units of 2^e, then normalised. */
DEEP_INLINE FloatExpC Deep_Mandelbrot_TinyStep(DoubleC Z, FloatExpC w, FloatExpC c)
{
    const FloatExpC n = {
        ((2.0 * ((Z.re * w.re) - (Z.im * w.im))) + ldexp((w.re * w.re) - (w.im * w.im), w.e)) + ldexp(c.re, c.e - w.e),
        ((2.0 * ((Z.re * w.im) + (Z.im * w.re))) + ldexp(2.0 * (w.re * w.im), w.e)) + ldexp(c.im, c.e - w.e),
        w.e };
    return FloatExpC_Norm(n);
}

/* The double phase. */
DEEP_INLINE DoubleC Deep_Mandelbrot_Step(DoubleC Z, DoubleC dz, DoubleC dc)
{
    const DoubleC n = {
        ((2.0 * ((Z.re * dz.re) - (Z.im * dz.im))) + ((dz.re * dz.re) - (dz.im * dz.im))) + dc.re,
        ((2.0 * ((Z.re * dz.im) + (Z.im * dz.re))) + (2.0 * (dz.re * dz.im))) + dc.im };
    return n;
}

#endif
