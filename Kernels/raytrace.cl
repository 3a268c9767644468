/* Ray Tracing in One Weekend: spheres, diffuse/metal/glass, the book's sky, a thin-lens camera.
   Swift twin: Sources/GlintWorkloads/RayTrace/RTTrace.swift (same names, same steps, same order).

   One work-item is one pixel: it reads the pixel's running sums, adds samples sample0 ..
   sample0+samples-1 one after the other, and writes them back. A pixel's sums are therefore the
   same float additions in the same order however a render is cut into launches, passes or runs.

   Random numbers come from common/rng.h keyed by (pixel x, pixel y, sample, dimension, seed):
   dimension 0 is the camera sample (pixel jitter, lens), dimension 1 + k the k-th bounce.
   Float rules: no contraction, no native (approximate) maths, no built-in dot/normalize (their summation order is
   the implementation's); sin/cos and cbrt are polynomials and Newton steps written out here, so
   the two paths do the same IEEE operations. */
#pragma OPENCL FP_CONTRACT OFF
#include "common/types.h"
#include "common/rng.h"
#include "common/color.h"

/* Entries of the traversal stack: a node pushes at most 7 children above the one popped next,
   and the host limits the tree to 9 levels (7 * 9 + 1 = 64). */
#define RT_STACK 64

#define RT_HALF_PI 0x1.921fb6p+0f
#define RT_THIRD   0x1.555556p-2f
#define RT_NEAR_ZERO 0x1.5798eep-27f  /* 1e-8, the book's near-zero bound */

inline float Rt_Dot(float3 a, float3 b) { return (a.x * b.x + a.y * b.y) + a.z * b.z; }

inline float3 Rt_Normalize(float3 v) {
    return v / sqrt(Rt_Dot(v, v));
}

/* (sin, cos) of 2*pi*u for u in [0, 1]: the nearest quarter turn k, then Taylor polynomials on
   the remaining angle in [-pi/4, pi/4] (error below 4e-7). */
inline float2 Rt_SinCosTurns(float u) {
    float q = u * 4.0f;
    int k = (int)(q + 0.5f);
    float a = (q - (float)k) * RT_HALF_PI;
    float a2 = a * a;
    float s = a * (1.0f + a2 * (-0x1.555556p-3f + a2 * (0x1.111112p-7f + a2 * -0x1.a01a02p-13f)));
    float c = 1.0f + a2 * (-0.5f + a2 * (0x1.555556p-5f + a2 * (-0x1.6c16c2p-10f + a2 * 0x1.a01a02p-16f)));
    /* Quarter turns k = 0, 1, 2, 3 (mod 4) give (s, c), (c, -s), (-s, -c), (-c, s): an odd k swaps
       the pair (and negates the new cosine), bit 1 negates both. Written as two tests, not a switch
       on k & 3: LLVM narrows that switch to a 2-bit integer (trunc to i2, case i2 -2), which
       Oclgrind 21.10 executes wrongly (k = 4 took the default case), and GPU compilers gain
       nothing from a jump table here. */
    const float2 turned = (k & 1) != 0 ? (float2)(c, -s) : (float2)(s, c);
    return (k & 2) != 0 ? -turned : turned;
}

/* Cube root of x in [0, 1): a guess from the bits, then three Newton steps. */
inline float Rt_Cbrt(float x) {
    float y = as_float(as_uint(x) / 3u + 709921077u);
    for (int i = 0; i < 3; i++) {
        y = ((y + y) + x / (y * y)) * RT_THIRD;
    }
    return y;
}

/* Lane l of a vector comparison as bit l; its set lanes are then visited in ascending order
   (lowest set bit first) without a branch per lane. */
#if defined(__x86_64__) && defined(__AVX__) && defined(__clang__) && !defined(RT_PORTABLE)
/* x86 CPU devices (PoCL): eight lanes at once are one instruction. (RT_PORTABLE, a test option,
   builds what GPUs run.) */
#define RT_X86_AVX 1
#endif

inline uint Rt_Bits(int8 m) {
#ifdef RT_X86_AVX
    /* One vmovmskps; LLVM does not find it in the reduction below. */
    return (uint)__builtin_ia32_movmskps256(as_float8(m));
#else
    const int8 v = m & (int8)(1, 2, 4, 8, 16, 32, 64, 128);
    const int4 four = v.lo | v.hi;
    const int2 two = four.lo | four.hi;
    return (uint)(two.x | two.y);
#endif
}

/* One axis of eight boxes: the entry and exit distances of the slab between planes pmin and pmax
   narrow [tnear, tfar] lane by lane. */
inline void Rt_Slab(float8 pmin, float8 pmax, float o, float inv, float8* tnear, float8* tfar) {
    const float8 t1 = (pmin - o) * inv;
    const float8 t2 = (pmax - o) * inv;
    const int8 swap = isless(t2, t1);
    const float8 lo = select(t1, t2, swap), hi = select(t2, t1, swap);
    *tnear = select(*tnear, lo, isgreater(lo, *tnear));
    *tfar = select(*tfar, hi, isless(hi, *tfar));
}

/* Index of the lowest set bit of a non-zero word. */
inline int Rt_LowestBit(uint bits) { return 31 - (int)clz(bits & (0u - bits)); }

/* A uniformly distributed unit vector from two uniforms. */
inline float3 Rt_UnitVector(float u0, float u1) {
    float z = 1.0f - 2.0f * u0;
    float r = sqrt(1.0f - z * z);
    float2 sc = Rt_SinCosTurns(u1);
    return (float3)(r * sc.y, r * sc.x, z);
}

/* The closest sphere hit by o + t*d (d of unit length) with t_min < t, or -1; its t in *t_hit.
   Visits a node's hit children nearest first (the others wait on the stack, farthest lowest) and
   skips any whose box starts beyond the closest hit so far. */
inline __attribute__((always_inline)) int Rt_Intersect(__global const GlintRTNode* nodes, __global const GlintRTSphereBlock* blocks,
                        float3 o, float3 d, float t_min, float* t_hit) {
    const float3 inv = (float3)(1.0f, 1.0f, 1.0f) / d;
    int stack_ref[RT_STACK];
    float stack_t[RT_STACK];
    int sp = 0;
    int ref = 0;
    float t_entry = t_min;
    float closest = INFINITY;
    int hit = -1;
    for (;;) {
        if (t_entry < closest) {
            if (ref >= 0) {
                __global const GlintRTNode* n = nodes + ref;
                /* Slabs as (plane - o) / d: a zero direction component gives infinite (not NaN)
                   distances; a NaN slab (0 * inf) is ignored by the selects, never poisons the rest. */
                float8 tnear = (float8)(t_min), tfar = (float8)(closest);
                Rt_Slab(vload8(0, n->min_x), vload8(0, n->max_x), o.x, inv.x, &tnear, &tfar);
                Rt_Slab(vload8(0, n->min_y), vload8(0, n->max_y), o.y, inv.y, &tnear, &tfar);
                Rt_Slab(vload8(0, n->min_z), vload8(0, n->max_z), o.z, inv.z, &tnear, &tfar);
                const int8 child = vload8(0, n->child);
                uint m = Rt_Bits(islessequal(tnear, tfar) & (child != (int8)(GLINT_RT_EMPTY)));
                if (m != 0) {
                    /* The hit children sorted by distance above the stack's top, farthest lowest;
                       the nearest is visited next without a trip through the stack. */
                    float tn[8];
                    int ch[8];
                    vstore8(tnear, 0, tn);
                    vstore8(child, 0, ch);
                    const int base = sp;
                    while (m != 0) {
                        const int l = Rt_LowestBit(m);
                        m &= m - 1u;
                        if (sp >= RT_STACK) continue;
                        int j = sp;
                        while (j > base && stack_t[j - 1] < tn[l]) {
                            stack_t[j] = stack_t[j - 1];
                            stack_ref[j] = stack_ref[j - 1];
                            j--;
                        }
                        stack_t[j] = tn[l];
                        stack_ref[j] = ch[l];
                        sp++;
                    }
                    sp--;
                    ref = stack_ref[sp];
                    t_entry = stack_t[sp];
                    continue;
                }
            } else {
                const int block = ~ref;
                __global const GlintRTSphereBlock* b = blocks + block;
                const float8 ocx = (float8)(o.x) - vload8(0, b->center_x);
                const float8 ocy = (float8)(o.y) - vload8(0, b->center_y);
                const float8 ocz = (float8)(o.z) - vload8(0, b->center_z);
                const float8 hb = (ocx * d.x + ocy * d.y) + ocz * d.z;
                const float8 c = ((ocx * ocx + ocy * ocy) + ocz * ocz) - vload8(0, b->radius2);
                const float8 disc = hb * hb - c;
                /* The leaf's contract, which the Swift twin (RTTrace.intersect) computes as vector
                   code: among lanes with disc > 0, a lane's candidate is its nearer root -hb - sqrt(disc)
                   if in (t_min, closest), else its farther one -hb + sqrt(disc) if there; the hit is
                   the smallest candidate, the lowest lane on a tie. Taking the lanes in ascending
                   order against the closest so far (strict <) is that rule. */
                uint m = Rt_Bits(isgreater(disc, (float8)(0.0f)));
                if (m != 0) {
                    float hbs[8], ds[8];
                    vstore8(hb, 0, hbs);
#ifdef RT_X86_AVX
                    /* One vsqrtps for the block (lanes not read are NaN or 0); elsewhere, where a
                       float8 is eight scalar operations, one square root per lane read. */
                    vstore8(sqrt(disc), 0, ds);
#else
                    vstore8(disc, 0, ds);
#endif
                    while (m != 0) {
                        const int l = Rt_LowestBit(m);
                        m &= m - 1u;
#ifdef RT_X86_AVX
                        const float sq = ds[l];
#else
                        const float sq = sqrt(ds[l]);
#endif
                        float root = -hbs[l] - sq;
                        if (!(root > t_min && root < closest)) {
                            root = -hbs[l] + sq;
                            if (!(root > t_min && root < closest)) continue;
                        }
                        closest = root;
                        hit = block * 8 + l;
                    }
                }
            }
        }
        if (sp == 0) break;
        sp--;
        ref = stack_ref[sp];
        t_entry = stack_t[sp];
    }
    *t_hit = closest;
    return hit;
}

/* The book's sky: white looking down, blue looking up, linear in the direction's y. */
inline float3 Rt_Sky(const GlintRTParams* p, float3 d) {
    const float t = 0.5f * (d.y + 1.0f);
    const float3 bottom = (float3)(p->sky_bottom_r, p->sky_bottom_g, p->sky_bottom_b);
    const float3 top = (float3)(p->sky_top_r, p->sky_top_g, p->sky_top_b);
    return bottom * (1.0f - t) + top * t;
}

/* d reflected about the unit normal n. */
inline float3 Rt_Reflect(float3 d, float3 n) { return d - n * (2.0f * Rt_Dot(d, n)); }

/* The colour one camera sample of pixel (px, py) brings back. */
inline float3 Rt_Sample(const GlintRTParams* p, __global const GlintRTNode* nodes,
                        __global const GlintRTSphereBlock* blocks, __global const GlintRTSphere* spheres,
                        __global const GlintRTMaterial* materials, uint px, uint py, uint s) {
    /* Camera ray: jitter inside the pixel, a point on the lens disc. */
    const uint4 w = Rng_Philox(px, py, s, 0u, p->seed);
    const float jx = Rng_ToUnit(w.x), jy = Rng_ToUnit(w.y);
    const float lr = sqrt(Rng_ToUnit(w.z));
    const float2 lsc = Rt_SinCosTurns(Rng_ToUnit(w.w));
    const float lx = p->lens_radius * (lr * lsc.y), ly = p->lens_radius * (lr * lsc.x);
    const float3 cu = (float3)(p->u_x, p->u_y, p->u_z), cv = (float3)(p->v_x, p->v_y, p->v_z);
    const float3 offset = cu * lx + cv * ly;
    const float3 origin = (float3)(p->origin_x, p->origin_y, p->origin_z);
    const float3 corner = (float3)(p->corner_x, p->corner_y, p->corner_z);
    const float3 horizontal = (float3)(p->horizontal_x, p->horizontal_y, p->horizontal_z);
    const float3 vertical = (float3)(p->vertical_x, p->vertical_y, p->vertical_z);
    const float su = ((float)px + jx) / (float)p->width;
    const float tv = ((float)(p->height - 1 - (int)py) + jy) / (float)p->height;
    float3 o = origin + offset;
    float3 d = Rt_Normalize((((corner + horizontal * su) + vertical * tv) - origin) - offset);

    float3 attenuation = (float3)(1.0f, 1.0f, 1.0f);
    for (int depth = 0; depth < p->max_depth; depth++) {
        /* The bounce's random numbers do not depend on the hit: drawn first, they overlap the traversal. */
        const uint4 r = Rng_Philox(px, py, s, (uint)(depth + 1), p->seed);
        float t;
        const int id = Rt_Intersect(nodes, blocks, o, d, p->t_min, &t);
        if (id < 0) return attenuation * Rt_Sky(p, d);
        const GlintRTSphere sp = spheres[id];
        const float3 point = o + d * t;
        const float3 outward = (point - (float3)(sp.center_x, sp.center_y, sp.center_z)) * sp.inv_radius;
        const int front = Rt_Dot(d, outward) < 0.0f;
        const float3 normal = front ? outward : -outward;
        const GlintRTMaterial m = materials[sp.material];
        if (m.kind == GLINT_RT_LAMBERTIAN) {
            float3 dir = normal + Rt_UnitVector(Rng_ToUnit(r.x), Rng_ToUnit(r.y));
            /* Catch degenerate scatter direction */
            if (fabs(dir.x) < RT_NEAR_ZERO && fabs(dir.y) < RT_NEAR_ZERO && fabs(dir.z) < RT_NEAR_ZERO) dir = normal;
            d = Rt_Normalize(dir);
        } else if (m.kind == GLINT_RT_METAL) {
            const float radius = m.fuzz * Rt_Cbrt(Rng_ToUnit(r.z));
            const float3 dir = Rt_Reflect(d, normal) + Rt_UnitVector(Rng_ToUnit(r.x), Rng_ToUnit(r.y)) * radius;
            /* Fuzz that points below the surface is absorbed. */
            if (!(Rt_Dot(dir, normal) > 0.0f)) return (float3)(0.0f, 0.0f, 0.0f);
            d = Rt_Normalize(dir);
        } else {
            const float ratio = front ? 1.0f / m.ior : m.ior;
            float cos_t = -Rt_Dot(d, normal);
            if (cos_t > 1.0f) cos_t = 1.0f;
            const float s2 = 1.0f - cos_t * cos_t;
            const float sin_t = sqrt(s2 > 0.0f ? s2 : 0.0f);
            /* Schlick's approximation of the reflectance. */
            float r0 = (1.0f - ratio) / (1.0f + ratio);
            r0 = r0 * r0;
            const float x = 1.0f - cos_t, x2 = x * x;
            const float reflectance = r0 + (1.0f - r0) * ((x2 * x2) * x);
            float3 dir;
            if (ratio * sin_t > 1.0f || reflectance > Rng_ToUnit(r.w)) {
                dir = Rt_Reflect(d, normal);
            } else {
                const float3 perp = (d + normal * cos_t) * ratio;
                const float k = 1.0f - Rt_Dot(perp, perp);
                dir = perp + normal * -sqrt(fabs(k));
            }
            d = Rt_Normalize(dir);
        }
        attenuation = attenuation * (float3)(m.albedo_r, m.albedo_g, m.albedo_b);
        o = point;
    }
    return (float3)(0.0f, 0.0f, 0.0f);
}

/* Adds samples sample0 .. sample0+samples-1 to the sums of the pixels in rows row0 ... of the
   launch (global size: width x rows). The sums hold the image's rows from band0 on (a shard's
   band; 0 for the whole image). A sample that is not finite counts as black. */
__kernel void rt_trace(__global float4* accum,                    /* RGB sums per pixel, w unused */
                       __global const GlintRTNode* nodes,
                       __global const GlintRTSphereBlock* blocks,
                       __global const GlintRTSphere* spheres,
                       __global const GlintRTMaterial* materials,
                       const GlintRTParams p,
                       const int row0,                             /* first image row            */
                       const int band0,                            /* image row of accum[0]      */
                       const int sample0,                          /* first sample index         */
                       const int samples)                          /* samples per pixel to add   */
{
    const int x = (int)get_global_id(0);
    const int y = row0 + (int)get_global_id(1);
    if (x >= p.width || y >= p.height) return;
    const int i = (y - band0) * p.width + x;
    float4 acc = accum[i];
    for (int k = 0; k < samples; k++) {
        const float3 c = Rt_Sample(&p, nodes, blocks, spheres, materials, (uint)x, (uint)y, (uint)(sample0 + k));
        if (isfinite(c.x) && isfinite(c.y) && isfinite(c.z)) {
            acc.x = acc.x + c.x;
            acc.y = acc.y + c.y;
            acc.z = acc.z + c.z;
        }
    }
    accum[i] = acc;
}

/* The book's output from the sums, on the device (for passes chained after a render): gamma 2
   (square root) of the mean, clamped to [0, 0.999], times 256, truncated; alpha 255. Swift
   twin: RTAccumulation.gammaByte. */
inline uchar Rt_GammaByte(float v) {
    if (!(v > 0.0f)) return (uchar)0;  /* also NaN */
    float g = fmin(sqrt(v), 0.999f);
    return (uchar)(256.0f * g);
}

__kernel void rt_resolve(__global const float4* accum,  /* RGB sums per pixel              */
                         __global uchar4* out,          /* the 8-bit image                 */
                         const int count,               /* pixels                          */
                         const float spp)               /* samples per pixel in the sums   */
{
    int i = get_global_id(0);
    if (i >= count) return;
    float4 s = accum[i];
    Color_Store8(out, i, (uchar4)(Rt_GammaByte(s.x / spp), Rt_GammaByte(s.y / spp), Rt_GammaByte(s.z / spp), (uchar)255));
}
