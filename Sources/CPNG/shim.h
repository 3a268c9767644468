#ifndef GLINT_CPNG_SHIM_H
#define GLINT_CPNG_SHIM_H
// Only libpng's simplified png_image_* API is used: it reports errors through the
// png_image struct instead of longjmp, which Swift cannot survive.
#include <png.h>
// zlib (libpng's own compressor) for the fast writer's parts, compressed at once.
#include <zlib.h>

/// deflateInit2 (a macro Swift cannot call): a raw deflate stream (no zlib header or trailer,
/// 32 KiB window, memLevel 8, the default strategy). Z_OK or zlib's error.
static inline int glint_deflate_init_raw(z_streamp stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}
/* Adler-32 (RFC 1950) of `len` bytes continuing `adler`, as zlib's adler32() gives it, 32 bytes
   a step with AVX2 where the processor has it (zlib 1.2's own loop takes one byte a step):
   within a run of 5536 bytes the byte sums and the weighted sums (32 ... 1 for the bytes of a
   step) are kept per lane, and each step adds 32 times the byte sum before it to the weighted sum
   (at most about 9.7e8 a lane after a run: no 32-bit lane overflows). */
typedef unsigned char glint_u8x32 __attribute__((vector_size(32)));
typedef short glint_i16x16 __attribute__((vector_size(32)));
typedef unsigned int glint_u32x8 __attribute__((vector_size(32)));

#if defined(__x86_64__)
__attribute__((target("avx2")))
static inline unsigned long glint_adler32_avx2(unsigned long adler, const unsigned char *p, size_t len) {
    const unsigned long base = 65521;
    unsigned long a = adler & 0xffff, b = (adler >> 16) & 0xffff;
    const glint_u8x32 weights = {32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17,
                                 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    const glint_i16x16 ones = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    const glint_u8x32 zero = {0};
    while (len >= 32) {
        size_t steps = len / 32;
        if (steps > 5536 / 32) steps = 5536 / 32;   /* 173 steps */
        size_t n = steps * 32;
        glint_u32x8 vs1 = {0}, vs2 = {0}, vprev = {0};
        for (size_t k = 0; k < steps; k++) {
            glint_u8x32 d;
            __builtin_memcpy(&d, p + 32 * k, 32);
            vprev += vs1;
            vs1 += (glint_u32x8)__builtin_ia32_psadbw256((glint_u8x32)d, zero);
            glint_i16x16 m = (glint_i16x16)__builtin_ia32_pmaddubsw256((glint_u8x32)d, (glint_u8x32)weights);
            vs2 += (glint_u32x8)__builtin_ia32_pmaddwd256(m, ones);
        }
        vs2 += vprev * 32;
        unsigned long s1 = 0, s2 = 0;
        for (int l = 0; l < 8; l++) { s1 += (unsigned int)vs1[l]; s2 += (unsigned int)vs2[l]; }
        b = (b + a * n + s2) % base;
        a = (a + s1) % base;
        p += n; len -= n;
    }
    while (len--) { a += *p++; b += a; }
    return ((b % base) << 16) | (a % base);
}
#endif

static inline unsigned long glint_adler32(unsigned long adler, const unsigned char *p, size_t len) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) return glint_adler32_avx2(adler, p, len);
#endif
    return adler32_z(adler, p, len);
}
/* RGBA pixels packed into RGB bytes (the alpha dropped): 4 pixels a step with one byte shuffle
   (SSSE3's pshufb) where the processor has it, a byte at a time elsewhere. */
typedef unsigned char glint_u8x16 __attribute__((vector_size(16)));
#if defined(__x86_64__)
__attribute__((target("ssse3")))
static inline size_t glint_rgba_to_rgb_ssse3(const unsigned char *src, unsigned char *dst, size_t pixels) {
    const glint_u8x16 order = {0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 0x80, 0x80, 0x80, 0x80};
    size_t x = 0;
    /* Each step stores 16 bytes, 12 of them its own: the last 4 stay within the row while at
       least 2 pixels follow the step's 4. */
    for (; x + 6 <= pixels; x += 4) {
        glint_u8x16 v;
        __builtin_memcpy(&v, src + 4 * x, 16);
        v = (glint_u8x16)__builtin_ia32_pshufb128((glint_u8x16)v, order);
        __builtin_memcpy(dst + 3 * x, &v, 16);
    }
    return x;
}
#endif

static inline void glint_rgba_to_rgb(const unsigned char *src, unsigned char *dst, size_t pixels) {
    size_t x = 0;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("ssse3")) x = glint_rgba_to_rgb_ssse3(src, dst, pixels);
#endif
    for (; x < pixels; x++) {
        dst[3 * x] = src[4 * x]; dst[3 * x + 1] = src[4 * x + 1]; dst[3 * x + 2] = src[4 * x + 2];
    }
}
#endif
