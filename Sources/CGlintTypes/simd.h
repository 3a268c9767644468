/* Lane-wise operations for the Swift CPU path that Swift's standard library does not lower to
   single vector instructions (its Float.squareRoot() keeps libm's errno check, one lane at a
   time). Host only; the kernels never include this header. */
#ifndef GLINT_SIMD_H
#define GLINT_SIMD_H

typedef float glint_float8 __attribute__((ext_vector_type(8)));

/* Correctly rounded square root of each lane (vsqrtps): the same values as the kernels' sqrt. */
static inline glint_float8 glint_sqrt8(glint_float8 v) { return __builtin_elementwise_sqrt(v); }

#endif
