/* Misty window: the per-frame weight update and compose. Swift twin:
   Sources/GlintWorkloads/Mist/MistCPU.swift (same steps, same order, FP_CONTRACT off on both sides).
   The blur of the camera image is blur.cl's; drops move on the host (a few hundred numbers a
   frame) and arrive as GlintMistShape capsules binned into square tiles (tileStart/tileShapes). */
#pragma OPENCL FP_CONTRACT OFF
#include "common/lanes.h"
#include "common/types.h"

/* tan(x) on [0, 1): the (5,4) Padé approximant (relative error below 2e-6 there), written out so
   that the host computes the very same float (library tan differs between the two sides). */
#define MIST_TAN(x, x2) ((x) * (945.0f - 105.0f * (x2) + (x2) * (x2)) / (945.0f - 420.0f * (x2) + 15.0f * (x2) * (x2)))
inline float Mist_Tan(float x) {
    float x2 = x * x;
    return MIST_TAN(x, x2);
}

/* Bilinear sample at pixel coordinates (fx, fy) (pixel centres at whole numbers), edges clamped. */
inline float4 Mist_Sample(__global const uchar4* img, int w, int h, float fx, float fy) {
    float x0f = floor(fx), y0f = floor(fy);
    float ax = fx - x0f, ay = fy - y0f;
    int x0 = (int)x0f, y0 = (int)y0f;
    int xa = clamp(x0, 0, w - 1), xb = clamp(x0 + 1, 0, w - 1);
    int ya = clamp(y0, 0, h - 1), yb = clamp(y0 + 1, 0, h - 1);
    float4 p00 = convert_float4(img[ya * w + xa]), p10 = convert_float4(img[ya * w + xb]);
    float4 p01 = convert_float4(img[yb * w + xa]), p11 = convert_float4(img[yb * w + xb]);
    float4 top = p00 + (p10 - p00) * ax;
    float4 bottom = p01 + (p11 - p01) * ax;
    return top + (bottom - top) * ay;
}

/* The colour of pixel (px, py) seen through drop `sh`, d2 its squared distance from the drop's
   axis: the sharp image sampled closer to the centre (tan lens), the rim shaded. */
inline float4 Mist_Lens(__global const uchar4* sharp, GlintMistShape sh, float d2, float px, float py, GlintMistParams p) {
    float rel = sqrt(d2) / sh.radius;
    float f = Mist_Tan(p.bend * rel) * p.refraction;
    float sx = px - f * (px - sh.ax), sy = py - f * (py - sh.ay);
    float fw = (float)p.width;
    float4 v = Mist_Sample(sharp, p.width, p.height, sx * fw - 0.5f, sy * fw - 0.5f);
    float r2 = rel * rel;
    float k = 1.0f - sh.shade * (r2 * r2);
    return (float4)(v.x * k, v.y * k, v.z * k, v.w);
}

/* Bytes from floats, rounded half up and clamped: clamp(floor(c + 0.5), 0, 255) (Color_To8Bit),
   written without floor: clamp(floor(x), 0, 255) is the truncation of clamp(x, 0, 255) for any x. */
#define MIST_BYTES(T, c) CAT(convert_, T)(clamp((c) + 0.5f, 0.0f, 255.0f))
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

/* One pixel: the weight grows by fog_step up to 1 and is 0 inside any shape; inside a drop the
   pixel shows the sharp image through the drop's lens, elsewhere mix(sharp, blurred, weight). */
inline void Mist_Pixel(int x, int y, __global const uchar4* sharp, __global const uchar4* blurred,
                       __global float* weight, __global uchar4* out, __global const GlintMistShape* shapes,
                       __global const int* tileStart, __global const int* tileShapes, GlintMistParams p) {
    int i = y * p.width + x;
    float px = ((float)x + 0.5f) * p.inv_width;
    float py = ((float)y + 0.5f) * p.inv_width;
    float w = fmin(weight[i] + p.fog_step, 1.0f);
    int tile = (y / p.tile_size) * p.tiles_x + x / p.tile_size;
    int lens = -1;
    float lensD2 = 0.0f;
    for (int k = tileStart[tile]; k < tileStart[tile + 1]; k++) {
        int s = tileShapes[k];
        GlintMistShape sh = shapes[s];
        float dx = px - sh.ax, dy = py - sh.ay;
        float ex = sh.bx - sh.ax, ey = sh.by - sh.ay;
        float ee = ex * ex + ey * ey;
        float t = 0.0f;
        if (ee > 0.0f) t = fmin(fmax((dx * ex + dy * ey) / ee, 0.0f), 1.0f);
        float qx = dx - t * ex, qy = dy - t * ey;
        float d2 = qx * qx + qy * qy;
        if (d2 < sh.radius * sh.radius) {
            w = 0.0f;
            if (sh.refract > 0.0f && lens < 0) { lens = s; lensD2 = d2; }
        }
    }
    weight[i] = w;
    float4 c;
    if (lens >= 0) {
        c = Mist_Lens(sharp, shapes[lens], lensD2, px, py, p);
    } else {
        float4 s = convert_float4(sharp[i]);
        float4 b = convert_float4(blurred[i]);
        c = s + (b - s) * w;
    }
    out[i] = MIST_BYTES(uchar4, c);
}

/* GPU form: one work-item per pixel. */
__kernel void mist_compose(__global const uchar4* sharp, __global const uchar4* blurred,
                           __global float* weight, __global uchar4* out,
                           __global const GlintMistShape* shapes, __global const int* tileStart,
                           __global const int* tileShapes, GlintMistParams p) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= p.width || y >= p.height) return;
    Mist_Pixel(x, y, sharp, blurred, weight, out, shapes, tileStart, tileShapes, p);
}

#ifdef LANES
/* CPU form (CPU compilers leave a loop inside a work-item scalar across work-items): a work-item
   composes a row, tile by tile, LANES pixels per vector (4, 8 or 16): the weights as floats,
   the shapes of the tile tested against every lane at once (the GPU form's operations lane by
   lane, so the same values), four pixels' RGBA as 16 lanes for the blend, the pixels under drops
   drawn a vector at a time (Mist_LensV). A tile's last pixels short of a whole vector go through
   the GPU form's Mist_Pixel one by one. */
#define VF CAT(float, LANES)
#define VI CAT(int, LANES)
#define VU CAT(uint, LANES)
#if LANES == 4
#define LANE_IDS ((float4)(0.0f, 1.0f, 2.0f, 3.0f))
#elif LANES == 8
#define LANE_IDS ((float8)(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f))
#else
#define LANE_IDS ((float16)(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f, 10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f))
#endif

/* Mist_Tan on a vector. */
inline VF Mist_TanV(VF x) {
    VF x2 = x * x;
    return MIST_TAN(x, x2);
}

/* Mist_Lens for the lanes of a vector of pixels (x ..< x + LANES of row y) under a drop
   (lens >= 0: the drop's index, d2 its squared distance): the lens arithmetic on whole vectors,
   each channel of the bilinear sample as a vector of its own (the four corner pixels loaded lane
   by lane); the other lanes are computed on drop 0 and not stored. The same operations as
   Mist_Lens, lane by lane. */
inline void Mist_LensV(__global const uchar4* sharp, __global uchar4* out, __global const GlintMistShape* shapes,
                       VI lens, VF d2, VF px, float py, int x, int y, GlintMistParams p) {
    int l[LANES];
    float ax[LANES], ay[LANES], radius[LANES], shade[LANES];
    CAT(vstore, LANES)(lens, 0, l);
    for (int k = 0; k < LANES; k++) {
        GlintMistShape sh = shapes[max(l[k], 0)];
        ax[k] = sh.ax; ay[k] = sh.ay; radius[k] = sh.radius; shade[k] = sh.shade;
    }
    VF vax = CAT(vload, LANES)(0, ax), vay = CAT(vload, LANES)(0, ay);
    VF rel = sqrt(d2) / CAT(vload, LANES)(0, radius);
    VF f = Mist_TanV(p.bend * rel) * p.refraction;
    VF sx = px - f * (px - vax), sy = py - f * (py - vay);
    float fw = (float)p.width;
    VF fx = sx * fw - 0.5f, fy = sy * fw - 0.5f;
    VF x0f = floor(fx), y0f = floor(fy);
    VF wx = fx - x0f, wy = fy - y0f;
    int x0[LANES], y0[LANES];
    CAT(vstore, LANES)(CAT(convert_int, LANES)(x0f), 0, x0);
    CAT(vstore, LANES)(CAT(convert_int, LANES)(y0f), 0, y0);
    /* Corner (00, 10, 01, 11) of each lane as its four bytes in one uint, the channels taken out
       of whole vectors below: a store per corner and lane instead of one per channel. */
    uint c[4][LANES];
    __global const uint* sharpWords = (__global const uint*)sharp;
    for (int k = 0; k < LANES; k++) {
        int xa = clamp(x0[k], 0, p.width - 1), xb = clamp(x0[k] + 1, 0, p.width - 1);
        int ya = clamp(y0[k], 0, p.height - 1), yb = clamp(y0[k] + 1, 0, p.height - 1);
        c[0][k] = sharpWords[ya * p.width + xa]; c[1][k] = sharpWords[ya * p.width + xb];
        c[2][k] = sharpWords[yb * p.width + xa]; c[3][k] = sharpWords[yb * p.width + xb];
    }
    VU q00 = CAT(vload, LANES)(0, c[0]), q10 = CAT(vload, LANES)(0, c[1]);
    VU q01 = CAT(vload, LANES)(0, c[2]), q11 = CAT(vload, LANES)(0, c[3]);
    VF r2 = rel * rel;
    VF kk = 1.0f - CAT(vload, LANES)(0, shade) * (r2 * r2);
    uchar bytes[4][LANES];
    for (int ch = 0; ch < 4; ch++) {
        /* Channel ch is byte ch of the pixel: x, at the lowest address, is the word's low byte
           on a little-endian device, its high byte on a big-endian one. */
#ifdef __ENDIAN_LITTLE__
        uint shift = 8 * ch;
#else
        uint shift = 8 * (3 - ch);
#endif
        VF p00 = CAT(convert_float, LANES)((q00 >> shift) & 255u), p10 = CAT(convert_float, LANES)((q10 >> shift) & 255u);
        VF p01 = CAT(convert_float, LANES)((q01 >> shift) & 255u), p11 = CAT(convert_float, LANES)((q11 >> shift) & 255u);
        VF top = p00 + (p10 - p00) * wx;
        VF bottom = p01 + (p11 - p01) * wx;
        VF v = top + (bottom - top) * wy;
        if (ch < 3) v = v * kk;
        CAT(vstore, LANES)(MIST_BYTES(CAT(uchar, LANES), v), 0, bytes[ch]);
    }
    int i = y * p.width + x;
    for (int k = 0; k < LANES; k++)
        if (l[k] >= 0) out[i + k] = (uchar4)(bytes[0][k], bytes[1][k], bytes[2][k], bytes[3][k]);
}

/* sharp + (blurred - sharp) * weight of four pixels (16 bytes from byte offset 4 i). */
inline void Mist_Blend4(__global const uchar* sharp, __global const uchar* blurred, __global uchar* out, int i,
                        float4 w, bool aligned) {
    float16 s = convert_float16(vload16(0, sharp + 4 * i)), b = convert_float16(vload16(0, blurred + 4 * i));
    float16 ww = (float16)(w.xxxx, w.yyyy, w.zzzz, w.wwww);
    uchar16 c = MIST_BYTES(uchar16, s + (b - s) * ww);
    /* PoCL stores vstore16 of bytes one lane at a time; rows of a width divisible by 4 keep
       every group 16-byte aligned. */
    if (aligned) *(__global uchar16*)(out + 4 * i) = c; else vstore16(c, 0, out + 4 * i);
}

__kernel void mist_compose_v(__global const uchar4* sharp, __global const uchar4* blurred,
                             __global float* weight, __global uchar4* out,
                             __global const GlintMistShape* shapes, __global const int* tileStart,
                             __global const int* tileShapes, GlintMistParams p) {
    int y = get_global_id(0);
    if (y >= p.height) return;
    float py = ((float)y + 0.5f) * p.inv_width;
    int tileRow = (y / p.tile_size) * p.tiles_x;
    bool aligned = p.width % 4 == 0;
    __global const uchar* sharpBytes = (__global const uchar*)sharp;
    __global const uchar* blurredBytes = (__global const uchar*)blurred;
    __global uchar* outBytes = (__global uchar*)out;
    for (int tx = 0; tx < p.tiles_x; tx++) {
        int x = tx * p.tile_size, x1 = min(p.width, x + p.tile_size);
        int s0 = tileStart[tileRow + tx], s1 = tileStart[tileRow + tx + 1];
        for (; x + LANES <= x1; x += LANES) {
            int i = y * p.width + x;
            VF w = fmin(CAT(vload, LANES)(0, weight + i) + p.fog_step, 1.0f);
            VI lens = (VI)(-1);
            VF lensD2 = (VF)(0.0f);
            /* (float)x + lane is exact (x is far below 2^24): each lane's px is the GPU form's. */
            VF px = ((VF)((float)x) + LANE_IDS + 0.5f) * p.inv_width;
            for (int k = s0; k < s1; k++) {
                int s = tileShapes[k];
                GlintMistShape sh = shapes[s];
                float dy = py - sh.ay;
                float ex = sh.bx - sh.ax, ey = sh.by - sh.ay;
                float ee = ex * ex + ey * ey;
                /* A circle (a drop, or a wipe's first point: ee 0, so t is 0 and qy is dy) whose
                   rows miss this one: d2 >= dy * dy >= radius^2 in every lane (rounding is
                   monotonic), so no lane is hit. */
                if (ee == 0.0f && dy * dy >= sh.radius * sh.radius) continue;
                VF dx = px - sh.ax;
                VF t = (VF)(0.0f);
                if (ee > 0.0f) t = fmin(fmax((dx * ex + dy * ey) / ee, 0.0f), 1.0f);
                VF qx = dx - t * ex, qy = dy - t * ey;
                VF d2 = qx * qx + qy * qy;
                VI hit = d2 < sh.radius * sh.radius;
                w = hit ? (VF)(0.0f) : w;
                if (sh.refract > 0.0f) {
                    VI first = hit & (lens < 0);
                    lens = first ? (VI)(s) : lens;
                    lensD2 = first ? d2 : lensD2;
                }
            }
            CAT(vstore, LANES)(w, 0, weight + i);
#if LANES == 4
            Mist_Blend4(sharpBytes, blurredBytes, outBytes, i, w, aligned);
#elif LANES == 8
            Mist_Blend4(sharpBytes, blurredBytes, outBytes, i, w.lo, aligned);
            Mist_Blend4(sharpBytes, blurredBytes, outBytes, i + 4, w.hi, aligned);
#else
            Mist_Blend4(sharpBytes, blurredBytes, outBytes, i, w.lo.lo, aligned);
            Mist_Blend4(sharpBytes, blurredBytes, outBytes, i + 4, w.lo.hi, aligned);
            Mist_Blend4(sharpBytes, blurredBytes, outBytes, i + 8, w.hi.lo, aligned);
            Mist_Blend4(sharpBytes, blurredBytes, outBytes, i + 12, w.hi.hi, aligned);
#endif
            if (any(lens >= 0)) Mist_LensV(sharp, out, shapes, lens, lensD2, px, py, x, y, p);
        }
        for (; x < x1; x++) Mist_Pixel(x, y, sharp, blurred, weight, out, shapes, tileStart, tileShapes, p);
    }
}
#endif /* LANES */
