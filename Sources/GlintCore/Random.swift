/// The Swift twin of Kernels/common/rng.h: Philox-4x32-10 keyed by the seed, with the counter
/// (pixel x, pixel y, sample index, dimension). Same words, bit for bit, as the kernels.
public enum CounterRNG {
    static let m0: UInt32 = 0xD251_1F53
    static let m1: UInt32 = 0xCD9E_8D57
    static let w0: UInt32 = 0x9E37_79B9
    static let w1: UInt32 = 0xBB67_AE85

    /// Four independent 32-bit words for one (x, y, sample, dimension, seed).
    @inlinable @inline(__always)
    public static func philox(x: UInt32, y: UInt32, sample: UInt32, dim: UInt32, seed: UInt64) -> SIMD4<UInt32> {
        // Scalars, not a SIMD4 state: no lane inserts and extracts in each round.
        var c0 = x, c1 = y, c2 = sample, c3 = dim
        var k0 = UInt32(truncatingIfNeeded: seed), k1 = UInt32(truncatingIfNeeded: seed >> 32)
        for _ in 0..<10 {
            // The constants written in place (not the statics): inlined into other modules they
            // stay immediates instead of lazily initialised globals.
            let (hi0, lo0) = (0xD251_1F53 as UInt32).multipliedFullWidth(by: c0)
            let (hi1, lo1) = (0xCD9E_8D57 as UInt32).multipliedFullWidth(by: c2)
            let n0 = hi1 ^ c1 ^ k0
            let n2 = hi0 ^ c3 ^ k1
            c1 = lo1
            c3 = lo0
            c0 = n0
            c2 = n2
            k0 = k0 &+ 0x9E37_79B9
            k1 = k1 &+ 0xBB67_AE85
        }
        return SIMD4(c0, c1, c2, c3)
    }

    /// A 32-bit word as a float in [0, 1): its top 24 bits times 2^-24.
    @inlinable @inline(__always)
    public static func toUnit(_ u: UInt32) -> Float { Float(u >> 8) * 0x1.0p-24 }

    /// One uniform float in [0, 1).
    @inlinable @inline(__always)
    public static func uniform(x: UInt32, y: UInt32, sample: UInt32, dim: UInt32, seed: UInt64) -> Float {
        toUnit(philox(x: x, y: y, sample: sample, dim: dim, seed: seed).x)
    }
}
