/* Lane-wise operations for the Swift CPU path that Swift's standard library does not lower to
   single vector instructions (its Float.squareRoot() keeps libm's errno check, one lane at a
   time; it has no mask-to-bits). Host only; the kernels never include this header. */
#ifndef GLINT_SIMD_H
#define GLINT_SIMD_H

#include "../../Kernels/common/types.h"

typedef float glint_float8 __attribute__((ext_vector_type(8)));
typedef int glint_int8 __attribute__((ext_vector_type(8)));
typedef unsigned glint_uint8 __attribute__((ext_vector_type(8)));

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

/* clamp(floor(v + 0.5), 0, 255) of each lane as a byte (the kernels' Color_To8Bit / blur.cl's TO_PIX1,
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
typedef double glint_double8 __attribute__((ext_vector_type(8)));

/* glint_any16 for an 8-lane mask of 64-bit lanes (double comparisons): each lane is all ones or
   zero, so its two 32-bit halves are too. */
static inline int glint_any8l(glint_long8 m) { return glint_any16((glint_int16)m); }

/* Each of 8 double lanes converted to a 32-bit integer, rounded toward zero; lanes in int range. */
static inline glint_int8 glint_trunc8d(glint_double8 v) { return __builtin_convertvector(v, glint_int8); }

/* Each of 8 double lanes rounded to float (vcvtpd2ps). */
static inline glint_float8 glint_float8_of_double(glint_double8 v) { return __builtin_convertvector(v, glint_float8); }


static inline glint_float16 glint_load16(const float *p) { glint_float16 v; __builtin_memcpy(&v, p, sizeof v); return v; }
static inline void glint_store16(float *p, glint_float16 v) { __builtin_memcpy(p, &v, sizeof v); }

/* The recursive blur's vertical pass over one strip of 8 pixels (32 lanes) of an 8-bit image,
   in one loop: each step reads its row of the strip straight from the image (the extended row t
   is source row rowMap[t], or zeros where it is -1; rows before the first are zeros), takes it and
   the row leaving stage 0's window through the four running-sum boxes, and from step 2 pad on
   stores a finished row of the image between the passes as 16-bit lanes. The same operations in
   the same order as gatherBytes, BoxPasses.sweep and scatterUInt16 (blur.cl's BOX_LINE), without
   their line buffer: the strip's rows are read where they lie, and the next rows' lines are
   asked for ahead (each row is in another 4 KiB page, where the processor's prefetchers stop).
   Rings 1 to 3 hold two vectors a slot (the strip's halves), their first-read slots zero.
   `streaming`: rows go past the caches (dst and dstStride 32-byte aligned). */
static inline glint_float16 glint_row16_u8(const unsigned char *src, long stride, const int *rowMap, long t, long lane) {
    int row = rowMap[t];
    if (row < 0) return (glint_float16)0.0f;
    glint_uchar16 b;
    __builtin_memcpy(&b, src + row * stride + lane, sizeof b);
    return __builtin_convertvector(b, glint_float16);
}

/* rint(max(f, 0)) as 16-bit lanes (f at most 65535): adding 1.5 * 2^23 leaves the rounded value in
   the low mantissa bits (the image between the recursive blur's passes, in 1/256). */
static inline glint_ushort16 glint_ushorts16(glint_float16 f) {
    glint_float16 a = __builtin_elementwise_max(f, (glint_float16)0.0f) + 12582912.0f;
    glint_int16 bits;
    __builtin_memcpy(&bits, &a, sizeof bits);
    return __builtin_convertvector(bits - 0x4B400000, glint_ushort16);
}

static inline void glint_box_columns_u8(const unsigned char *src, long stride, const int *rowMap, long steps, long pad,
                                        float *r1, float *r2, float *r3, long w0, long w1, long w2, long w3,
                                        long m1, long m2, long m3, float scale, long prefetch,
                                        unsigned char *dst, long dstStride, int streaming) {
#pragma clang fp contract(off)
    glint_float16 s0[2] = {0, 0}, s1[2] = {0, 0}, s2[2] = {0, 0}, s3[2] = {0, 0};
    for (long t = 0; t < steps; t++) {
        if (t + prefetch < steps && rowMap[t + prefetch] >= 0) __builtin_prefetch(src + rowMap[t + prefetch] * stride, 0, 3);
        for (int k = 0; k < 2; k++) {
            glint_float16 v = glint_row16_u8(src, stride, rowMap, t, 16 * k);
            glint_float16 o0 = t >= w0 ? glint_row16_u8(src, stride, rowMap, t - w0, 16 * k) : (glint_float16)0.0f;
            s0[k] = s0[k] + (v - o0);
            glint_float16 o1 = glint_load16(r1 + 16 * (2 * ((t - w1) & m1) + k));
            glint_store16(r1 + 16 * (2 * (t & m1) + k), s0[k]);
            s1[k] = s1[k] + (s0[k] - o1);
            glint_float16 o2 = glint_load16(r2 + 16 * (2 * ((t - w2) & m2) + k));
            glint_store16(r2 + 16 * (2 * (t & m2) + k), s1[k]);
            s2[k] = s2[k] + (s1[k] - o2);
            glint_float16 o3 = glint_load16(r3 + 16 * (2 * ((t - w3) & m3) + k));
            glint_store16(r3 + 16 * (2 * (t & m3) + k), s2[k]);
            s3[k] = s3[k] + (s2[k] - o3);
        }
        if (t >= 2 * pad) {
            unsigned char *row = dst + (t - 2 * pad) * dstStride;
            glint_ushort16 a = glint_ushorts16(s3[0] * scale), b = glint_ushorts16(s3[1] * scale);
            if (streaming) {
                __builtin_nontemporal_store(a, (glint_ushort16 *)row);
                __builtin_nontemporal_store(b, (glint_ushort16 *)row + 1);
            } else {
                __builtin_memcpy(row, &a, sizeof a);
                __builtin_memcpy(row + 32, &b, sizeof b);
            }
        }
    }
}

typedef unsigned int glint_uint4 __attribute__((ext_vector_type(4)));
typedef unsigned long long glint_ulong4 __attribute__((ext_vector_type(4)));

/* A 4x4 transpose of the 4-lane vectors q[0..3] (any one lane type) into out[0..3]: lane j of
   out[i] is lane i of q[j]. Six shuffles. */
#define GLINT_TRANSPOSE4(q, out) do { \
    __typeof__((q)[0]) lo01_ = __builtin_shufflevector((q)[0], (q)[1], 0, 4, 1, 5); \
    __typeof__((q)[0]) lo23_ = __builtin_shufflevector((q)[2], (q)[3], 0, 4, 1, 5); \
    __typeof__((q)[0]) hi01_ = __builtin_shufflevector((q)[0], (q)[1], 2, 6, 3, 7); \
    __typeof__((q)[0]) hi23_ = __builtin_shufflevector((q)[2], (q)[3], 2, 6, 3, 7); \
    (out)[0] = __builtin_shufflevector(lo01_, lo23_, 0, 1, 4, 5); \
    (out)[1] = __builtin_shufflevector(lo01_, lo23_, 2, 3, 6, 7); \
    (out)[2] = __builtin_shufflevector(hi01_, hi23_, 0, 1, 4, 5); \
    (out)[3] = __builtin_shufflevector(hi01_, hi23_, 2, 3, 6, 7); \
} while (0)

/* The blur's row groups back as bytes, four pixels a step: v holds `width` vectors of 16 floats,
   vector x being pixel x of 4 rows (RGBA of row 0, then rows 1, 2, 3). Each lane becomes
   clamp(floor(v + 0.5), 0, 255) (glint_bytes16), and a 4x4 transpose of 32-bit pixels gives each
   row 16 bytes to store; rows from `rows` on (an image's last group) are not written. rows: 1 to 4. */
static inline void glint_untranspose_bytes(const float *v, long width, long rows, unsigned char *p, long stride) {
    long x = 0;
    for (; x + 4 <= width; x += 4) {
        glint_uint4 u[4];
        for (int i = 0; i < 4; i++) {
            glint_float16 f;
            __builtin_memcpy(&f, v + 16 * (x + i), sizeof f);
            glint_uchar16 b = glint_bytes16(f);
            __builtin_memcpy(&u[i], &b, sizeof b);
        }
        glint_uint4 r[4];
        GLINT_TRANSPOSE4(u, r);
        for (long y = 0; y < rows; y++) __builtin_memcpy(p + y * stride + 4 * x, &r[y], 16);
    }
    for (; x < width; x++) {
        glint_float16 f;
        __builtin_memcpy(&f, v + 16 * x, sizeof f);
        glint_uchar16 b = glint_bytes16(f);
        for (long y = 0; y < rows; y++) __builtin_memcpy(p + y * stride + 4 * x, (unsigned char *)&b + 4 * y, 4);
    }
}

/* The blur's image between passes (UInt16 RGBA) to row groups, four pixels a step: vector x of
   `out` gets pixel x of rows 0 to 3 as 16 floats (a 4x4 transpose of 64-bit pixels). Rows from
   `rows` on repeat the last live row (their results are never written). rows: 1 to 4. */
static inline void glint_transpose_ushorts(const unsigned char *p, long stride, long rows, long width, float *out) {
    const unsigned char *r[4];
    for (long y = 0; y < 4; y++) r[y] = p + (y < rows ? y : rows - 1) * stride;
    long x = 0;
    for (; x + 4 <= width; x += 4) {
        glint_ulong4 q[4];
        for (int y = 0; y < 4; y++) __builtin_memcpy(&q[y], r[y] + 8 * x, sizeof q[y]);
        glint_ulong4 px[4];
        GLINT_TRANSPOSE4(q, px);
        for (int i = 0; i < 4; i++) {
            glint_ushort16 h;
            __builtin_memcpy(&h, &px[i], sizeof h);
            glint_float16 f = __builtin_convertvector(h, glint_float16);
            __builtin_memcpy(out + 16 * (x + i), &f, sizeof f);
        }
    }
    for (; x < width; x++) {
        glint_ushort16 h;
        for (int y = 0; y < 4; y++) __builtin_memcpy((unsigned char *)&h + 8 * y, r[y] + 8 * x, 8);
        glint_float16 f = __builtin_convertvector(h, glint_float16);
        __builtin_memcpy(out + 16 * x, &f, sizeof f);
    }
}

/* The mist's shape test (Kernels/mist.cl, mist_compose) for 8 pixels of one row at once: px holds
   their x in window units, py their row's y, weight points at their 8 weights. Each of
   shapes[list[k0 ..< k1]] is tested in the kernel's operations and order, lane by lane, with no
   contraction: the same values as the kernel's (MistCPU.shapeSpan). The weights become
   min(weight + step, 1), then 0 where a shape covers the pixel. lens[l] is the first refracting
   shape over pixel l (-1: none), d2[l] its squared distance. Returns the lanes with a lens as bits. */
static inline unsigned glint_mist_shapes8(glint_float8 px, float py, const GlintMistShape *shapes, const int *list,
                                          long k0, long k1, float *weight, float step, int *lens, float *d2) {
#pragma clang fp contract(off)
    const glint_int8 one = (glint_int8)(glint_float8)1.0f;
    glint_float8 wt;
    __builtin_memcpy(&wt, weight, sizeof wt);
    wt = wt + step;
    glint_int8 full = wt > 1.0f;                                                   /* fmin(w, 1) */
    wt = (glint_float8)(((glint_int8)wt & ~full) | (one & full));
    glint_float8 d2s = (glint_float8)0.0f;
    glint_int8 ln = (glint_int8)(-1);
    for (long k = k0; k < k1; k++) {
        int s = list[k];
        GlintMistShape sh = shapes[s];
        glint_float8 dx = px - sh.ax;
        float dy = py - sh.ay;
        float ex = sh.bx - sh.ax, ey = sh.by - sh.ay;
        float ee = ex * ex + ey * ey;
        glint_float8 t = (glint_float8)0.0f;
        if (ee > 0.0f) {
            glint_float8 q = (dx * ex + dy * ey) / ee;
            q = (glint_float8)((glint_int8)q & ~(q <= 0.0f));                      /* fmax(q, 0), q a number */
            glint_int8 over = q > 1.0f;                                            /* fmin(q, 1) */
            t = (glint_float8)(((glint_int8)q & ~over) | (one & over));
        }
        glint_float8 qx = dx - t * ex, qy = dy - t * ey;
        glint_float8 dd = qx * qx + qy * qy;
        glint_int8 inside = dd < sh.radius * sh.radius;
        wt = (glint_float8)((glint_int8)wt & ~inside);
        if (sh.refract > 0.0f) {
            glint_int8 first = inside & (ln < 0);
            ln = (ln & ~first) | ((glint_int8)s & first);
            d2s = (glint_float8)(((glint_int8)d2s & ~first) | ((glint_int8)dd & first));
        }
    }
    __builtin_memcpy(weight, &wt, sizeof wt);
    __builtin_memcpy(lens, &ln, sizeof ln);
    __builtin_memcpy(d2, &d2s, sizeof d2s);
    return glint_bits8(ln >= 0);
}

/* The colour under refracting drops (mist_compose's lens branch, for MistCPU.shapeSpan)
   for the lanes in `lanes` of 8 pixels of one row, stored over their RGBA at `out`: lane l is the
   pixel at (px[l], py) under shape lens[l], d2[l] its squared distance from the drop's axis. The
   kernel's operations in its order, lane by lane, with no contraction: the same bytes. `sharp` is
   the width x height RGBA camera image; `lanes` is not 0. Lanes outside it compute with the first
   lane's drop (at distance 0: a sample of the pixel itself) and store nothing. */
static inline void glint_mist_lens8(glint_float8 px, float py, const GlintMistShape *shapes, const int *lens,
                                    const float *d2, unsigned lanes, const unsigned char *sharp, long width, long height,
                                    float bend, float refraction, unsigned char *out) {
#pragma clang fp contract(off)
    glint_float8 ax, ay, radius, shade, dd;
    int first = lens[__builtin_ctz(lanes)];
    /* Each lane's drop's fields, and its d2 (0 for lanes outside `lanes`), built in registers:
       scalar loads inserted lane by lane, never stored to memory and read back as a vector (a
       load that no store forwarding serves). */
    int drop[8];
    for (int l = 0; l < 8; l++) drop[l] = (lanes >> l) & 1 ? lens[l] : first;
#define GLINT_LANES8(e) {e(0), e(1), e(2), e(3), e(4), e(5), e(6), e(7)}
#define GLINT_AX(l) shapes[drop[l]].ax
#define GLINT_AY(l) shapes[drop[l]].ay
#define GLINT_RADIUS(l) shapes[drop[l]].radius
#define GLINT_SHADE(l) shapes[drop[l]].shade
#define GLINT_D2(l) ((lanes >> (l)) & 1 ? d2[l] : 0.0f)
    ax = (glint_float8)GLINT_LANES8(GLINT_AX); ay = (glint_float8)GLINT_LANES8(GLINT_AY);
    radius = (glint_float8)GLINT_LANES8(GLINT_RADIUS); shade = (glint_float8)GLINT_LANES8(GLINT_SHADE);
    dd = (glint_float8)GLINT_LANES8(GLINT_D2);
    glint_float8 rel = glint_sqrt8(dd) / radius;
    glint_float8 x = bend * rel, x2 = x * x;                               /* Mist_Tan's Pade approximant */
    glint_float8 tn = x * ((945.0f - 105.0f * x2) + x2 * x2) / ((945.0f - 420.0f * x2) + (15.0f * x2) * x2);
    glint_float8 f = tn * refraction;
    glint_float8 sx = px - f * (px - ax), sy = py - f * (py - ay);
    float fw = (float)width;
    glint_float8 fx = sx * fw - 0.5f, fy = sy * fw - 0.5f;                   /* Mist_Sample: bilinear, edges clamped */
    glint_float8 x0f = __builtin_elementwise_floor(fx), y0f = __builtin_elementwise_floor(fy);
    glint_float8 wx = fx - x0f, wy = fy - y0f;
    glint_int8 x0 = glint_trunc8(__builtin_elementwise_max(__builtin_elementwise_min(x0f, (glint_float8)1e9f), (glint_float8)-1e9f));
    glint_int8 y0 = glint_trunc8(__builtin_elementwise_max(__builtin_elementwise_min(y0f, (glint_float8)1e9f), (glint_float8)-1e9f));
    glint_int8 lo = (glint_int8)0, wmax = (glint_int8)(int)(width - 1), hmax = (glint_int8)(int)(height - 1);
    glint_int8 xa = __builtin_elementwise_min(__builtin_elementwise_max(x0, lo), wmax);
    glint_int8 xb = __builtin_elementwise_min(__builtin_elementwise_max(x0 + 1, lo), wmax);
    glint_int8 ya = __builtin_elementwise_min(__builtin_elementwise_max(y0, lo), hmax);
    glint_int8 yb = __builtin_elementwise_min(__builtin_elementwise_max(y0 + 1, lo), hmax);
    glint_int8 q00, q10, q01, q11;
    /* The four corner pixels, in registers the same way (pixel indices fit 32 bits: images hold
       at most 2^28 pixels). */
    glint_int8 at00 = ya * (int)width + xa, at10 = ya * (int)width + xb;
    glint_int8 at01 = yb * (int)width + xa, at11 = yb * (int)width + xb;
    const int *pix = (const int *)sharp;
#define GLINT_P00(l) pix[at00[l]]
#define GLINT_P10(l) pix[at10[l]]
#define GLINT_P01(l) pix[at01[l]]
#define GLINT_P11(l) pix[at11[l]]
    q00 = (glint_int8)GLINT_LANES8(GLINT_P00); q10 = (glint_int8)GLINT_LANES8(GLINT_P10);
    q01 = (glint_int8)GLINT_LANES8(GLINT_P01); q11 = (glint_int8)GLINT_LANES8(GLINT_P11);
#undef GLINT_LANES8
#undef GLINT_AX
#undef GLINT_AY
#undef GLINT_RADIUS
#undef GLINT_SHADE
#undef GLINT_D2
#undef GLINT_P00
#undef GLINT_P10
#undef GLINT_P01
#undef GLINT_P11
    glint_float8 r2 = rel * rel;
    glint_float8 k = 1.0f - shade * (r2 * r2);
    glint_uint8 rgba = (glint_uint8)0;
    for (int c = 0; c < 4; c++) {
        glint_float8 p00 = glint_float8_of((q00 >> (8 * c)) & 255), p10 = glint_float8_of((q10 >> (8 * c)) & 255);
        glint_float8 p01 = glint_float8_of((q01 >> (8 * c)) & 255), p11 = glint_float8_of((q11 >> (8 * c)) & 255);
        glint_float8 top = p00 + (p10 - p00) * wx, bottom = p01 + (p11 - p01) * wx;
        glint_float8 v = top + (bottom - top) * wy;
        if (c < 3) v = v * k;
        glint_float8 r = __builtin_elementwise_floor(v + 0.5f);                 /* glint_bytes4 */
        r = __builtin_elementwise_min(__builtin_elementwise_max(r, (glint_float8)0.0f), (glint_float8)255.0f);
        rgba |= (glint_uint8)glint_trunc8(r) << (8 * c);
    }
    unsigned pixels[8];
    __builtin_memcpy(pixels, &rgba, 32);
    for (int l = 0; l < 8; l++)
        if ((lanes >> l) & 1) __builtin_memcpy(out + 4 * l, &pixels[l], 4);
}

#endif
