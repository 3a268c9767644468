import CMPFR
import Foundation
import GlintCore
import GlintTestSupport
import GlintWorkloads
import Testing

/// Mandelbrot's z^n + c (`--power n`): deep views by perturbation, with and without BLA, against
/// direct MPFR iteration, and the Swift path against OpenCL on every precision.
@Suite(.serialized) struct PowerTests {
    /// The Misiurewicz point of z^n + c where z2 = z3 (the critical orbit's second point is a
    /// repelling fixed point): z2 = c^n + c = ω·c with ω^n = 1, so c^(n−1) = ω − 1; with
    /// ω = e^(2πi/n), c = (ω − 1)^(1/(n−1)) on the principal branch. Its multiplier n·z2^(n−1)
    /// has modulus n·|ω − 1| = 2n·sin(π/n) > 1. Computed here in MPFR to `digits` digits.
    static func misiurewicz(power n: Int, digits: Int) -> (re: String, im: String) {
        let bits = mpfr_prec_t(Double(digits) * 3.33) + 64
        let v = UnsafeMutablePointer<__mpfr_struct>.allocate(capacity: 6)
        for i in 0..<6 { mpfr_init2(v + i, bits) }
        defer { for i in 0..<6 { mpfr_clear(v + i) }; v.deallocate(); MPFRNumber.releaseThreadCaches() }
        let a = v, b = v + 1, r = v + 2, t = v + 3, re = v + 4, im = v + 5
        // ω − 1 = (cos(2π/n) − 1, sin(2π/n))
        mpfr_const_pi(t, MPFR_RNDN)
        mpfr_mul_ui(t, t, 2, MPFR_RNDN)
        mpfr_div_ui(t, t, UInt(n), MPFR_RNDN)
        mpfr_sin_cos(b, a, t, MPFR_RNDN)
        mpfr_sub_ui(a, a, 1, MPFR_RNDN)
        // modulus^(1/(n−1)) and argument/(n−1)
        mpfr_hypot(r, a, b, MPFR_RNDN)
        mpfr_rootn_ui(r, r, UInt(n - 1), MPFR_RNDN)
        mpfr_atan2(t, b, a, MPFR_RNDN)
        mpfr_div_ui(t, t, UInt(n - 1), MPFR_RNDN)
        mpfr_sin_cos(im, re, t, MPFR_RNDN)
        mpfr_mul(re, re, r, MPFR_RNDN)
        mpfr_mul(im, im, r, MPFR_RNDN)
        func text(_ x: UnsafeMutablePointer<__mpfr_struct>) -> String {
            var e: mpfr_exp_t = 0
            guard let s = mpfr_get_str(nil, &e, 10, digits, x, MPFR_RNDN) else { return "0" }
            defer { mpfr_free_str(s) }
            var m = String(cString: s)
            let negative = m.hasPrefix("-")
            if negative { m.removeFirst() }
            return (negative ? "-" : "") + "0." + m + "e\(e)"
        }
        return (text(re), text(im))
    }

    /// Perturbation's counts of a view centred on `misiurewicz(power:)` against direct iteration.
    func compareWithDirect(power n: Int, zoom: String, digits: Int, maxIterations: Int, bla: Bool) async throws -> DirectComparison {
        let (re, im) = Self.misiurewicz(power: n, digits: digits)
        let (w, h) = (16, 12)
        let orbit = try ReferenceOrbit(centerRe: DeepNumber(parsing: re), centerIm: DeepNumber(parsing: im),
                                       zoom: DeepNumber(parsing: zoom), height: h, bailout: 2, maxIterations: maxIterations,
                                       power: n)
        #expect(orbit.power == n)
        let table = bla ? BLATable(orbit: orbit, dcMax: PerturbationCPU.dcMax(orbit: orbit, width: w, height: h)) : nil
        if bla { #expect((table?.levels ?? 0) > 3, "power \(n) at \(zoom): the table has levels") }
        var counts = [UInt32](repeating: 0, count: w * h), mags = [Float](repeating: 0, count: w * h)
        counts.withUnsafeMutableBufferPointer { c in
            mags.withUnsafeMutableBufferPointer { m in
                for sy in 0..<h {
                    PerturbationCPU.row(orbit: orbit, table: table, width: w, height: h, supersampling: 1, sy: sy,
                                        counts: c.baseAddress! + sy * w, mags: m.baseAddress! + sy * w)
                }
            }
        }
        let direct = DirectMPFRFormula(formula: .mandelbrot, centerRe: re, centerIm: im, precision: orbit.precisionBits,
                                       bailout2: Double(Float(4)), maxIterations: maxIterations, power: n)
        let c = await DirectComparison(width: w, height: h, supersampling: 1,
                                       spacing: (orbit.spacingMantissa, orbit.spacingExponent), maxIterations: maxIterations,
                                       bailout: 2, gotCounts: counts, gotMags: mags) { direct.escape(dRe: $0, dIm: $1, exponent: $2) }
        let line = "power \(n) at \(zoom)\(bla ? "" : " without BLA"): \(c.summary)"
        print(line)
        c.check(line)
        #expect(c.distinctCounts >= 8, "\(line): the view has structure")
        #expect(c.interior == 0, "\(line): a Misiurewicz point's neighbourhood escapes")
        return c
    }

    @Test(arguments: [3, 5, 8])
    func perturbationAgainstDirectAt1e100(_ n: Int) async throws {
        _ = try await compareWithDirect(power: n, zoom: "1e100", digits: 130, maxIterations: 4000, bla: true)
    }

    @Test func withoutBLAAndBeyondDouble() async throws {
        _ = try await compareWithDirect(power: 3, zoom: "1e100", digits: 130, maxIterations: 4000, bla: false)
        // Deltas near 2^-3300: the tiny phase and its table steps.
        _ = try await compareWithDirect(power: 3, zoom: "1e1000", digits: 1030, maxIterations: 6000, bla: true)
    }

    /// The Swift path and OpenCL give the same counts for every power, on each precision.
    @Test(arguments: [Precision.float, .double, .perturbation])
    func swiftAndOpenCLAgree(_ precision: Precision) async throws {
        let cl = try openCL()
        for n in 3...FractalJob.maxPower {
            var job = FractalJob(formula: .mandelbrot)
            (job.width, job.height, job.power, job.precision, job.smooth) = (48, 32, n, precision, true)
            if precision == .perturbation {
                let (re, im) = Self.misiurewicz(power: n, digits: 60)
                job.exactCenter = DeepComplex(re: try DeepNumber(parsing: re), im: try DeepNumber(parsing: im))
                job.exactZoom = try DeepNumber(parsing: "1e40")
                job.maxIterations = 3000
            } else {
                (job.centerRe, job.centerIm, job.zoom) = (0, 0, 0.8)
                job.maxIterations = 200
            }
            for bla in precision == .perturbation ? [true, false] : [true] {
                job.bla = bla
                let a = try await FractalRenderer.render(job, on: .cpu, outputs: .init(counts: true))
                let b = try await FractalRenderer.render(job, on: cl, outputs: .init(counts: true))
                let counts = try #require(a.counts)
                #expect(counts == b.counts, "power \(n), \(precision.rawValue), bla \(bla): counts differ")
                #expect(Set(counts).count > 10, "power \(n), \(precision.rawValue): the view has structure")
                let d = zip(a.image.pixels, b.image.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
                #expect(d <= 1, "power \(n), \(precision.rawValue): colours within 1 level (got \(d))")
            }
        }
    }

    /// Power 2 is the quadratic set (the default); powers above 8 and power on other formulas are
    /// refused in one line.
    @Test func validation() throws {
        var job = FractalJob(formula: .mandelbrot)
        job.power = 9
        #expect(throws: GlintError.self) { try job.validate() }
        job.power = 3
        try job.validate()
        job.formula = .julia
        #expect { try job.validate() } throws: { ($0 as? GlintError)?.message.contains("mandelbrot only") == true }
    }
}
