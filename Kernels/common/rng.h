#ifndef GLINT_RNG_H
#define GLINT_RNG_H
/* The counter-based random numbers of every Glint kernel (DESIGN.md, Determinism).
   Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): the
   counter is (pixel x, pixel y, sample index, dimension), the key is the 64-bit seed. A value
   depends on nothing else, so tiles, thread counts and resumed runs draw the same numbers.
   Swift twin: Sources/GlintCore/Random.swift; GlintCLTests compares the two on a table of keys. */

#pragma OPENCL FP_CONTRACT OFF

#define RNG_M0 0xD2511F53u
#define RNG_M1 0xCD9E8D57u
#define RNG_W0 0x9E3779B9u
#define RNG_W1 0xBB67AE85u

/* Four independent 32-bit words for one (x, y, sample, dimension, seed). */
inline uint4 Rng_Philox(uint x, uint y, uint sample, uint dim, ulong seed) {
    uint4 c = (uint4)(x, y, sample, dim);
    uint k0 = (uint)seed, k1 = (uint)(seed >> 32);
    for (int round = 0; round < 10; round++) {
        uint hi0 = mul_hi(RNG_M0, c.x), lo0 = RNG_M0 * c.x;
        uint hi1 = mul_hi(RNG_M1, c.z), lo1 = RNG_M1 * c.z;
        c = (uint4)(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
        k0 += RNG_W0;
        k1 += RNG_W1;
    }
    return c;
}

/* A 32-bit word as a float in [0, 1): its top 24 bits times 2^-24 (exact in float). */
inline float Rng_ToUnit(uint u) { return (float)(u >> 8) * 0x1.0p-24f; }

/* One uniform float in [0, 1) for (x, y, sample, dimension, seed). */
inline float Rng_Uniform(uint x, uint y, uint sample, uint dim, ulong seed) {
    return Rng_ToUnit(Rng_Philox(x, y, sample, dim, seed).x);
}

#endif
