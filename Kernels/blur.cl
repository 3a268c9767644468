/* Gaussian blur. Swift twin: Sources/GlintWorkloads/Blur/BlurCPU.swift (same steps, same order).
   Images are RGBA, one pixel per element: uchar4 (PIX_U8=1) or float4 (PIX_U8=0).
   Extended lines: index e of a row or column map holds the source index of sample e - pad, or -1
   for a zero (the border mode is applied on the host, once, into rowMap/colMap).
   Build defines:
     PIX_U8    1: 8-bit images, 0: float images
     RADIUS    exact kernels: taps on each side of the centre
     TILE_W, TILE_H   exact kernels: work-group shape (blur_exact_rows uses TILE_W x 1)
     RING      recursive kernels: the widest box (length of each private ring) */
#pragma OPENCL FP_CONTRACT OFF

#if PIX_U8
#define PIX uchar4
#define LOADF(p, i) convert_float4((p)[i])
#else
#define PIX float4
#define LOADF(p, i) ((p)[i])
#endif

/* Bytes from floats: rounded half up, clamped (toBytes in Swift). */
inline uchar4 Blur_ToBytes(float4 v) {
    return convert_uchar4(clamp(floor(v + 0.5f), 0.0f, 255.0f));
}

#ifdef RADIUS
/* ---- Exact: the sampled Gaussian, separable, rows then columns, tiled through local memory ----
   8-bit: OpenCV's fixed point. Rows: sum k*p with k in 1/256 (sum below 2^16), stored as ushort4.
   Columns: (sum k*h + 2^15) >> 16. Float: the same sums in float, centre tap first, then the
   pairs from the outside in. */
#if PIX_U8
#define HPIX ushort4
#define ACC uint4
#define TAP uint
#else
#define HPIX float4
#define ACC float4
#define TAP float
#endif

__kernel __attribute__((reqd_work_group_size(TILE_W, 1, 1)))
void blur_exact_rows(__global const PIX* src, __global HPIX* mid, __global const int* colMap,
                     __global const TAP* taps, int width, int height) {
    __local ACC tile[TILE_W + 2 * RADIUS];
    int lx = get_local_id(0), y = get_global_id(1);
    int x0 = get_group_id(0) * TILE_W;
    int last = width + 2 * RADIUS - 1;
    for (int i = lx; i < TILE_W + 2 * RADIUS; i += TILE_W) {
        int m = colMap[min(x0 + i, last)];
#if PIX_U8
        tile[i] = m < 0 ? (uint4)(0) : convert_uint4(src[y * width + m]);
#else
        tile[i] = m < 0 ? (float4)(0.0f) : src[y * width + m];
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int x = x0 + lx;
    if (x >= width) return;
    ACC acc = (ACC)(taps[RADIUS]) * tile[lx + RADIUS];
    for (int j = 0; j < RADIUS; j++)
        acc = acc + (ACC)(taps[j]) * (tile[lx + j] + tile[lx + 2 * RADIUS - j]);
#if PIX_U8
    mid[y * width + x] = convert_ushort4(acc);
#else
    mid[y * width + x] = acc;
#endif
}

__kernel __attribute__((reqd_work_group_size(TILE_W, TILE_H, 1)))
void blur_exact_cols(__global const HPIX* mid, __global PIX* dst, __global const int* rowMap,
                     __global const TAP* taps, int width, int height) {
    __local HPIX tile[TILE_H + 2 * RADIUS][TILE_W];
    int lx = get_local_id(0), ly = get_local_id(1);
    int x = get_global_id(0);
    int y0 = get_group_id(1) * TILE_H;
    int last = height + 2 * RADIUS - 1;
    int xs = min(x, width - 1);
    for (int i = ly; i < TILE_H + 2 * RADIUS; i += TILE_H) {
        int m = rowMap[min(y0 + i, last)];
        tile[i][lx] = m < 0 ? (HPIX)(0) : mid[m * width + xs];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int y = y0 + ly;
    if (x >= width || y >= height) return;
#if PIX_U8
    ACC acc = (ACC)(taps[RADIUS]) * convert_uint4(tile[ly + RADIUS][lx]);
    for (int j = 0; j < RADIUS; j++)
        acc = acc + (ACC)(taps[j]) * (convert_uint4(tile[ly + j][lx]) + convert_uint4(tile[ly + 2 * RADIUS - j][lx]));
    dst[y * width + x] = convert_uchar4((acc + (uint4)(32768u)) >> 16);
#else
    ACC acc = (ACC)(taps[RADIUS]) * tile[ly + RADIUS][lx];
    for (int j = 0; j < RADIUS; j++)
        acc = acc + (ACC)(taps[j]) * (tile[ly + j][lx] + tile[ly + 2 * RADIUS - j][lx]);
    dst[y * width + x] = acc;
#endif
}
#endif /* RADIUS */

#ifdef RING
/* ---- Recursive: a cascade of four box filters, running sums over private rings ----
   A line of n samples is extended by pad = the sum of the box radii on each side; the cascade
   runs over all n + 2*pad samples and sample t >= 2*pad of its output is pixel t - 2*pad.
   The sums are not normalised between stages; one scale (1 / the product of the widths) at the end. */

#define BOX_STEP(ring, sum, slot, width, v) {      \
        float4 old = ring[slot];                   \
        ring[slot] = v;                            \
        slot++;                                    \
        if (slot == width) slot = 0;               \
        sum = sum + (v - old);                     \
        v = sum;                                   \
    }

#define BOX_CASCADE(v)                             \
    BOX_STEP(ring0, sum0, slot0, widths.s0, v)     \
    BOX_STEP(ring1, sum1, slot1, widths.s1, v)     \
    BOX_STEP(ring2, sum2, slot2, widths.s2, v)     \
    BOX_STEP(ring3, sum3, slot3, widths.s3, v)

/* The cascade along one line of n pixels, with the kernel's pad, widths and scale: map[t] is the
   source index of extended sample t (< 0: a zero), LOAD(m) reads it as float4, and
   STORE(i, v) takes pixel i's scaled result. */
#define BOX_LINE(n, map, LOAD, STORE)                                            \
    float4 ring0[RING], ring1[RING], ring2[RING], ring3[RING];                   \
    for (int i = 0; i < RING; i++) {                                             \
        ring0[i] = (float4)(0.0f); ring1[i] = (float4)(0.0f);                    \
        ring2[i] = (float4)(0.0f); ring3[i] = (float4)(0.0f);                    \
    }                                                                            \
    float4 sum0 = (float4)(0.0f), sum1 = sum0, sum2 = sum0, sum3 = sum0;         \
    int slot0 = 0, slot1 = 0, slot2 = 0, slot3 = 0;                              \
    int steps = (n) + 2 * pad;                                                   \
    for (int t = 0; t < steps; t++) {                                            \
        int m = (map)[t];                                                        \
        float4 v = m < 0 ? (float4)(0.0f) : LOAD(m);                             \
        BOX_CASCADE(v)                                                           \
        if (t >= 2 * pad) STORE(t - 2 * pad, v * scale);                         \
    }

/* Between the passes: 8-bit images keep ushort4 in 1/256 (scale includes the 256), float images float4. */
#if PIX_U8
#define MID ushort4
#define TO_MID(v) convert_ushort4(rint(v))
#define FROM_MID(m) convert_float4(m)
#define TO_PIX(v) Blur_ToBytes(v)
#else
#define MID float4
#define TO_MID(v) (v)
#define FROM_MID(m) (m)
#define TO_PIX(v) (v)
#endif

/* One work-item per pixel column, top to bottom: source to the image between passes. */
#define COL_LOAD(m) LOADF(src, (m) * width + x)
#define COL_STORE(i, v) (mid[(i) * width + x] = TO_MID(v))
__kernel void blur_box_cols(__global const PIX* src, __global MID* mid, __global const int* rowMap,
                            int width, int height, int pad, int4 widths, float scale) {
    int x = get_global_id(0);
    if (x >= width) return;
    BOX_LINE(height, rowMap, COL_LOAD, COL_STORE)
}

/* One work-item per row, left to right: the image between passes to the destination. */
#define ROW_LOAD(m) FROM_MID(row[m])
#define ROW_STORE(i, v) (dst[y * width + (i)] = TO_PIX(v))
__kernel void blur_box_rows(__global const MID* mid, __global PIX* dst, __global const int* colMap,
                            int width, int height, int pad, int4 widths, float scale) {
    int y = get_global_id(0);
    if (y >= height) return;
    __global const MID* row = mid + y * width;
    BOX_LINE(width, colMap, ROW_LOAD, ROW_STORE)
}
#endif /* RING */
