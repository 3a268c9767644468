#ifndef GLINT_RNG_H
#define GLINT_RNG_H
/* The counter-based random numbers of every Glint kernel (docs/DESIGN.md, Determinism).
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
    /* Four scalars rather than a uint4: PoCL kept the vector in one register and paid an insert
       and an extract per word per round. */
    uint c0 = x, c1 = y, c2 = sample, c3 = dim;
    uint k0 = (uint)seed, k1 = (uint)(seed >> 32);
    for (int round = 0; round < 10; round++) {
        /* One widening multiply each: PoCL's mul_hi splits into 16-bit pieces, several times
           slower, while compilers turn this form into one instruction (mul.wide on PTX). */
        const ulong p0 = (ulong)RNG_M0 * (ulong)c0, p1 = (ulong)RNG_M1 * (ulong)c2;
        const uint n0 = (uint)(p1 >> 32) ^ c1 ^ k0;
        const uint n2 = (uint)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint)p1;
        c3 = (uint)p0;
        c0 = n0;
        c2 = n2;
        k0 += RNG_W0;
        k1 += RNG_W1;
    }
    return (uint4)(c0, c1, c2, c3);
}

/* A 32-bit word as a float in [0, 1): its top 24 bits times 2^-24 (exact in float). */
inline float Rng_ToUnit(uint u) { return (float)(u >> 8) * 0x1.0p-24f; }

/* One uniform float in [0, 1) for (x, y, sample, dimension, seed). */
inline float Rng_Uniform(uint x, uint y, uint sample, uint dim, ulong seed) {
    return Rng_ToUnit(Rng_Philox(x, y, sample, dim, seed).x);
}

#endif
