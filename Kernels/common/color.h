#ifndef GLINT_COLOR_H
#define GLINT_COLOR_H
/* Colour helpers shared by the kernels. Swift twin: GlintCore/Color.swift (same steps, same order). */
#pragma OPENCL FP_CONTRACT OFF

/* Foley & van Dam's HSV -> RGB; h, s, v in [0,1], h wraps. */
inline float3 Color_HSVToRGB(float h, float s, float v) {
    float hh = (h - floor(h)) * 6.0f;
    int i = (int)floor(hh);
    if (i > 5) i = 5;
    float f = hh - (float)i;
    float p = v * (1.0f - s);
    float q = v * (1.0f - s * f);
    float t = v * (1.0f - s * (1.0f - f));
    switch (i) {
    case 0:  return (float3)(v, t, p);
    case 1:  return (float3)(q, v, p);
    case 2:  return (float3)(p, v, t);
    case 3:  return (float3)(p, q, v);
    case 4:  return (float3)(t, p, v);
    default: return (float3)(v, p, q);
    }
}

/* A palette maps an escape value t >= 0 (a count, or a smooth count) to RGB, unclamped. */
inline float3 Color_Palette(int palette, float t) {
    switch (palette) {
    case GLINT_PALETTE_GREY: {
        float u = t / (t + 24.0f);
        return (float3)(u, u, u);
    }
    case GLINT_PALETTE_FIRE: {
        float u = 3.0f * (t / (t + 32.0f));
        return (float3)(u, u - 1.0f, u - 2.0f);
    }
    case GLINT_PALETTE_OCEAN: {
        float a = 6.2831855f * (t / 32.0f);
        return (float3)(0.5f + 0.5f * cos(a + 3.14159274f),
                        0.5f + 0.5f * cos(a + 1.57079637f),
                        0.5f + 0.5f * cos(a));
    }
    case GLINT_PALETTE_RAINBOW:
        return Color_HSVToRGB(t / 48.0f, 0.85f, 1.0f);
    default:
        /* The tutorial's shader colouring; 3.14/4 written as it is there (0.785). */
        return (float3)(sin(t / 3.0f), cos(t / 6.0f), cos(t / 12.0f + 0.785f));
    }
}

/* Stores one RGBA8 pixel as one 4-byte store. A plain `out[i] = (uchar4)(r, g, b, 255)` lets LLVM
   split the store in two: the constant alpha with three poison bytes, then the three channels
   byte by byte. The memory ends the same, but Oclgrind's uninitialised-value check flags the
   first store (every pixel of the fractal, iso, pulse and ray-tracer outputs); vstore4 stores the
   whole vector. */
inline void Color_Store8(__global uchar4* out, int i, uchar4 v) {
    vstore4(v, i, (__global uchar*)out);
}

/* [0,1] float to an 8-bit channel, rounding to nearest. */
inline uchar Color_To8Bit(float v) {
    return (uchar)floor(clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f);
}

#endif
