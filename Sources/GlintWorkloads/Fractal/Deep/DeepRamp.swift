import CMPFR
import GlintCore

/// The zoom and the centre of frame k of an n-frame fractal animation, as decimal text of any
/// depth (`--ramp zoom=1:1e300`, `--ramp center=RE,IM:RE,IM`). Each is a fixed function of the
/// ends' values and (k, n), the same on every machine, so a frame can be rendered again alone
/// from its text. The first frame is FROM and the last TO, as given (the same text).
///
/// **Zoom**, geometric (equal ratios per frame): zoom_k = from × (to / from)^(k / (n − 1)),
/// computed in MPFR at 192 bits, each operation correctly rounded to nearest:
///
///     e = log10(from) + ((log10(to) − log10(from)) × k) / (n − 1);   zoom_k = 10^e
///
/// then written with `zoomDigits` (20) significant digits, rounded to nearest (trailing zeros
/// dropped): `1e100`, `3.1622776601683793320e50`, `316.22776601683793320`. 192 bits leave well
/// over 100 correct bits in zoom_k up to MPFR's exponent range, so the 20 digits are the
/// correctly rounded value of the exact ratio but for values within 1e-30 of a rounding tie.
///
/// **Centre**, each coordinate linear: x_k = (from × (n − 1 − k) + to × k) / (n − 1), computed
/// exactly in decimal and rounded (half away from zero) to `fractionDigits(zoom:)` digits after
/// the point: 20 more than the frame's zoom has before it, so the rounding moves the centre by
/// less than 1e-20 of the view's height (the ends are first cut, toward zero, to 20 digits past
/// those, which bounds the work for ends written with absurd exponents).
public enum DeepRamp {
    /// Significant digits of an in-between frame's zoom.
    public static let zoomDigits = 20
    /// Digits of an in-between frame's centre after the point beyond the zoom's integer digits.
    public static let centerDigitsPastZoom = 20
    /// MPFR precision of the zoom's logarithms.
    static let zoomPrecision = 192

    /// The zoom of frame k of n (0 <= k < n) from `from` to `to`, both positive.
    public static func zoom(from: DeepNumber, to: DeepNumber, frame k: Int, of n: Int) -> String {
        precondition(!from.isZero && !from.isNegative && !to.isZero && !to.isNegative, "a zoom ramp's ends are positive")
        if n <= 1 || k <= 0 { return from.text }
        if k >= n - 1 { return to.text }
        let p = zoomPrecision
        // log10 and exp10 fill this thread's caches of constants (and get_str its pool).
        defer { MPFRNumber.releaseThreadCaches() }
        let a = MPFRNumber(from, precision: p), b = MPFRNumber(to, precision: p)
        mpfr_log10(a.raw, a.raw, MPFR_RNDN)
        mpfr_log10(b.raw, b.raw, MPFR_RNDN)
        let e = MPFRNumber(precision: p)
        e.setDifference(b, a)
        mpfr_mul_ui(e.raw, e.raw, UInt(k), MPFR_RNDN)
        mpfr_div_ui(e.raw, e.raw, UInt(n - 1), MPFR_RNDN)
        e.setSum(a, e)
        mpfr_exp10(e.raw, e.raw, MPFR_RNDN)
        // MPFR writes the digits D1D2... and x with the value 0.D1D2... × 10^x.
        var x: mpfr_exp_t = 0
        guard let chars = mpfr_get_str(nil, &x, 10, zoomDigits, e.raw, MPFR_RNDN) else {
            preconditionFailure("mpfr_get_str failed")
        }
        defer { mpfr_free_str(chars) }
        let digits = Array(String(cString: chars).utf8).map { $0 - UInt8(ascii: "0") }
        return decimalText(negative: false, digits: digits, exponent: x - digits.count, plainIntegerDigits: 6)
    }

    /// Digits after the point of the centre of a frame at `zoom`: the zoom's digits before the
    /// point (0 below 1) + `centerDigitsPastZoom`.
    public static func fractionDigits(zoom: DeepNumber) -> Int {
        max(0, zoom.significand.count + zoom.exponent) + centerDigitsPastZoom
    }

    /// One centre coordinate of frame k of n (0 <= k < n), from `from` to `to`, in a frame whose
    /// zoom is `zoom`. The ends must be coordinates of the plane glint draws (within ±1e9).
    public static func coordinate(from: DeepNumber, to: DeepNumber, frame k: Int, of n: Int, zoom: DeepNumber) -> String {
        if n <= 1 || k <= 0 { return from.text }
        if k >= n - 1 { return to.text }
        let f = fractionDigits(zoom: zoom)
        let guardDigits = 20
        // (from × (n−1−k) + to × k) × 10^(f + guard), exactly but for the ends' cut.
        let a = Signed(from, scale: f + guardDigits).times(n - 1 - k)
        let b = Signed(to, scale: f + guardDigits).times(k)
        let sum = a.plus(b)
        // ÷ (n − 1), rounded down in magnitude; then ÷ 10^guard, rounded half away from zero in
        // magnitude. The remainder of the first division is below one unit of the last guard
        // digit, so it never decides the second rounding: up exactly when the guard digits are
        // at least 5000...0.
        var q = sum.magnitude.dividedRoundingDown(by: n - 1)
        let up = q.count > guardDigits - 1 && q[guardDigits - 1] >= 5
        q = Array(q.dropFirst(min(guardDigits, q.count)))
        if up { q = q.plusOne() }
        let mostFirst = Array(q.reversed().drop { $0 == 0 })
        if mostFirst.isEmpty { return "0" }
        return decimalText(negative: sum.negative, digits: mostFirst, exponent: -f, plainIntegerDigits: 21)
    }

    /// ±(digits as an integer, most significant first) × 10^exponent as text that DeepNumber
    /// reads back to the same value, trailing zeros dropped: plain when it has at most
    /// `plainIntegerDigits` digits before the point and fewer than 6 zeros after it
    /// (`316.2`, `0.000125`, `-0.74678345`), else scientific (`3.162e50`, `1e-30`).
    static func decimalText(negative: Bool, digits: [UInt8], exponent: Int, plainIntegerDigits: Int) -> String {
        var d = Array(digits.drop { $0 == 0 })
        var e = exponent
        while d.last == 0 { d.removeLast(); e += 1 }
        if d.isEmpty { return "0" }
        let s = String(decoding: d.map { $0 + UInt8(ascii: "0") }, as: UTF8.self)
        let point = d.count + e   // digits before the point
        let sign = negative ? "-" : ""
        if point <= plainIntegerDigits {
            if e >= 0 { return sign + s + String(repeating: "0", count: e) }
            if point > 0 { return sign + s.prefix(point) + "." + s.dropFirst(point) }
            if point > -6 { return sign + "0." + String(repeating: "0", count: -point) + s }
        }
        return sign + s.prefix(1) + (d.count > 1 ? "." + s.dropFirst() : "") + "e" + String(point - 1)
    }
}

/// A signed integer in decimal digits, least significant first: the centre ramp's exact sums.
private struct Signed {
    var negative: Bool
    var magnitude: [UInt8]

    init(negative: Bool, magnitude: [UInt8]) {
        var m = magnitude
        while m.last == 0 { m.removeLast() }
        self.negative = negative && !m.isEmpty
        self.magnitude = m
    }

    /// n × 10^scale, cut toward zero to an integer.
    init(_ n: DeepNumber, scale: Int) {
        let digits = n.significand.utf8.reversed().map { $0 - UInt8(ascii: "0") }
        let shift = n.exponent + scale
        let m = shift >= 0 ? [UInt8](repeating: 0, count: shift) + digits : Array(digits.dropFirst(min(-shift, digits.count)))
        self.init(negative: n.isNegative, magnitude: m)
    }

    /// self × m, m >= 0.
    func times(_ m: Int) -> Signed {
        var out: [UInt8] = []
        out.reserveCapacity(magnitude.count + 8)
        var carry = 0
        for d in magnitude {
            let v = Int(d) * m + carry
            out.append(UInt8(v % 10))
            carry = v / 10
        }
        while carry > 0 { out.append(UInt8(carry % 10)); carry /= 10 }
        return Signed(negative: negative, magnitude: out)
    }

    func plus(_ other: Signed) -> Signed {
        if negative == other.negative { return Signed(negative: negative, magnitude: Self.add(magnitude, other.magnitude)) }
        // Opposite signs: the larger magnitude less the smaller, with the larger's sign.
        if Self.less(magnitude, other.magnitude) {
            return Signed(negative: other.negative, magnitude: Self.subtract(other.magnitude, magnitude))
        }
        return Signed(negative: negative, magnitude: Self.subtract(magnitude, other.magnitude))
    }

    static func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var carry: UInt8 = 0
        for i in 0..<max(a.count, b.count) {
            let v = (i < a.count ? a[i] : 0) + (i < b.count ? b[i] : 0) + carry
            out.append(v % 10)
            carry = v / 10
        }
        if carry > 0 { out.append(carry) }
        return out
    }

    /// a − b for a >= b.
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var borrow = 0
        for i in 0..<a.count {
            var v = Int(a[i]) - (i < b.count ? Int(b[i]) : 0) - borrow
            borrow = v < 0 ? 1 : 0
            if v < 0 { v += 10 }
            out.append(UInt8(v))
        }
        return out
    }

    /// a < b (no leading zeros in either).
    static func less(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        if a.count != b.count { return a.count < b.count }
        for i in stride(from: a.count - 1, through: 0, by: -1) where a[i] != b[i] { return a[i] < b[i] }
        return false
    }
}

private extension Array where Element == UInt8 {
    /// ⌊self / d⌋ (digits least significant first), d >= 1.
    func dividedRoundingDown(by d: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var rest = 0
        for i in stride(from: count - 1, through: 0, by: -1) {
            let v = rest * 10 + Int(self[i])
            out[i] = UInt8(v / d)
            rest = v % d
        }
        return out
    }

    /// self + 1 (digits least significant first).
    func plusOne() -> [UInt8] {
        var out = self
        for i in 0..<out.count {
            if out[i] < 9 { out[i] += 1; return out }
            out[i] = 0
        }
        out.append(1)
        return out
    }
}
