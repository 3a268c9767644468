/* Lane-wise operations for the Swift CPU path that Swift's standard library does not lower to
   single vector instructions (its Float.squareRoot() keeps libm's errno check, one lane at a
   time; it has no mask-to-bits). Host only; the kernels never include this header. */
#ifndef GLINT_SIMD_H
#define GLINT_SIMD_H

typedef float glint_float8 __attribute__((ext_vector_type(8)));
typedef int glint_int8 __attribute__((ext_vector_type(8)));

/* Correctly rounded square root of each lane (vsqrtps): the same values as the kernels' sqrt. */
static inline glint_float8 glint_sqrt8(glint_float8 v) { return __builtin_elementwise_sqrt(v); }

/* Each lane converted to an integer, rounded toward zero (vcvttps2dq); lanes in int range. */
static inline glint_int8 glint_trunc8(glint_float8 v) { return __builtin_convertvector(v, glint_int8); }

/* Each lane converted to float (vcvtdq2ps); exact for lanes of magnitude up to 2^24. */
static inline glint_float8 glint_float8_of(glint_int8 v) { return __builtin_convertvector(v, glint_float8); }

/* Bit l set where lane l of a comparison mask (all ones or zero) is set: one vmovmskps where the
   build targets AVX (the Swift targets are built for Haswell on x86-64), a loop elsewhere. */
#if defined(__AVX__)
static inline unsigned glint_bits8(glint_int8 m) {
    return (unsigned)__builtin_ia32_movmskps256((__attribute__((vector_size(32))) float)m);
}
#else
static inline unsigned glint_bits8(glint_int8 m) {
    unsigned b = 0;
    for (int l = 0; l < 8; l++) b |= (m[l] != 0 ? 1u : 0u) << l;
    return b;
}
#endif

typedef int glint_int16 __attribute__((ext_vector_type(16)));
typedef unsigned char glint_uchar16 __attribute__((ext_vector_type(16)));
typedef unsigned short glint_ushort16 __attribute__((ext_vector_type(16)));

/* Lanes already in 0...255 (0...65535) narrowed to bytes (16-bit lanes) by vector packs and
   shuffles; Swift's lane-wise truncation becomes one extract and one insert per lane. */
static inline glint_uchar16 glint_narrow16_u8(glint_int16 v) { return __builtin_convertvector(v, glint_uchar16); }
static inline glint_ushort16 glint_narrow16_u16(glint_int16 v) { return __builtin_convertvector(v, glint_ushort16); }

/* Stores 64 bytes at a 32-byte aligned `dst` past the caches (vmovntdq): the blur's column pass
   writes its strips a row apart, where ordinary stores would first read every line they fill.
   glint_store_fence makes such stores visible before another thread reads them. */
static inline void glint_stream64(void *dst, glint_ushort16 a, glint_ushort16 b) {
    __builtin_nontemporal_store(a, (glint_ushort16 *)dst);
    __builtin_nontemporal_store(b, (glint_ushort16 *)dst + 1);
}
static inline void glint_store_fence(void) {
#if defined(__x86_64__)
    __builtin_ia32_sfence();
#endif
}

typedef float glint_float16 __attribute__((ext_vector_type(16)));
typedef float glint_float4 __attribute__((ext_vector_type(4)));
typedef int glint_int4 __attribute__((ext_vector_type(4)));
typedef unsigned char glint_uchar4 __attribute__((ext_vector_type(4)));

/* glint_bytes16 for one RGBA pixel. */
static inline glint_uchar4 glint_bytes4(glint_float4 v) {
    glint_float4 r = __builtin_elementwise_floor(v + 0.5f);
    r = __builtin_elementwise_min(__builtin_elementwise_max(r, (glint_float4)0.0f), (glint_float4)255.0f);
    return __builtin_convertvector(__builtin_convertvector(r, glint_int4), glint_uchar4);
}

/* clamp(floor(v + 0.5), 0, 255) of each lane as a byte (the kernels' Color_To8Bit / Blur_ToBytes,
   for lanes that are numbers): one add, round, max, min, convert and pack per eight lanes. */
static inline glint_uchar16 glint_bytes16(glint_float16 v) {
    glint_float16 r = __builtin_elementwise_floor(v + 0.5f);
    r = __builtin_elementwise_min(__builtin_elementwise_max(r, (glint_float16)0.0f), (glint_float16)255.0f);
    return __builtin_convertvector(__builtin_convertvector(r, glint_int16), glint_uchar16);
}

/* Whether any lane of a 16-lane comparison mask is set: the two halves OR-ed, then one
   vmovmskps where the build targets AVX (Swift's any() reduces the lanes with shuffles). */
static inline int glint_any16(glint_int16 m) {
#if defined(__AVX__)
    glint_int8 h = __builtin_shufflevector(m, m, 0, 1, 2, 3, 4, 5, 6, 7) | __builtin_shufflevector(m, m, 8, 9, 10, 11, 12, 13, 14, 15);
    return __builtin_ia32_movmskps256((__attribute__((vector_size(32))) float)h) != 0;
#else
    for (int l = 0; l < 16; l++) if (m[l] != 0) return 1;
    return 0;
#endif
}

/* Each of 16 lanes converted to an integer, rounded toward zero (vcvttps2dq); lanes in int range. */
static inline glint_int16 glint_trunc16(glint_float16 v) { return __builtin_convertvector(v, glint_int16); }

typedef long long glint_long8 __attribute__((ext_vector_type(8)));
typedef long long glint_long4 __attribute__((ext_vector_type(4)));
typedef double glint_double8 __attribute__((ext_vector_type(8)));

/* glint_any16 for an 8-lane mask of 64-bit lanes (double comparisons): one vmovmskpd. */
static inline int glint_any8l(glint_long8 m) {
#if defined(__AVX__)
    glint_long4 h = __builtin_shufflevector(m, m, 0, 1, 2, 3) | __builtin_shufflevector(m, m, 4, 5, 6, 7);
    return __builtin_ia32_movmskpd256((__attribute__((vector_size(32))) double)h) != 0;
#else
    for (int l = 0; l < 8; l++) if (m[l] != 0) return 1;
    return 0;
#endif
}

/* Each of 8 double lanes converted to a 32-bit integer, rounded toward zero; lanes in int range. */
static inline glint_int8 glint_trunc8d(glint_double8 v) { return __builtin_convertvector(v, glint_int8); }

/* Each of 8 double lanes rounded to float (vcvtpd2ps). */
static inline glint_float8 glint_float8_of_double(glint_double8 v) { return __builtin_convertvector(v, glint_float8); }

#endif
