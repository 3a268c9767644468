import CMPFR
import GlintCore

/// One GNU MPFR number (an `mpfr_t`): a binary floating-point value with `precision` bits of
/// significand, every operation correctly rounded to nearest (MPFR_RNDN). It owns its storage
/// and frees it in deinit.
///
/// Arithmetic comes in two forms: `setSum(a, b)` and friends overwrite `self` (no allocation: the
/// reference orbit's loop), and `adding(_:)` and friends return a new number at `self`'s precision.
///
/// Sendable: `@unchecked` because the C struct behind it is plain memory that MPFR mutates in
/// place. It is safe as used here: a number is either never changed after construction (shared
/// freely, MPFR only reads it) or changed only by the one task that created it (the reference
/// orbit's working values). Do not mutate one number from two tasks at once. MPFR itself is
/// thread-safe (Debian builds it with thread-local caches and flags).
public final class MPFRNumber: @unchecked Sendable {
    /// The mpfr_t. Valid for the number's lifetime; pass it to MPFR functions directly.
    public let raw: UnsafeMutablePointer<__mpfr_struct>

    /// Bits of significand.
    public var precision: Int { Int(mpfr_get_prec(raw)) }

    /// MPFR's precision range (2 bits up to MPFR_PREC_MAX).
    public static let precisionRange = 2...Int(Int32.max)

    /// Zero, at `precision` bits.
    public init(precision: Int) {
        precondition(Self.precisionRange.contains(precision), "MPFR precision \(precision) out of range")
        raw = .allocate(capacity: 1)
        mpfr_init2(raw, mpfr_prec_t(precision))
        mpfr_set_zero(raw, 1)
    }

    /// `value` rounded to `precision` bits (exact when precision >= 53).
    public convenience init(_ value: Double, precision: Int) {
        self.init(precision: precision)
        mpfr_set_d(raw, value, MPFR_RNDN)
    }

    /// `number`, correctly rounded to `precision` bits.
    public convenience init(_ number: DeepNumber, precision: Int) {
        self.init(precision: precision)
        let status = mpfr_set_str(raw, number.mpfrText, 10, MPFR_RNDN)
        Self.releaseThreadCaches()
        // DeepNumber only ever hands over "[-]DIGITSeEXP" or "0", which MPFR always reads.
        precondition(status == 0, "mpfr_set_str refused \(number.mpfrText)")
    }

    /// Decimal `text` (see DeepNumber for the accepted form), correctly rounded to `precision`
    /// bits; a GlintError naming `field` and the text if it is not a plain decimal number.
    public convenience init(parsing text: String, precision: Int, field: String? = nil) throws(GlintError) {
        self.init(try DeepNumber(parsing: text, field: field), precision: precision)
    }

    deinit {
        mpfr_clear(raw)
        raw.deallocate()
    }

    /// Frees the calling thread's MPFR caches: the constants that functions such as log10 and
    /// exp10 compute once (log 2, ...) and the pool of integers that reading and writing
    /// decimals draws on. MPFR keeps them per thread and only that thread can free them; Swift's
    /// tasks run on worker threads that exit when idle, which would take the only pointers to
    /// them along (a leak per thread). Called right after each such operation, on its thread;
    /// they are rebuilt when next needed, in microseconds at the precisions used here. The
    /// reference orbit's loop (multiplications and additions) fills neither.
    public static func releaseThreadCaches() {
        mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE)
    }

    // MARK: in place (self = ...)

    /// self = value (rounded to self's precision).
    public func set(_ value: MPFRNumber) { mpfr_set(raw, value.raw, MPFR_RNDN) }
    /// self = value (rounded to self's precision).
    public func set(_ value: Double) { mpfr_set_d(raw, value, MPFR_RNDN) }
    /// self = a + b
    public func setSum(_ a: MPFRNumber, _ b: MPFRNumber) { mpfr_add(raw, a.raw, b.raw, MPFR_RNDN) }
    /// self = a + b
    public func setSum(_ a: MPFRNumber, _ b: Double) { mpfr_add_d(raw, a.raw, b, MPFR_RNDN) }
    /// self = a - b
    public func setDifference(_ a: MPFRNumber, _ b: MPFRNumber) { mpfr_sub(raw, a.raw, b.raw, MPFR_RNDN) }
    /// self = a × b
    public func setProduct(_ a: MPFRNumber, _ b: MPFRNumber) { mpfr_mul(raw, a.raw, b.raw, MPFR_RNDN) }
    /// self = a × k
    public func setProduct(_ a: MPFRNumber, _ k: Int) { mpfr_mul_si(raw, a.raw, k, MPFR_RNDN) }
    /// self = a²
    public func setSquare(_ a: MPFRNumber) { mpfr_sqr(raw, a.raw, MPFR_RNDN) }
    /// self = a × 2^k (exact unless it leaves MPFR's exponent range)
    public func setScaled(_ a: MPFRNumber, byPowerOfTwo k: Int) { mpfr_mul_2si(raw, a.raw, k, MPFR_RNDN) }
    /// self = n / a
    public func setQuotient(_ n: UInt, _ a: MPFRNumber) { mpfr_ui_div(raw, n, a.raw, MPFR_RNDN) }

    // MARK: new values (at self's precision)

    public func adding(_ b: MPFRNumber) -> MPFRNumber { result { $0.setSum(self, b) } }
    public func adding(_ b: Double) -> MPFRNumber { result { $0.setSum(self, b) } }
    public func subtracting(_ b: MPFRNumber) -> MPFRNumber { result { $0.setDifference(self, b) } }
    public func multiplied(by b: MPFRNumber) -> MPFRNumber { result { $0.setProduct(self, b) } }
    public func squared() -> MPFRNumber { result { $0.setSquare(self) } }

    private func result(_ body: (MPFRNumber) -> Void) -> MPFRNumber {
        let r = MPFRNumber(precision: precision)
        body(r)
        return r
    }

    // MARK: reading

    /// The nearest Double (MPFR_RNDN): ±infinity past Double's range, 0 or a subnormal below it.
    public func toDouble() -> Double { mpfr_get_d(raw, MPFR_RNDN) }

    /// self = mantissa × 2^exponent with 0.5 <= |mantissa| < 1 (mantissa rounded to nearest), for
    /// values far outside Double's range; (0, 0) for zero. NaN or infinity: (that value, 0).
    public func toDoubleExponent() -> (mantissa: Double, exponent: Int) {
        var e = 0
        let m = mpfr_get_d_2exp(&e, raw, MPFR_RNDN)
        return (m, e)
    }

    /// -1, 0 or 1 (0 also for NaN).
    public var sign: Int { Int(mpfr_sgn(raw)) }

    public var isFinite: Bool { mpfr_number_p(raw) != 0 }

    /// Compares with a Double: negative, zero or positive as self <, ==, > value (0 if either is NaN).
    public func compare(_ value: Double) -> Int { Int(mpfr_cmp_d(raw, value)) }

    /// Scientific decimal text with `digits` significant digits (0: as many as the precision needs),
    /// e.g. "-7.4364388703715870475e-1".
    public func decimalString(digits: Int = 0) -> String {
        if mpfr_nan_p(raw) != 0 { return "nan" }
        if mpfr_inf_p(raw) != 0 { return sign < 0 ? "-inf" : "inf" }
        if mpfr_zero_p(raw) != 0 { return "0" }
        var e: mpfr_exp_t = 0
        defer { Self.releaseThreadCaches() }
        guard let p = mpfr_get_str(nil, &e, 10, max(0, digits), raw, MPFR_RNDN) else { return "nan" }
        defer { mpfr_free_str(p) }
        // MPFR gives the digits D1D2... (after a "-" if negative) and e, the value being 0.D1D2... × 10^e.
        var s = String(cString: p)
        var prefix = ""
        if s.hasPrefix("-") { prefix = "-"; s.removeFirst() }
        let first = s.removeFirst()
        return prefix + String(first) + (s.isEmpty ? "" : "." + s) + "e" + String(e - 1)
    }
}
