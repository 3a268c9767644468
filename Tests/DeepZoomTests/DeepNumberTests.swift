import CMPFR
import Foundation
import GlintCore
import GlintWorkloads
import Testing

/// Decimal text of any length, MPFR values, precisions and the reference orbit.
@Suite struct DeepNumberTests {
    /// Text that is not a plain decimal number, and what its one-line error must say.
    static let garbage: [(text: String, why: String)] = [
        ("1e", "no digits in the exponent"),
        ("abc", "unexpected \"a\" at character 1"),
        ("--5", "unexpected \"-\" at character 2"),
        ("", "empty"),
        (".", "no digits"),
        ("+", "no digits"),
        ("e5", "no digits"),
        ("1.2.3", "unexpected \".\" at character 4"),
        (" 1", "unexpected \" \" at character 1"),
        ("1 ", "unexpected \" \" at character 2"),
        ("inf", "unexpected \"i\" at character 1"),
        ("nan", "unexpected \"n\" at character 1"),
        ("0x10", "unexpected \"x\" at character 2"),
        ("1e+-3", "no digits in the exponent"),
        ("1_000", "unexpected \"_\" at character 2"),
        ("1\n2", "unexpected \"\\n\" at character 2"),
        ("1e999999999999999999999", "exponent beyond"),
        ("π", "unexpected \"π\" at character 1"),
    ]

    @Test(arguments: garbage)
    func rejectsGarbageWithOneLineErrors(_ text: String, _ why: String) {
        let error = #expect(throws: (any Error).self, "\(text.debugDescription)") {
            try DeepNumber(parsing: text, field: "zoom")
        }
        guard let error else { return }
        let message = (error as? GlintError)?.message ?? "\(error)"
        #expect(message.hasPrefix("zoom must be a plain decimal number"), "\(message)")
        #expect(message.contains(String(reflecting: text)) || text.count > 40, "\(message)")
        #expect(message.contains(why), "\(message) should say \(why)")
        #expect(!message.contains("\n"), "one line: \(message)")
    }

    @Test func cutsLongTextsAndNamesTheField() {
        // A long text is cut in the message.
        let long = String(repeating: "1", count: 100) + "x"
        let error = #expect(throws: (any Error).self) { try DeepNumber(parsing: long) }
        if let error {
            let message = (error as? GlintError)?.message ?? ""
            #expect(message.hasPrefix("number must be"), "\(message)")
            #expect(message.contains("...\""), "\(message)")
            #expect(message.count < 160, "\(message)")
        }
        let mpfrError = #expect(throws: (any Error).self) {
            try MPFRNumber(parsing: "--5", precision: 64, field: "center re")
        }
        if let mpfrError {
            #expect("\(mpfrError)".hasPrefix("center re must be a plain decimal number"), "\(mpfrError)")
        }
    }

    /// Plain decimal text, and its reading: the sign, the significant digits and the power of ten
    /// of the last of them (zero has no significant digits).
    static let plainDecimals: [(text: String, negative: Bool, significand: String, exponent: Int)] = [
        ("1e1000", false, "1", 1000),
        ("-0.5", true, "5", -1),
        ("+3.2e-4", false, "32", -5),
        ("3.2E+4", false, "32", 3),
        (".5", false, "5", -1),
        ("5.", false, "5", 0),
        ("00120.0300", false, "12003", -2),
        ("-0", true, "", 0),
        ("0.000e7", false, "", 0),
        ("-0.743643887037158704752191506114774", true, "743643887037158704752191506114774", -33),
    ]

    @Test(arguments: plainDecimals)
    func acceptsPlainDecimals(_ text: String, _ negative: Bool, _ significand: String, _ exponent: Int) throws {
        let n = try DeepNumber(parsing: text)
        #expect(n.isNegative == negative, "\(text)")
        #expect(n.significand == significand, "\(text)")
        #expect(n.exponent == exponent, "\(text)")
    }

    @Test func acceptsTwoHundredDigits() throws {
        // 200 significant digits, read by MPFR at 700 bits: its 200-digit decimal rendering is the text.
        let digits = (0..<200).map { i in String((i * 7 + 3) % 10) }.joined()
        let text = "-1." + digits.dropFirst() + "e-7"
        let n = try DeepNumber(parsing: text)
        #expect(n.significand.count == 200)
        let v = try MPFRNumber(parsing: text, precision: 700)
        #expect(v.decimalString(digits: 200) == text)
        #expect(v.toDouble() == Double(text.prefix(25) + "e-7"))
    }

    @Test func mpfrNumber() throws {
        let big = try MPFRNumber(parsing: "1e1000", precision: 64)
        #expect(big.toDouble() == .infinity)
        let (m, e) = big.toDoubleExponent()
        // 1e1000 = m × 2^e: log2(1e1000) = 3321.93, so e = 3322 and m = 2^(3321.93 - 3322).
        #expect(e == 3322)
        let expectedM = 0.5 * pow(2.0, 0.9280948873623478703194294893901758648313930)
        #expect(abs(m - expectedM) <= 1e-15, "m \(m) vs \(expectedM)")
        let tiny = try MPFRNumber(parsing: "-3e-1000", precision: 64)
        #expect(tiny.toDouble() == -0.0)
        let (tm, te) = tiny.toDoubleExponent()
        #expect(tm < -0.5)
        #expect(te == -3320)
        #expect(MPFRNumber(precision: 80).toDoubleExponent().mantissa == 0)

        let a = try MPFRNumber(parsing: "1.5", precision: 200)
        let b = MPFRNumber(0.25, precision: 200)
        #expect(a.adding(b).toDouble() == 1.75)
        #expect(a.subtracting(b).toDouble() == 1.25)
        #expect(a.multiplied(by: b).toDouble() == 0.375)
        #expect(a.squared().toDouble() == 2.25)
        #expect(a.adding(-2).toDouble() == -0.5)
        #expect(a.adding(-2).sign == -1)
        #expect(a.precision == 200)
        // Beyond a Double's 53 bits: (1 + 2^-100)² - 1 = 2^-99 + 2^-200, exact at 256 bits.
        let x = MPFRNumber(1, precision: 256)
        let eps = MPFRNumber(precision: 256)
        eps.setScaled(MPFRNumber(1, precision: 256), byPowerOfTwo: -100)
        x.setSum(x, eps)
        let y = x.squared().adding(-1)
        #expect(y.toDoubleExponent().exponent == -98)
        #expect(y.subtracting(y.squared()).compare(0) == 1)
        #expect(MPFRNumber(0.1, precision: 53).decimalString(digits: 20) == "1.0000000000000000555e-1")
        #expect(MPFRNumber(0, precision: 53).decimalString() == "0")
    }

    static func bits(_ zoom: String) throws -> Int { ReferenceOrbit.precisionBits(zoom: try DeepNumber(parsing: zoom)) }

    /// Zooms and the precision of their reference orbits, in bits.
    static let zoomPrecisions: [(zoom: String, bits: Int)] = [
        ("1", 64),
        ("0.001", 64),
        ("1e20", 66 + 64),
        ("1e100", 332 + 64),
        ("1e300", 996 + 64),
        ("1e1000", 3321 + 64),
        ("2.5e1000000", 3321929 + 64),
        ("123456789012345678901234567890", 96 + 64),
    ]

    @Test(arguments: zoomPrecisions)
    func precisionFromZoomDigits(_ zoom: String, _ bits: Int) throws {
        #expect(try Self.bits(zoom) == bits, "zoom \(zoom)")
    }

    @Test(arguments: ["1e20", "1e100", "1e300", "1e1000", "7.77e77", "123456789012345678901234567890"])
    func precisionAgreesWithDirectMPFR(_ zoom: String) throws {
        #expect(try Self.bits(zoom) == DirectMPFR.precision(zoom: zoom), "\(zoom)")
    }

    @Test func referenceOrbit() throws {
        // Interior centre: the full length, maxIterations + 2 points.
        let inside = try ReferenceOrbit(centerRe: "-0.1", centerIm: "0.1", zoom: "1e40", height: 100, bailout: 2,
                                        maxIterations: 50)
        #expect(inside.count == 52)
        #expect(!inside.escaped)
        #expect(inside.precisionBits == 132 + 64)
        #expect(inside.re[0] == 0)
        #expect(inside.im[0] == 0)
        #expect(inside.re[1] == -0.1)
        #expect(inside.im[1] == 0.1)
        #expect(abs(inside.re[2] - (0.01 - 0.01 - 0.1)) <= 1e-17, "re[2] \(inside.re[2])")
        #expect(abs(inside.im[2] - (2 * -0.1 * 0.1 + 0.1)) <= 1e-17, "im[2] \(inside.im[2])")
        #expect(abs(inside.pixelSpacing - 2e-42) <= 2e-42 * 1e-15, "pixel spacing \(inside.pixelSpacing)")

        // An escaping centre stops at its first point beyond max(R², 4), which is kept.
        let outside = try ReferenceOrbit(centerRe: "0.5", centerIm: "0.1", zoom: "1e40", height: 100, bailout: 2,
                                         maxIterations: 1000)
        #expect(outside.escaped)
        let last = outside.count - 1
        let lastMag = outside.re[last] * outside.re[last] + outside.im[last] * outside.im[last]
        let beforeMag = outside.re[last - 1] * outside.re[last - 1] + outside.im[last - 1] * outside.im[last - 1]
        #expect(lastMag > 4, "|z|² at the last point: \(lastMag)")
        #expect(beforeMag <= 4, "|z|² at the point before: \(beforeMag)")
        // A larger bailout: a longer orbit.
        let outside10 = try ReferenceOrbit(centerRe: "0.5", centerIm: "0.1", zoom: "1e40", height: 100, bailout: 10,
                                           maxIterations: 1000)
        #expect(outside10.count > outside.count)

        // C itself escapes: 2 points, and a sample there still gets the direct count (0).
        let far = try ReferenceOrbit(centerRe: "3", centerIm: "0", zoom: "1e30", height: 10, bailout: 2, maxIterations: 10)
        #expect(far.count == 2)
        #expect(PerturbationCPU.escape(orbit: far, dcRe: 0, dcIm: 0).count == 0)
        #expect(PerturbationCPU.escape(orbit: far, dcRe: 0, dcIm: 0).mag == 144)
        // R = 3: the orbit of 1.5 is 0, 1.5, 3.75 (|3.75|² > 9); the sample at c = 1 (1, 2, 5) outlives
        // it by one step, rebasing at the orbit's end, and escapes after 1 step.
        let nearR3 = try ReferenceOrbit(centerRe: "1.5", centerIm: "0", zoom: "1e30", height: 10, bailout: 3, maxIterations: 10)
        #expect(nearR3.count == 3)
        #expect(PerturbationCPU.escape(orbit: nearR3, dcRe: -0.5, dcIm: 0).count == 1)
        #expect(PerturbationCPU.escape(orbit: nearR3, dcRe: -0.5, dcIm: 0).mag == 25)

        // Errors name the field.
        let zeroZoom = #expect(throws: (any Error).self) {
            try ReferenceOrbit(centerRe: "0", centerIm: "0", zoom: "0", height: 10, bailout: 2, maxIterations: 10)
        }
        if let zeroZoom {
            #expect("\(zeroZoom)".hasPrefix("zoom must be a positive number"), "\(zeroZoom)")
        }
        let badIm = #expect(throws: (any Error).self) {
            try ReferenceOrbit(centerRe: "0", centerIm: "1i", zoom: "1", height: 10, bailout: 2, maxIterations: 10)
        }
        if let badIm {
            #expect("\(badIm)".hasPrefix("center im must be a plain decimal number"), "\(badIm)")
        }
        #expect(throws: (any Error).self) {
            try ReferenceOrbit(centerRe: "0", centerIm: "0", zoom: "-1e5", height: 10, bailout: 2, maxIterations: 10)
        }
        #expect(throws: (any Error).self) {
            try ReferenceOrbit(centerRe: "0", centerIm: "0", zoom: "1", height: 10, bailout: 1, maxIterations: 10)
        }
        #expect(throws: (any Error).self) {
            try ReferenceOrbit(centerRe: "0", centerIm: "0", zoom: "1", height: 10, bailout: 2, maxIterations: 0)
        }
    }

    @Test func deepViewLimits() throws {
        // Any depth up to 2^maxLog2Zoom (about 1e1000000), supersampled or not; past it, refused
        // on the zoom's digits before any MPFR work.
        for (zoom, ss) in [("1e300", 2), ("1e1000", 1), ("1e10000", 4), ("3.2e999999", 1)] {
            try DeepView(centerRe: "0", centerIm: "0", zoom: zoom, width: 16, height: 12, supersampling: ss,
                         maxIterations: 10).validate()
        }
        let tooDeep = try DeepView(centerRe: "0", centerIm: "0", zoom: "1e1000001", width: 16, height: 12, maxIterations: 10)
        let error = #expect(throws: (any Error).self) { try tooDeep.validate() }
        if let error { #expect("\(error)".contains("beyond the deepest zoom"), "\(error)") }
        let absurd = try DeepView(centerRe: "0", centerIm: "0", zoom: "1e99999999", width: 16, height: 12, maxIterations: 10)
        #expect(throws: (any Error).self) { try absurd.validate() }
        let noRows = try DeepView(centerRe: "0", centerIm: "0", zoom: "1", width: 16, height: 0, maxIterations: 10)
        #expect(throws: (any Error).self) { try noRows.validate() }
    }

    /// The sample deltas are FractalCPU.View.re/im less the centre, bit for bit.
    @Test(arguments: [(0, 0, 1), (3, 5, 1), (17, 2, 3), (41, 20, 3)])
    func sampleDelta(_ sx: Int, _ sy: Int, _ ss: Int) {
        let s = 2.0 / (1e5 * 7)
        let d = PerturbationCPU.sampleDelta(sx: sx, sy: sy, width: 15, height: 7, supersampling: ss, spacing: s)
        let offRe = ((Double(sx) + 0.5) / Double(ss) - 7.5) * s
        let offIm = ((Double(sy) + 0.5) / Double(ss) - 3.5) * s
        #expect(d.re == 0 + offRe)
        #expect(d.im == 0 - offIm)
    }

    /// The Misiurewicz centre of PerturbationTests: z5(c) - z4(c) vanishes to its 345 digits.
    @Test func misiurewiczCentreIsPrePeriodic() {
        let bits = 1300
        let v = UnsafeMutablePointer<__mpfr_struct>.allocate(capacity: 8)
        for i in 0..<8 { mpfr_init2(v + i, mpfr_prec_t(bits)) }
        defer { for i in 0..<8 { mpfr_clear(v + i) }; v.deallocate(); MPFRNumber.releaseThreadCaches() }
        let cr = v, ci = v + 1, x = v + 2, y = v + 3, t = v + 4, x4 = v + 5, y4 = v + 6, d = v + 7
        #expect(mpfr_set_str(cr, PerturbationTests.misiurewiczRe, 10, MPFR_RNDN) == 0)
        #expect(mpfr_set_str(ci, PerturbationTests.misiurewiczIm, 10, MPFR_RNDN) == 0)
        mpfr_set_zero(x, 1); mpfr_set_zero(y, 1)
        for n in 1...5 {
            mpfr_sqr(t, x, MPFR_RNDN); mpfr_sqr(d, y, MPFR_RNDN); mpfr_sub(t, t, d, MPFR_RNDN)  // x² - y²
            mpfr_mul(y, x, y, MPFR_RNDN); mpfr_mul_2ui(y, y, 1, MPFR_RNDN); mpfr_add(y, y, ci, MPFR_RNDN)
            mpfr_add(x, t, cr, MPFR_RNDN)
            if n == 4 { mpfr_set(x4, x, MPFR_RNDN); mpfr_set(y4, y, MPFR_RNDN) }
        }
        mpfr_sub(x, x, x4, MPFR_RNDN); mpfr_sub(y, y, y4, MPFR_RNDN)
        var e = 0
        _ = mpfr_get_d_2exp(&e, x, MPFR_RNDN)
        #expect(e < -1120, "|Re(z5 - z4)| under 2^-1120 ≈ 1e-337")
        _ = mpfr_get_d_2exp(&e, y, MPFR_RNDN)
        #expect(e < -1120, "|Im(z5 - z4)| under 2^-1120 ≈ 1e-337")
        // ... and z4 itself is not 0 (so c is not the centre of a hyperbolic component).
        let (a, b) = (mpfr_get_d(x4, MPFR_RNDN), mpfr_get_d(y4, MPFR_RNDN))
        #expect(a * a + b * b > 0.01, "|z4|² \(a * a + b * b)")
    }
}
