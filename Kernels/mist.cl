/* Misty window: the per-frame weight update and compose. Swift twin:
   Sources/GlintWorkloads/Mist/MistCPU.swift (same steps, same order, FP_CONTRACT off on both sides).
   The blur of the camera image is blur.cl's; drops move on the host (a few hundred numbers a
   frame) and arrive as GlintMistShape capsules binned into square tiles (tileStart/tileShapes). */
#pragma OPENCL FP_CONTRACT OFF
#include "common/types.h"

/* tan(x) on [0, 1): the (5,4) Padé approximant (relative error below 2e-6 there), written out so
   that the host computes the very same float (library tan differs between the two sides). */
inline float Mist_Tan(float x) {
    float x2 = x * x;
    return x * (945.0f - 105.0f * x2 + x2 * x2) / (945.0f - 420.0f * x2 + 15.0f * x2 * x2);
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

/* One pixel: the weight grows by fog_step up to 1 and is 0 inside any shape; inside a drop the
   pixel shows the sharp image through the drop's lens, elsewhere mix(sharp, blurred, weight). */
__kernel void mist_compose(__global const uchar4* sharp, __global const uchar4* blurred,
                           __global float* weight, __global uchar4* out,
                           __global const GlintMistShape* shapes, __global const int* tileStart,
                           __global const int* tileShapes, GlintMistParams p) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= p.width || y >= p.height) return;
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
        GlintMistShape sh = shapes[lens];
        float rel = sqrt(lensD2) / sh.radius;
        float f = Mist_Tan(p.bend * rel) * p.refraction;
        float sx = px - f * (px - sh.ax), sy = py - f * (py - sh.ay);
        float fw = (float)p.width;
        float4 v = Mist_Sample(sharp, p.width, p.height, sx * fw - 0.5f, sy * fw - 0.5f);
        float r2 = rel * rel;
        float k = 1.0f - sh.shade * (r2 * r2);
        c = (float4)(v.x * k, v.y * k, v.z * k, v.w);
    } else {
        float4 s = convert_float4(sharp[i]);
        float4 b = convert_float4(blurred[i]);
        c = s + (b - s) * w;
    }
    out[i] = convert_uchar4(clamp(floor(c + 0.5f), 0.0f, 255.0f));
}
