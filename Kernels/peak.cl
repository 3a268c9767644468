/* A device's peak rates, measured with kernels that do nothing else (glint devices --peak):
   single-precision FMA throughput and global-memory bandwidth. Swift side:
   GlintWorkloads/Backend/DevicePeak.swift. */
#pragma OPENCL FP_CONTRACT OFF

/* PEAK_CHAINS independent FMA chains per work-item, so that each chain's latency hides behind
   the others; every round is PEAK_CHAINS FMAs of PEAK_WIDTH lanes (2 flops a lane). PEAK_WIDTH
   is the device's native float vector width: 1 on a GPU, whose warps are the vectors; 8 or 16 on
   a CPU device, which does not vectorise this loop across work-items. a is just below 1 and b
   small, so the values stay finite and normal however many rounds run. The sums are stored so
   that no chain can be dropped. */
#define PEAK_CHAINS 16
#ifndef PEAK_WIDTH
#define PEAK_WIDTH 1
#endif
#if PEAK_WIDTH == 1
typedef float peak_t;
#elif PEAK_WIDTH == 4
typedef float4 peak_t;
#elif PEAK_WIDTH == 8
typedef float8 peak_t;
#elif PEAK_WIDTH == 16
typedef float16 peak_t;
#else
#error "PEAK_WIDTH must be 1, 4, 8 or 16"
#endif

__kernel void peak_fma(__global peak_t* out, float a, float b, int rounds)
{
    size_t i = get_global_id(0);
    peak_t va = (peak_t)(a), vb = (peak_t)(b);
    peak_t x0 = (peak_t)((float)(i & 1023) * 1e-4f);
    peak_t x1 = x0 + 0.01f, x2 = x0 + 0.02f, x3 = x0 + 0.03f, x4 = x0 + 0.04f, x5 = x0 + 0.05f;
    peak_t x6 = x0 + 0.06f, x7 = x0 + 0.07f, x8 = x0 + 0.08f, x9 = x0 + 0.09f, x10 = x0 + 0.10f;
    peak_t x11 = x0 + 0.11f, x12 = x0 + 0.12f, x13 = x0 + 0.13f, x14 = x0 + 0.14f, x15 = x0 + 0.15f;
    for (int r = 0; r < rounds; r++) {
        x0 = fma(x0, va, vb);   x1 = fma(x1, va, vb);   x2 = fma(x2, va, vb);   x3 = fma(x3, va, vb);
        x4 = fma(x4, va, vb);   x5 = fma(x5, va, vb);   x6 = fma(x6, va, vb);   x7 = fma(x7, va, vb);
        x8 = fma(x8, va, vb);   x9 = fma(x9, va, vb);   x10 = fma(x10, va, vb); x11 = fma(x11, va, vb);
        x12 = fma(x12, va, vb); x13 = fma(x13, va, vb); x14 = fma(x14, va, vb); x15 = fma(x15, va, vb);
    }
    out[i] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7))
           + ((x8 + x9) + (x10 + x11)) + ((x12 + x13) + (x14 + x15));
}

/* A copy of n float4 values: 32 bytes of global memory moved per item (16 read, 16 written),
   the access pattern of the image kernels (each reads its pixels and writes its result). */
__kernel void peak_copy(__global const float4* in, __global float4* out, int n)
{
    int i = get_global_id(0);
    if (i < n) out[i] = in[i];
}
