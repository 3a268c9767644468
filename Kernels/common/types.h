#ifndef GLINT_TYPES_H
#define GLINT_TYPES_H
/* Structs shared by the kernels and the Swift host. This one header is included by the kernels
   and imported into Swift (module CGlintTypes), so each struct is defined exactly once.
   Rules: fixed-width members only, 8-byte members first, padding written out, total size a
   multiple of 8. GlintCLTests checks size and offsets on the device against Swift's view. */

#ifdef __OPENCL_VERSION__
typedef int   glint_i32;
typedef uint  glint_u32;
typedef float glint_f32;
typedef ulong glint_u64;
#else
#include <stdint.h>
typedef int32_t  glint_i32;
typedef uint32_t glint_u32;
typedef float    glint_f32;
typedef uint64_t glint_u64;
#endif

/* One fractal render: the view, the iteration and the colouring (112 bytes).
   Doubles travel as their bit patterns (glint_u64) so that devices without fp64 can still
   build the float kernels; only the double kernel reinterprets them (as_double). */
typedef struct GlintFractalParams {
    glint_u64 center_re_bits;  /* centre, real part (double)                      */
    glint_u64 center_im_bits;  /* centre, imaginary part (double)                 */
    glint_u64 scale_bits;      /* s = 2/(zoom*H): plane units per pixel (double)  */
    glint_u64 c_re_bits;       /* Julia constant c, real part (double)            */
    glint_u64 c_im_bits;       /* Julia constant c, imaginary part (double)       */
    glint_f32 center_re_hi;    /* centre split into float hi + lo, hi = (float)x  */
    glint_f32 center_re_lo;
    glint_f32 center_im_hi;
    glint_f32 center_im_lo;
    glint_f32 scale;           /* s as float                                      */
    glint_f32 c_re;            /* Julia c as float                                */
    glint_f32 c_im;
    glint_f32 bailout2;        /* escape when |z|^2 > bailout2 (R^2)              */
    glint_f32 log_bailout2;    /* ln(R^2), for smooth colouring                   */
    glint_f32 pad0;            /* keeps the i32 block 8-byte aligned              */
    glint_i32 width;           /* output pixels                                   */
    glint_i32 height;
    glint_i32 ss;              /* samples per pixel side (ss x ss per pixel)      */
    glint_i32 max_iter;        /* iteration limit; points that never escape get it */
    glint_i32 tex_width;       /* image-julia texture size (0 when unused)        */
    glint_i32 tex_height;
    glint_i32 palette;         /* GLINT_PALETTE_*                                 */
    glint_i32 smooth;          /* 1: continuous (smooth) colouring                */
} GlintFractalParams;

/* Formulas (the FORMULA build define). */
#define GLINT_FORMULA_MANDELBROT       0
#define GLINT_FORMULA_JULIA            1
#define GLINT_FORMULA_BURNING_SHIP     2
#define GLINT_FORMULA_SIERPINSKI_JULIA 3
#define GLINT_FORMULA_IMAGE_JULIA      4

/* Palettes. */
#define GLINT_PALETTE_TUTORIAL 0
#define GLINT_PALETTE_GREY     1
#define GLINT_PALETTE_FIRE     2
#define GLINT_PALETTE_OCEAN    3
#define GLINT_PALETTE_RAINBOW  4

/* One mist frame's compose pass (48 bytes). Positions are normalised by the image width, as in
   the Misty Window seed: pixel (x, y) sits at ((x + 0.5) / W, (y + 0.5) / W). */
typedef struct GlintMistParams {
    glint_f32 inv_width;   /* 1 / W                                                  */
    glint_f32 fog_step;    /* weight added per frame (0.01 at 60 fps)                */
    glint_f32 refraction;  /* drop lens strength (3)                                 */
    glint_f32 bend;        /* drop lens curvature: tan(bend * d / r) (0.9)           */
    glint_i32 width;       /* image pixels                                           */
    glint_i32 height;
    glint_i32 tile_size;   /* pixels per side of a binning tile                      */
    glint_i32 tiles_x;     /* tiles per row                                          */
    glint_i32 tiles_y;
    glint_i32 shape_count; /* shapes this frame                                      */
    glint_i32 frame;       /* frame index                                            */
    glint_i32 pad0;        /* keeps the size a multiple of 8                         */
} GlintMistParams;

/* A capsule that clears the mist: a drop or droplet (a == b, refract = 1) or a wipe segment
   (refract = 0). 32 bytes. */
typedef struct GlintMistShape {
    glint_f32 ax, ay;      /* segment start (normalised by width)                    */
    glint_f32 bx, by;      /* segment end                                            */
    glint_f32 radius;      /* clears (and, for drops, refracts) within this distance */
    glint_f32 refract;     /* 1: a drop that shows the sharp image through a lens    */
    glint_f32 shade;       /* drops: rim darkening at the edge (0: none)             */
    glint_f32 pad0;
} GlintMistShape;

#endif
