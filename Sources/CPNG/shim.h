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
#endif
