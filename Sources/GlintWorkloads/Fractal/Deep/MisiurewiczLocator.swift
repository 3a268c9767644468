import CMPFR
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// Finds a Misiurewicz point near a view, to any depth: a c whose critical orbit z₀ = 0,
/// z_{n+1} = z_n^N + c (N = 2 the Mandelbrot set, 3 to 8 the multibrots) is strictly
/// preperiodic, z_{q+p} = z_q with q (the preperiod) and p (the period) both the smallest. About
/// such a point the set looks the same at every scale, so a view centred on it can be zoomed
/// without end. Everything below holds for every power N with the derivative of z ↦ z^N + c,
/// N·z^(N−1), where power 2 has 2·z.
///
/// Numbering: z₀ = 0, so c = z₁. Then c = i is M(2,2) (0, i, −1+i, −i, −1+i, …), c = −2 is M(2,1),
/// the branch point −0.1011 + 0.9563i atop the 1/3 bulb's antenna is M(4,1), and no point has
/// preperiod 1 (z_{1+p} = z₁ means z_p^N = 0: a centre of period p). Texts that number from
/// z₁ = c give each preperiod one less.
///
/// With g_i = z_{i+p} − z_i (so g₀ = z_p), the roots of g_q are the points of preperiod at most q
/// and period dividing p, and the centres of period dividing p. Dividing out the lower ones,
/// h = g_q / Π_{i<q} g_i, leaves as roots exactly the points of preperiod q (the others become
/// poles or plain values). Its logarithmic derivative is L = h'/h = g_q'/g_q − Σ_{i<q} g_i'/g_i,
/// with g_i' from dz_{n+1} = N·z_n^(N−1)·dz_n + 1.
///
/// 1. **Preperiod and period** (unless both are given; the ball method of MinibrotLocator carried
///    over to h): iterate the centre's orbit and, for n = 1, 2, … and each period p with q = n − p
///    at least 2, take (q, p) as a candidate when Newton's first step on h, 1/L, is shorter than
///    the view radius r (|L|·r > 1), g_q's own term outweighs the rest (|g_q'/g_q| > |Σ|: the
///    root is g_q's, not a pole of the factors below it), and h is near enough linear over that
///    step (|h''/h'|/|L| = |1 + L'/L²| ≤ `bendLimit`, L' from the second derivatives: where
///    dz_n/dc is huge, as by the centre of a minibrot of period n, a first step means nothing).
///    Candidates come in order of q + p, nearest first; the first that step 2 turns into a point
///    is the answer (at most `maxTries` are refined). The search ends when the centre's orbit
///    leaves |z| ≤ 2, when it repeats at working precision on an attracting cycle (the centre is
///    inside the set), or past the largest q and p allowed.
/// 2. **The point** (Newton's method on h): c ← c − 1/L, also dividing out z_{q+e} − z_q for each
///    proper divisor e of p, so that no point of a lower period is a root either. In MPFR at the
///    view's precision plus 64 bits (or what the digits asked for need); z and dz at that
///    precision, the terms of Σ at 64 bits (near the root g_q'/g_q dominates L). Until a step moves
///    c by less than 2^-(bits − 16) of |c|; refused when it strays 16 view radii, does not settle
///    in `maxNewtonSteps` (`maxCandidateSteps` for a candidate of the search), lands more than
///    `maxDistance` view radii from the centre, or lands on a point whose cycle does not repel or
///    whose preperiod or period is lower.
/// 3. **Multiplier** λ = Π_{i=q}^{q+p−1} N·z_i^(N−1), the derivative of z ↦ z^N + c over one turn
///    of the cycle (|λ| > 1: it repels). About the point the set repeats itself, ever more closely, when
///    zoomed by |λ| and turned by arg λ.
///
/// The view returned is centred on the point at the view's own zoom. Its iterations follow from λ:
/// a pixel δ from the point shadows the cycle for about log₂(1/δ) / log₂|λ| turns, so escape
/// counts reach about q + p·(log₂ zoom + 16)/log₂|λ| (16: up to 65536 pixels across); the
/// suggestion is 1.25 times that plus 1000.
public enum MisiurewiczLocator {
    /// The longest period and preperiod searched for when none is given.
    public static let defaultMaxPeriod = 1000
    public static let defaultMaxPreperiod = 10_000
    /// The largest preperiod or period accepted (each Newton step iterates about 2·(q + p) times).
    public static let limit = 1_000_000
    /// The largest --max-period: the search keeps that many orbit points at full precision.
    public static let maxPeriodLimit = 100_000
    /// Newton steps before giving up on a given (q, p), and on a candidate of the search (a true
    /// one settles in far fewer; a false one may wander about a pole).
    public static let maxNewtonSteps = 200
    public static let maxCandidateSteps = 64
    /// Candidates refined before giving up.
    public static let maxTries = 8
    /// The search's bound on |h''/h'|/|L|, h's bend over Newton's first step relative to its
    /// slope (in the views tried, candidates that became a point near the centre measured below
    /// 1; false ones by a minibrot, about 30 and more).
    public static let bendLimit = 4.0

    /// How far from the view centre, in view radii, the point may be.
    public static let maxDistance = 4.0

    /// What the search found.
    public struct Point: Sendable {
        /// The formula's power N: z^N + c.
        public let power: Int
        public let preperiod: Int
        public let period: Int
        /// The point to `digits` significant digits.
        public let re: DeepNumber
        public let im: DeepNumber
        /// |λ| as mantissa × 10^exponent, and log₂|λ|.
        public let multiplierMantissa: Double
        public let multiplierExponent10: Int
        public let multiplierLog2: Double
        /// arg λ in degrees, (−180, 180].
        public let rotationDegrees: Double
        /// The view centred on the point: its zoom is the view's.
        public let zoom: DeepNumber
        /// The iteration limit that view needs (see the type's documentation).
        public let iterations: Int
        /// Newton steps taken (over every candidate refined), and how far the point is from the
        /// view centre in view radii.
        public let newtonSteps: Int
        public let distanceInRadii: Double
        /// The MPFR precision of the point, in bits.
        public let precisionBits: Int
    }

    /// The Misiurewicz point of z^`power` + c near the view (centre, zoom). `preperiod` and
    /// `period` restrict the search (both given: skip it); `digits` sets the significant digits of
    /// the point (0: what the zoom needs plus 12). Errors (one line): a number out of range, no
    /// candidate found, none of the candidates refined into a point near the view, or
    /// `Locator.cancelled` when the running task is cancelled.
    public static func locate(centerRe: DeepNumber, centerIm: DeepNumber, zoom: DeepNumber, power: Int = 2,
                              preperiod: Int? = nil, period: Int? = nil,
                              maxPreperiod: Int = defaultMaxPreperiod, maxPeriod: Int = defaultMaxPeriod,
                              digits: Int = 0) throws(GlintError) -> Point {
        let view = try LocatorView(centerRe: centerRe, centerIm: centerIm, zoom: zoom)
        try Locator.checkPower(power)
        if let preperiod {
            guard preperiod >= 2 else {
                throw GlintError(field: "preperiod", "must be at least 2 (got \(preperiod)): with z0 = 0, z(1+p) = z(1) means z(p) = 0, a centre, not a Misiurewicz point")
            }
            try check(preperiod, 2...limit, "preperiod")
        }
        if let period { try check(period, 1...limit, "period") }
        try check(maxPreperiod, 2...limit, "max-preperiod")
        try check(maxPeriod, 1...maxPeriodLimit, "max-period")
        try check(digits, 0...100_000, "digits")

        let answerDigits = digits > 0 ? digits : max(17, Int((view.log2Zoom * log10(2.0)).rounded(.up)) + 12)
        let bits = max(view.bits + 64, LocatorView.bits(forDigits: answerDigits))
        var steps = 0
        let point: Refined
        if let preperiod, let period {
            point = try refine(view, preperiod: preperiod, period: period, power: power, bits: bits,
                               limit: maxNewtonSteps, steps: &steps)
        } else {
            let search = Search(view, preperiods: preperiod.map { $0...$0 } ?? 2...maxPreperiod,
                                periods: period.map { $0...$0 } ?? 1...maxPeriod, power: power)
            var found: Refined?
            var last: (preperiod: Int, period: Int, why: GlintError)?
            var tries = 0
            while found == nil, tries < maxTries, let (q, p) = try search.next() {
                tries += 1
                do throws(GlintError) {
                    found = try refine(view, preperiod: q, period: p, power: power, bits: bits, limit: maxCandidateSteps,
                                       steps: &steps)
                } catch {
                    // A cancelled search ends here; a candidate that is no point leaves the next to try.
                    if error == Locator.cancelled { throw error }
                    last = (q, p, error)
                }
            }
            guard let found else {
                let end = search.end ?? "none of the first \(tries) candidates is a Misiurewicz point near this view"
                let tried = last.map { "; the last tried, M(\($0.preperiod),\($0.period)): \($0.why.message)" } ?? ""
                throw GlintError(end + tried)
            }
            point = found
        }

        // A part below Newton's tolerance is 0 at this precision (c = i, say).
        for part in [point.c.re, point.c.im] where part.sign != 0 && part.toDoubleExponent().exponent <= 17 - bits {
            part.set(0.0)
        }
        let log2Multiplier = point.multiplier.log2Magnitude()
        let (mm, me) = point.multiplier.magnitudeDecimal()
        let counts = Double(point.preperiod) + Double(point.period) * (view.log2Zoom + 16) / log2Multiplier
        let iterations = counts.isFinite ? min(FractalJob.maxIterationLimit, Int((1.25 * counts).rounded(.up)) + 1000)
                                         : FractalJob.maxIterationLimit
        return Point(power: power, preperiod: point.preperiod, period: point.period,
                     re: try LocatorView.decimal(point.c.re, digits: answerDigits, field: "point re"),
                     im: try LocatorView.decimal(point.c.im, digits: answerDigits, field: "point im"),
                     multiplierMantissa: mm, multiplierExponent10: me, multiplierLog2: log2Multiplier,
                     rotationDegrees: point.multiplier.argumentDegrees(), zoom: zoom, iterations: iterations,
                     newtonSteps: steps, distanceInRadii: point.distance, precisionBits: bits)
    }

    private static func check(_ value: Int, _ range: ClosedRange<Int>, _ field: String) throws(GlintError) {
        guard range.contains(value) else {
            throw GlintError(field: field, "must be between \(range.lowerBound) and \(range.upperBound) (got \(value))")
        }
    }

    /// A point Newton's method reached, checked.
    struct Refined {
        let preperiod: Int
        let period: Int
        let c: MPFRComplex
        /// λ at 64 bits.
        let multiplier: MPFRComplex
        let distance: Double
    }

    /// Step 2 for (q, p) from the view centre, at `bits`, in at most `limit` steps; `steps`
    /// counts the Newton steps.
    static func refine(_ view: LocatorView, preperiod q: Int, period p: Int, power: Int = 2, bits: Int, limit: Int,
                       steps: inout Int) throws(GlintError) -> Refined {
        let name = "M(\(q),\(p))"
        let c = MPFRComplex(view.centre, precision: bits)
        let orbit = ReducedOrbit(preperiod: q, period: p, power: power, bits: bits)
        let step = MPFRComplex(precision: bits)
        defer { MPFRNumber.releaseThreadCaches() }
        for _ in 1...limit {
            steps += 1
            try orbit.evaluate(at: c)
            if orbit.escaped {
                throw GlintError("Newton's method for \(name) reached a c whose orbit escapes: give another --preperiod or --period, or move the centre")
            }
            if orbit.onPole {
                throw GlintError("Newton's method for \(name) met a point of lower preperiod or period (a pole): give another --preperiod or --period, or move the centre")
            }
            let settled: Bool
            if let l = orbit.logDerivative {
                // c ← c − 1/L
                guard step.divide(orbit.one, l, scratch: orbit.scratch) else { break }
                c.setDifference(c, step)
                guard c.isFinite else { break }
                let distance = view.distance(to: c)
                guard distance <= 16 else {
                    throw GlintError("Newton's method for \(name) left the view (more than 16 view radii away)")
                }
                settled = LocatorView.newtonConverged(step: step, at: c, bits: bits)
            } else {
                // g_q is 0 at this precision: c is the root.
                settled = true
            }
            guard settled else { continue }
            let distance = view.distance(to: c)
            guard distance <= maxDistance else {
                throw GlintError("Newton's method for \(name) landed \(LocatorView.format(distance)) view radii from the centre (at most \(LocatorView.format(maxDistance))): zoom out, or give --preperiod and --period")
            }
            let lambda = orbit.multiplier
            guard lambda.log2Magnitude() > 0 else {
                throw GlintError("Newton's method for \(name) landed on an attracting cycle (|multiplier| <= 1): the centre is inside the set")
            }
            // What Newton converged to must not repeat sooner: the smallest |z_{i+p} − z_i| (i < q)
            // and |z_{q+e} − z_q| (e a proper divisor of p) stay well above the precision.
            if orbit.smallestLowerLog2 < Double(32 - bits) {
                throw GlintError("Newton's method for \(name) landed on a point of lower preperiod or period")
            }
            return Refined(preperiod: q, period: p, c: c, multiplier: MPFRComplex(lambda, precision: 64), distance: distance)
        }
        throw GlintError("Newton's method for \(name) did not converge in \(limit) steps: give another --preperiod or --period, or zoom in")
    }

    /// The orbit of one c for (q, p): L = h'/h (see the type's documentation), λ and the checks'
    /// smallest difference, from two copies of the orbit p steps apart.
    final class ReducedOrbit {
        let q: Int
        let p: Int
        /// The formula's power N.
        let power: Int
        /// L at full precision; nil when g_q is 0 (c is the root at this precision).
        private(set) var logDerivative: MPFRComplex?
        /// A factor below g_q is 0: c sits on a pole of h.
        private(set) var onPole = false
        /// The orbit left MPFR's range (c is far outside the set).
        private(set) var escaped = false
        /// λ at 64 bits.
        let multiplier = MPFRComplex(precision: 64)
        /// log₂ of the smallest |z_{i+p} − z_i| over i < q and |z_{q+e} − z_q| over the proper
        /// divisors e of p (infinity when there are none).
        private(set) var smallestLowerLog2 = Double.infinity
        let one: MPFRComplex
        let scratch: MPFRComplex
        // The leading copy (z_{i+p}, dz_{i+p}) and the trailing one (z_i, dz_i); z_q, dz_q saved.
        private let lead, leadSlope, trail, trailSlope, savedZ, savedSlope: MPFRComplex
        private let l, gq, gqSlope: MPFRComplex
        // 64-bit working values: a difference, its derivative, their quotient, Σ, a product.
        private let g64 = MPFRComplex(precision: 64), slope64 = MPFRComplex(precision: 64)
        private let term = MPFRComplex(precision: 64), sum = MPFRComplex(precision: 64)
        private let product = MPFRComplex(precision: 64)
        private let scratch64 = MPFRComplex(precision: 64)
        private let size2 = MPFRNumber(precision: 64), smallest2 = MPFRNumber(precision: 64)
        /// z^(N−1) for a step past power 2 (full precision), and for a factor of λ (64 bits).
        private let powerScratch: MPFRComplex
        private let power64 = MPFRComplex(precision: 64)

        init(preperiod q: Int, period p: Int, power: Int = 2, bits: Int) {
            (self.q, self.p, self.power) = (q, p, power)
            func wide() -> MPFRComplex { MPFRComplex(precision: bits) }
            (lead, leadSlope, trail, trailSlope, savedZ, savedSlope) = (wide(), wide(), wide(), wide(), wide(), wide())
            (l, gq, gqSlope, scratch, powerScratch) = (wide(), wide(), wide(), wide(), wide())
            one = MPFRComplex(MPFRNumber(1, precision: bits), MPFRNumber(precision: bits))
        }

        /// One step of the orbit of z^N + c with its derivative.
        private func step(_ z: MPFRComplex, _ d: MPFRComplex, _ c: MPFRComplex) {
            MPFRComplex.step(z, derivative: d, c: c, power: power, scratch: scratch, w: powerScratch)
        }

        /// Errors: `Locator.cancelled` when the running task is cancelled.
        func evaluate(at c: MPFRComplex) throws(GlintError) {
            (onPole, escaped) = (false, false)
            mpfr_set_inf(smallest2.raw, 1)
            sum.setZero()
            for x in [lead, leadSlope, trail, trailSlope] { x.setZero() }
            for k in 1...p {
                try Locator.checkCancellation(atStep: k)
                step(lead, leadSlope, c)
            }
            for i in 0..<q {
                try Locator.checkCancellation(atStep: i + 1)
                // g_i'/g_i into Σ, with i the trailing copy's index.
                guard addLowerTerm(lead, leadSlope, trail, trailSlope) else { return }
                step(lead, leadSlope, c)
                step(trail, trailSlope, c)
            }
            gq.setDifference(lead, trail)
            gqSlope.setDifference(leadSlope, trailSlope)
            guard gq.isFinite, gqSlope.isFinite else {
                escaped = true
                return
            }
            // Carry the trailing copy once round the cycle from z_q: λ, and z_{q+e} − z_q.
            savedZ.set(trail)
            savedSlope.set(trailSlope)
            multiplier.re.set(1.0)
            multiplier.im.set(0.0)
            for e in 0..<p {
                try Locator.checkCancellation(atStep: e + 1)
                if e > 0 && p % e == 0 {
                    guard addLowerTerm(trail, trailSlope, savedZ, savedSlope) else { return }
                }
                multiplier.multiply(byDerivativeOfPower: power, at: trail, scratch: product, w: power64)
                if e < p - 1 { step(trail, trailSlope, c) }
            }
            let (mantissa, exponent) = smallest2.toDoubleExponent()
            smallestLowerLog2 = smallest2.isFinite ? (log2(mantissa) + Double(exponent)) / 2 : .infinity
            // L = g_q'/g_q − Σ
            if gq.isZero {
                logDerivative = nil
            } else {
                _ = l.divide(gqSlope, gq, scratch: scratch)
                l.setDifference(l, sum)
                logDerivative = l
            }
        }

        /// Σ ← Σ + (a' − b')/(a − b), rounded to 64 bits; false (on a pole) when a = b.
        private func addLowerTerm(_ a: MPFRComplex, _ aSlope: MPFRComplex, _ b: MPFRComplex, _ bSlope: MPFRComplex) -> Bool {
            g64.setDifference(a, b)
            guard g64.isFinite else {
                escaped = true
                return false
            }
            guard !g64.isZero else {
                onPole = true
                return false
            }
            g64.squaredMagnitude(into: size2)
            if mpfr_less_p(size2.raw, smallest2.raw) != 0 { smallest2.set(size2) }
            slope64.setDifference(aSlope, bSlope)
            _ = term.divide(slope64, g64, scratch: scratch64)
            sum.setSum(sum, term)
            return true
        }
    }
}
