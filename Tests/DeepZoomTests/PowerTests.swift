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
        let r = DirectMPFRFormula.preperiodicCheck(re: point.re, im: point.im, power: n, bits: 3700)
        #expect(r.residualExponent < -3300, "power \(n): |z3 - z2| about 2^\(r.residualExponent)")
        let z2 = r.z2
        let c = (Double(point.re.prefix(20))!, Double(point.im.prefix(20))!)
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
