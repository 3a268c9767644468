import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// Deep zoom of Julia sets and the Burning Ship by perturbation, on the Swift CPU path: every
/// sample starts at its pixel z0 = C + d·2^E and is stepped as a delta from FormulaOrbit's main
/// orbit of the centre C, rebasing onto its critical orbit from 0, by PerturbationEscape with
/// JuliaDelta or BurningShipDelta. The method: docs/FRACTALS.md#how-it-works.
///
/// Accuracy: 53 bits relative to the delta, about plain Double iteration once a sample has left
/// the main orbit. Where the dynamics after that are nearly chaotic (the Burning Ship's streaked
/// rigging below the armada's ships, at any zoom), counts depend on more bits than a Double
/// carries: there 5-10% of them differ from direct MPFR iteration at the reference's precision,
/// which itself differs from 100 more bits in 1-3% (plain Double iteration at shallow zooms fares
/// the same).
public enum PerturbationFormulas {
    /// log2 of the deepest zoom julia and burning-ship render by perturbation: DeepView.maxLog2Zoom.
    public static let maxLog2Zoom = DeepView.maxLog2Zoom

    /// One sample of `orbit`'s formula at offset (dRe, dIm)·2^exponent from the centre.
    public static func escape(orbit: FormulaOrbit, dRe: Double, dIm: Double, exponent: Int = 0) -> (count: UInt32, mag: Float) {
        let b2 = PerturbationCPU.bailout2(orbit.bailout)
        return orbit.re.withUnsafeBufferPointer { re in
            orbit.im.withUnsafeBufferPointer { im in
                let r = escape(PerturbationEscape.NoDerivative.self, orbit.formula, re.baseAddress!, im.baseAddress!,
                               orbit.mainCount, orbit.count, dRe, dIm, exponent, 0, b2, orbit.maxIterations)
                return (r.count, r.mag)
            }
        }
    }

    /// One sample, with the derivative when `D` says so (julia: FractalJob.validate refuses it for
    /// burning-ship); `spacing` is the pixel spacing's mantissa.
    @inline(__always)
    private static func escape<D: PerturbationEscape.DerivativeMode>(
        _: D.Type, _ formula: FractalFormula, _ re: UnsafePointer<Double>, _ im: UnsafePointer<Double>,
        _ mainCount: Int, _ orbitCount: Int, _ dRe: Double, _ dIm: Double, _ E: Int, _ spacing: Double,
        _ b2: Double, _ maxIterations: Int
    ) -> PerturbationEscape.Outcome {
        precondition(mainCount >= 2 && orbitCount >= mainCount + 2, "each reference orbit has at least 2 points")
        let orbit = PerturbationEscape.Orbit(re: re, im: im, mainStart: 0, mainLast: mainCount - 1,
                                             criticalStart: mainCount, criticalLast: orbitCount - 1)
        return formula == .julia
            ? PerturbationEscape.escape(JuliaDelta.self, D.self, orbit, nil, dRe: dRe, dIm: dIm, E: E, spacing: spacing,
                                        bailout2: b2, maxIterations: maxIterations)
            : PerturbationEscape.escape(BurningShipDelta.self, D.self, orbit, nil, dRe: dRe, dIm: dIm, E: E, spacing: spacing,
                                        bailout2: b2, maxIterations: maxIterations)
    }

    /// One sample row `sy` of a view: `width × supersampling` counts and mags, and with `u` (julia's
    /// distance and slope colouring) z/d at escape, 2 floats a sample.
    public static func row(orbit: FormulaOrbit, width: Int, height: Int, supersampling: Int, sy: Int,
                           counts: UnsafeMutablePointer<UInt32>, mags: UnsafeMutablePointer<Float>,
                           u: UnsafeMutablePointer<Float>? = nil) {
        let b2 = PerturbationCPU.bailout2(orbit.bailout)
        let sw = width * supersampling
        let E = orbit.spacingExponent
        orbit.re.withUnsafeBufferPointer { re in
            orbit.im.withUnsafeBufferPointer { im in
                func samples<D: PerturbationEscape.DerivativeMode>(_: D.Type) {
                    for sx in 0..<sw {
                        let d = PerturbationCPU.sampleDelta(sx: sx, sy: sy, width: width, height: height,
                                                            supersampling: supersampling, spacing: orbit.spacingMantissa)
                        let r = escape(D.self, orbit.formula, re.baseAddress!, im.baseAddress!, orbit.mainCount, orbit.count,
                                       d.re, d.im, E, orbit.spacingMantissa, b2, orbit.maxIterations)
                        counts[sx] = r.count
                        mags[sx] = r.mag
                        if let u { (u[2 * sx], u[2 * sx + 1]) = (r.ur, r.ui) }
                    }
                }
                if u != nil { samples(PerturbationEscape.WithDerivative.self) } else {
                    samples(PerturbationEscape.NoDerivative.self)
                }
            }
        }
    }

    /// The checks FractalJob.validate adds for a julia or burning-ship perturbation render (after
    /// the deep view's own): a finite c, and a zoom within `maxLog2Zoom`. One clear line for the
    /// first that fails.
    public static func validate(_ job: FractalJob) throws(GlintError) {
        guard job.formula == .julia || job.formula == .burningShip else { return }
        if job.formula == .julia {
            guard job.cRe.isFinite, job.cIm.isFinite else { throw GlintError(field: "c", "must be finite") }
        }
        let zoom = job.exactZoom
        // On the zoom's digits, so that an absurd zoom fails before any MPFR work: the deltas'
        // exponents are 32-bit integers, and the orbits' precision grows with the depth.
        guard let l2 = zoom.log2Magnitude, l2 < Double(maxLog2Zoom) else {
            throw GlintError(field: "zoom", "\(DeepNumber.quoted(zoom.text)) is beyond the deepest zoom Glint renders (2^\(maxLog2Zoom), about 1e\(Int(Double(maxLog2Zoom) * 0.30103)))")
        }
    }
}
