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

/* One fractal render: the view, the iteration and the colouring (128 bytes).
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
    glint_i32 power;           /* Mandelbrot's z^power + c (2..8); 2 for the rest */
    glint_i32 width;           /* output pixels                                   */
    glint_i32 height;
    glint_i32 ss;              /* samples per pixel side (ss x ss per pixel)      */
    glint_i32 max_iter;        /* iteration limit; points that never escape get it */
    glint_i32 tex_width;       /* image-julia texture size (0 when unused)        */
    glint_i32 tex_height;
    glint_i32 palette;         /* GLINT_PALETTE_*                                 */
    glint_i32 smooth;          /* 1: continuous (smooth) colouring                */
    glint_i32 color;           /* GLINT_COLOR_*: by count, distance or slope      */
    glint_f32 light_x;         /* slope shading: the light's direction in the     */
    glint_f32 light_y;         /*   plane (unit vector, +re right, +im up)        */
    glint_f32 light_h;         /*   and its height                                */
} GlintFractalParams;

/* One isometric render (48 bytes): the source, the canvas and where the source's centre lands
   on it, the extrusion and the corner radius. Source coordinates are continuous pixels, pixel
   (i, j) covering [i, i+1] x [j, j+1]. */
typedef struct GlintIsoParams {
    glint_i32 src_width;       /* source image, pixels                            */
    glint_i32 src_height;
    glint_i32 out_width;       /* output canvas, pixels                           */
    glint_i32 out_height;
    glint_f32 origin_x;        /* canvas position of the source's centre          */
    glint_f32 origin_y;
    glint_f32 src_cx;          /* the source's centre, W/2 and H/2                */
    glint_f32 src_cy;
    glint_f32 depth_src;       /* extrusion along source (1,1): depth * sqrt(2)   */
    glint_f32 radius;          /* corner radius, source pixels (0: square)        */
    glint_i32 ss;              /* anti-aliasing: ss x ss samples per pixel        */
    glint_i32 pad0;            /* padding to a multiple of 8 bytes                */
} GlintIsoParams;

/* Formulas (the FORMULA build define). */
#define GLINT_FORMULA_MANDELBROT       0
#define GLINT_FORMULA_JULIA            1
#define GLINT_FORMULA_BURNING_SHIP     2
#define GLINT_FORMULA_SIERPINSKI_JULIA 3
#define GLINT_FORMULA_IMAGE_JULIA      4

/* Palettes. */
#define GLINT_COLOR_COUNT 0      /* the palette at the escape count            */
#define GLINT_COLOR_DE    1      /* grey by the distance estimate, in pixels    */
#define GLINT_COLOR_SLOPE 2      /* the palette shaded by the slope (normal map) */

#define GLINT_PALETTE_TUTORIAL 0
#define GLINT_PALETTE_GREY     1
#define GLINT_PALETTE_FIRE     2
#define GLINT_PALETTE_OCEAN    3
#define GLINT_PALETTE_RAINBOW  4

/* Ray tracing (Kernels/raytrace.cl; Swift twin Sources/GlintWorkloads/RayTrace/RTTrace.swift). */

/* One ray-traced render: the thin-lens camera, the sky and the path limits (152 bytes).
   Vectors are written out as x, y, z scalars: OpenCL's float3 is 16 bytes and Swift would not
   see it the same way. Each vector row is padded to 16 bytes. */
typedef struct GlintRTParams {
    glint_u64 seed;            /* the counter-based RNG's key                           */
    glint_f32 origin_x;        /* lens centre (lookfrom)                                */
    glint_f32 origin_y;
    glint_f32 origin_z;
    glint_f32 lens_radius;     /* aperture / 2; 0 is a pinhole                          */
    glint_f32 corner_x;        /* lower-left corner of the image on the focus plane     */
    glint_f32 corner_y;
    glint_f32 corner_z;
    glint_f32 t_min;           /* nearest accepted hit distance (shadow-acne guard)     */
    glint_f32 horizontal_x;    /* full image width on the focus plane                   */
    glint_f32 horizontal_y;
    glint_f32 horizontal_z;
    glint_f32 pad0;
    glint_f32 vertical_x;      /* full image height on the focus plane                  */
    glint_f32 vertical_y;
    glint_f32 vertical_z;
    glint_f32 pad1;
    glint_f32 u_x;             /* camera right, unit length (lens offsets)              */
    glint_f32 u_y;
    glint_f32 u_z;
    glint_f32 pad2;
    glint_f32 v_x;             /* camera up, unit length                                */
    glint_f32 v_y;
    glint_f32 v_z;
    glint_f32 pad3;
    glint_f32 sky_bottom_r;    /* sky looking straight down (the book: white)           */
    glint_f32 sky_bottom_g;
    glint_f32 sky_bottom_b;
    glint_f32 pad4;
    glint_f32 sky_top_r;       /* sky looking straight up (the book: 0.5, 0.7, 1.0)     */
    glint_f32 sky_top_g;
    glint_f32 sky_top_b;
    glint_f32 pad5;
    glint_i32 width;           /* image pixels                                          */
    glint_i32 height;
    glint_i32 max_depth;       /* rays traced per sample at most (the book's depth)     */
    glint_i32 pad6;            /* keeps the size a multiple of 8                        */
} GlintRTParams;

/* Sphere blocks and BVH nodes are eight wide: one SIMD register (float8) tests eight boxes or
   eight spheres at once, on the CPU and in the kernel alike. */
#define GLINT_RT_WIDTH 8
/* An unused child slot of a node. */
#define GLINT_RT_EMPTY (-2147483647)

/* A node of the 8-wide BVH (224 bytes): its children's boxes as structure-of-arrays. child[i]
   >= 0 is an inner node's index; < 0 (but not GLINT_RT_EMPTY) is leaf block ~child[i]. */
typedef struct GlintRTNode {
    glint_f32 min_x[8];
    glint_f32 min_y[8];
    glint_f32 min_z[8];
    glint_f32 max_x[8];
    glint_f32 max_y[8];
    glint_f32 max_z[8];
    glint_i32 child[8];
} GlintRTNode;

/* Up to eight spheres of one BVH leaf, as structure-of-arrays (128 bytes). Unused lanes have
   NaN centres, which no ray hits. Lane l of block k is sphere 8k + l of the sphere array. */
typedef struct GlintRTSphereBlock {
    glint_f32 center_x[8];
    glint_f32 center_y[8];
    glint_f32 center_z[8];
    glint_f32 radius2[8];      /* radius squared                                        */
} GlintRTSphereBlock;

/* One sphere, read once its hit is known (32 bytes). */
typedef struct GlintRTSphere {
    glint_f32 center_x;
    glint_f32 center_y;
    glint_f32 center_z;
    glint_f32 radius;          /* negative: normals point inwards (a hollow glass shell) */
    glint_f32 inv_radius;      /* 1 / radius, rounded once on the host                  */
    glint_i32 material;        /* index into the material array                         */
    glint_f32 pad0;
    glint_f32 pad1;
} GlintRTSphere;

/* Material kinds. */
#define GLINT_RT_LAMBERTIAN 0
#define GLINT_RT_METAL      1
#define GLINT_RT_DIELECTRIC 2

/* One material (32 bytes). */
typedef struct GlintRTMaterial {
    glint_f32 albedo_r;        /* reflectance; for glass the attenuation per bounce     */
    glint_f32 albedo_g;
    glint_f32 albedo_b;
    glint_f32 fuzz;            /* metal: radius of the reflection's jitter, <= 1        */
    glint_f32 ior;             /* dielectric: index of refraction                       */
    glint_i32 kind;            /* GLINT_RT_*                                            */
    glint_f32 pad0;
    glint_f32 pad1;
} GlintRTMaterial;
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
