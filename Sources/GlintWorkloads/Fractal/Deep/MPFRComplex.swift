import CMPFR
#if canImport(Glibc)
import Glibc
#endif

/// A complex number of two MPFR numbers, with the few operations the locators (MinibrotLocator,
/// MisiurewiczLocator) need. Operations overwrite `self` and round each part once per MPFR call,
/// at `self`'s precision: a part may be kept at 64 bits where only its magnitude matters.
final class MPFRComplex {
    let re: MPFRNumber
    let im: MPFRNumber
    /// Working space for the operations below, allocated once: they run every iteration.
    private let t: MPFRNumber
    /// |b|² and a product for `divide`, allocated on its first use (most numbers never divide).
    private var quotientScratch: (n: MPFRNumber, u: MPFRNumber)?
    /// A second product for `multiply(by:)`, allocated on its first use (only powers past 2 need it).
    private var productScratch: MPFRNumber?

    init(_ re: MPFRNumber, _ im: MPFRNumber) {
        self.re = re
        self.im = im
        t = MPFRNumber(precision: max(re.precision, im.precision))
    }

    /// Zero at `precision` bits.
    convenience init(precision: Int) {
        self.init(MPFRNumber(precision: precision), MPFRNumber(precision: precision))
    }

    /// `value` rounded to `precision` bits.
    convenience init(_ value: MPFRComplex, precision: Int) {
        self.init(precision: precision)
        set(value)
    }

    var precision: Int { re.precision }

    /// self = value (rounded to self's precision).
    func set(_ value: MPFRComplex) {
        re.set(value.re)
        im.set(value.im)
    }

    func setZero() {
        mpfr_set_zero(re.raw, 1)
        mpfr_set_zero(im.raw, 1)
    }

    var isZero: Bool { re.sign == 0 && im.sign == 0 }

    var isFinite: Bool { re.isFinite && im.isFinite }

    /// self = a + b
    func setSum(_ a: MPFRComplex, _ b: MPFRComplex) {
        re.setSum(a.re, b.re)
        im.setSum(a.im, b.im)
    }

    /// self = a − b, rounded once to self's precision (exact where self is wide enough).
    func setDifference(_ a: MPFRComplex, _ b: MPFRComplex) {
        re.setDifference(a.re, b.re)
        im.setDifference(a.im, b.im)
    }

    /// self = a·b (self may not be a or b).
    func multiply(_ a: MPFRComplex, _ b: MPFRComplex) {
        re.setProduct(a.re, b.re)
        t.setProduct(a.im, b.im)
        re.setDifference(re, t)
        im.setProduct(a.re, b.im)
        t.setProduct(a.im, b.re)
        im.setSum(im, t)
    }

    /// self = self·b in place (b may not be self), each part rounded to self's precision.
    func multiply(by b: MPFRComplex) {
        if productScratch?.precision != t.precision { productScratch = MPFRNumber(precision: t.precision) }
        guard let u = productScratch else { return }
        t.setProduct(re, b.re)
        u.setProduct(im, b.im)
        t.setDifference(t, u)
        u.setProduct(re, b.im)
        im.setProduct(im, b.re)
        im.setSum(im, u)
        re.set(t)
    }

    /// self = z^k, k ≥ 1, as k − 1 products (self may not be z).
    func setPower(_ z: MPFRComplex, _ k: Int) {
        set(z)
        if k > 1 { for _ in 1..<k { multiply(by: z) } }
    }

    /// One step of the critical orbit of z^N + c with its derivative in c: d ← N·z^(N−1)·d + 1
    /// (from the old z), then z ← z^(N−1)·z + c, the two sharing z^(N−1), which is left in `w`
    /// (as wide as z). d may be narrower than z: its products round to its own precision. Power
    /// 2 takes the squaring path of `step(_:derivative:c:scratch:)`; `scratch` as wide as z and d.
    static func step(_ z: MPFRComplex, derivative d: MPFRComplex, c: MPFRComplex, power n: Int,
                     scratch t: MPFRComplex, w: MPFRComplex) {
        guard n > 2 else {
            step(z, derivative: d, c: c, scratch: t)
            return
        }
        w.setPower(z, n - 1)
        d.multiply(by: w)
        d.re.setProduct(d.re, n)
        d.im.setProduct(d.im, n)
        d.re.setSum(d.re, 1.0)
        z.multiply(by: w)
        z.setSum(z, c)
    }

    /// self = self·N·z^(N−1), one factor of a cycle's multiplier (the derivative of z ↦ z^N + c
    /// at z); `w` (self's precision) receives z^(N−1), `scratch` as wide as self.
    func multiply(byDerivativeOfPower n: Int, at z: MPFRComplex, scratch t: MPFRComplex, w: MPFRComplex) {
        guard n > 2 else {
            multiply(byTwice: z, scratch: t)
            return
        }
        w.setPower(z, n - 1)
        multiply(by: w)
        re.setProduct(re, n)
        im.setProduct(im, n)
    }

    /// self = self² + c, with `scratch` for the old value.
    func squarePlus(_ c: MPFRComplex, scratch t: MPFRComplex) {
        t.re.setSquare(re)
        t.im.setSquare(im)
        im.setProduct(re, im)
        im.setScaled(im, byPowerOfTwo: 1)
        im.setSum(im, c.im)
        re.setDifference(t.re, t.im)
        re.setSum(re, c.re)
    }

    /// self = 2·z·self + 1: the derivative in c of the orbit point after z, from z's. `scratch` as
    /// wide as self.
    func advanceDerivative(at z: MPFRComplex, scratch t: MPFRComplex) {
        t.multiply(z, self)
        re.setScaled(t.re, byPowerOfTwo: 1)
        im.setScaled(t.im, byPowerOfTwo: 1)
        re.setSum(re, 1.0)
    }

    /// self = self·2·z (self may not be z), with `scratch` as wide as self.
    func multiply(byTwice z: MPFRComplex, scratch t: MPFRComplex) {
        t.multiply(self, z)
        re.setScaled(t.re, byPowerOfTwo: 1)
        im.setScaled(t.im, byPowerOfTwo: 1)
    }

    /// One step of the critical orbit with its derivative in c: d ← 2·z·d + 1 (from the old z),
    /// then z ← z² + c. `scratch` must be as wide as z and d.
    static func step(_ z: MPFRComplex, derivative d: MPFRComplex, c: MPFRComplex, scratch t: MPFRComplex) {
        d.advanceDerivative(at: z, scratch: t)
        z.squarePlus(c, scratch: t)
    }

    /// self = a / b; false when b is 0.
    func divide(_ a: MPFRComplex, _ b: MPFRComplex, scratch t: MPFRComplex) -> Bool {
        let width = max(re.precision, b.re.precision)
        if quotientScratch?.n.precision != width {
            quotientScratch = (MPFRNumber(precision: width), MPFRNumber(precision: width))
        }
        guard let (n, u) = quotientScratch else { return false }
        b.squaredMagnitude(into: n)
        guard n.sign != 0 else { return false }
        // (a.re b.re + a.im b.im, a.im b.re − a.re b.im) / |b|²
        t.re.setProduct(a.re, b.re)
        u.setProduct(a.im, b.im)
        t.re.setSum(t.re, u)
        t.im.setProduct(a.im, b.re)
        u.setProduct(a.re, b.im)
        t.im.setDifference(t.im, u)
        mpfr_div(re.raw, t.re.raw, n.raw, MPFR_RNDN)
        mpfr_div(im.raw, t.im.raw, n.raw, MPFR_RNDN)
        return true
    }

    /// |self|² into `out` (not self's parts).
    func squaredMagnitude(into out: MPFRNumber) {
        out.setSquare(re)
        t.setSquare(im)
        out.setSum(out, t)
    }

    /// |self| / r as a Double.
    func magnitude(over r: MPFRNumber) -> Double {
        let m = MPFRNumber(precision: 64)
        squaredMagnitude(into: m)
        mpfr_sqrt(m.raw, m.raw, MPFR_RNDN)
        mpfr_div(m.raw, m.raw, r.raw, MPFR_RNDN)
        return m.toDouble()
    }

    /// |self| at `precision` bits.
    func magnitudeNumber(precision: Int) -> MPFRNumber {
        let m = MPFRNumber(precision: precision)
        squaredMagnitude(into: m)
        mpfr_sqrt(m.raw, m.raw, MPFR_RNDN)
        return m
    }

    /// |self| as mantissa in [1, 10) × 10^exponent.
    func magnitudeDecimal() -> (Double, Int) {
        let text = magnitudeNumber(precision: 64).decimalString(digits: 17)
        guard let e = text.firstIndex(of: "e"), let m = Double(text[..<e]), let x = Int(text[text.index(after: e)...]) else {
            return (0, 0)
        }
        return (m, x)
    }

    /// log2 |self| (−infinity for 0).
    func log2Magnitude() -> Double {
        let m = magnitudeNumber(precision: 64)
        guard m.sign != 0 else { return -.infinity }
        let (mantissa, exponent) = m.toDoubleExponent()
        return log2(mantissa) + Double(exponent)
    }

    /// arg self in degrees. atan2 fills the thread's caches (π, the integer pool), released here
    /// because this can be a thread's last MPFR call (MisiurewiczLocator.locate's).
    func argumentDegrees() -> Double {
        defer { MPFRNumber.releaseThreadCaches() }
        let a = MPFRNumber(precision: 64)
        mpfr_atan2(a.raw, im.raw, re.raw, MPFR_RNDN)
        return a.toDouble() * 180 / Double.pi
    }
}
