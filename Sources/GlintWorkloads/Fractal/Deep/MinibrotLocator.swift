import CMPFR
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// Finds the minibrot (a small copy of the Mandelbrot set, or of the multibrot z^N + c for a
/// power N from 2 to 8) nearest a view, to any depth: the way to reach a deep view without a
/// location someone else found.
///
/// 1. **Period** (ball method): iterate z ← z^N + c and its derivative d ← N·z^(N−1)·d + 1 from
///    the view centre c; the period is the first n with |z_n| < r·|d_n|, r the view's half-height
///    1/zoom. To first order the ball of radius r around c then maps onto a disc holding 0, so
///    a nucleus of period n lies in the ball.
/// 2. **Nucleus** (Newton's method): c ← c − z_p(c) / z_p'(c), in MPFR at the precision the
///    answer needs, until a step moves c by less than 2^-(bits − 16) of the view radius' scale.
/// 3. **Size and orientation**: with z ← z^N + c, l ← N·z^(N−1)·l and b ← b + 1/l over the first
///    p − 1 iterations from z = 0, l = b = 1, the minibrot is about the whole set scaled by
///
///        s = 1 / (b · l^(N/(N−1)))        (N = 2: s = 1/(b·l²))
///
///    (a complex number: |s| is the scale, arg s the rotation). Why: near the nucleus c₀, with
///    c = c₀ + δ, p steps from a small z are z ↦ l·(z^N + b·δ) to first order in δ; with z = a·u
///    and l·a^(N−1) = 1 that is u ↦ u^N + δ·b·l^(N/(N−1)), the whole set's map with
///    c' = δ·b·l^(N/(N−1)). Past power 2 the root l^(1/(N−1)) has N − 1 values, which differ by
///    a turn of 360/(N−1) degrees, under which the multibrot is unchanged: the principal one
///    does, and the rotation is given within (−180/(N−1), 180/(N−1)]. (Measured: for N = 3 by the
///    period-4 nucleus −0.24397 + 1.32241i, c₀ + s·c' and c' agree on being in the set at 97% of
///    a grid over the whole set, and at 25% with 1/(b·l²) instead.)
///
/// A minibrot c ≈ nucleus + s·c' (c' in the whole set), so the view that frames it is the whole
/// set's view carried over: for N = 2 the set's centre −0.75, so centre nucleus − 0.75·s and zoom
/// `framing`/|s|; past 2 the multibrot is symmetric about 0, so centre the nucleus and zoom
/// `framingPowers`/|s|.
public enum MinibrotLocator {
    /// The largest period searched for when none is given.
    public static let defaultMaxPeriod = 100_000
    /// The most periods the search may run to (each Newton step iterates that often).
    public static let maxPeriodLimit = 10_000_000
    /// Newton steps before giving up.
    public static let maxNewtonSteps = 200
    /// Zoom × |s| of the framed view: the whole set at zoom 1 is about 2.5 wide; rotated it needs
    /// about that much height too.
    public static let framing = 0.75
    /// Zoom × |s| past power 2: the multibrots of powers 3 to 8 lie within 1.35 of 0 (measured on
    /// a grid; power 3's tips reach furthest), so half-height 1/0.7 = 1.43 holds them at any rotation.
    public static let framingPowers = 0.7

    /// What the search found.
    public struct Minibrot: Sendable {
        /// The formula's power N: z^N + c.
        public let power: Int
        public let period: Int
        /// The nucleus to `digits` significant digits.
        public let nucleusRe: DeepNumber
        public let nucleusIm: DeepNumber
        /// |s| as mantissa × 10^exponent (it is below Double's range past 1e308).
        public let sizeMantissa: Double
        public let sizeExponent10: Int
        /// arg s in degrees, (−180, 180] (past power 2, (−180/(N−1), 180/(N−1)]: see the type).
        public let orientationDegrees: Double
        /// The view that frames the minibrot.
        public let centerRe: DeepNumber
        public let centerIm: DeepNumber
        public let zoom: DeepNumber
        /// Newton steps taken, and how far the nucleus is from the view centre in view radii.
        public let newtonSteps: Int
        public let distanceInRadii: Double
        /// The MPFR precision used, in bits.
        public let precisionBits: Int
    }

    /// The minibrot of z^`power` + c nearest the view (centre, zoom); `period` skips the period
    /// search; `digits` the significant digits of the nucleus and the framed centre (0: what the
    /// framing zoom needs plus 10). Errors: a number out of range, no period up to `maxPeriod`,
    /// Newton not converging, a nucleus more than 4 view radii away, or `Locator.cancelled` when
    /// the running task is cancelled.
    public static func locate(centerRe: DeepNumber, centerIm: DeepNumber, zoom: DeepNumber, power: Int = 2,
                              period: Int? = nil, maxPeriod: Int = defaultMaxPeriod,
                              digits: Int = 0) throws(GlintError) -> Minibrot {
        let view = try LocatorView(centerRe: centerRe, centerIm: centerIm, zoom: zoom)
        try Locator.checkPower(power)
        if let period, !(1...maxPeriodLimit).contains(period) {
            throw GlintError(field: "period", "must be between 1 and \(maxPeriodLimit) (got \(period))")
        }
        guard (1...maxPeriodLimit).contains(maxPeriod) else {
            throw GlintError(field: "max-period", "must be between 1 and \(maxPeriodLimit) (got \(maxPeriod))")
        }
        let (bits, c, radius) = (view.bits, view.centre, view.radius)
        let p: Int
        if let period { p = period } else {
            p = try findPeriod(c, radius: radius, maxPeriod: maxPeriod, bits: bits, power: power)
        }

        // Bits for the digits asked for, when more than the view's.
        let digitBits = LocatorView.bits(forDigits: digits)
        var (nucleus, steps) = try newton(start: c, period: p, bits: max(bits + 64, digitBits), power: power)
        var s = try size(nucleus, period: p, power: power)
        try checkSize(s, period: p)
        // A minibrot far smaller than the view needs more bits than the view: polish the
        // nucleus at those (Newton converges in a few steps from there).
        let needed = max(Int(-s.log2Magnitude()) + 96, digitBits)
        if needed > nucleus.re.precision {
            let more = try newton(start: nucleus, period: p, bits: needed, power: power)
            (nucleus, steps) = (more.0, steps + more.1)
            s = try size(nucleus, period: p, power: power)
            try checkSize(s, period: p)
        }
        let distance = view.distance(to: nucleus)
        guard distance <= 4 else {
            throw GlintError(field: "center", "Newton's method for period \(p) left the view (the root it found is \(LocatorView.format(distance)) view radii away): zoom in, or give --period")
        }
        let (sm, se) = s.magnitudeDecimal()
        let sizeLog10 = log10(sm) + Double(se)
        let answerDigits = digits > 0 ? digits : max(17, Int((-sizeLog10).rounded(.up)) + 10)
        let outBits = max(bits, Int(Double(answerDigits) * 3.321928094887362) + 16)
        // Power 2: centre = nucleus − 0.75·s, zoom = framing / |s|; past 2: centre = nucleus,
        // zoom = framingPowers / |s|.
        let centre = MPFRComplex(precision: outBits)
        centre.re.set(nucleus.re)
        centre.im.set(nucleus.im)
        if power == 2 {
            let shift = MPFRComplex(precision: outBits)
            shift.re.setProduct(s.re, MPFRNumber(0.75, precision: outBits))
            shift.im.setProduct(s.im, MPFRNumber(0.75, precision: outBits))
            centre.re.setDifference(centre.re, shift.re)
            centre.im.setDifference(centre.im, shift.im)
        }
        let zoomOut = s.magnitudeNumber(precision: 64)
        zoomOut.setQuotient(1, zoomOut)
        mpfr_mul_d(zoomOut.raw, zoomOut.raw, power == 2 ? framing : framingPowers, MPFR_RNDN)
        func number(_ x: MPFRNumber, _ digits: Int, _ field: String) throws(GlintError) -> DeepNumber {
            try LocatorView.decimal(x, digits: digits, field: field)
        }
        return Minibrot(power: power, period: p, nucleusRe: try number(nucleus.re, answerDigits, "nucleus re"),
                        nucleusIm: try number(nucleus.im, answerDigits, "nucleus im"),
                        sizeMantissa: sm, sizeExponent10: se,
                        orientationDegrees: reducedRotation(s.argumentDegrees(), power: power),
                        centerRe: try number(centre.re, answerDigits, "center re"),
                        centerIm: try number(centre.im, answerDigits, "center im"),
                        zoom: try number(zoomOut, 6, "zoom"), newtonSteps: steps, distanceInRadii: distance,
                        precisionBits: nucleus.re.precision)
    }

    /// Errors: a size estimate that is 0, infinite or larger than the whole set's (1). It is
    /// so only where some z_k with k < p is (nearly) 0, that is where Newton's method, given a
    /// period, landed on the nucleus of a smaller period k that divides it.
    static func checkSize(_ s: MPFRComplex, period p: Int) throws(GlintError) {
        let log2Size = s.log2Magnitude()
        guard log2Size.isFinite, log2Size <= 0.5 else {
            throw GlintError(field: "period", "Newton's method for period \(p) landed on the nucleus of a smaller period that divides it: give that period or another --period")
        }
    }

    /// arg s reduced by the multibrot's symmetry: past power 2 a turn of 360/(N−1) degrees maps
    /// the set onto itself, so the rotation is given within (−180/(N−1), 180/(N−1)].
    static func reducedRotation(_ degrees: Double, power: Int) -> Double {
        guard power > 2 else { return degrees }
        let turn = 360 / Double(power - 1)
        var r = degrees - turn * (degrees / turn).rounded()
        if r <= -turn / 2 { r += turn }
        if r > turn / 2 { r -= turn }
        return r
    }

    /// The ball method's period (see the type's documentation).
    static func findPeriod(_ c: MPFRComplex, radius: MPFRNumber, maxPeriod: Int, bits: Int,
                           power: Int = 2) throws(GlintError) -> Int {
        let z = MPFRComplex(precision: bits)
        let t = MPFRComplex(precision: bits)
        let w = MPFRComplex(precision: bits)
        // The derivative and the test need magnitudes only: 64 bits, MPFR's exponent range.
        let d = MPFRComplex(precision: 64)
        let zl = MPFRComplex(precision: 64)
        let u = MPFRComplex(precision: 64)
        let lhs = MPFRNumber(precision: 64), rhs = MPFRNumber(precision: 64)
        let r2 = radius.squared()
        defer { MPFRNumber.releaseThreadCaches() }
        for n in 1...maxPeriod {
            try Locator.checkCancellation(atStep: n)
            if power == 2 {
                // d ← 2·z·d + 1 (from the old z), then z ← z² + c.
                zl.re.set(z.re); zl.im.set(z.im)
                u.multiply(zl, d)
                d.re.setScaled(u.re, byPowerOfTwo: 1)
                d.im.setScaled(u.im, byPowerOfTwo: 1)
                d.re.setSum(d.re, 1.0)
                z.squarePlus(c, scratch: t)
            } else {
                // d ← N·z^(N−1)·d + 1 (rounded to d's 64 bits), then z ← z^N + c.
                MPFRComplex.step(z, derivative: d, c: c, power: power, scratch: t, w: w)
            }
            // An escaping orbit has no nucleus near it.
            if z.re.compare(-4) < 0 || z.re.compare(4) > 0 || z.im.compare(-4) < 0 || z.im.compare(4) > 0 { break }
            zl.re.set(z.re); zl.im.set(z.im)
            zl.squaredMagnitude(into: lhs)
            d.squaredMagnitude(into: rhs)
            rhs.setProduct(rhs, r2)
            if mpfr_less_p(lhs.raw, rhs.raw) != 0 { return n }
        }
        throw GlintError(field: "period", "no minibrot period up to \(maxPeriod) found near this view (the centre's orbit escapes, or the period is longer): zoom in, move the centre, or raise --max-period")
    }

    /// Newton's method for z_p(c) = 0 from `start`, at `bits`; (nucleus, steps).
    static func newton(start: MPFRComplex, period p: Int, bits: Int, power: Int = 2) throws(GlintError) -> (MPFRComplex, Int) {
        let c = MPFRComplex(start, precision: bits)
        let z = MPFRComplex(precision: bits)
        let d = MPFRComplex(precision: bits)
        let t = MPFRComplex(precision: bits)
        let w = MPFRComplex(precision: bits)
        let q = MPFRComplex(precision: bits)
        defer { MPFRNumber.releaseThreadCaches() }
        for k in 1...maxNewtonSteps {
            try Locator.checkCancellation()
            z.setZero()
            d.setZero()
            for i in 1...p {
                try Locator.checkCancellation(atStep: i)
                MPFRComplex.step(z, derivative: d, c: c, power: power, scratch: t, w: w)
            }
            guard q.divide(z, d, scratch: t) else {
                throw GlintError(field: "period", "Newton's method for period \(p) met a zero derivative: give another --period or move the centre")
            }
            c.re.setDifference(c.re, q.re)
            c.im.setDifference(c.im, q.im)
            guard c.re.isFinite, c.im.isFinite else { break }
            if LocatorView.newtonConverged(step: q, at: c, bits: bits) { return (c, k) }
        }
        throw GlintError(field: "period", "Newton's method for period \(p) did not converge in \(maxNewtonSteps) steps: give another --period or zoom in")
    }

    /// The size estimate s (see the type's documentation), at 64 bits after rounding c.
    static func size(_ nucleus: MPFRComplex, period p: Int, power: Int = 2) throws(GlintError) -> MPFRComplex {
        let bits = nucleus.re.precision
        let z = MPFRComplex(precision: bits)
        let t = MPFRComplex(precision: bits)
        let w = MPFRComplex(precision: bits)
        let w64 = MPFRComplex(precision: 64)
        let zl = MPFRComplex(precision: 64)
        let l = MPFRComplex(MPFRNumber(1, precision: 64), MPFRNumber(precision: 64))
        let b = MPFRComplex(MPFRNumber(1, precision: 64), MPFRNumber(precision: 64))
        let u = MPFRComplex(precision: 64)
        let v = MPFRComplex(precision: 64)
        let one = MPFRComplex(MPFRNumber(1, precision: 64), MPFRNumber(precision: 64))
        defer { MPFRNumber.releaseThreadCaches() }
        if p > 1 {
            for i in 1..<p {
                try Locator.checkCancellation(atStep: i)
                if power == 2 {
                    z.squarePlus(nucleus, scratch: t)
                    zl.re.set(z.re); zl.im.set(z.im)
                    u.multiply(zl, l)
                    l.re.setScaled(u.re, byPowerOfTwo: 1)
                    l.im.setScaled(u.im, byPowerOfTwo: 1)
                } else {
                    // z ← z^N + c, then l ← l·N·z^(N−1) at the new z.
                    w.setPower(z, power - 1)
                    z.multiply(by: w)
                    z.setSum(z, nucleus)
                    l.multiply(byDerivativeOfPower: power, at: z, scratch: u, w: w64)
                }
                _ = v.divide(one, l, scratch: u)
                b.re.setSum(b.re, v.re)
                b.im.setSum(b.im, v.im)
            }
        }
        // s = 1 / (b·l^(N/(N−1))), l^(N/(N−1)) on the principal branch: |l|^(N/(N−1)) turned by
        // arg l · N/(N−1) (|l| may be far past Double's range; MPFR's exponents hold it).
        if power == 2 {
            u.multiply(l, l)
        } else {
            let e = MPFRNumber(Double(power) / Double(power - 1), precision: 64)
            let m = l.magnitudeNumber(precision: 64)
            mpfr_pow(m.raw, m.raw, e.raw, MPFR_RNDN)
            let angle = MPFRNumber(precision: 64)
            mpfr_atan2(angle.raw, l.im.raw, l.re.raw, MPFR_RNDN)
            angle.setProduct(angle, e)
            mpfr_sin_cos(u.im.raw, u.re.raw, angle.raw, MPFR_RNDN)
            u.re.setProduct(u.re, m)
            u.im.setProduct(u.im, m)
        }
        v.multiply(b, u)
        let s = MPFRComplex(precision: 64)
        _ = s.divide(one, v, scratch: u)
        return s
    }
}
