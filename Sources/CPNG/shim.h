#ifndef GLINT_CPNG_SHIM_H
#define GLINT_CPNG_SHIM_H
// Only libpng's simplified png_image_* API is used: it reports errors through the
// png_image struct instead of longjmp, which Swift cannot survive.
#include <png.h>
#endif
