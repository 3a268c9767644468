import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// Deep zoom of Julia sets and the Burning Ship by perturbation, on the Swift CPU path; the
/// OpenCL twin is Kernels/perturb_formulas.cl.
///
/// Every sample starts at its pixel z0 = C + d (C the view centre, d = `sampleDelta`, a Double)
/// and is iterated as a Double delta dz against a reference orbit (FormulaOrbit): z = Z[m] + dz.
/// - Julia (z' = z² + c, c fixed): dz' = 2·Z[m]·dz + dz², against the main orbit Z of C.
/// - Burning Ship (z' = |z² + c| per component, c the pixel = C + d): with w = z² + c before
///   the abs, its delta from the reference's S = Z[m]² + C is dw = 2·Z[m]·dz + dz² + d, and
///   dz' = |S + dw| - |S| per component, taken without cancellation from the signs of S and
///   S + dw (`foldDelta`): dw when both are >= 0, -dw when both are < 0, 2S + dw when
///   S < 0 <= S + dw, -(2S + dw) when S >= 0 > S + dw.
///
/// Rebasing (Zhuoran): when |z| < |dz| (z nearer 0 than the reference point), or the current
/// reference has no next point, the sample continues against the critical orbit W (W[0] = 0):
/// dz = z, m = W's start; later rebases go to W's start again. One pair of orbits serves every
/// sample, without glitch detection. The deltas are Doubles, so this works for sample spacings
/// down to 2^-1000 (`minimumSampleSpacing`, as PerturbationCPU); accuracy: 53 bits relative to
/// the delta, about plain Double iteration once a sample has left the main orbit. Where the
/// dynamics after that are nearly chaotic (the Burning Ship's streaked rigging below the armada's
/// ships, at any zoom), counts depend on more bits than a Double carries: there 5-10% of them
/// differ from direct MPFR iteration at the reference's precision, which itself differs from 100
/// more bits in 1-3% (plain Double iteration at shallow zooms fares the same).
///
/// Escape counts follow Glint's contract (FractalCPU.escape): z0 is the pixel; the count is the
/// number of steps with |z|² <= R² before the first with |z|² > R² (or NaN), at most
/// maxIterations; `mag` is |z|² at escape (0 if it never escapes).
public enum PerturbationFormulas {
    /// The smallest sample spacing (pixel spacing / supersampling) the double deltas are used for:
    /// 2^-1000, as PerturbationCPU.minimumSampleSpacing.
    public static let minimumSampleSpacing = 0x1p-1000

    /// One Julia sample: escape count and |z|² at escape, for z0 = C + (d0Re, d0Im), C the main
    /// orbit's start. `orbitRe`/`orbitIm` hold `orbitCount` points, the main orbit's
    /// `mainCount` (>= 2) first; `bailout2` is R².
    ///
    /// The order of operations is part of the contract (the OpenCL twin perturb_julia_escape
    /// repeats it operation for operation, compiled with FP_CONTRACT OFF): with (zr, zi) = O[m]
    /// and (dr, di) = dz, one step is
    ///     nr = (2 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))
    ///     ni = (2 * ((zr * di) + (zi * dr))) + (2 * (dr * di))
    ///     m = m + 1
    ///     xr = O[m].re + nr;  xi = O[m].im + ni
    ///     mag = (xr * xr) + (xi * xi)
    ///     if !(mag <= bailout2): escaped, stop
    ///     count = count + 1
    ///     if mag < (nr * nr) + (ni * ni) or m == last: (dr, di) = (xr, xi), m = mainCount,
    ///         last = orbitCount - 1
    ///     else: (dr, di) = (nr, ni)
    /// starting from m = 0, last = mainCount - 1, dz = d0.
    @inline(__always)
    public static func escapeJulia(orbitRe: UnsafePointer<Double>, orbitIm: UnsafePointer<Double>,
                                   mainCount: Int, orbitCount: Int, d0Re: Double, d0Im: Double,
                                   bailout2: Double, maxIterations: Int) -> (count: UInt32, mag: Float) {
        precondition(mainCount >= 2 && orbitCount >= mainCount + 2, "each reference orbit has at least 2 points")
        var m = 0
        var last = mainCount - 1
        var dr = d0Re, di = d0Im
        var count: UInt32 = 0
        var mag: Float = 0
        var i = 0
        while i < maxIterations {
            let zr = orbitRe[m], zi = orbitIm[m]
            let nr = (2 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))
            let ni = (2 * ((zr * di) + (zi * dr))) + (2 * (dr * di))
            m += 1
            let xr = orbitRe[m] + nr, xi = orbitIm[m] + ni
            let zm = (xr * xr) + (xi * xi)
            // "not <=" so that a NaN orbit counts as escaped
            if !(zm <= bailout2) {
                mag = Float(zm)
                break
            }
            count += 1
            if zm < (nr * nr) + (ni * ni) || m == last {
                dr = xr; di = xi
                m = mainCount
                last = orbitCount - 1
            } else {
                dr = nr; di = ni
            }
            i += 1
        }
        return (count, mag)
    }

    /// |S + w| - |S| for the reference's signed value S, its delta w and a = S + w (as computed):
    ///     S < 0:  a < 0 ? -w : (2 * S) + w
    ///     else:   a < 0 ? -((2 * S) + w) : w
    @inline(__always)
    public static func foldDelta(_ s: Double, _ a: Double, _ w: Double) -> Double {
        if s < 0 {
            return a < 0 ? -w : (2 * s) + w
        }
        return a < 0 ? -((2 * s) + w) : w
    }

    /// One Burning Ship sample: escape count and |z|² at escape, for z0 = c = C + (dcRe, dcIm),
    /// C the main orbit's start. The orbits hold, after each orbit's first point, the signed
    /// values before the abs() (FormulaOrbit); arguments as `escapeJulia`.
    ///
    /// The order of operations (the contract with perturb_burning_ship_escape): with (zr, zi) the
    /// reference point (O[m] itself at an orbit's start, |O[m]| per component after it) and
    /// (dr, di) = dz, one step is
    ///     wr = ((2 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))) + dcRe
    ///     wi = ((2 * ((zr * di) + (zi * dr))) + (2 * (dr * di))) + dcIm
    ///     m = m + 1
    ///     (sr, si) = O[m];  ar = sr + wr;  ai = si + wi
    ///     xr = |ar|;  xi = |ai|
    ///     nr = foldDelta(sr, ar, wr);  ni = foldDelta(si, ai, wi)
    ///     mag = (xr * xr) + (xi * xi)
    ///     if !(mag <= bailout2): escaped, stop
    ///     count = count + 1
    ///     if mag < (nr * nr) + (ni * ni) or m == last: (dr, di) = (xr, xi), m = mainCount,
    ///         last = orbitCount - 1, (zr, zi) = O[m]
    ///     else: (dr, di) = (nr, ni), (zr, zi) = (|sr|, |si|)
    /// starting from m = 0, last = mainCount - 1, (zr, zi) = O[0], dz = dc.
    @inline(__always)
    public static func escapeBurningShip(orbitRe: UnsafePointer<Double>, orbitIm: UnsafePointer<Double>,
                                         mainCount: Int, orbitCount: Int, dcRe: Double, dcIm: Double,
                                         bailout2: Double, maxIterations: Int) -> (count: UInt32, mag: Float) {
        precondition(mainCount >= 2 && orbitCount >= mainCount + 2, "each reference orbit has at least 2 points")
        var m = 0
        var last = mainCount - 1
        var zr = orbitRe[0], zi = orbitIm[0]
        var dr = dcRe, di = dcIm
        var count: UInt32 = 0
        var mag: Float = 0
        var i = 0
        while i < maxIterations {
            let wr = ((2 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))) + dcRe
            let wi = ((2 * ((zr * di) + (zi * dr))) + (2 * (dr * di))) + dcIm
            m += 1
            let sr = orbitRe[m], si = orbitIm[m]
            let ar = sr + wr, ai = si + wi
            let xr = abs(ar), xi = abs(ai)
            let nr = foldDelta(sr, ar, wr), ni = foldDelta(si, ai, wi)
            let zm = (xr * xr) + (xi * xi)
            if !(zm <= bailout2) {
                mag = Float(zm)
                break
            }
            count += 1
            if zm < (nr * nr) + (ni * ni) || m == last {
                dr = xr; di = xi
                m = mainCount
                last = orbitCount - 1
                zr = orbitRe[m]; zi = orbitIm[m]
            } else {
                dr = nr; di = ni
                zr = abs(sr); zi = abs(si)
            }
            i += 1
        }
        return (count, mag)
    }

    /// One sample of `orbit`'s formula at delta (dRe, dIm) from the centre.
    public static func escape(orbit: FormulaOrbit, dRe: Double, dIm: Double) -> (count: UInt32, mag: Float) {
        let b2 = PerturbationCPU.bailout2(orbit.bailout)
        return orbit.re.withUnsafeBufferPointer { re in
            orbit.im.withUnsafeBufferPointer { im in
                escape(orbit.formula, re.baseAddress!, im.baseAddress!, orbit.mainCount, orbit.count, dRe, dIm, b2,
                       orbit.maxIterations)
            }
        }
    }

    @inline(__always)
    private static func escape(_ formula: FractalFormula, _ re: UnsafePointer<Double>, _ im: UnsafePointer<Double>,
                               _ mainCount: Int, _ orbitCount: Int, _ dRe: Double, _ dIm: Double, _ b2: Double,
                               _ maxIterations: Int) -> (count: UInt32, mag: Float) {
        formula == .julia
            ? escapeJulia(orbitRe: re, orbitIm: im, mainCount: mainCount, orbitCount: orbitCount, d0Re: dRe, d0Im: dIm,
                          bailout2: b2, maxIterations: maxIterations)
            : escapeBurningShip(orbitRe: re, orbitIm: im, mainCount: mainCount, orbitCount: orbitCount, dcRe: dRe,
                                dcIm: dIm, bailout2: b2, maxIterations: maxIterations)
    }

    /// One sample row `sy` of a view: `width × supersampling` counts and mags.
    public static func row(orbit: FormulaOrbit, width: Int, height: Int, supersampling: Int, sy: Int,
                           counts: UnsafeMutablePointer<UInt32>, mags: UnsafeMutablePointer<Float>) {
        let b2 = PerturbationCPU.bailout2(orbit.bailout)
        let sw = width * supersampling
        orbit.re.withUnsafeBufferPointer { re in
            orbit.im.withUnsafeBufferPointer { im in
                for sx in 0..<sw {
                    let d = PerturbationCPU.sampleDelta(sx: sx, sy: sy, width: width, height: height, supersampling: supersampling,
                                        spacing: orbit.pixelSpacing)
                    let r = escape(orbit.formula, re.baseAddress!, im.baseAddress!, orbit.mainCount, orbit.count,
                                   d.re, d.im, b2, orbit.maxIterations)
                    counts[sx] = r.count
                    mags[sx] = r.mag
                }
            }
        }
    }

    /// The checks FractalJob.validate adds for a julia or burning-ship perturbation render (after
    /// the deep view's own): a c that is a plain decimal, and a sample spacing the double deltas
    /// hold. One clear line for the first that fails.
    public static func validate(_ job: FractalJob) throws(GlintError) {
        guard job.formula == .julia || job.formula == .burningShip else { return }
        if job.formula == .julia {
            if let c = job.exactC {
                _ = try DeepNumber(parsing: c.re, field: "c re")
                _ = try DeepNumber(parsing: c.im, field: "c im")
            }
            guard job.cRe.isFinite, job.cIm.isFinite else { throw GlintError(field: "c", "must be finite") }
        }
        let zoom = try DeepNumber(parsing: job.exactZoom ?? "\(job.zoom)", field: "zoom")
        let rows = job.height * job.supersampling
        // On the zoom's digits first, so that an absurd zoom fails before any MPFR work.
        let log2Spacing = 1 - (zoom.log2Magnitude ?? 0) - log2(Double(rows))
        let spacing = log2Spacing > -1100
            ? ReferenceOrbit.pixelSpacing(zoom: zoom, height: job.height, precision: ReferenceOrbit.precisionBits(zoom: zoom))
                / Double(job.supersampling)
            : 0
        guard spacing >= minimumSampleSpacing else {
            throw GlintError(field: "zoom", "\(DeepNumber.quoted(zoom.text)) with \(job.height) rows at supersampling \(job.supersampling) is beyond double-delta perturbation of \(job.formula.name) (sample spacing under 2^-1000, about 9.3e-302)")
        }
    }
}
