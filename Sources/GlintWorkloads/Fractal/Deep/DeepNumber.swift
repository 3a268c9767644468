import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// A real number written in decimal, of any length: the deep zoom's centre and zoom, which no
/// Double can hold (a centre at zoom 1e100 needs about 100 significant digits; a zoom of 1e1000
/// overflows a Double).
///
/// Accepted text, and nothing else: an optional sign, digits with an optional fraction (at least
/// one digit on one side of the point), then an optional exponent `e`/`E` with an optional sign
/// and at least one digit: `-0.743643887037158704752191506114774`, `1e1000`, `+3.2e-4`, `.5`, `5.`.
/// No spaces, no `inf`/`nan`, no hexadecimal, no digit separators.
///
/// The value is kept exactly, as `significand × 10^exponent` with `significand` a string of
/// decimal digits without leading zeros ("" for zero).
public struct DeepNumber: Sendable, Equatable, CustomStringConvertible {
    /// The text as given.
    public let text: String
    public let isNegative: Bool
    /// The significant digits, leading zeros removed ("" when the value is zero).
    public let significand: String
    /// The value is `significand × 10^exponent` (with the sign).
    public let exponent: Int

    /// The largest decimal exponent accepted (±). MPFR's own exponent range is about ±3e8 decimal
    /// orders at its default settings; anything near that is far past any zoom that can be drawn.
    public static let maxExponent = 100_000_000

    /// Parses `text`; `field` names the value in the error ("zoom", "center"), "number" if nil.
    public init(parsing text: String, field: String? = nil) throws(GlintError) {
        let name = field ?? "number"
        func bad(_ why: String) -> GlintError {
            GlintError(field: name, "must be a plain decimal number like -0.75, 3.2e-4 or 1e1000 (got \(Self.quoted(text)): \(why))")
        }
        let bytes = Array(text.utf8)
        var i = 0
        var negative = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
            negative = bytes[i] == UInt8(ascii: "-")
            i += 1
        }
        func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
        var intDigits: [UInt8] = []
        while i < bytes.count, isDigit(bytes[i]) { intDigits.append(bytes[i]); i += 1 }
        var fracDigits: [UInt8] = []
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            while i < bytes.count, isDigit(bytes[i]) { fracDigits.append(bytes[i]); i += 1 }
        }
        func unexpected(_ i: Int) -> GlintError {
            let scalar = text.utf8.index(text.utf8.startIndex, offsetBy: i)
            let character = text[scalar...].first.map { String($0) } ?? "?"
            return bad("unexpected \(Self.quoted(character)) at character \(text[..<scalar].count + 1)")
        }
        if bytes.isEmpty { throw bad("empty") }
        if intDigits.isEmpty && fracDigits.isEmpty {
            throw i < bytes.count && bytes[i] != UInt8(ascii: "e") && bytes[i] != UInt8(ascii: "E") ? unexpected(i) : bad("no digits")
        }
        var exp10 = 0
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            var expNegative = false
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
                expNegative = bytes[i] == UInt8(ascii: "-")
                i += 1
            }
            var expDigits = 0
            while i < bytes.count, isDigit(bytes[i]) {
                exp10 = exp10 * 10 + Int(bytes[i] - UInt8(ascii: "0"))
                expDigits += 1
                if exp10 > Self.maxExponent { throw bad("exponent beyond ±\(Self.maxExponent)") }
                i += 1
            }
            if expDigits == 0 { throw bad("no digits in the exponent") }
            if expNegative { exp10 = -exp10 }
        }
        if i < bytes.count { throw unexpected(i) }

        // significand × 10^exponent, without leading zeros; trailing zeros are folded into the exponent.
        var digits = intDigits + fracDigits
        var e = exp10 - fracDigits.count
        let firstNonZero = digits.firstIndex(where: { $0 != UInt8(ascii: "0") }) ?? digits.count
        digits.removeFirst(firstNonZero)
        while let last = digits.last, last == UInt8(ascii: "0") { digits.removeLast(); e += 1 }
        if digits.isEmpty { e = 0 }
        self.text = text
        isNegative = negative
        significand = String(decoding: digits, as: UTF8.self)
        exponent = e
    }

    /// The number a Double holds, as the shortest text that reads back to it (`"\(value)"`:
    /// -0.75, 1e+300): what a view set from Doubles renders. `value` must be finite.
    public init(_ value: Double) {
        precondition(value.isFinite, "a DeepNumber is finite (got \(value))")
        // A finite Double's shortest text is a plain decimal: it always parses.
        try! self.init(parsing: "\(value)")
    }

    public var description: String { text }

    /// The Double nearest the value, rounded as a Double read from `text` is: ±infinity past
    /// Double's range, ±0 below it.
    public var nearestDouble: Double {
        // Every text this type accepts is one Double(_:) reads.
        Double(text) ?? .nan
    }

    public var isZero: Bool { significand.isEmpty }

    /// The text MPFR reads (`mpfr_set_str`, base 10): `[-]DIGITSeEXP`, or `0`.
    public var mpfrText: String {
        isZero ? "0" : (isNegative ? "-" : "") + significand + "e" + String(exponent)
    }

    /// log10 of |value| (nil for zero), from the digits and the exponent: never converts the value
    /// itself to a Double, so 1e1000 and 1e-1000 work. Accurate to about 1e-15 relative.
    public var log10Magnitude: Double? {
        leadAndScale.map { log10($0.lead) + Double($0.scale) }
    }

    /// log2 of |value| (nil for zero), as `log10Magnitude` (exact for integers that are powers of 2
    /// with at most 17 digits: log2 of 1024 is 10).
    public var log2Magnitude: Double? {
        leadAndScale.map { log2($0.lead) + Double($0.scale) * log2(10.0) }
    }

    /// |value| ≈ lead × 10^scale, lead the first (at most 17) significant digits as an integer.
    private var leadAndScale: (lead: Double, scale: Int)? {
        if isZero { return nil }
        let lead = significand.prefix(17)
        return (Double(String(lead))!, significand.count - lead.count + exponent)
    }

    /// The text for an error message: quoted, control characters escaped (one line), cut to 40 characters.
    static func quoted(_ text: String) -> String {
        text.count <= 40 ? String(reflecting: text) : String(reflecting: String(text.prefix(37)) + "...")
    }
}

/// A complex number whose parts are exact decimals: a fractal's centre or Julia constant
/// (FractalJob, FractalLocation, FractalRamps), to as many digits as a deep zoom needs.
public struct DeepComplex: Sendable, Equatable, CustomStringConvertible {
    public var re: DeepNumber
    public var im: DeepNumber

    public init(re: DeepNumber, im: DeepNumber) { (self.re, self.im) = (re, im) }

    /// From Doubles, each as its shortest round-trip text (`DeepNumber(_: Double)`); both finite.
    public init(re: Double, im: Double) {
        self.init(re: DeepNumber(re), im: DeepNumber(im))
    }

    /// `RE,IM` with each part's text as given.
    public var description: String { re.text + "," + im.text }
}
