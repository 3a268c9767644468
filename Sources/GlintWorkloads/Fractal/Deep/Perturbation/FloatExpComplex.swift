#if canImport(Glibc)
import Glibc
#endif

/// A complex number with an exponent of its own, (re + i·im)·2^e: the perturbation's delta while
/// it is too small for a Double (a 1e1000 view's deltas start near 2^-3300). Normalised values
/// have the larger of |re|, |im| in [1, 2). The kernels' twin is Kernels/deep/floatexp.h; both
/// scale with correctly rounded ldexp and read exponents with ilogb, so they agree bit for bit.
struct FloatExpComplex {
    var re: Double
    var im: Double
    var e: Int

    /// Deltas from 2^tinyLimit up are plain Doubles. Below the BLA table's bound for this phase
    /// (2^-501), so that a delta leaves it without crawling up to the bound step by step.
    static let tinyLimit = -520

    /// (re + i·im)·2^e rescaled so that the larger part is in [1, 2); left as it is when that
    /// part is 0 or not finite.
    @inline(__always)
    init(normalising re: Double, _ im: Double, exponent e: Int) {
        let big = Swift.abs(re) > Swift.abs(im) ? Swift.abs(re) : Swift.abs(im)
        guard big != 0, big.isFinite else {
            (self.re, self.im, self.e) = (re, im, e)
            return
        }
        let k = big.exponent
        (self.re, self.im, self.e) = (Self.ldexp(re, -k), Self.ldexp(im, -k), e + k)
    }

    /// The value as a pair of Doubles (0 where it is below the smallest subnormal).
    @inline(__always)
    var scaled: (re: Double, im: Double) { (Self.ldexp(re, e), Self.ldexp(im, e)) }

    /// x × 2^k, correctly rounded (as scalbn and OpenCL's ldexp): one multiply by 2^k while that
    /// is a normal Double; ±0 where the result is far below the smallest subnormal.
    @inline(__always)
    static func ldexp(_ x: Double, _ k: Int) -> Double {
        if k >= -1022 && k <= 1023 { return x * Double(bitPattern: UInt64(k + 1023) << 52) }
        if k < -1200 && Swift.abs(x) < 0x1p100 { return x * 0 }
        return scalbn(x, Int32(clamping: k))
    }

    /// ilogb of (re + i·im)·2^E (its larger part), BLATable.zeroExponent for 0: a sample starts
    /// in the tiny phase when this is under `tinyLimit`.
    @inline(__always)
    static func exponent(_ re: Double, _ im: Double, _ E: Int) -> Int {
        let big = Swift.abs(re) > Swift.abs(im) ? Swift.abs(re) : Swift.abs(im)
        return big == 0 ? BLATable.zeroExponent : big.exponent + E
    }
}
