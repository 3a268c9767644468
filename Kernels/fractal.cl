/* Escape-time fractals. Swift twin: Sources/GlintWorkloads/Fractal/FractalCPU.swift.
   Build defines:
     FORMULA  GLINT_FORMULA_* (image-julia uses fractal_escape_texture, which is scalar)
     DOUBLE   0: float arithmetic, 1: double (needs cl_khr_fp64)
     LANES    samples per work-item: 1 on GPUs; 8 or 16 on CPUs, where PoCL does not vectorise a
              data-dependent loop by itself, so the vector is written out here
     SKIP     1: Mandelbrot main-cardioid and period-2-bulb test before iterating
     TRACK_MAG 1: record |z|^2 at escape (smooth colouring needs it; it costs a select a step)
     BLOCK    escape steps per test after the first BLOCK_AFTER (quadratic formulas; 1: every
              step), for a GPU's long orbits: the counts are the same either way
     FUSED_COLOR 1: fractal_escape also writes each pixel's colour from fractal_palette8's table
              (one sample per pixel, banded colouring), saving the colour pass
     COLOR_F32 1: fractal_color also writes each pixel's mean colour as floats, before the 8-bit
              rounding (for 16-bit output)
     DERIV    1: also carry the derivative d = dz/dc (Julia: dz/dz0) in pixel units and write
              u = z/d at escape (distance estimate and slope colouring: params.color)
     POWER    Mandelbrot's z^POWER + c (params.power; 2 unless --power); LOG2_POWER_BITS the bits
              of the float log2(POWER) the host computed, for smooth colouring past power 2
   The escape loop's steps and their order are the contract with the Swift twin: no fused
   multiply-add (FP_CONTRACT OFF), correctly rounded division (host build option). */
#pragma OPENCL FP_CONTRACT OFF
#include "common/lanes.h"
#include "common/types.h"
#include "common/color.h"

#ifndef LANES
#define LANES 1
#endif
#ifndef COLOR_F32
#define COLOR_F32 0
#endif
#ifndef POWER
#define POWER 2
#endif
#ifndef DERIV
#define DERIV 0
#endif
/* The smooth count's log of the escape ratio in base POWER: log2 at power 2. */
#if POWER == 2
#define FRACTAL_LOG_POWER(v) (v)
#else
#define FRACTAL_LOG_POWER(v) ((v) / as_float(LOG2_POWER_BITS))
#endif

#if DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define REAL double
#define MASK long
#define TO_REAL(bits) as_double(bits)
#else
#define REAL float
#define MASK int
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if LANES == 1
#define REALV REAL
#define MASKV int
#define SEL(a, b, m) ((m) ? (b) : (a))
#define ANY(m) (m)
#define LANE_IDS ((REAL)0)
#else
#define REALV CAT(REAL, LANES)
#define MASKV CAT(MASK, LANES)
#define SEL(a, b, m) select((a), (b), (m))
#define ANY(m) any(m)
#if LANES == 4
#define LANE_IDS ((REALV)(0, 1, 2, 3))
#elif LANES == 8
#define LANE_IDS ((REALV)(0, 1, 2, 3, 4, 5, 6, 7))
#elif LANES == 16
#define LANE_IDS ((REALV)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#else
#error "LANES must be 1, 4, 8 or 16"
#endif
#endif

/* The view as REAL values: the centre as hi + lo, the scale, Julia c, the bailout. */
typedef struct {
    REAL re_hi, re_lo, im_hi, im_lo, s, c_re, c_im, bailout2, half_w, half_h, ss;
} Fractal_View;

inline Fractal_View Fractal_MakeView(const GlintFractalParams p) {
    Fractal_View v;
#if DOUBLE
    v.re_hi = as_double(p.center_re_bits); v.re_lo = 0.0;
    v.im_hi = as_double(p.center_im_bits); v.im_lo = 0.0;
    v.s = as_double(p.scale_bits);
    v.c_re = as_double(p.c_re_bits); v.c_im = as_double(p.c_im_bits);
#else
    v.re_hi = p.center_re_hi; v.re_lo = p.center_re_lo;
    v.im_hi = p.center_im_hi; v.im_lo = p.center_im_lo;
    v.s = p.scale;
    v.c_re = p.c_re; v.c_im = p.c_im;
#endif
    v.bailout2 = (REAL)p.bailout2;
    v.half_w = (REAL)p.width * (REAL)0.5;
    v.half_h = (REAL)p.height * (REAL)0.5;
    v.ss = (REAL)p.ss;
    return v;
}

/* Sample (sx, sy) of the ss-times-finer sample grid sits at pixel position ((sx+0.5)/ss, (sy+0.5)/ss):
   re = cx + (x - W/2)*s, im = cy - (y - H/2)*s, the centre added as hi + (lo + offset). */
inline REALV Fractal_Re(const Fractal_View v, REALV sx) {
    REALV off = ((sx + (REAL)0.5) / v.ss - v.half_w) * v.s;
    return v.re_hi + (v.re_lo + off);
}
inline REAL Fractal_Im(const Fractal_View v, REAL sy) {
    REAL off = ((sy + (REAL)0.5) / v.ss - v.half_h) * v.s;
    return v.im_hi + (v.im_lo - off);
}

/* (pr, pi) = z^n, z = (x, y) multiplied by itself n - 1 times (the powers' steps). */
#define FRACTAL_ZPOW(pr, pi, n) \
        REALV pr = x, pi = y; \
        for (int k = 1; k < (n); k++) { \
            REALV t = pr * x - pi * y; \
            pi = pr * y + pi * x; \
            pr = t; }

/* One escape step, z -> f(z), with x2 and y2 (the squares) updated. */
#if FORMULA == GLINT_FORMULA_SIERPINSKI_JULIA
/* z^2 + 0.5c/z^2 */
#define FRACTAL_STEP { \
        REALV a = x2 - y2; \
        REALV b = (x + x) * y; \
        REALV d = a * a + b * b; \
        REALV ar = a / d, ai = -(b / d); \
        x = a + (hr * ar - hi * ai); \
        y = b + (hr * ai + hi * ar); \
        x2 = x * x; y2 = y * y; }
#elif FORMULA == GLINT_FORMULA_MANDELBROT && POWER > 2
/* z^POWER + c: z multiplied by itself POWER - 1 times, then c added. */
#define FRACTAL_STEP { \
        FRACTAL_ZPOW(pr, pi, POWER) \
        x = pr + cr; y = pi + ci; \
        x2 = x * x; y2 = y * y; }
#elif FORMULA == GLINT_FORMULA_BURNING_SHIP
/* The tutorial's Burning Ship: abs after adding c. */
#define FRACTAL_STEP { \
        REALV ny = fabs((x + x) * y + ci); \
        x = fabs((x2 - y2) + cr); y = ny; \
        x2 = x * x; y2 = y * y; }
#else
#define FRACTAL_STEP { \
        REALV ny = (x + x) * y + ci; \
        x = (x2 - y2) + cr; y = ny; \
        x2 = x * x; y2 = y * y; }
#endif

/* The derivative's step, taken before z's (it reads the old z): d' = 2 z d + ds, or for z^N + c
   d' = N z^(N-1) d + ds, with d in pixel units (dz/dc times the pixel spacing) and ds the spacing
   for Mandelbrot (c moves with the pixel), 0 for Julia. */
#if DERIV && FORMULA == GLINT_FORMULA_MANDELBROT && POWER > 2
#define FRACTAL_DSTEP { \
        FRACTAL_ZPOW(qr, qi, POWER - 1) \
        REALV ndr = (REAL)POWER * (qr * dr - qi * di) + ds; \
        di = (REAL)POWER * (qr * di + qi * dr); dr = ndr; }
#elif DERIV
#define FRACTAL_DSTEP { \
        REALV ndr = (REAL)2 * (x * dr - y * di) + ds; \
        di = (REAL)2 * (x * di + y * dr); dr = ndr; }
#else
#define FRACTAL_DSTEP
#endif
#define FRACTAL_FULL_STEP { FRACTAL_DSTEP FRACTAL_STEP }

/* The test after a step: "not <=" so that a NaN orbit counts as escaped. */
#if TRACK_MAG
#define FRACTAL_TEST_MAG(m, esc) mag = SEL(mag, m, active & esc);
#else
#define FRACTAL_TEST_MAG(m, esc)
#endif
#if DERIV
#define FRACTAL_TEST_DERIV(esc) { \
        ex = SEL(ex, x, active & esc); ey = SEL(ey, y, active & esc); \
        edr = SEL(edr, dr, active & esc); edi = SEL(edi, di, active & esc); }
#else
#define FRACTAL_TEST_DERIV(esc)
#endif
#define FRACTAL_TEST { \
        REALV m = x2 + y2; \
        MASKV esc = !islessequal(m, b2); \
        FRACTAL_TEST_MAG(m, esc) \
        FRACTAL_TEST_DERIV(esc) \
        active = active & !esc; \
        count = SEL(count, count + (REAL)1.0, active); }

#ifndef BLOCK
#define BLOCK 1
#endif
#ifndef BLOCK_AFTER
#define BLOCK_AFTER 32
#endif

__kernel void fractal_escape(__global uint* counts,      /* escape count per sample        */
                             __global float* mag2_out,   /* |z|^2 at escape (smooth)       */
#if DERIV
                             __global float* u_out,      /* z/d at escape, 2 floats a sample */
#endif
#if FUSED_COLOR
                             __global const uchar4* lut8, /* colour per count               */
                             __global uchar4* out,        /* this strip's pixels            */
#endif
                             const GlintFractalParams p,
                             const int row0,             /* first sample row of this strip */
                             const int rows,             /* sample rows in this strip      */
                             const int write_counts)     /* 0: the colour is all the host needs */
{
    const int sw = p.width * p.ss;
    const int x0 = (int)get_global_id(0) * LANES;
    const int r = (int)get_global_id(1);
    if (x0 >= sw || r >= rows) return;
    const Fractal_View v = Fractal_MakeView(p);
    const REALV pim = (REALV)(Fractal_Im(v, (REAL)(row0 + r)));
    const REALV b2 = (REALV)(v.bailout2);

    const REALV sx = (REALV)((REAL)x0) + LANE_IDS;
    const REALV pre = Fractal_Re(v, sx);
    MASKV active = isless(sx, (REALV)((REAL)sw));  /* lanes past the right edge stay idle */
    REALV count = (REALV)((REAL)0);
    REALV mag = (REALV)((REAL)0);
    REALV cr, ci;
#if FORMULA == GLINT_FORMULA_MANDELBROT || FORMULA == GLINT_FORMULA_BURNING_SHIP
    cr = pre; ci = pim;
#else
    cr = (REALV)(v.c_re); ci = (REALV)(v.c_im);
#endif
    const REALV hr = cr * (REAL)0.5, hi = ci * (REAL)0.5;
#if FORMULA == GLINT_FORMULA_MANDELBROT && SKIP && POWER == 2
    {
        /* Inside the main cardioid or the period-2 bulb: never escapes. The bounds are shrunk
           a hair (0.25 -> 0.2490234375, 1/16 -> 0.062255859375, both exact in binary) so that
           rounding can never skip a point that lies just outside. */
        REALV xq = cr - (REAL)0.25;
        REALV q = xq * xq + ci * ci;
        MASKV cardioid = isless(q * (q + xq), (REAL)0.2490234375 * (ci * ci));
        REALV xb = cr + (REAL)1.0;
        MASKV bulb = isless(xb * xb + ci * ci, (REALV)((REAL)0.062255859375));
        MASKV inside = cardioid | bulb;
        count = SEL(count, (REALV)((REAL)p.max_iter), inside & active);
        active = active & !inside;
    }
#endif
    /* The tutorial starts the Mandelbrot orbit at z = c, a Julia orbit at the pixel. */
    REALV x = pre, y = pim;
    REALV x2 = x * x, y2 = y * y;
#if DERIV
    /* dz0/dc (or dz0/dz0) = 1, in pixel units */
    REALV dr = (REALV)(v.s), di = (REALV)((REAL)0);
#if FORMULA == GLINT_FORMULA_MANDELBROT
    const REALV ds = (REALV)(v.s);
#else
    const REALV ds = (REALV)((REAL)0);
#endif
    REALV ex = (REALV)((REAL)0), ey = ex, edr = ex, edi = ex;
#endif

#if BLOCK > 1 && FORMULA != GLINT_FORMULA_SIERPINSKI_JULIA && POWER == 2
    /* Steps in blocks of BLOCK with no escape test or count, keeping only the largest |z|^2: a
       block in which no active sample passed the bailout adds BLOCK to their counts; otherwise
       it is stepped again from its start as below, so counts and magnitudes are the same. (A
       quadratic orbit turns NaN only after |z|^2 overflowed to inf, which fmax keeps.) */
    int i = 0;
    /* Most samples escape within a few steps, where a block would be mostly stepped twice: the
       first BLOCK_AFTER steps one at a time. */
    for (; i < min(BLOCK_AFTER, p.max_iter) && ANY(active); i++) {
        FRACTAL_FULL_STEP
        FRACTAL_TEST
    }
    for (; i + BLOCK <= p.max_iter && ANY(active); i += BLOCK) {
        const REALV bx = x, by = y, bx2 = x2, by2 = y2;
#if DERIV
        const REALV bdr = dr, bdi = di;
#endif
        REALV peak = (REALV)((REAL)0);
        for (int k = 0; k < BLOCK; k++) {
            FRACTAL_FULL_STEP
            peak = fmax(peak, x2 + y2);
        }
        if (!ANY(active & !islessequal(peak, b2))) {
            count = SEL(count, count + (REAL)BLOCK, active);
            continue;
        }
        x = bx; y = by; x2 = bx2; y2 = by2;
#if DERIV
        dr = bdr; di = bdi;
#endif
        for (int k = 0; k < BLOCK; k++) {
            FRACTAL_FULL_STEP
            FRACTAL_TEST
        }
        if (!ANY(active)) break;
    }
    for (; i < p.max_iter && ANY(active); i++) {
        FRACTAL_FULL_STEP
        FRACTAL_TEST
    }
#else
    for (int i = 0; i < p.max_iter; i++) {
        FRACTAL_FULL_STEP
        FRACTAL_TEST
        if (!ANY(active)) break;
    }
#endif
#if DERIV
    /* u = z/d where the sample escaped (elsewhere 0/0: unused, the colour is the interior's) */
    const REALV den = edr * edr + edi * edi;
    REALV ur = (ex * edr + ey * edi) / den;
    REALV ui = (ey * edr - ex * edi) / den;
    {
        /* Past 1e18 pixels only the direction matters: scaled down so that floats hold it. */
        const REALV ar = SEL(ur, (REAL)0 - ur, isless(ur, (REAL)0));
        const REALV ai = SEL(ui, (REAL)0 - ui, isless(ui, (REAL)0));
        const REALV big = SEL(ar, ai, isless(ar, ai));
        const MASKV far = isless((REALV)((REAL)1e18), big);
        ur = SEL(ur, (ur / big) * (REAL)1e18, far);
        ui = SEL(ui, (ui / big) * (REAL)1e18, far);
    }
#endif

    const int base = r * sw + x0;
#if LANES == 1
#if DERIV
    u_out[2 * base] = (float)ur;
    u_out[2 * base + 1] = (float)ui;
#endif
    if (write_counts) counts[base] = (uint)count;
#if TRACK_MAG
    mag2_out[base] = (float)mag;
#endif
#if FUSED_COLOR
    out[base] = lut8[(uint)count];
#endif
#else
    const CAT(uint, LANES) ucount = CAT(convert_uint, LANES)(count);
    const CAT(float, LANES) fmag = CAT(convert_float, LANES)(mag);
    const uint* uc = (const uint*)&ucount;
    if (x0 + LANES <= sw) {
        if (write_counts) CAT(vstore, LANES)(ucount, 0, counts + base);
#if TRACK_MAG
        CAT(vstore, LANES)(fmag, 0, mag2_out + base);
#endif
    } else {
        const float* fm = (const float*)&fmag;
        for (int l = 0; x0 + l < sw; l++) {
            if (write_counts) counts[base + l] = uc[l];
#if TRACK_MAG
            mag2_out[base + l] = fm[l];
#endif
        }
    }
#if FUSED_COLOR
    for (int l = 0; l < LANES && x0 + l < sw; l++) out[base + l] = lut8[uc[l]];
#endif
#if DERIV
    {
        const CAT(float, LANES) fur = CAT(convert_float, LANES)(ur), fui = CAT(convert_float, LANES)(ui);
        const float* pr = (const float*)&fur;
        const float* pi = (const float*)&fui;
        for (int l = 0; l < LANES && x0 + l < sw; l++) {
            u_out[2 * (base + l)] = pr[l];
            u_out[2 * (base + l) + 1] = pi[l];
        }
    }
#endif
#endif
}

#if FORMULA == GLINT_FORMULA_IMAGE_JULIA
/* The tutorial's image-textured Julia, one sample per work-item: after each step the texture is
   sampled at z (taken as texture coordinates, v up; nothing outside [0.01, 0.99]); the orbit stops
   on escape or on a texel whose alpha is over 0.1 (8-bit alpha > 25). texel_out gets the texel's
   index, or -1 when none stopped it. */
__kernel void fractal_escape_texture(__global uint* counts,
                                     __global float* mag2_out,
                                     __global int* texel_out,
                                     __global const uchar4* texture,
                                     const GlintFractalParams p,
                                     const int row0,
                                     const int rows)
{
    const int sw = p.width * p.ss;
    const int sx = (int)get_global_id(0);
    const int r = (int)get_global_id(1);
    if (sx >= sw || r >= rows) return;
    const Fractal_View v = Fractal_MakeView(p);
    REAL x = Fractal_Re(v, (REAL)sx);
    REAL y = Fractal_Im(v, (REAL)(row0 + r));
    REAL x2 = x * x, y2 = y * y;
    REAL mag = (REAL)0;
    int count = 0, texel = -1;
    for (int i = 0; i < p.max_iter; i++) {
        REAL ny = (x + x) * y + v.c_im;
        REAL nx = (x2 - y2) + v.c_re;
        x = nx; y = ny;
        x2 = x * x; y2 = y * y;
        REAL m = x2 + y2;
        if (x >= (REAL)0.01 && x <= (REAL)0.99 && y >= (REAL)0.01 && y <= (REAL)0.99) {
            int tx = min((int)(x * (REAL)p.tex_width), p.tex_width - 1);
            int ty = min((int)(((REAL)1 - y) * (REAL)p.tex_height), p.tex_height - 1);
            int t = ty * p.tex_width + tx;
            if (texture[t].w > 25) { texel = t; mag = m; break; }
        }
        if (!(m <= v.bailout2)) { mag = m; break; }
        count++;
    }
    const int i = r * sw + sx;
    counts[i] = (uint)count;
    mag2_out[i] = (float)mag;
    texel_out[i] = texel;
}
#endif

/* A count's colour before clamping: black inside, the tutorial's grey ramp (it/80) for image-julia
   samples no texel stopped, else the palette at the count (smooth: at the continuous count). */
inline float3 Fractal_CountColor(const GlintFractalParams p, uint count, float mag2) {
#if FORMULA == GLINT_FORMULA_IMAGE_JULIA
    float g = (float)count / 80.0f;
    return (float3)(g, g, g);
#else
    if (count >= (uint)p.max_iter) return (float3)(0.0f, 0.0f, 0.0f);
    float t = (float)count;
    if (p.smooth) {
        /* nu = n + 1 - log_P(ln|z|^2 / ln R^2), P the power; mag2 > R^2 so the ratio is above 1 */
        float ratio = log(mag2) / p.log_bailout2;
        t = t + 1.0f - FRACTAL_LOG_POWER(log2(ratio));
        if (!(t >= 0.0f)) t = 0.0f;
    }
    return Color_Palette(p.palette, t);
#endif
}

/* A sample's clamped colour by params.color, from its count, |z|^2 and u = z/d at escape (d the
   derivative in pixel units): the palette at the count; grey by the distance estimate
   DE = |u| ln|z|^2 pixels, g = 1 - 1/(1 + DE) (black on the set's boundary, white far off); or
   the palette shaded by the slope, the unit normal u/|u| against the light: (n.L + h)/(1 + h). */
inline float3 Fractal_SampleColor(const GlintFractalParams p, uint count, float mag2, float ur, float ui) {
    const float3 c = clamp(Fractal_CountColor(p, count, mag2), 0.0f, 1.0f);
    if (p.color == GLINT_COLOR_COUNT || count >= (uint)p.max_iter) return c;
    const float n = sqrt(ur * ur + ui * ui);
    if (p.color == GLINT_COLOR_DE) {
        const float g = 1.0f - 1.0f / (1.0f + n * log(mag2));
        return (float3)(g, g, g);
    }
    const float shade = ((ur / n) * p.light_x + (ui / n) * p.light_y + p.light_h) / (1.0f + p.light_h);
    return c * clamp(shade, 0.0f, 1.0f);
}

/* The clamped colour of every count 0...max_iter, when colours depend on the count alone:
   one palette evaluation per count instead of one per sample. */
__kernel void fractal_palette(__global float4* lut, const GlintFractalParams p) {
    const int i = (int)get_global_id(0);
    if (i > p.max_iter) return;
    lut[i] = (float4)(clamp(Fractal_CountColor(p, (uint)i, 0.0f), 0.0f, 1.0f), 0.0f);
}

/* fractal_palette's table as 8-bit colours: what fractal_color makes of a lone sample. */
__kernel void fractal_palette8(__global uchar4* lut8, const GlintFractalParams p) {
    const int i = (int)get_global_id(0);
    if (i > p.max_iter) return;
    float3 c = clamp(Fractal_CountColor(p, (uint)i, 0.0f), 0.0f, 1.0f);
    Color_Store8(lut8, i, (uchar4)(Color_To8Bit(c.x), Color_To8Bit(c.y), Color_To8Bit(c.z), 255));
}

/* Colours one strip of pixels: the mean of each pixel's ss x ss sample colours, in row-major order.
   A sample stopped by a texel takes the texel's colour; else the table's, or with use_lut 0 the
   palette evaluated at the sample. With COLOR_F32 the mean is also stored as floats (alpha 1). */
__kernel void fractal_color(__global const uint* counts,
                            __global const float* mag2,
#if DERIV
                            __global const float* u,        /* z/d at escape, 2 a sample    */
#endif
                            __global const int* texels,    /* image-julia only; else unused */
                            __global const uchar4* texture,
                            __global const float4* lut,     /* fractal_palette's table       */
                            __global uchar4* out,           /* this strip's pixels          */
#if COLOR_F32
                            __global float4* out_f32,       /* the same, before rounding    */
#endif
                            const GlintFractalParams p,
                            const int rows,                 /* pixel rows in this strip     */
                            const int use_lut)
{
    const int px = (int)get_global_id(0);
    const int r = (int)get_global_id(1);
    if (px >= p.width || r >= rows) return;
    const int sw = p.width * p.ss;
    float3 sum = (float3)(0.0f, 0.0f, 0.0f);
    for (int j = 0; j < p.ss; j++) {
        for (int i = 0; i < p.ss; i++) {
            const int s = (r * p.ss + j) * sw + px * p.ss + i;
            float3 c;
#if FORMULA == GLINT_FORMULA_IMAGE_JULIA
            const int texel = texels[s];
#else
            const int texel = -1;
#endif
            if (texel >= 0) {
                uchar4 t = texture[texel];
                c = (float3)((float)t.x / 255.0f, (float)t.y / 255.0f, (float)t.z / 255.0f);
            } else if (use_lut) {
                c = lut[counts[s]].xyz;
            } else {
#if DERIV
                c = Fractal_SampleColor(p, counts[s], mag2[s], u[2 * s], u[2 * s + 1]);
#else
                c = clamp(Fractal_CountColor(p, counts[s], mag2[s]), 0.0f, 1.0f);
#endif
            }
            sum = sum + c;
        }
    }
    const float n = (float)(p.ss * p.ss);
    const float3 mean = (float3)(sum.x / n, sum.y / n, sum.z / n);
    Color_Store8(out, r * p.width + px, (uchar4)(Color_To8Bit(mean.x), Color_To8Bit(mean.y), Color_To8Bit(mean.z), 255));
#if COLOR_F32
    out_f32[r * p.width + px] = (float4)(mean, 1.0f);
#endif
}

#if LANES > 1 && FORMULA != GLINT_FORMULA_IMAGE_JULIA
/* fractal_color's CPU form (fractal_color_v): a work-item colours LANES consecutive pixels of a
   row. Colours evaluated per sample (smooth colouring, and palettes of counts where no table is
   made) take one pixel per lane, fractal_color's operations in its order lane by lane: PoCL runs
   fractal_color a pixel at a time, the smooth colouring's logarithm and the palettes' sines a
   scalar library call per sample, here one vector call per LANES samples. Lanes past the row's
   end repeat its last pixel and store nothing. (Image-julia renders take one lane: texels stay
   per pixel.) */
#define FV CAT(float, LANES)
#define UV CAT(uint, LANES)
#define IV CAT(int, LANES)
#define UCV CAT(uchar, LANES)
#define FVLOAD CAT(vload, LANES)

/* Color_Palette of LANES values of t. */
inline void Fractal_PaletteV(int palette, FV t, FV* r, FV* g, FV* b) {
    switch (palette) {
    case GLINT_PALETTE_GREY: {
        FV u = t / (t + 24.0f);
        *r = u; *g = u; *b = u;
        return;
    }
    case GLINT_PALETTE_FIRE: {
        FV u = 3.0f * (t / (t + 32.0f));
        *r = u; *g = u - 1.0f; *b = u - 2.0f;
        return;
    }
    case GLINT_PALETTE_OCEAN: {
        FV a = 6.2831855f * (t / 32.0f);
        *r = 0.5f + 0.5f * cos(a + 3.14159274f);
        *g = 0.5f + 0.5f * cos(a + 1.57079637f);
        *b = 0.5f + 0.5f * cos(a);
        return;
    }
    case GLINT_PALETTE_RAINBOW: {
        /* Color_HSVToRGB(t / 48, 0.85, 1), its six cases as selects. */
        const float s = 0.85f, v = 1.0f;
        FV h = t / 48.0f;
        FV hh = (h - floor(h)) * 6.0f;
        IV i = min(CAT(convert_int, LANES)(floor(hh)), (IV)(5));
        FV f = hh - CAT(convert_float, LANES)(i);
        FV pv = (FV)(v * (1.0f - s));
        FV q = v * (1.0f - s * f);
        FV tv = v * (1.0f - s * (1.0f - f));
        FV vv = (FV)(v);
        *r = select(select(select(select(vv, q, i == 1), pv, i == 2 || i == 3), tv, i == 4), vv, i == 5);
        *g = select(select(select(select(select(tv, vv, i == 1), vv, i == 2), q, i == 3), pv, i == 4), pv, i == 5);
        *b = select(select(select(select(select(pv, pv, i == 1), tv, i == 2), vv, i == 3), vv, i == 4), q, i == 5);
        return;
    }
    default:
        *r = sin(t / 3.0f);
        *g = cos(t / 6.0f);
        *b = cos(t / 12.0f + 0.785f);
        return;
    }
}

__kernel void fractal_color_v(__global const uint* counts,
                              __global const float* mag2,
                              __global const float4* lut,
                              __global uchar4* out,
#if COLOR_F32
                              __global float4* out_f32,
#endif
                              const GlintFractalParams p,
                              const int rows,
                              const int use_lut)
{
    const int px0 = (int)get_global_id(0) * LANES;
    const int r = (int)get_global_id(1);
    if (px0 >= p.width || r >= rows) return;
    const int sw = p.width * p.ss;
    const float n = (float)(p.ss * p.ss);
    if (use_lut) {
        /* Colours from the table: a pixel at a time, as fractal_color (loads, no arithmetic to
           vectorise; gathering the table's entries into vectors measured slower). */
        for (int k = 0; k < LANES && px0 + k < p.width; k++) {
            float3 sum = (float3)(0.0f, 0.0f, 0.0f);
            for (int j = 0; j < p.ss; j++)
                for (int i = 0; i < p.ss; i++)
                    sum = sum + lut[counts[(r * p.ss + j) * sw + (px0 + k) * p.ss + i]].xyz;
            const float3 mean = (float3)(sum.x / n, sum.y / n, sum.z / n);
            Color_Store8(out, r * p.width + px0 + k, (uchar4)(Color_To8Bit(mean.x), Color_To8Bit(mean.y), Color_To8Bit(mean.z), 255));
#if COLOR_F32
            out_f32[r * p.width + px0 + k] = (float4)(mean, 1.0f);
#endif
        }
        return;
    }
    FV sr = (FV)(0.0f), sg = (FV)(0.0f), sb = (FV)(0.0f);
    for (int j = 0; j < p.ss; j++) {
        for (int i = 0; i < p.ss; i++) {
            uint cn[LANES];
            float mg[LANES];
            for (int k = 0; k < LANES; k++) {
                const int s = (r * p.ss + j) * sw + min(px0 + k, p.width - 1) * p.ss + i;
                cn[k] = counts[s];
                mg[k] = p.smooth ? mag2[s] : 0.0f;
            }
            /* Fractal_CountColor, clamped: 0 where the sample never escaped. */
            UV count = CAT(vload, LANES)(0, cn);
            FV t = CAT(convert_float, LANES)(count);
            if (p.smooth) {
                FV ratio = log(FVLOAD(0, mg)) / p.log_bailout2;
                t = t + 1.0f - FRACTAL_LOG_POWER(log2(ratio));
                t = select((FV)(0.0f), t, isgreaterequal(t, (FV)(0.0f)));
            }
            FV cr, cg, cb;
            Fractal_PaletteV(p.palette, t, &cr, &cg, &cb);
            IV inside = CAT(convert_int, LANES)(count >= (UV)((uint)p.max_iter));
            sr = sr + select(clamp(cr, 0.0f, 1.0f), (FV)(0.0f), inside);
            sg = sg + select(clamp(cg, 0.0f, 1.0f), (FV)(0.0f), inside);
            sb = sb + select(clamp(cb, 0.0f, 1.0f), (FV)(0.0f), inside);
        }
    }
    FV mr = sr / n, mg8 = sg / n, mb = sb / n;
    UCV br = CAT(convert_uchar, LANES)(floor(clamp(mr, 0.0f, 1.0f) * 255.0f + 0.5f));
    UCV bg = CAT(convert_uchar, LANES)(floor(clamp(mg8, 0.0f, 1.0f) * 255.0f + 0.5f));
    UCV bb = CAT(convert_uchar, LANES)(floor(clamp(mb, 0.0f, 1.0f) * 255.0f + 0.5f));
    uchar ar[LANES], ag[LANES], ab[LANES];
    CAT(vstore, LANES)(br, 0, ar); CAT(vstore, LANES)(bg, 0, ag); CAT(vstore, LANES)(bb, 0, ab);
#if COLOR_F32
    float fr[LANES], fg[LANES], fb[LANES];
    CAT(vstore, LANES)(mr, 0, fr); CAT(vstore, LANES)(mg8, 0, fg); CAT(vstore, LANES)(mb, 0, fb);
#endif
    for (int k = 0; k < LANES && px0 + k < p.width; k++) {
        Color_Store8(out, r * p.width + px0 + k, (uchar4)(ar[k], ag[k], ab[k], 255));
#if COLOR_F32
        vstore4((float4)(fr[k], fg[k], fb[k], 1.0f), r * p.width + px0 + k, (__global float*)out_f32);
#endif
    }
}
#endif /* LANES > 1: fractal_color's CPU form */
