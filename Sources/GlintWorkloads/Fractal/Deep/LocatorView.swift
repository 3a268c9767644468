import CMPFR
import GlintCore

/// The view a locator (MinibrotLocator, MisiurewiczLocator) starts from: its centre in MPFR at
/// the precision the view needs (`ReferenceOrbit.precisionBits`, as its render would use) and
/// its radius 1/zoom, with the checks and the decimal output the locators share.
struct LocatorView {
    let zoom: DeepNumber
    /// log₂ zoom.
    let log2Zoom: Double
    /// Bits of the centre: what the zoom and the centre's digits need.
    let bits: Int
    let centre: MPFRComplex
    /// The view radius 1/zoom (half the image height), at 64 bits: only magnitudes are compared with it.
    let radius: MPFRNumber

    /// Errors: a zoom that is not positive or is past the deepest zoom Glint renders.
    init(centerRe: DeepNumber, centerIm: DeepNumber, zoom: DeepNumber) throws(GlintError) {
        guard !zoom.isZero, !zoom.isNegative, let log2Zoom = zoom.log2Magnitude else {
            throw GlintError(field: "zoom", "must be a positive number (got \(DeepNumber.quoted(zoom.text)))")
        }
        guard log2Zoom < Double(DeepView.maxLog2Zoom) else {
            throw GlintError(field: "zoom", "\(DeepNumber.quoted(zoom.text)) is beyond the deepest zoom Glint renders")
        }
        self.zoom = zoom
        self.log2Zoom = log2Zoom
        bits = ReferenceOrbit.precisionBits(zoom: zoom, centerRe: centerRe, centerIm: centerIm)
        centre = MPFRComplex(MPFRNumber(centerRe, precision: bits), MPFRNumber(centerIm, precision: bits))
        radius = MPFRNumber(zoom, precision: 64)
        radius.setQuotient(1, radius)
    }

    /// How far `point` is from the centre, in view radii.
    func distance(to point: MPFRComplex) -> Double {
        let offset = MPFRComplex(precision: 64)
        offset.setDifference(point, centre)
        return offset.magnitude(over: radius)
    }

    /// Newton's stopping rule: the step is below 2^-(bits − 16) of |c| (of 1 where |c| < 1).
    static func newtonConverged(step: MPFRComplex, at c: MPFRComplex, bits: Int) -> Bool {
        let step2 = MPFRNumber(precision: 64), c2 = MPFRNumber(precision: 64)
        step.squaredMagnitude(into: step2)
        c.squaredMagnitude(into: c2)
        if c2.compare(1) < 0 { c2.set(1.0) }
        c2.setScaled(c2, byPowerOfTwo: -2 * (bits - 16))
        return mpfr_lessequal_p(step2.raw, c2.raw) != 0
    }

    /// Bits that hold `digits` significant decimal digits, with a margin.
    static func bits(forDigits digits: Int) -> Int { Int(Double(digits) * 3.321928094887362) + 32 }

    /// `x` to `digits` significant digits, written plainly where that is short, as --center and
    /// --zoom take them.
    static func decimal(_ x: MPFRNumber, digits: Int, field: String) throws(GlintError) -> DeepNumber {
        try DeepNumber(parsing: DeepNumber(parsing: x.decimalString(digits: digits), field: field).plainText, field: field)
    }

    /// A distance in view radii for a message, to one decimal.
    static func format(_ x: Double) -> String {
        x.isFinite ? String(Double(Int(x * 10)) / 10) : "infinitely many"
    }
}

/// What the locators (MinibrotLocator, MisiurewiczLocator) share beyond the view: the powers they
/// take and how they stop early.
public enum Locator {
    /// The error a locator throws when the task it runs in is cancelled (a server's time limit
    /// passed, or its client left): its loops look every `checkInterval` steps, so it stops
    /// within milliseconds rather than running on to its end.
    public static let cancelled = GlintError("the search was cancelled before it ended")

    /// Orbit steps between two looks at the task's cancellation. A look costs nanoseconds, a step
    /// from about a microsecond (64 bits) to 120 µs (66000 bits, a view at 1e20000; measured in a
    /// debug build), so 64 steps keep the looks' cost negligible and the delay under 10 ms.
    static let checkInterval = 64

    /// Throws `cancelled` when the running task has been cancelled (never outside a task, as on
    /// the command line, where Ctrl-C ends the process instead).
    @inline(__always)
    static func checkCancellation() throws(GlintError) {
        if Task.isCancelled { throw cancelled }
    }

    /// `checkCancellation` every `checkInterval` steps of a loop counting `step`.
    @inline(__always)
    static func checkCancellation(atStep step: Int) throws(GlintError) {
        if step % checkInterval == 0 { try checkCancellation() }
    }

    /// Errors: a power outside 2...FractalJob.maxPower.
    static func checkPower(_ power: Int) throws(GlintError) {
        guard (2...FractalJob.maxPower).contains(power) else {
            throw GlintError(field: "power", "must be between 2 and \(FractalJob.maxPower) (got \(power))")
        }
    }
}
