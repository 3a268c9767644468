import CMPFR
import Foundation
import GlintCore
import GlintWorkloads
import Testing

/// Mandelbrot's z^n + c (`--power n`): deep views by perturbation, with and without BLA, against
/// direct MPFR iteration (the Swift path against OpenCL: FractalTests' PowerParityTests).
@Suite(.serialized) struct PowerTests {
    /// Perturbation's counts of a view centred on DeepLocations' Misiurewicz point of power n
    /// against direct iteration.
    func compareWithDirect(power n: Int, zoom: String, maxIterations: Int, bla: Bool) async throws -> DirectComparison {
        let (re, im) = DeepLocations.multibrotMisiurewicz[n - 3]
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
        _ = try await compareWithDirect(power: n, zoom: "1e100", maxIterations: 4000, bla: true)
    }

    @Test func withoutBLAAndBeyondDouble() async throws {
        _ = try await compareWithDirect(power: 3, zoom: "1e100", maxIterations: 4000, bla: false)
        // Deltas near 2^-3300: the tiny phase and its table steps.
        _ = try await compareWithDirect(power: 3, zoom: "1e1000", maxIterations: 6000, bla: true)
    }

    /// DeepLocations' multibrot points are what they say: in MPFR at 3,700 bits, z3 = z2 to
    /// 1000 digits (z1 = c, z2 = c^n + c, z3 = z2^n + c), z2 != z1, and the fixed point repels.
    @Test(arguments: 3...8)
    func locationsHoldThePoints(_ n: Int) throws {
        let point = DeepLocations.multibrotMisiurewicz[n - 3]
        let v = UnsafeMutablePointer<__mpfr_struct>.allocate(capacity: 10)
        for i in 0..<10 { mpfr_init2(v + i, 3700) }
        defer { for i in 0..<10 { mpfr_clear(v + i) }; v.deallocate(); MPFRNumber.releaseThreadCaches() }
        let cr = v, ci = v + 1, x = v + 2, y = v + 3, pr = v + 4, pi = v + 5, t = v + 6, m = v + 7
        let x2 = v + 8, y2 = v + 9
        #expect(mpfr_set_str(cr, point.re, 10, MPFR_RNDN) == 0 && mpfr_set_str(ci, point.im, 10, MPFR_RNDN) == 0)
        /// z ← z^n + c, z^n as n − 1 complex products.
        func step() {
            mpfr_set(pr, x, MPFR_RNDN)
            mpfr_set(pi, y, MPFR_RNDN)
            for _ in 1..<n {
                mpfr_mul(t, pr, y, MPFR_RNDN)
                mpfr_mul(pr, pr, x, MPFR_RNDN)
                mpfr_mul(m, pi, y, MPFR_RNDN)
                mpfr_sub(pr, pr, m, MPFR_RNDN)
                mpfr_mul(pi, pi, x, MPFR_RNDN)
                mpfr_add(pi, pi, t, MPFR_RNDN)
            }
            mpfr_add(x, pr, cr, MPFR_RNDN)
            mpfr_add(y, pi, ci, MPFR_RNDN)
        }
        mpfr_set(x, cr, MPFR_RNDN)
        mpfr_set(y, ci, MPFR_RNDN)
        step()   // z2
        mpfr_set(x2, x, MPFR_RNDN)
        mpfr_set(y2, y, MPFR_RNDN)
        let z2 = (mpfr_get_d(x, MPFR_RNDN), mpfr_get_d(y, MPFR_RNDN))
        step()   // z3
        mpfr_sub(x, x, x2, MPFR_RNDN)
        mpfr_sub(y, y, y2, MPFR_RNDN)
        #expect(mpfr_zero_p(x) != 0 || mpfr_get_exp(x) < -3300, "power \(n): z3 - z2 re")
        #expect(mpfr_zero_p(y) != 0 || mpfr_get_exp(y) < -3300, "power \(n): z3 - z2 im")
        let c = (mpfr_get_d(cr, MPFR_RNDN), mpfr_get_d(ci, MPFR_RNDN))
        #expect(((z2.0 - c.0) * (z2.0 - c.0) + (z2.1 - c.1) * (z2.1 - c.1)).squareRoot() > 0.1, "z2 is not z1")
        // |n z2^(n−1)| = n |z2|^(n−1) > 1
        #expect(Double(n) * pow((z2.0 * z2.0 + z2.1 * z2.1).squareRoot(), Double(n - 1)) > 1)
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
