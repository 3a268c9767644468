import CDeepOrbit
import CMPFR
import GlintCore

/// The Mandelbrot orbit of the view centre C, computed in MPFR at the precision the view needs
/// (`precisionBits(zoom:centerRe:centerIm:)`) and stored rounded to Double: the reference that
/// perturbation (PerturbationCPU) iterates the pixels' small deltas against. Renders get it
/// through `OrbitCache`, which computes each orbit once per process.
///
/// O[0] = 0, O[1] = C, O[n+1] = O[n]² + C, each part of each step the correctly rounded value of
/// the exact one at `precisionBits` (ReferenceOrbit.append). The
/// orbit ends after `maxIterations + 2` points (O[0] ... O[maxIterations+1]: a sample at the
/// centre then follows the reference through all its `maxIterations` steps without rebasing), or
/// at the first point with |O[n]|² > max(R², 4), which is kept (computed from the stored Doubles).
///
/// Memory: 16 bytes per point (a Double each for re and im), so 16 × (maxIterations + 2) bytes at
/// most: 16 MB for a million iterations, 256 MB at Glint's limit of 2^24.
public struct ReferenceOrbit: DeepReference, Sendable {
    /// Re O[n] rounded to nearest Double.
    public let re: [Double]
    /// Im O[n] rounded to nearest Double.
    public let im: [Double]
    /// MPFR precision of the iteration, in bits.
    public let precisionBits: Int
    /// Whether the last point escaped (|O|² > max(R², 4)); false if the orbit ran to its full length.
    public let escaped: Bool
    /// The escape radius R and the iteration limit it was computed for.
    public let bailout: Double
    public let maxIterations: Int
    /// The view's pixel spacing 2 / (zoom × height), from MPFR (DeepReference gives its parts).
    public let spacing: Spacing
    /// The orbit's formula, z^power + c (FractalJob.power).
    public let power: Int

    /// Number of points (at least 2: O[0] and O[1]).
    public var count: Int { re.count }

    /// The MPFR precision of the reference orbit of a view, in bits:
    ///
    ///     max(64, ⌊log2(zoom)⌋ + 64, centreBits)
    ///     centreBits = ⌈digits × log2(10)⌉ + 64   (0 without a centre)
    ///
    /// where `digits` is the number of significant decimal digits of the longer centre
    /// coordinate (DeepNumber.significand: leading and trailing zeros do not count), and
    /// ⌈digits × log2(10)⌉ is computed in Double as `digits × 3.321928094887362`, rounded up.
    ///
    /// The zoom term keeps 64 bits past the pixel spacing's order of magnitude (for images up
    /// to 2^40 pixels high, comfortably more than a Double's 53 that the deltas are added to).
    /// The centre term keeps every digit the centre was given in (and 64 bits more), so the
    /// precision does not change with the zoom while the centre's digits cover it: every frame
    /// of a zoom into one centre, and a single render of any of those frames, computes the same
    /// orbit (which `OrbitCache` then computes once).
    public static func precisionBits(zoom: DeepNumber, centerRe: DeepNumber? = nil, centerIm: DeepNumber? = nil) -> Int {
        var bits = 64
        if let l = zoom.log2Magnitude, !zoom.isNegative { bits = max(bits, Int(l) + 64) }
        let digits = max(centerRe?.significand.count ?? 0, centerIm?.significand.count ?? 0)
        if digits > 0 { bits = max(bits, Int((Double(digits) * 3.321928094887362).rounded(.up)) + 64) }
        return bits
    }

    /// Parses the decimal strings and computes the orbit (see the type's documentation).
    /// Errors (GlintError, one line): a centre or zoom that is not a plain decimal number, a zoom
    /// that is not positive, height < 1, bailout not above 1 or not finite, maxIterations < 1.
    public init(centerRe: String, centerIm: String, zoom: String, height: Int, bailout: Double,
                maxIterations: Int) throws(GlintError) {
        try self.init(centerRe: DeepNumber(parsing: centerRe, field: "center re"),
                      centerIm: DeepNumber(parsing: centerIm, field: "center im"),
                      zoom: DeepNumber(parsing: zoom, field: "zoom"),
                      height: height, bailout: bailout, maxIterations: maxIterations)
    }

    public init(centerRe: DeepNumber, centerIm: DeepNumber, zoom: DeepNumber, height: Int, bailout: Double,
                maxIterations: Int, power: Int = 2) throws(GlintError) {
        try Self.check(zoom: zoom, height: height, bailout: bailout, maxIterations: maxIterations)
        let bits = Self.precisionBits(zoom: zoom, centerRe: centerRe, centerIm: centerIm)
        precisionBits = bits
        self.bailout = bailout
        self.maxIterations = maxIterations
        self.power = power
        spacing = Spacing(zoom: zoom, height: height, precision: bits)

        let c = (MPFRNumber(centerRe, precision: bits), MPFRNumber(centerIm, precision: bits))
        var re = [Double](), im = [Double]()
        re.reserveCapacity(maxIterations + 2)
        im.reserveCapacity(maxIterations + 2)
        re.append(0); im.append(0)
        let limit = max(bailout * bailout, 4)
        let didEscape = power == 2
            ? try Self.appendFollowing(c: c, points: maxIterations + 1, limit: limit, bits: bits, re: &re, im: &im)
                .escaped
            : try Self.appendPower(power, c: c, points: maxIterations + 1, limit: limit, bits: bits, re: &re, im: &im)
        escaped = didEscape
        self.re = re
        self.im = im
    }

    /// This orbit as a computation for `maxIterations` would give it (the same centre, precision
    /// and bailout), with `pixelSpacing` for its view; nil when this one cannot tell: it ran its
    /// full length for a smaller limit. The orbit does not depend on the limit except through
    /// its length, so a longer orbit's first maxIterations + 2 points are the shorter one's, and
    /// an orbit that escaped is the whole orbit for any limit it fits in (and its prefix below).
    public func prefix(maxIterations n: Int, spacing: Spacing) -> ReferenceOrbit? {
        guard n >= 1, n <= maxIterations || escaped else { return nil }
        let length = n + 2
        if length >= count {
            return ReferenceOrbit(re: re, im: im, precisionBits: precisionBits, escaped: escaped, bailout: bailout,
                                  maxIterations: n, spacing: spacing, power: power)
        }
        return ReferenceOrbit(re: Array(re[..<length]), im: Array(im[..<length]), precisionBits: precisionBits,
                              escaped: false, bailout: bailout, maxIterations: n, spacing: spacing, power: power)
    }

    /// A view's pixel spacing 2 / (zoom × height): rounded once to a Double (0 or subnormal past
    /// Double's range), and as mantissa × 2^exponent at any depth, the mantissa in [1, 2).
    public struct Spacing: Sendable {
        public let pixel: Double
        public let mantissa: Double
        public let exponent: Int

        /// In MPFR at `precision` bits.
        public init(zoom: DeepNumber, height: Int, precision: Int) {
            pixel = ReferenceOrbit.pixelSpacing(zoom: zoom, height: height, precision: precision)
            (mantissa, exponent) = ReferenceOrbit.spacing(zoom: zoom, height: height, precision: precision)
        }
    }

    private init(re: [Double], im: [Double], precisionBits: Int, escaped: Bool, bailout: Double, maxIterations: Int,
                 spacing: Spacing, power: Int) {
        self.power = power
        self.re = re
        self.im = im
        self.precisionBits = precisionBits
        self.escaped = escaped
        self.bailout = bailout
        self.maxIterations = maxIterations
        self.spacing = spacing
    }

    /// How an orbit's steps are computed (CDeepOrbit): MPFR's exact products, an FFT
    /// convolution per step, or (`automatic`) the FFT from the precision where it is the faster.
    /// Every form gives the same values; the choice is for tests and measurements.
    enum StepForm: Int32, Sendable {
        case mpfr = 0, fft = 1, automatic = -1
    }

    /// Appends `points` points of the orbit from `start` (fewer if it escapes), each step
    /// x + iy -> (x² - y² + a.re) + i(2xy + a.im) with each part the correctly rounded value of
    /// the exact one at `bits` (one rounding), then with `fold` the abs of each part (the signed
    /// value is stored, its abs iterated on: the Burning Ship). The orbit ends at the first stored
    /// point with |point|² > `limit` (the start only when `testingStart`), which is kept. Returns
    /// whether it ended so. Every orbit of the deep zoom (ReferenceOrbit, FormulaOrbit) is made here.
    /// A cancelled task (a server's render past its time limit, or left by its client) ends it
    /// within a step, throwing `cancelled`.
    static func append(from start: (MPFRNumber, MPFRNumber), adding a: (MPFRNumber, MPFRNumber), fold: Bool,
                       testingStart: Bool, points: Int, limit: Double, bits: Int,
                       re: inout [Double], im: inout [Double], form: StepForm = .automatic) throws(GlintError) -> Bool {
        var newRe = [Double](), newIm = [Double]()
        let escaped = try run(bits: bits, form: form, points: points, re: &newRe, im: &newIm) {
            stepper, count, reBuffer, imBuffer, escaped in
            glint_orbit_run(stepper, start.0.raw, start.1.raw, a.0.raw, a.1.raw, fold ? 1 : 0, testingStart ? 1 : 0,
                            count, limit, reBuffer, imBuffer, escaped)
        }
        re.append(contentsOf: newRe)
        im.append(contentsOf: newIm)
        return escaped
    }

    /// Runs `body` (a glint_orbit_run) on a new stepper of `bits` that asks the task whether it
    /// is cancelled, into new arrays of `points` at most; returns whether the orbit escaped.
    private static func run(bits: Int, form: StepForm, points: Int, re: inout [Double], im: inout [Double],
                            _ body: (OpaquePointer, Int, UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Double>?,
                                     UnsafeMutablePointer<Int32>) -> Int) throws(GlintError) -> Bool {
        // From a few thousand bits up the steps are FFT convolutions, on two threads where the
        // machine has them (MPFR keeps its state per thread).
        let threads: Int32 = CPUParallel.workerCount > 1 && mpfr_buildopt_tls_p() != 0 ? 2 : 1
        guard let stepper = glint_orbit_stepper_create(bits, threads, form.rawValue) else {
            fatalError("out of memory for a reference orbit of \(bits) bits")
        }
        defer { glint_orbit_stepper_destroy(stepper) }
        // Asked on the calling thread, which is the task's.
        glint_orbit_set_cancel(stepper) { Task.isCancelled ? 1 : 0 }
        var escaped: Int32 = 0
        var newIm = [Double]()
        // Pages of the arrays are touched only as far as the orbit goes.
        let newRe = [Double](unsafeUninitializedCapacity: max(points, 0)) { reBuffer, reCount in
            newIm = [Double](unsafeUninitializedCapacity: max(points, 0)) { imBuffer, imCount in
                imCount = body(stepper, points, reBuffer.baseAddress, imBuffer.baseAddress, &escaped)
            }
            reCount = newIm.count
        }
        if escaped < 0 { throw cancelled }
        re = newRe
        im = newIm
        return escaped != 0
    }

    /// Where an orbit's steps changed precision: from point `point` on (the first point computed
    /// at it) the steps round at `bits`.
    struct PrecisionStep: Equatable, Sendable {
        let point: Int
        let bits: Int
    }

    /// The fewest bits a step rounds at where the precision follows the derivative.
    static let followingFloorBits = 256
    /// Orbits of fewer bits keep their precision throughout (their steps cost little).
    static let followingFromBits = 1_000

    /// Appends the Mandelbrot orbit from c (`append` from c adding c, testing the start), with
    /// each step's precision following the orbit's derivative dz/dc (glint_orbit_following):
    /// `bits` while |dz| is small, then a bit fewer for every doubling of |dz| (with 64 to
    /// spare), down to 256.
    /// A rounding error r at z_k acts on every later point as a change of c of about r / |dz_k|,
    /// so each step's error stays about 2^-64 below a change of c in its last bit at `bits`, and
    /// the stored doubles are those of an orbit kept at `bits` wherever that orbit is itself
    /// accurate (a bounded chaotic orbit run past that point is right in neither). On a zoom
    /// into a Misiurewicz point |dz| doubles at a steady rate, and the steps average about half
    /// the bits. The precision falls by about an eighth at a time (each a new stepper, with the
    /// point and c rounded to it) and rises at once where |dz| falls (near a minibrot's nucleus).
    static func appendFollowing(c: (MPFRNumber, MPFRNumber), points: Int, limit: Double, bits: Int,
                                re: inout [Double], im: inout [Double], form: StepForm = .automatic,
                                follow: Bool = true) throws(GlintError) -> (escaped: Bool, steps: [PrecisionStep]) {
        guard follow, bits >= followingFromBits else {
            let escaped = try append(from: c, adding: c, fold: false, testingStart: true, points: points, limit: limit,
                                     bits: bits, re: &re, im: &im, form: form)
            return (escaped, [PrecisionStep(point: 0, bits: bits)])
        }
        var state = glint_orbit_following(re: 0.5, im: 0, exp: 1, add_one: 1, reference_bits: bits, low: 0, high: 0,
                                          stopped: 0, need: 0)
        var steps: [PrecisionStep] = []
        var start = c
        var segmentBits = bits
        // Points this call has stored (`re` may hold some before it).
        let base = re.count
        var stored = 0
        while true {
            // A segment's first point is the last one of the segment before.
            let first = stored == 0
            let a = segmentBits == bits ? c : (MPFRNumber(precision: segmentBits), MPFRNumber(precision: segmentBits))
            if segmentBits != bits { a.0.set(c.0); a.1.set(c.1) }
            let end = (MPFRNumber(precision: segmentBits), MPFRNumber(precision: segmentBits))
            // Down by an eighth at least, and always to fewer bits than now (the next segment's
            // bits are the need and 64 more, rounded up to a limb).
            state.low = segmentBits > followingFloorBits
                ? min(segmentBits - segmentBits / 8, segmentBits / 64 * 64 - 64) - 64 : Int.min
            state.high = segmentBits < bits ? segmentBits : Int.max
            steps.append(PrecisionStep(point: first ? 0 : stored - 1, bits: segmentBits))
            var segmentRe = [Double](), segmentIm = [Double]()
            let escaped = try run(bits: segmentBits, form: form, points: points - stored + (first ? 0 : 1),
                                  re: &segmentRe, im: &segmentIm) { stepper, count, reBuffer, imBuffer, escaped in
                glint_orbit_run_following(stepper, start.0.raw, start.1.raw, a.0.raw, a.1.raw, first ? 1 : 0, count,
                                          limit, reBuffer, imBuffer, escaped, &state, end.0.raw, end.1.raw)
            }
            re.append(contentsOf: segmentRe.dropFirst(first ? 0 : 1))
            im.append(contentsOf: segmentIm.dropFirst(first ? 0 : 1))
            stored = re.count - base
            if escaped || state.stopped == 0 || stored >= points { return (escaped, steps) }
            let need = min(bits, state.need)
            segmentBits = min(bits, max(Self.followingFloorBits, (need + 64 + 63) / 64 * 64))
            start = end
        }
    }

    /// What an orbit whose task was cancelled throws.
    public static let cancelled = GlintError("the reference orbit was cancelled before it ended")

    /// Appends the orbit of z^power + c from z = c, `points` points at most, as `append` does
    /// (the same end and escape test): z^power as power − 1 complex products, each real product,
    /// difference and sum rounded to nearest at `bits`.
    static func appendPower(_ power: Int, c: (MPFRNumber, MPFRNumber), points: Int, limit: Double, bits: Int,
                            re: inout [Double], im: inout [Double]) throws(GlintError) -> Bool {
        let zr = MPFRNumber(precision: bits), zi = MPFRNumber(precision: bits)
        let pr = MPFRNumber(precision: bits), pi = MPFRNumber(precision: bits)
        let a = MPFRNumber(precision: bits), b = MPFRNumber(precision: bits), t = MPFRNumber(precision: bits)
        zr.set(c.0); zi.set(c.1)
        for i in 0..<points {
            if i % Locator.checkInterval == 0 && Task.isCancelled { throw cancelled }
            let x = zr.toDouble(), y = zi.toDouble()
            re.append(x); im.append(y)
            if x * x + y * y > limit { return true }
            if i == points - 1 { break }
            pr.set(zr); pi.set(zi)
            for _ in 1..<power {
                // (pr + i·pi)(zr + i·zi)
                a.setProduct(pr, zr); b.setProduct(pi, zi); b.setDifference(a, b)
                t.setProduct(pr, zi); a.setProduct(pi, zr); pi.setSum(t, a)
                pr.set(b)
            }
            zr.setSum(pr, c.0); zi.setSum(pi, c.1)
        }
        return false
    }

    /// 2 / (zoom × height), in MPFR at `precision` bits, rounded once to Double.
    public static func pixelSpacing(zoom: DeepNumber, height: Int, precision: Int) -> Double {
        let z = MPFRNumber(zoom, precision: precision)
        mpfr_mul_ui(z.raw, z.raw, UInt(height), MPFR_RNDN)
        z.setQuotient(2, z)
        return z.toDouble()
    }

    /// 2 / (zoom × height) as mantissa × 2^exponent, mantissa in [1, 2), at any depth.
    public static func spacing(zoom: DeepNumber, height: Int, precision: Int) -> (mantissa: Double, exponent: Int) {
        let z = MPFRNumber(zoom, precision: precision)
        mpfr_mul_ui(z.raw, z.raw, UInt(height), MPFR_RNDN)
        z.setQuotient(2, z)
        let (m, e) = z.toDoubleExponent()   // m in [0.5, 1)
        return (m * 2, e - 1)
    }

    static func check(zoom: DeepNumber, height: Int, bailout: Double, maxIterations: Int) throws(GlintError) {
        guard !zoom.isZero, !zoom.isNegative else {
            throw GlintError(field: "zoom", "must be a positive number (got \(DeepNumber.quoted(zoom.text)))")
        }
        guard height >= 1 else { throw GlintError(field: "height", "must be at least 1 (got \(height))") }
        guard bailout.isFinite, bailout > 1, bailout <= FractalJob.maxBailout else {
            throw GlintError(field: "bailout", "must be above 1 and at most 1e9 (got \(bailout))")
        }
        guard (1...FractalJob.maxIterationLimit).contains(maxIterations) else {
            throw GlintError(field: "maxIterations", "must be between 1 and \(FractalJob.maxIterationLimit) (got \(maxIterations))")
        }
    }
}

/// What the perturbation loops read from a reference orbit besides its points.
public protocol DeepReference {
    var spacing: ReferenceOrbit.Spacing { get }
}

extension DeepReference {
    /// The pixel spacing rounded to a Double.
    public var pixelSpacing: Double { spacing.pixel }
    /// The spacing as `spacingMantissa` × 2^`spacingExponent` (where the spacing is a normal
    /// Double, the mantissa is exactly `pixelSpacing`'s).
    public var spacingMantissa: Double { spacing.mantissa }
    public var spacingExponent: Int { spacing.exponent }
}
