#ifndef GLINT_DEEP_JULIA_H
#define GLINT_DEEP_JULIA_H
/* A Julia set's perturbed step: c is the same for every sample, so z' = z^2 + c against the
   reference Z gives dz' = 2 Z dz + dz^2, with no c term. Its orbits hold z itself, so Z at
   index m is O[m]. */
#pragma OPENCL FP_CONTRACT OFF
#include "floatexp.h"

/* The tiny phase, dz = w 2^e: the sum taken in units of 2^e, then normalised. */
DEEP_INLINE FloatExpC Deep_Julia_TinyStep(DoubleC Z, FloatExpC w)
{
    const FloatExpC n = {
        (2.0 * ((Z.re * w.re) - (Z.im * w.im))) + ldexp((w.re * w.re) - (w.im * w.im), w.e),
        (2.0 * ((Z.re * w.im) + (Z.im * w.re))) + ldexp(2.0 * (w.re * w.im), w.e),
        w.e };
    return FloatExpC_Norm(n);
}

/* The double phase. */
DEEP_INLINE DoubleC Deep_Julia_Step(DoubleC Z, DoubleC dz)
{
    const DoubleC n = {
        (2.0 * ((Z.re * dz.re) - (Z.im * dz.im))) + ((dz.re * dz.re) - (dz.im * dz.im)),
        (2.0 * ((Z.re * dz.im) + (Z.im * dz.re))) + (2.0 * (dz.re * dz.im)) };
    return n;
}

#endif
