/* Gaussian blur. Swift twin: Sources/GlintWorkloads/Blur/BlurCPU.swift (same steps, same order).
   Images are RGBA, 8-bit (PIX_U8=1) or float (PIX_U8=0): the exact kernels' GPU form takes a
   pixel per element (uchar4 or float4), the other kernels single values (uchar or float).
   Each method has two forms: GPUs vectorise across work-items, CPU compilers (PoCL) leave the
   loops of a work-item scalar across work-items, so there a work-item works on vectors of
   LANES values itself.
   Extended lines: index e of a row or column map holds the source index of sample e - pad, or -1
   for a zero (the border mode is applied on the host, once, into rowMap/colMap).
   Build defines:
     PIX_U8    1: 8-bit images, 0: float images
     RADIUS    exact kernels: taps on each side of the centre
     TILE_W, TILE_H   exact kernels, GPU form: work-group shape (blur_exact_rows uses TILE_W x 1)
     LANES     with RADIUS: the exact kernels' CPU form, LANES lanes per vector (below)
     RECURSIVE, LANES, CHUNKS   recursive kernels (below) */
#pragma OPENCL FP_CONTRACT OFF
#include "common/lanes.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if PIX_U8
#define PIX uchar4
#else
#define PIX float4
#endif

#if defined(RADIUS) && !defined(LANES)
/* ---- Exact, GPU form: the sampled Gaussian, separable, rows then columns, tiled through local memory ----
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
#endif /* RADIUS, GPU form */

#if defined(RADIUS) && defined(LANES)
/* ---- Exact, CPU form: the same sums, vectors of LANES lanes along a row ----
   CPU compilers leave the loops of a work-item scalar across work-items, and local memory is
   only a copy there: a work-item takes a band of `band` whole rows and works along them a
   vector at a time, so that every row it reads is one stream, which the caches' prefetchers
   follow (on PoCL with AVX-512, 1080p, sigma 2, the two-pass 8-bit form took 7.4 ms with 16
   vectors of a row per work-item, 4.4 with whole rows). The host keeps LANES <= width * 4. */
#define VLOAD CAT(vload, LANES)
#if !PIX_U8
/* Float: rows, then columns, LANES values of a row per vector, the taps read straight from the
   image, each lane doing the GPU form's operations in its order (centre tap first, then the
   pairs from the outside in), so the results are the same to the bit. A row's
   last vector is moved back to end at the row's end and stores only its own values. Rows:
   vectors at least RADIUS pixels from both edges load their taps whole; the others map each
   pixel through colMap. */
#define ACCV CAT(float, LANES)

/* Values e0 ..< e0 + LANES of type T from `keep` on: one whole-vector store where rows keep
   vectors aligned (width * 4 a multiple of LANES), vstore elsewhere, lane by lane for a row's
   last vector when it overlaps the one before. */
#define STORE_VALUES(T, v, p, keep) {                                                   \
        if ((keep) == 0 && n4 % LANES == 0) *(__global CAT(T, LANES)*)(p) = (v);         \
        else if ((keep) == 0) CAT(vstore, LANES)(v, 0, p);                               \
        else {                                                                           \
            T a_[LANES];                                                                 \
            CAT(vstore, LANES)(v, 0, a_);                                                \
            for (int k_ = (keep); k_ < LANES; k_++) (p)[k_] = a_[k_];                    \
        }                                                                                \
    }

__kernel void blur_exact_rows_v(__global const float* src, __global float* mid, __global const int* colMap,
                                __global const float* taps, int width, int height, int band) {
    int n4 = width * 4, vectors = (n4 + LANES - 1) / LANES;
    int y0 = get_global_id(0) * band, y1 = min(height, y0 + band);
    for (int y = y0; y < y1; y++)
    for (int vi = 0; vi < vectors; vi++) {
        int e0 = min(vi * LANES, n4 - LANES), keep = vi * LANES - e0;
        int x0 = e0 / 4;
        bool inner = x0 >= RADIUS && x0 + LANES / 4 + RADIUS <= width;
        __global const float* row = src + (size_t)y * n4;
        ACCV acc;
        if (inner) {
            __global const float* p = row + e0;
            acc = (ACCV)(taps[RADIUS]) * VLOAD(0, p);
            for (int j = 0; j < RADIUS; j++)
                acc = acc + (ACCV)(taps[j]) * (VLOAD(0, p + 4 * (j - RADIUS)) + VLOAD(0, p + 4 * (RADIUS - j)));
        } else {
            /* Tap j of value e0 + k: pixel colMap[x + j] (x = its own pixel), or 0. */
            float v[LANES];
            for (int k = 0; k < LANES; k++) {
                int m = colMap[x0 + k / 4 + RADIUS];
                v[k] = m < 0 ? 0 : row[4 * m + k % 4];
            }
            acc = (ACCV)(taps[RADIUS]) * VLOAD(0, v);
            for (int j = 0; j < RADIUS; j++) {
                float a[LANES], b[LANES];
                for (int k = 0; k < LANES; k++) {
                    int ma = colMap[x0 + k / 4 + j], mb = colMap[x0 + k / 4 + 2 * RADIUS - j];
                    a[k] = ma < 0 ? 0 : row[4 * ma + k % 4];
                    b[k] = mb < 0 ? 0 : row[4 * mb + k % 4];
                }
                acc = acc + (ACCV)(taps[j]) * (VLOAD(0, a) + VLOAD(0, b));
            }
        }
        STORE_VALUES(float, acc, mid + (size_t)y * n4 + e0, keep)
    }
}

/* Columns: row y's taps are rows rowMap[y + j] of the horizontal sums (or zeros). */
__kernel void blur_exact_cols_v(__global const float* mid, __global float* dst, __global const int* rowMap,
                                __global const float* taps, int width, int height, int band) {
    int n4 = width * 4, vectors = (n4 + LANES - 1) / LANES;
    int y0 = get_global_id(0) * band, y1 = min(height, y0 + band);
#define MID_ROW(m) ((m) < 0 ? (ACCV)(0) : VLOAD(0, mid + (size_t)(m) * n4 + e0))
    for (int y = y0; y < y1; y++)
    for (int vi = 0; vi < vectors; vi++) {
        int e0 = min(vi * LANES, n4 - LANES), keep = vi * LANES - e0;
        ACCV c = MID_ROW(rowMap[y + RADIUS]);
        ACCV kc = (ACCV)(taps[RADIUS]);
        ACCV out = kc * c;
        for (int j = 0; j < RADIUS; j++)
            out = out + (ACCV)(taps[j]) * (MID_ROW(rowMap[y + j]) + MID_ROW(rowMap[y + 2 * RADIUS - j]));
        STORE_VALUES(float, out, dst + (size_t)y * n4 + e0, keep)
    }
}

#else
/* 8-bit, both passes in one kernel (blur_exact_u8_v), vertical first, as the Swift path does
   (ExactU8 in BlurCPU.swift, lane by lane the same integers): the rounded result is one whole
   number, (sum of kx*ky*p + 2^15) >> 16, whatever the order of the passes. Per output row:
     vertical: V = sum of ky*p over the row's 2r+1 source rows, 2*LANES bytes a step (two
           steps an iteration while two remain), loaded as
           LANES 16-bit lanes, so that lane k holds byte 2k (v & 0xFF) and byte 2k+1 (v >> 8):
           no widening shuffles. V < 2^16 splits into hi = V >> 8 and lo = V & 0xFF, kept in four
           halves (hi/lo of the even and of the odd values, a pixel two entries of each) in the
           work-item's scratch, which stays in its caches;
     border: the r pixels either side of each half from the row's own columns (colMap), or 0;
     horizontal: A = sum of kx*hi, B = sum of kx*lo per half (the four sums in one tap loop);
           the byte is (A + 128 + (B >> 8)) >> 8
           (the GPU form's (sum k*h + 2^15) >> 16 with h = 256*hi + lo), even | odd << 8 stored as
           16-bit lanes.
   Every sum is in 16-bit lanes (half the width of 32-bit ones, and 16-bit multiplies cost less
   than 32-bit ones on CPUs) and none overflows: taps in 1/256 sum to 256 and an outer tap is at
   most 128, so V, A and B stay below 65281, and A + 128 + (B >> 8) below 2^16 because the whole
   sum is at most 255 * 65536.
   The middle image never leaves the work-item: no 16-bit image through memory between passes.
   A row's last step is moved back to end at the row's end (it rewrites the same values); rows
   shorter than a step go value by value. Scratch: 4 halves of 2 * (width + 2r) entries each,
   per work-item; `zeros`: a row of zero bytes, the rows outside the image under the zero border. */
#define UV CAT(ushort, LANES)
/* Stored as LANES / 2 32-bit lanes (every address here is a multiple of 4 bytes): PoCL stores
   a vector of 16-bit lanes one lane at a time, one of 32-bit lanes whole. */
#if LANES == 4
#define HALF_LANES 2
#elif LANES == 8
#define HALF_LANES 4
#else
#define HALF_LANES 8
#endif
#define VSTOREU(v, p) CAT(vstore, HALF_LANES)(CAT(as_uint, HALF_LANES)(v), 0, (__global uint*)(p))
/* Loads likewise as 32-bit lanes: PoCL split the horizontal pass's vload16 of 16-bit lanes into
   eight 4-byte loads. */
#define VLOADU(p) CAT(as_ushort, LANES)(CAT(vload, HALF_LANES)(0, (__global const uint*)(p)))
__kernel void blur_exact_u8_v(__global const uchar* src, __global uchar* dst, __global const int* colMap,
                              __global const int* rowMap, __global const uint* taps, __global ushort* scratch,
                              __global const uchar* zeros, int width, int height, int band) {
    int n4 = width * 4, step = 2 * LANES;
    int halfLen = 2 * (width + 2 * RADIUS);
    __global ushort* hiE = scratch + (size_t)get_global_id(0) * 4 * halfLen;
    __global ushort* hiO = hiE + halfLen;
    __global ushort* loE = hiO + halfLen;
    __global ushort* loO = loE + halfLen;
    ushort k[RADIUS + 1];
    for (int j = 0; j <= RADIUS; j++) k[j] = (ushort)taps[j];
    UV low = (UV)(0xFF), bias = (UV)(128);
    int y0 = get_global_id(0) * band, y1 = min(height, y0 + band);
    for (int y = y0; y < y1; y++) {
        __global const uchar* rows[2 * RADIUS + 1];
        for (int j = 0; j <= 2 * RADIUS; j++) {
            int m = rowMap[y + j];
            rows[j] = m < 0 ? zeros : src + (size_t)m * n4;
        }
        /* Vertical: the sums of the step at byte ii (VSUMS) and their halves stored (VSTORE_HALVES);
           two steps an iteration while two remain (two independent sets of sums, whose loops the
           compiler unrolls, RADIUS being a constant), then one at a time. */
#define VSUMS(ii, even, odd) {                                                                   \
            UV c_ = VLOADU(rows[RADIUS] + (ii)), kc_ = (UV)(k[RADIUS]);                          \
            even = kc_ * (c_ & low); odd = kc_ * (c_ >> (UV)(8));                                \
            for (int j = 0; j < RADIUS; j++) {                                                   \
                UV a_ = VLOADU(rows[j] + (ii)), b_ = VLOADU(rows[2 * RADIUS - j] + (ii));        \
                UV kj_ = (UV)(k[j]);                                                             \
                even = even + kj_ * ((a_ & low) + (b_ & low));                                   \
                odd = odd + kj_ * ((a_ >> (UV)(8)) + (b_ >> (UV)(8)));                           \
            }                                                                                    \
        }
#define VSTORE_HALVES(ii, even, odd) {                                                           \
            int e_ = 2 * RADIUS + (ii) / 2;                                                      \
            VSTOREU((even) >> (UV)(8), hiE + e_); VSTOREU((even) & low, loE + e_);               \
            VSTOREU((odd) >> (UV)(8), hiO + e_); VSTOREU((odd) & low, loO + e_);                 \
        }
        int i0 = 0;
        for (; i0 + 2 * step <= n4; i0 += 2 * step) {
            UV even, odd, even2, odd2;
            VSUMS(i0, even, odd) VSUMS(i0 + step, even2, odd2)
            VSTORE_HALVES(i0, even, odd) VSTORE_HALVES(i0 + step, even2, odd2)
        }
        for (; n4 >= step && i0 < n4; i0 += step) {
            int i = min(i0, n4 - step);
            UV even, odd;
            VSUMS(i, even, odd)
            VSTORE_HALVES(i, even, odd)
        }
#undef VSUMS
#undef VSTORE_HALVES
        if (n4 < step) {
            for (int i = 0; i < n4; i++) {
#define ROW1(j) ((ushort)rows[j][i])
                ushort v = k[RADIUS] * ROW1(RADIUS);
                for (int j = 0; j < RADIUS; j++) v = v + k[j] * (ushort)(ROW1(j) + ROW1(2 * RADIUS - j));
#undef ROW1
                int e = 2 * RADIUS + i / 2;
                if (i % 2 == 0) { hiE[e] = v >> 8; loE[e] = v & 0xFF; } else { hiO[e] = v >> 8; loO[e] = v & 0xFF; }
            }
        }
        /* Border: extended pixel s (source column colMap[s]) is entries 2s and 2s + 1 of each
           half, bytes 4s to 4s + 3, copied as bytes (which may alias the 32-bit lanes the vector
           steps store and the 16-bit values the value-by-value steps store). */
        for (int t = 0; t < 2 * RADIUS; t++) {
            int side = t < RADIUS ? t : width + t;
            int sx = colMap[side];
            for (int h = 0; h < 4; h++) {
                __global uchar* bytes = (__global uchar*)(hiE + h * halfLen);
                for (int c = 0; c < 4; c++) bytes[4 * side + c] = sx < 0 ? 0 : bytes[4 * (sx + RADIUS) + c];
            }
        }
        /* Horizontal. */
        __global uchar* out = dst + (size_t)y * n4;
        for (int i0 = 0; n4 >= step && i0 < n4; i0 += step) {
            int i = min(i0, n4 - step), e = i / 2;
            /* The four halves' sums side by side, each tap's weight taken once for all four. */
            UV kc = (UV)(k[RADIUS]);
            UV ahE = kc * VLOADU(hiE + e + 2 * RADIUS), alE = kc * VLOADU(loE + e + 2 * RADIUS);
            UV ahO = kc * VLOADU(hiO + e + 2 * RADIUS), alO = kc * VLOADU(loO + e + 2 * RADIUS);
            for (int j = 0; j < RADIUS; j++) {
                UV kj = (UV)(k[j]);
                int a = e + 2 * j, b = e + 2 * (2 * RADIUS - j);
                ahE = ahE + kj * (VLOADU(hiE + a) + VLOADU(hiE + b));
                alE = alE + kj * (VLOADU(loE + a) + VLOADU(loE + b));
                ahO = ahO + kj * (VLOADU(hiO + a) + VLOADU(hiO + b));
                alO = alO + kj * (VLOADU(loO + a) + VLOADU(loO + b));
            }
            UV even = (ahE + bias + (alE >> (UV)(8))) >> (UV)(8);
            UV odd = (ahO + bias + (alO >> (UV)(8))) >> (UV)(8);
            VSTOREU(even | (odd << (UV)(8)), out + i);
        }
        if (n4 < step) {
            for (int i = 0; i < n4; i++) {
                __global ushort* hi = i % 2 == 0 ? hiE : hiO;
                __global ushort* lo = i % 2 == 0 ? loE : loO;
                int e = i / 2;
                ushort a = k[RADIUS] * hi[e + 2 * RADIUS], b = k[RADIUS] * lo[e + 2 * RADIUS];
                for (int j = 0; j < RADIUS; j++) {
                    a = a + k[j] * (ushort)(hi[e + 2 * j] + hi[e + 2 * (2 * RADIUS - j)]);
                    b = b + k[j] * (ushort)(lo[e + 2 * j] + lo[e + 2 * (2 * RADIUS - j)]);
                }
                out[i] = (uchar)((a + 128 + (b >> 8)) >> 8);
            }
        }
    }
}
#endif /* PIX_U8 */
#endif /* RADIUS, CPU form */

#ifdef RECURSIVE
/* ---- Recursive: a cascade of four box filters, running sums over rings in global memory ----
   A line of n samples is extended by pad = the sum of the box radii on each side; the cascade
   runs over all n + 2*pad samples and sample t >= 2*pad of its output is pixel t - 2*pad.
   The sums are not normalised between stages; one scale (1 / the product of the widths) at the end.
   Stage 0 takes the sample leaving its window from the line itself (sample t - w0, 0 before the
   start); stages 1-3 keep their last inputs in rings of masks.sk + 1 slots (a power of two at
   least w_k: the input of step t goes to slot t & mask, the one leaving to it was stored at slot
   (t - w_k) & mask, zero until written).
   Work-items own whole lines, LANES channels of them at once (one vector: 1 on GPUs, which
   vectorise across work-items; 16 on CPUs, whose compilers leave such loops scalar across
   work-items):
     columns: CHUNKS vectors of consecutive values of a row (a whole cache line of an 8-bit row
              with 16 lanes), top to bottom;
     rows:    LANES 1: one channel of one row; 4, 8, 16: 1, 2, 4 rows, RGBA each, left to right.
   The host keeps a whole item inside the image (LANES * CHUNKS <= width * 4, LANES / 4 <= height);
   the last item of a line of items is moved back to end where the image ends, and stores only
   the values that are its own. Launches start at item `first`: the host splits a pass into
   launches whose rings fit the buffer it has.
   Build defines: LANES (1, 4, 8 or 16), CHUNKS (column vectors per work-item, 1 to 4). */

#if PIX_U8
#define SRCT uchar
#define MIDT ushort
/* rint(v) for a ushort: adding 1.5 * 2^23 rounds to a whole number, half to even, for
   |v| < 2^22 (no library call); at least 0. The running sums' rounding leaves the values of dark
   stretches a little off 0, below it too (within 0.15 of a 1/256 step in simulated lines at
   sigma 20 to 600, so rint gives 0 or -0), and the conversion of a negative float to ushort is
   undefined (x86 wraps -1 to 65535, NVIDIA clamps it to 0): the clamp keeps every device, and
   the Swift path, which clamps the same way, equal whatever the error. */
#define MID_ROUND(v) max(((v) + 12582912.0f) - 12582912.0f, 0.0f)
/* Bytes from floats, rounded half up and clamped: clamp(floor(v + 0.5), 0, 255) (toBytes in
   Swift), written without floor: for any float x, clamp(floor(x), 0, 255) equals the truncation
   of clamp(x, 0, 255) (x < 0 gives 0 both ways, x in [0, 255] truncates to its floor, x > 255
   gives 255). */
#define TO_PIX1(v) convert_uchar(clamp((v) + 0.5f, 0.0f, 255.0f))
#else
#define SRCT float
#define MIDT float
#define MID_ROUND(v) (v)
#define TO_PIX1(v) (v)
#endif

#if LANES == 1
#define VF float
#define VLOADF(p) ((float)(p)[0])
#define TO_MIDV(v) ((MIDT)MID_ROUND(v))
#define VSTORE_MID(v, p) ((p)[0] = TO_MIDV(v))
#else
#define VF CAT(float, LANES)
#define VLOADF(p) CAT(convert_float, LANES)(CAT(vload, LANES)(0, p))
#define TO_MIDV(v) CAT(CAT(convert_, MIDT), LANES)(MID_ROUND(v))
/* A whole-vector store where rows keep vectors aligned (width * 4 a multiple of LANES):
   PoCL turns vstore of 16-bit vectors into one store per lane. */
#define VSTORE_MID(v, p) (aligned ? (void)(*(__global CAT(MIDT, LANES)*)(p) = TO_MIDV(v)) \
                                  : CAT(vstore, LANES)(TO_MIDV(v), 0, p))
#endif

/* The cascade over one item's C vectors of lines: LOAD(m, c) gives vector c of extended sample
   m (m >= 0), STORE(i, c, v) takes vector c of output i. A launch's rings: per work-group, ring
   1, 2, 3 one after another, each slot the C vectors of every item of the group. */
#define BOX_LINE(C, n, map, LOAD, STORE)                                                   \
    int size = get_local_size(0) * (C);                                                    \
    int ringLen = masks.s1 + masks.s2 + masks.s3 + 3;                                      \
    __global VF* r1 = (__global VF*)rings + (size_t)get_group_id(0) * ringLen * size       \
                      + get_local_id(0) * (C);                                             \
    __global VF* r2 = r1 + (masks.s1 + 1) * size;                                          \
    __global VF* r3 = r2 + (masks.s2 + 1) * size;                                          \
    for (int i = 0; i < ringLen; i++)                                                      \
        for (int c = 0; c < (C); c++) r1[i * size + c] = (VF)(0.0f);                       \
    VF s0[C], s1[C], s2[C], s3[C];                                                         \
    for (int c = 0; c < (C); c++) {                                                        \
        s0[c] = (VF)(0.0f); s1[c] = s0[c]; s2[c] = s0[c]; s3[c] = s0[c];                   \
    }                                                                                      \
    int steps = (n) + 2 * pad;                                                             \
    for (int t = 0; t < steps; t++) {                                                      \
        int m = (map)[t];                                                                  \
        int mo = t >= widths.s0 ? (map)[t - widths.s0] : -1;                               \
        int a1 = ((t - widths.s1) & masks.s1) * size, b1 = (t & masks.s1) * size;          \
        int a2 = ((t - widths.s2) & masks.s2) * size, b2 = (t & masks.s2) * size;          \
        int a3 = ((t - widths.s3) & masks.s3) * size, b3 = (t & masks.s3) * size;          \
        _Pragma("unroll")                                                                  \
        for (int c = 0; c < (C); c++) {                                                    \
            VF v = m < 0 ? (VF)(0.0f) : LOAD(m, c);                                        \
            VF o = mo < 0 ? (VF)(0.0f) : LOAD(mo, c);                                      \
            s0[c] = s0[c] + (v - o);                                                       \
            VF o1 = r1[a1 + c]; r1[b1 + c] = s0[c]; s1[c] = s1[c] + (s0[c] - o1);          \
            VF o2 = r2[a2 + c]; r2[b2 + c] = s1[c]; s2[c] = s2[c] + (s1[c] - o2);          \
            VF o3 = r3[a3 + c]; r3[b3 + c] = s2[c]; s3[c] = s3[c] + (s2[c] - o3);          \
            if (t >= 2 * pad) STORE(t - 2 * pad, c, s3[c] * scale);                        \
        }                                                                                  \
    }

/* The lanes from `keep` on of a column vector (the last item's, partly another item's). */
inline void Box_ColumnTail(VF v, __global MIDT* p, int keep) {
    float a[LANES];
#if LANES == 1
    a[0] = v;
#else
    CAT(vstore, LANES)(v, 0, a);
#endif
    for (int k = max(keep, 0); k < LANES; k++) p[k] = (MIDT)MID_ROUND(a[k]);
}

/* Columns, top to bottom: source to the image between passes (8-bit: ushort in 1/256, the
   scale includes the 256; float: float). */
#define COL_LOAD(m, c) VLOADF(src + (size_t)(m) * n4 + e0 + (c) * LANES)
#define COL_STORE(i, c, v) {                                                               \
        __global MIDT* p_ = mid + (size_t)(i) * n4 + e0 + (c) * LANES;                     \
        if (keep <= (c) * LANES) VSTORE_MID(v, p_); else Box_ColumnTail(v, p_, keep - (c) * LANES); }
__kernel void blur_box_cols(__global const SRCT* src, __global MIDT* mid, __global float* rings,
                            __global const int* rowMap, int width, int height, int pad, int4 widths,
                            int4 masks, float scale, int first) {
    const int chunk = LANES * CHUNKS;
    int n4 = width * 4, g = first + get_global_id(0);
    if (g * chunk >= n4) return;
    int e0 = min(g * chunk, n4 - chunk), keep = g * chunk - e0;
    bool aligned = n4 % LANES == 0;
    BOX_LINE(CHUNKS, height, rowMap, COL_LOAD, COL_STORE)
}

/* Rows, left to right: the image between passes to the destination. */
#if LANES == 1
#define ROW_LOAD(m, c) ((float)row[(m) * 4])
#define ROW_STORE(i, c, v) (out[(i) * 4] = TO_PIX1(v))
#else
#define ROWS (LANES / 4)
#define MID4(r, m) convert_float4(vload4(m, mid + (size_t)(y0 + (r)) * n4))
#if LANES == 4
#define ROW_LOAD(m, c) MID4(0, m)
#elif LANES == 8
#define ROW_LOAD(m, c) (float8)(MID4(0, m), MID4(1, m))
#else
#define ROW_LOAD(m, c) (float16)(MID4(0, m), MID4(1, m), MID4(2, m), MID4(3, m))
#endif
#define ROW_STORE(i, c, v) Box_RowsOut(v, dst + (size_t)y0 * n4 + 4 * (i), n4, keep)
/* Pixel i of the item's rows from row `keep` on (the rows before are another item's). */
inline void Box_RowsOut(VF v, __global SRCT* p, int n4, int keep) {
#if PIX_U8
    typedef uchar4 P4;
    CAT(uchar, LANES) b = CAT(convert_uchar, LANES)(clamp(v + 0.5f, 0.0f, 255.0f));
#else
    typedef float4 P4;
    VF b = v;
#endif
#if LANES == 4
    *(__global P4*)p = b;
#elif LANES == 8
    if (keep == 0) *(__global P4*)p = b.lo;
    *(__global P4*)(p + n4) = b.hi;
#else
    if (keep == 0) *(__global P4*)p = b.lo.lo;
    if (keep <= 1) *(__global P4*)(p + n4) = b.lo.hi;
    if (keep <= 2) *(__global P4*)(p + 2 * n4) = b.hi.lo;
    *(__global P4*)(p + 3 * n4) = b.hi.hi;
#endif
}
#endif
__kernel void blur_box_rows(__global const MIDT* mid, __global SRCT* dst, __global float* rings,
                            __global const int* colMap, int width, int height, int pad, int4 widths,
                            int4 masks, float scale, int first) {
    int n4 = width * 4, g = first + get_global_id(0);
#if LANES == 1
    if (g >= height * 4) return;
    __global const MIDT* row = mid + (size_t)(g >> 2) * n4 + (g & 3);
    __global SRCT* out = dst + (size_t)(g >> 2) * n4 + (g & 3);
#else
    if (g * ROWS >= height) return;
    int y0 = min(g * ROWS, height - ROWS), keep = g * ROWS - y0;
#endif
    BOX_LINE(1, width, colMap, ROW_LOAD, ROW_STORE)
}
#endif /* RECURSIVE */
