import ArgumentParser
import GlintCore
import GlintWorkloads
#if canImport(Glibc)
import Glibc
#endif

// MARK: Numeric options
//
// Every numeric option is declared `parsing: .unconditional` (so that `--roll -10` or
// `--iterations -5` reads -10 and -5 as values, not as options) with a transform from this file
// that checks the value's range while the command line is parsed: before `validate()`, before
// any work and before any file or folder is created. A bad value is a usage error: exit status 2
// and one line, `error: --fps must be between 0.001 and 1000, got 1e-30`.
//
// Ranges that depend on more than one option (the supersampled grid, a corner radius against
// the input image, a camera built from several options) are checked in the commands' validate().

/// The values a floating-point option accepts: finite, within `lower` and `upper`, each bound
/// included or not.
struct NumberRange: Sendable {
    var lower: Double
    var lowerIncluded: Bool
    var upper: Double
    var upperIncluded: Bool

    /// [lower, upper]
    static func closed(_ lower: Double, _ upper: Double) -> NumberRange {
        NumberRange(lower: lower, lowerIncluded: true, upper: upper, upperIncluded: true)
    }
    /// (lower, upper]
    static func above(_ lower: Double, atMost upper: Double) -> NumberRange {
        NumberRange(lower: lower, lowerIncluded: false, upper: upper, upperIncluded: true)
    }
    /// [lower, upper)
    static func atLeast(_ lower: Double, below upper: Double) -> NumberRange {
        NumberRange(lower: lower, lowerIncluded: true, upper: upper, upperIncluded: false)
    }
    /// (lower, upper)
    static func open(_ lower: Double, _ upper: Double) -> NumberRange {
        NumberRange(lower: lower, lowerIncluded: false, upper: upper, upperIncluded: false)
    }

    func contains(_ x: Double) -> Bool {
        x.isFinite && (lowerIncluded ? x >= lower : x > lower) && (upperIncluded ? x <= upper : x < upper)
    }

    /// "between 0.001 and 1000", "above 0 and at most 2000", ...
    var text: String {
        let (l, u) = (numberText(lower), numberText(upper))
        switch (lowerIncluded, upperIncluded) {
        case (true, true): return "between \(l) and \(u)"
        case (false, true): return "above \(l) and at most \(u)"
        case (true, false): return "at least \(l) and below \(u)"
        case (false, false): return "strictly between \(l) and \(u)"
        }
    }
}

/// A bound as people write it: 1000, 0.001, 1e9, -63.
func numberText(_ x: Double) -> String {
    guard x.isFinite else { return x.isNaN ? "nan" : (x > 0 ? "inf" : "-inf") }
    if x == x.rounded() && abs(x) < 1e7 { return String(Int64(x)) }
    let e = log10(abs(x))
    if e == e.rounded() && (e >= 7 || e < -4) { return (x < 0 ? "-" : "") + "1e\(Int(e))" }
    return String(x)
}

/// Throws a usage error for a bad option value, remembering its message so that the one-line
/// report can show it alone (argument-parser wraps an error thrown by a transform in its own
/// "The value '...' is invalid for '...': " sentence).
func optionValueError(_ message: String) -> ValidationError {
    OptionValueMessages.last.withLock { $0 = message }
    return ValidationError(message)
}

enum OptionValueMessages {
    /// The message of the last option value refused.
    static let last = Locked<String?>(nil)
}

// MARK: Checks (each throws one line naming the option, the range and what was given)

/// A floating-point value of `option`, in `range`.
func checkedNumber(_ text: String, option: String, _ range: NumberRange) throws -> Double {
    let t = text[...].trimmingCharacters()
    guard let v = Double(t) else { throw optionValueError("\(option) must be a number \(range.text), got \(t)") }
    guard range.contains(v) else { throw optionValueError("\(option) must be \(range.text), got \(t)") }
    return v
}

/// A whole-number value of `option`, in `range` (1e3 is read as 1000).
func checkedInt(_ text: String, option: String, _ range: ClosedRange<Int>) throws -> Int {
    let t = text[...].trimmingCharacters()
    let bounds = "between \(range.lowerBound) and \(range.upperBound)"
    if let v = Int(t) {
        guard range.contains(v) else { throw optionValueError("\(option) must be \(bounds), got \(t)") }
        return v
    }
    if let d = Double(t), d.isFinite, d == d.rounded() {
        guard d >= Double(range.lowerBound) && d <= Double(range.upperBound) else {
            throw optionValueError("\(option) must be \(bounds), got \(t)")
        }
        return Int(d)
    }
    throw optionValueError("\(option) must be a whole number \(bounds), got \(t)")
}

/// A seed: a whole number from 0 to 2^64 - 1.
func checkedSeed(_ text: String, option: String) throws -> UInt64 {
    let t = text[...].trimmingCharacters()
    guard let v = UInt64(t) else {
        throw optionValueError("\(option) must be a whole number between 0 and \(UInt64.max), got \(t)")
    }
    return v
}

/// Comma-separated numbers `X,Y` (`count` of them), each in `range`: e.g. --center -0.75,0.1.
func checkedNumbers(_ text: String, option: String, count: Int, _ range: NumberRange, example: String) throws -> [Double] {
    try checkedParts(text, option: option, count: count, range, example: example).map(\.value)
}

/// As `checkedNumbers`, each number with its text (trimmed).
func checkedParts(_ text: String, option: String, count: Int, _ range: NumberRange, example: String) throws -> [(text: String, value: Double)] {
    let names = count == 3 ? "X,Y,Z" : "X,Y"
    let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters() }
    var values: [(text: String, value: Double)] = []
    for p in parts {
        guard let v = Double(p) else { values = []; break }
        values.append((p, v))
    }
    guard parts.count == count, values.count == count else {
        throw optionValueError("\(option) must be \(count == 3 ? "three" : "two") numbers \(names) (e.g. \(example)), got \(text)")
    }
    guard values.allSatisfy({ range.contains($0.value) }) else {
        throw optionValueError("\(option) must be \(names) with each number \(range.text), got \(text)")
    }
    return values
}

// MARK: Transforms for @Option(parsing: .unconditional, transform: ...)

func number(_ option: String, _ range: NumberRange) -> @Sendable (String) throws -> Double {
    { try checkedNumber($0, option: option, range) }
}

func wholeNumber(_ option: String, _ range: ClosedRange<Int>) -> @Sendable (String) throws -> Int {
    { try checkedInt($0, option: option, range) }
}

func seedNumber(_ option: String) -> @Sendable (String) throws -> UInt64 {
    { try checkedSeed($0, option: option) }
}

/// Checks `X,Y` (or `X,Y,Z`) while parsing; the option keeps its text.
func numbers(_ option: String, count: Int, _ range: NumberRange, example: String) -> @Sendable (String) throws -> String {
    { text in _ = try checkedNumbers(text, option: option, count: count, range, example: example); return text }
}

/// Two numbers `X,Y` (angles, a direction).
struct NumberPair: Sendable, Equatable {
    var x: Double
    var y: Double
}

/// `X,Y` checked while parsing, each number in `range`.
func numberPair(_ option: String, _ range: NumberRange, example: String) -> @Sendable (String) throws -> NumberPair {
    { text in
        let v = try checkedNumbers(text, option: option, count: 2, range, example: example)
        return NumberPair(x: v[0], y: v[1])
    }
}

/// `RE,IM` of the complex plane (--center, --c) checked while parsing, each number in `range`,
/// kept exactly as written (any number of digits: the deep zoom reads them all).
func complexNumber(_ option: String, _ range: NumberRange, example: String) -> @Sendable (String) throws -> DeepComplex {
    { text in
        let parts = try checkedParts(text, option: option, count: 2, range, example: example)
        // Hexadecimal, which Double reads and DeepNumber does not, is kept as the Double's text.
        func exact(_ part: (text: String, value: Double)) -> DeepNumber {
            (try? DeepNumber(parsing: part.text)) ?? DeepNumber(part.value)
        }
        return DeepComplex(re: exact(parts[0]), im: exact(parts[1]))
    }
}

/// `--zoom`: a positive decimal of any size (1e1000), at least 1e-9.
let zoomValue: @Sendable (String) throws -> DeepNumber = { text in
    let z: DeepNumber
    do { z = try DeepNumber(parsing: text[...].trimmingCharacters(), field: "--zoom") } catch let e as GlintError {
        throw optionValueError(e.message)
    }
    guard !z.isNegative, !z.isZero, let l = z.log10Magnitude, l >= -9 else {
        throw optionValueError("--zoom must be a positive number of at least 1e-9, got \(JSON.printable(text, limit: 40))")
    }
    return z
}

/// `WxH` checked while parsing.
func imageSize(_ option: String) -> @Sendable (String) throws -> ImageSize {
    { text in
        do {
            let (w, h) = try parseSize(text, option: option)
            return ImageSize(width: w, height: h)
        } catch let e as ValidationError { throw optionValueError(e.message) }
    }
}

/// Every value of a ramp within `range`.
func checkRamp(_ r: Ramp, _ range: NumberRange) throws {
    guard (r.from + r.to).allSatisfy(range.contains) else {
        throw ValidationError("--ramp \(r.name) values must be \(range.text), got \(r.name)=\(rampText(r))")
    }
}

/// FROM:TO of a ramp as given.
func rampText(_ r: Ramp) -> String {
    func side(_ v: [Double]) -> String { v.map { numberText($0) }.joined(separator: ",") }
    return side(r.from) + ":" + side(r.to)
}

// MARK: The ranges (each also named in its option's --help)

enum Limits {
    /// Frames of an animation or sequence (the jobs' own limit).
    static let frames = 1...PulseJob.maxFrames
    /// Frames per second of an animation (for its video) or a pulse sequence (PulseJob's range).
    static let fps = NumberRange.closed(PulseJob.fpsRange.lowerBound, PulseJob.fpsRange.upperBound)
    /// Frames per second of the mist (MistJob's range).
    static let mistFps = NumberRange.closed(MistJob.fpsRange.lowerBound, MistJob.fpsRange.upperBound)
    /// Coordinates in the complex plane (--center, --c): float and double alike stay exact enough.
    static let planeCoordinate = NumberRange.closed(-FractalLocation.maxCoordinate, FractalLocation.maxCoordinate)
    /// Hue and purity: [0, 1].
    static let unit = NumberRange.closed(0, 1)
    /// Fractal escape radius (FractalJob's range).
    static let bailout = NumberRange.above(1, atMost: FractalJob.maxBailout)
    /// Camera positions and directions (RTCamera accepts lengths below 1e18).
    static let cameraCoordinate = NumberRange.closed(-1e9, 1e9)
    /// --vfov in degrees (RTCamera's range).
    static let vfov = NumberRange.open(0, 180)
    /// --aperture, the lens diameter (RTCamera's range).
    static let aperture = NumberRange.atLeast(0, below: 1e9)
    /// --focus-dist (RTCamera's range).
    static let focusDistance = NumberRange.open(0, 1e18)
    /// --roll in degrees (the app's limit, RTCamera.rollLimit).
    static let roll = NumberRange.closed(-RTCamera.rollLimit, RTCamera.rollLimit)
    /// Gesture angles in degrees (--orbit, --turn; latitude and pitch are clamped to +-89.999 after).
    static let angle = NumberRange.closed(-1e6, 1e6)
    /// --distance factors (each is then clamped to the app's 0.314...2.718).
    static let distanceFactor = NumberRange.above(0, atMost: 1e9)
    /// --partial: seconds between snapshots.
    static let partialSeconds = NumberRange.closed(0.1, 86_400)
    /// --gravity components: only the direction matters.
    static let gravity = NumberRange.closed(-1e6, 1e6)
    /// Gaussian sigma (BlurJob's range).
    static let sigma = NumberRange.above(0, atMost: BlurJob.maxSigma)
    /// Timed repetitions (compare --runs).
    static let runs = 1...1000
    /// blur --repeat-runs.
    static let repeatRuns = 1...10_000
    /// bench --seconds.
    static let benchSeconds = NumberRange.closed(0.01, 600)
    /// Iso extrusion depth in pixels (IsoJob's range).
    static let isoDepth = NumberRange.closed(0, 4096)
    /// Iso corner radius: at most half the larger possible image side (the image's own half is checked too).
    static let cornerRadius = NumberRange.closed(0, Double(ImageLimits.maxSide / 2))
    /// Iso supersampling (IsoJob's range).
    static let isoSupersampling = 1...8
}

// MARK: One-line usage errors

/// The one-line text of a usage error (without "error: "): a refused option value's own message;
/// our validation messages as they are; argument-parser's own (an unknown option, a missing
/// value) with a pointer to the command's help. Never the usage block argument-parser adds.
func usageMessage(for error: Error, type: ParsableArguments.Type, help: String?) -> String {
    let full = type.message(for: error)
    if let refused = OptionValueMessages.last.withLock({ $0 }), full.hasSuffix(refused) { return refused }
    var text = full.split(separator: "\n").map { $0.trimmingCharacters() }.filter { !$0.isEmpty }.joined(separator: " ")
    // argument-parser's sentences start with a capital ("Missing value for '--x <x>'", "Unknown
    // option '--y'"); ours never do.
    let chars = Array(text)
    if chars.count > 1, chars[0].isUppercase, chars[1].isLowercase {
        text = chars[0].lowercased() + String(chars.dropFirst())
        if let help { text += " (see '\(help)')" }
    }
    return text
}

// MARK: Named choices

/// One of a fixed set of names (`--palette fire`, `--method recursive`), parsed to its enum case
/// while the command line is read: a wrong name is a one-line usage error listing the choices,
/// and the command gets a typed value, never a string to parse again.
func choice<T: Sendable>(_ what: String, _ cases: [T], name: @escaping @Sendable (T) -> String) -> @Sendable (String) throws -> T {
    { text in
        if let found = cases.first(where: { name($0) == text }) { return found }
        let names = cases.map(name)
        throw optionValueError("unknown \(what) '\(JSON.printable(text, limit: 40))': use \(names.dropLast().joined(separator: ", ")) or \(names.last ?? "")")
    }
}


/// An image size from `WxH`, checked against the image limits while the command line is read.
struct ImageSize: Sendable, Equatable, CustomStringConvertible {
    var width: Int
    var height: Int
    var description: String { "\(width)x\(height)" }
}

let autoIterationsHelp = """
    auto probes the view on a grid at most \(AutoIterations.probeSide) samples across with \(AutoIterations.start), \
    \(2 * AutoIterations.start), \(4 * AutoIterations.start), ... iterations (from where some samples of a coarser \
    grid escape) and stops at the first doubling that lets fewer than \(Format.short(AutoIterations.threshold * 100))% \
    of the samples escape (the share still iterating has stopped changing), at most \(AutoIterations.cap). The count \
    it takes is printed and recorded in the PNG; each frame of an animation gets its own.
    """

/// --iterations: a count, or auto (AutoIterations).
enum IterationsChoice: Equatable, Sendable {
    case fixed(Int)
    case auto
}

let iterationsValue: @Sendable (String) throws -> IterationsChoice = { text in
    text.lowercased() == "auto" ? .auto : .fixed(try checkedInt(text, option: "--iterations", 1...FractalJob.maxIterationLimit))
}
