/* The isometric transform with extrusion. A sample maps back through the inverse of "rotate 45
   degrees, then scale y by 0.5, about the centre" into the source. Inside the source's
   (optionally rounded) rectangle it takes the bilinear colour; below it, within the extrusion, it
   takes the colour where the screen-vertical line meets the outline (source direction (1,1) is
   straight down on screen), darkened by 0.05 on the front-left side (the bottom edge) and 0.1 on
   the front-right side (the right edge), blended by the outline's normal on rounded corners.

   Supersampling only where it changes something: each output pixel is first classified from its
   centre (Iso_Classify). When the whole pixel lies inside the top face, or inside one flat side
   face between the outline and the depth limit, it takes ONE sample at its centre (it equals the
   ss = 1 render's pixel); when it lies wholly outside the shape and its extrusion it is
   transparent; only the pixels that an edge, a rounded corner or the depth limit may cross average
   ss x ss samples. docs/DESIGN.md (Isometric sampling) states this contract.
   Swift twin: GlintWorkloads/Isometric/IsoCPU.swift (same functions, same order). */
#pragma OPENCL FP_CONTRACT OFF
#include "common/types.h"
#include "common/color.h"

#define ISO_K 0.70710678f   /* cos 45 = sin 45 */
#define ISO_FAR 3.0e38f

/* One source texel as RGBA in [0,1], clamped to the edge. */
inline float4 Iso_Load(__global const uchar4* src, int w, int h, int x, int y) {
    x = clamp(x, 0, w - 1);
    y = clamp(y, 0, h - 1);
    uchar4 c = src[y * w + x];
    return (float4)((float)c.x / 255.0f, (float)c.y / 255.0f, (float)c.z / 255.0f, (float)c.w / 255.0f);
}

/* Bilinear colour at continuous source point (x, y); texel centres at i + 0.5. */
inline float4 Iso_Bilinear(__global const uchar4* src, int w, int h, float x, float y) {
    float sx = x - 0.5f, sy = y - 0.5f;
    float fx0 = floor(sx), fy0 = floor(sy);
    float fx = sx - fx0, fy = sy - fy0;
    int x0 = (int)fx0, y0 = (int)fy0;
    float4 c00 = Iso_Load(src, w, h, x0, y0), c10 = Iso_Load(src, w, h, x0 + 1, y0);
    float4 c01 = Iso_Load(src, w, h, x0, y0 + 1), c11 = Iso_Load(src, w, h, x0 + 1, y0 + 1);
    float4 top = c00 * (1.0f - fx) + c10 * fx;
    float4 bottom = c01 * (1.0f - fx) + c11 * fx;
    return top * (1.0f - fy) + bottom * fy;
}

/* Is (x, y) inside the w x h rectangle with corners rounded by r? */
inline int Iso_Inside(float x, float y, float w, float h, float r) {
    if (x < 0.0f || x > w || y < 0.0f || y > h) return 0;
    if (r <= 0.0f) return 1;
    float dx = fmax(fmax(r - x, x - (w - r)), 0.0f);
    float dy = fmax(fmax(r - y, y - (h - r)), 0.0f);
    return dx * dx + dy * dy <= r * r;
}

/* Smallest u >= 0 with (x - u, y - u) in [x0,x1] x [y0,y1], or -1. *right: entered through x = x1. */
inline float Iso_RectEntry(float x, float y, float x0, float x1, float y0, float y1, int* right) {
    float ax = x - x1, ay = y - y1;
    float lo = fmax(ax, ay);
    float hi = fmin(x - x0, y - y0);
    if (lo > hi || hi < 0.0f) return -1.0f;
    *right = ax > ay;
    return fmax(lo, 0.0f);
}

/* Smallest u >= 0 with (x - u, y - u) in the disc of radius r about (cx, cy), or -1. */
inline float Iso_CircleEntry(float x, float y, float cx, float cy, float r) {
    float mx = x - cx, my = y - cy;
    float md = mx + my;
    float disc = md * md - 2.0f * (mx * mx + my * my - r * r);
    if (disc < 0.0f) return -1.0f;
    float root = sqrt(disc);
    if ((md + root) * 0.5f < 0.0f) return -1.0f;
    return fmax((md - root) * 0.5f, 0.0f);
}

/* Keeps the disc's entry when it comes first, with the outline's normal there. */
inline void Iso_Disc(float x, float y, float cx, float cy, float r, float* best, float* nx, float* ny) {
    float u = Iso_CircleEntry(x, y, cx, cy, r);
    if (u >= 0.0f && u < *best) { *best = u; *nx = (x - u - cx) / r; *ny = (y - u - cy) / r; }
}

/* The source point under canvas point (qx, qy). */
inline float2 Iso_SourcePoint(GlintIsoParams p, float qx, float qy) {
    float a = qx - p.origin_x;
    float b = 2.0f * (qy - p.origin_y);
    return (float2)(p.src_cx + ISO_K * (a + b), p.src_cy + ISO_K * (b - a));
}

/* The colour at source point (x, y): transparent outside the shape and its extrusion. */
inline float4 Iso_Sample(__global const uchar4* src, GlintIsoParams p, float x, float y) {
    float w = (float)p.src_width, h = (float)p.src_height, r = p.radius;
    if (Iso_Inside(x, y, w, h, r)) return Iso_Bilinear(src, p.src_width, p.src_height, x, y);
    if (p.depth_src <= 0.0f) return (float4)(0.0f);
    /* The rounded rectangle is two rectangles and four discs; the outline is entered where
       the first of them is. */
    float best = ISO_FAR, nx = 0.0f, ny = 0.0f;
    int right = 0;
    float u = Iso_RectEntry(x, y, 0.0f, w, r, h - r, &right);
    if (u >= 0.0f && u < best) { best = u; nx = right ? 1.0f : 0.0f; ny = right ? 0.0f : 1.0f; }
    u = Iso_RectEntry(x, y, r, w - r, 0.0f, h, &right);
    if (u >= 0.0f && u < best) { best = u; nx = right ? 1.0f : 0.0f; ny = right ? 0.0f : 1.0f; }
    if (r > 0.0f) {
        /* The four corner discs, in the twin's order: top-left, top-right, bottom-left, bottom-right. */
        Iso_Disc(x, y, r, r, r, &best, &nx, &ny);
        Iso_Disc(x, y, w - r, r, r, &best, &nx, &ny);
        Iso_Disc(x, y, r, h - r, r, &best, &nx, &ny);
        Iso_Disc(x, y, w - r, h - r, r, &best, &nx, &ny);
    }
    if (best > p.depth_src) return (float4)(0.0f);
    float4 c = Iso_Bilinear(src, p.src_width, p.src_height, x - best, y - best);
    float t = nx + ny > 0.0f ? clamp(ny / (nx + ny), 0.0f, 1.0f) : 0.5f;
    float shade = -0.1f + 0.05f * t;
    return (float4)(clamp(c.x + shade, 0.0f, 1.0f), clamp(c.y + shade, 0.0f, 1.0f),
                    clamp(c.z + shade, 0.0f, 1.0f), c.w);
}

/* What a canvas pixel needs, decided from the source point (x, y) under its centre. The inverse
   map is affine: the pixel's square maps to a parallelogram about (x, y) reaching at most
   1.5 ISO_K = 1.061 along each source axis, 1.118 in distance and ISO_K = 0.707 in x - y (the
   entry line's invariant). ISO_MARGIN exceeds all three with room for float rounding at the
   largest canvases, so each test below holds for every sample of the pixel when it holds for
   its centre. */
#define ISO_MARGIN 1.25f
#define ISO_EDGE  0   /* an edge, a rounded corner or the depth limit may cross: ss x ss samples */
#define ISO_TOP   1   /* wholly inside the top face: one sample                                 */
#define ISO_SIDE  2   /* wholly inside one flat side face, within the depth: one sample          */
#define ISO_CLEAR 3   /* wholly outside the shape and its extrusion: transparent                 */

inline int Iso_Classify(GlintIsoParams p, float x, float y) {
    float w = (float)p.src_width, h = (float)p.src_height, r = p.radius, d = p.depth_src;
    float m = ISO_MARGIN;
    /* Distance components from the nearest corner circle's centre, as Iso_Inside takes them:
       the outline is at distance r from that centre. */
    float dx = fmax(fmax(r - x, x - (w - r)), 0.0f);
    float dy = fmax(fmax(r - y, y - (h - r)), 0.0f);
    float d2 = dx * dx + dy * dy;
    /* Inside by m from every side and (rounded) corner; with r < m the box alone gives dx = dy = 0. */
    if (x >= m && x <= w - m && y >= m && y <= h - m && d2 <= (r - m) * (r - m)) return ISO_TOP;
    /* Within m of the outline. */
    if (d2 <= (r + m) * (r + m)) return ISO_EDGE;
    if (d <= 0.0f) return ISO_CLEAR;
    /* Outside, and no entry within the depth: left of or above the shape (the entry line runs
       up-left), entered only past the depth (u >= max(x - w, y - h)), or on a line x - y = e
       that misses [-h, w]. */
    float e = x - y;
    if (x < -m || y < -m || fmax(x - w, y - h) > d + m || e > w + m || -e > h + m) return ISO_CLEAR;
    /* Entered through the flat part of the bottom edge (at x = e + h) or of the right edge (at
       y = w - e), at u = y - h or x - w, more than m from both ends of the depth. */
    if (y - h > m && y - h < d - m && e + h > r + m && e + h < w - r - m) return ISO_SIDE;
    if (x - w > m && x - w < d - m && w - e > r + m && w - e < h - r - m) return ISO_SIDE;
    return ISO_EDGE;
}

/* Writes the average of n samples whose alpha-weighted colours add to sum and alphas to alpha. */
inline void Iso_Store(__global uchar4* out, int i, float3 sum, float alpha, float n) {
    float3 rgb = alpha > 0.0f ? sum / alpha : (float3)(0.0f);
    Color_Store8(out, i, (uchar4)(Color_To8Bit(rgb.x), Color_To8Bit(rgb.y), Color_To8Bit(rgb.z),
                                  Color_To8Bit(alpha / n)));
}

/* One canvas pixel: transparent, one sample at its centre, or the ss x ss average. `out` holds
   the canvas from row row0 on. */
inline void Iso_Pixel(__global uchar4* out, __global const uchar4* src, GlintIsoParams p, int px, int py, int row0) {
    int i = (py - row0) * p.out_width + px;
    float2 centre = Iso_SourcePoint(p, (float)px + 0.5f, (float)py + 0.5f);
    int kind = Iso_Classify(p, centre.x, centre.y);
    if (kind == ISO_CLEAR) { Color_Store8(out, i, (uchar4)(0)); return; }
    if (kind != ISO_EDGE) {
        float4 c = Iso_Sample(src, p, centre.x, centre.y);
        Iso_Store(out, i, c.xyz * c.w, c.w, 1.0f);
        return;
    }
    float3 sum = (float3)(0.0f);
    float alpha = 0.0f;
    /* ISO_SS (a build define) fixes the sample loops' trip count, which lets the compiler
       unroll them; it must equal p.ss. */
    for (int j = 0; j < ISO_SS; j++) {
        for (int k = 0; k < ISO_SS; k++) {
            float qx = (float)px + ((float)k + 0.5f) / (float)ISO_SS;
            float qy = (float)py + ((float)j + 0.5f) / (float)ISO_SS;
            float2 s = Iso_SourcePoint(p, qx, qy);
            float4 c = Iso_Sample(src, p, s.x, s.y);
            sum += c.xyz * c.w;
            alpha += c.w;
        }
    }
    Iso_Store(out, i, sum, alpha, (float)(ISO_SS * ISO_SS));
}

/* One channel (the byte at bit `shift`) of eight texels, in [0, 1] as Iso_Load gives it. */
inline float8 Iso_Unit8(uint8 t, uint shift) {
    return convert_float8(convert_int8((t >> shift) & 0xffu)) / 255.0f;
}

/* One channel of eight bilinear samples, as Iso_Bilinear interpolates it. */
inline float8 Iso_Channel8(uint8 t00, uint8 t10, uint8 t01, uint8 t11, uint shift,
                           float8 fx, float8 fy) {
    float8 top = Iso_Unit8(t00, shift) * (1.0f - fx) + Iso_Unit8(t10, shift) * fx;
    float8 bottom = Iso_Unit8(t01, shift) * (1.0f - fx) + Iso_Unit8(t11, shift) * fx;
    return top * (1.0f - fy) + bottom * fy;
}

/* Color_To8Bit lane by lane. */
inline uint8 Iso_To8Bit8(float8 v) {
    return convert_uint8(floor(clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f));
}

/* Texels (x0, y0) and (x0 + 1, y0) of lane l, and the two below, as pairs of RGBA8 words. */
#define ISO_PAIRS(l) uint2 u##l = vload2(0, tex + index.s##l), v##l = vload2(0, tex + index.s##l + p.src_width)

/* Each work-item renders eight pixels of a row, px0 ... px0 + 7, with the same operations as
   Iso_Pixel on each. Where all eight lie on the top face it takes their samples as float8 lanes
   (there the texels are inside the source, x and y being at least ISO_MARGIN from its sides, so
   Iso_Load's clamps do nothing and floor is truncation); where all eight are clear it stores
   zeros; otherwise, and at the row's end, it runs Iso_Pixel on each. CPU devices (PoCL) run a
   work-item's float8 operations as AVX vectors, the way the Swift twin's renderSpan does. */
__kernel void iso_render(__global uchar4* out,          /* canvas rows row0 ..< row1, RGBA, straight alpha */
                         __global const uchar4* src,    /* source, RGBA                 */
                         GlintIsoParams p,
                         const int row0,                /* the rows rendered: a shard's band, */
                         const int row1)                /* or 0 and out_height              */
{
    int px0 = get_global_id(0) * 8, py = row0 + (int)get_global_id(1);
    if (px0 >= p.out_width || py >= row1) return;
    if (px0 + 8 > p.out_width) {
        for (int px = px0; px < p.out_width; px++) Iso_Pixel(out, src, p, px, py, row0);
        return;
    }
    float w = (float)p.src_width, h = (float)p.src_height, r = p.radius, d = p.depth_src;
    float m = ISO_MARGIN;
    /* Iso_SourcePoint and Iso_Classify, lane by lane. */
    float8 qx = ((float8)((float)px0) + (float8)(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f)) + 0.5f;
    float8 a = qx - p.origin_x;
    float b = 2.0f * (((float)py + 0.5f) - p.origin_y);
    float8 x = p.src_cx + ISO_K * (a + b);
    float8 y = p.src_cy + ISO_K * (b - a);
    float8 dx = fmax(fmax(r - x, x - (w - r)), 0.0f);
    float8 dy = fmax(fmax(r - y, y - (h - r)), 0.0f);
    float8 d2 = dx * dx + dy * dy;
    int8 top = (x >= m) & (x <= w - m) & (y >= m) & (y <= h - m) & (d2 <= (r - m) * (r - m));
    __global uint* words = (__global uint*)out + (py - row0) * p.out_width + px0;
    if (all(top)) {
        float8 sx = x - 0.5f, sy = y - 0.5f;
        int8 ix = convert_int8(sx), iy = convert_int8(sy);
        float8 fx = sx - convert_float8(ix), fy = sy - convert_float8(iy);
        int8 index = iy * p.src_width + ix;
        __global const uint* tex = (__global const uint*)src;
        ISO_PAIRS(0); ISO_PAIRS(1); ISO_PAIRS(2); ISO_PAIRS(3);
        ISO_PAIRS(4); ISO_PAIRS(5); ISO_PAIRS(6); ISO_PAIRS(7);
        uint8 t00 = (uint8)(u0.x, u1.x, u2.x, u3.x, u4.x, u5.x, u6.x, u7.x);
        uint8 t10 = (uint8)(u0.y, u1.y, u2.y, u3.y, u4.y, u5.y, u6.y, u7.y);
        uint8 t01 = (uint8)(v0.x, v1.x, v2.x, v3.x, v4.x, v5.x, v6.x, v7.x);
        uint8 t11 = (uint8)(v0.y, v1.y, v2.y, v3.y, v4.y, v5.y, v6.y, v7.y);
        float8 alpha = Iso_Channel8(t00, t10, t01, t11, 24u, fx, fy);
        /* Iso_Store(c.xyz * c.w, c.w, 1): (c * alpha) / alpha where alpha > 0, else 0. */
        int8 positive = alpha > 0.0f;
        float8 cr = Iso_Channel8(t00, t10, t01, t11, 0u, fx, fy);
        float8 cg = Iso_Channel8(t00, t10, t01, t11, 8u, fx, fy);
        float8 cb = Iso_Channel8(t00, t10, t01, t11, 16u, fx, fy);
        uint8 packed = Iso_To8Bit8(select((float8)(0.0f), (cr * alpha) / alpha, positive))
                     | Iso_To8Bit8(select((float8)(0.0f), (cg * alpha) / alpha, positive)) << 8
                     | Iso_To8Bit8(select((float8)(0.0f), (cb * alpha) / alpha, positive)) << 16
                     | Iso_To8Bit8(alpha / 1.0f) << 24;
        vstore8(packed, 0, words);
        return;
    }
    float8 e = x - y;
    int8 beyond = (x < -m) | (y < -m) | (fmax(x - w, y - h) > d + m) | (e > w + m) | (-e > h + m);
    int8 clear = (d2 > (r + m) * (r + m)) & (d <= 0.0f ? (int8)(-1) : beyond);
    if (all(clear)) { vstore8((uint8)(0u), 0, words); return; }
    for (int px = px0; px < px0 + 8; px++) Iso_Pixel(out, src, p, px, py, row0);
}
