import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// Deep zoom of Julia sets and the Burning Ship by perturbation, at any depth, on the Swift CPU
/// path; the OpenCL twin is Kernels/perturb_formulas.cl.
///
/// Every sample starts at its pixel z0 = C + d·2^E (C the view centre, d = `sampleDelta` with the
/// spacing's mantissa, E the spacing's exponent: FormulaOrbit.spacingExponent) and is iterated as
/// a delta dz against a reference orbit (FormulaOrbit): z = Z[m] + dz.
/// - Julia (z' = z² + c, c fixed): dz' = 2·Z[m]·dz + dz², against the main orbit Z of C; the
///   first delta is the pixel offset d·2^E.
/// - Burning Ship (z' = |z² + c| per component, c the pixel = C + d·2^E): with w = z² + c before
///   the abs, its delta from the reference's S = Z[m]² + C is dw = 2·Z[m]·dz + dz² + dc, and
///   dz' = |S + dw| - |S| per component, taken without cancellation from the signs of S and
///   S + dw (`foldDelta`): dw when both are >= 0, -dw when both are < 0, 2S + dw when
///   S < 0 <= S + dw, -(2S + dw) when S >= 0 > S + dw. The first delta is dc.
///
/// **Two phases**, as PerturbationCPU: while |dz| < 2^-520 (`PerturbationCPU.tinyLimit`; the
/// "tiny phase", entered when the first delta is below that) dz is a mantissa pair w with its
/// own exponent e (dz = w·2^e, the larger part of w in [1, 2), renormalised every step), so the
/// delta of a 1e1000 view never underflows; once e passes −520 it becomes a plain Double (the
/// "double phase", where every view shallower than about 1e150 starts). In the tiny phase the
/// Burning Ship's fold is taken in units of 2^e: foldDelta(S·2^-e, S·2^-e + w, w), exact scaling,
/// so a sign change of S + dw (|S| tiny too) needs no Double of the delta's size.
///
/// Rebasing (Zhuoran): when |z| < |dz| (z nearer 0 than the reference point), or the current
/// reference has no next point, the sample continues against the critical orbit W (W[0] = 0),
/// in the double phase: dz = z, m = W's start; later rebases go to W's start again. One pair of
/// orbits serves every sample, without glitch detection. Accuracy: 53 bits relative to the delta,
/// about plain Double iteration once a sample has left the main orbit. Where the dynamics after
/// that are nearly chaotic (the Burning Ship's streaked rigging below the armada's ships, at any
/// zoom), counts depend on more bits than a Double carries: there 5-10% of them differ from
/// direct MPFR iteration at the reference's precision, which itself differs from 100 more bits in
/// 1-3% (plain Double iteration at shallow zooms fares the same).
///
/// Escape counts follow Glint's contract (FractalCPU.escape): z0 is the pixel; the count is the
/// number of steps with |z|² <= R² before the first with |z|² > R² (or NaN), at most
/// maxIterations; `mag` is |z|² at escape (0 if it never escapes).
///
/// Shared by both formulas (ldexp and norm are PerturbationCPU's, OpenCL's ldexp and ilogb in the
/// kernel): at the start, xd = ilogb(max(|dRe|, |dIm|)) + E (BLATable.zeroExponent for d = 0);
/// if xd < −520 the tiny phase starts with (w, e) = norm(dRe, dIm) (e = E + its shift), else the
/// double phase with dz = (ldexp(dRe, E), ldexp(dIm, E)). norm(r, i) = (ldexp(r, −k),
/// ldexp(i, −k)) with shift k = ilogb(max(|r|, |i|)), and (r, i) with shift 0 when that maximum
/// is 0 or not finite.
public enum PerturbationFormulas {
    /// log2 of the deepest zoom julia and burning-ship render by perturbation: DeepView.maxLog2Zoom.
    public static let maxLog2Zoom = DeepView.maxLog2Zoom

    /// One Julia sample: escape count and |z|² at escape, for z0 = C + (dRe, dIm)·2^exponent, C
    /// the main orbit's start. `orbitRe`/`orbitIm` hold `orbitCount` points, the main orbit's
    /// `mainCount` (>= 2) first; `bailout2` is R².
    ///
    /// The order of operations is part of the contract (the OpenCL twin perturb_julia_escape
    /// repeats it operation for operation, compiled with FP_CONTRACT OFF): with (zr, zi) = O[m],
    /// starting from m = 0, last = mainCount - 1 and the start in the type's documentation, one
    /// step is
    /// - tiny phase:
    ///       nr = (2 * ((zr * wr) - (zi * wi))) + ldexp((wr * wr) - (wi * wi), e)
    ///       ni = (2 * ((zr * wi) + (zi * wr))) + ldexp(2 * (wr * wi), e)
    ///       (w, e) = norm(nr, ni), e = e + shift
    ///       m = m + 1
    ///       ddr = ldexp(wr, e);  ddi = ldexp(wi, e)
    ///       xr = O[m].re + ddr;  xi = O[m].im + ddi
    ///       mag = (xr * xr) + (xi * xi)
    ///       if !(mag <= bailout2): escaped, stop
    ///       count = count + 1
    ///       if m == last or mag < (ddr * ddr) + (ddi * ddi): dz = x, m = mainCount,
    ///           last = orbitCount - 1, double phase
    ///       else if e > −520: dz = dd, double phase
    /// - double phase:
    ///       nr = (2 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))
    ///       ni = (2 * ((zr * di) + (zi * dr))) + (2 * (dr * di))
    ///       m = m + 1
    ///       xr = O[m].re + nr;  xi = O[m].im + ni
    ///       mag = (xr * xr) + (xi * xi)
    ///       if !(mag <= bailout2): escaped, stop
    ///       count = count + 1
    ///       if mag < (nr * nr) + (ni * ni) or m == last: dz = x, m = mainCount,
    ///           last = orbitCount - 1
    ///       else: dz = n
    @inline(__always)
    public static func escapeJulia(orbitRe: UnsafePointer<Double>, orbitIm: UnsafePointer<Double>,
                                   mainCount: Int, orbitCount: Int, dRe: Double, dIm: Double, exponent E: Int,
                                   bailout2: Double, maxIterations: Int) -> (count: UInt32, mag: Float) {
        precondition(mainCount >= 2 && orbitCount >= mainCount + 2, "each reference orbit has at least 2 points")
        var m = 0
        var last = mainCount - 1
        var dr = PerturbationCPU.ldexp(dRe, E), di = PerturbationCPU.ldexp(dIm, E)
        var count: UInt32 = 0
        var i = 0
        if startsTiny(dRe, dIm, E) {
            var (wr, wi, e) = PerturbationCPU.norm(dRe, dIm, E)
            while i < maxIterations {
                let zr = orbitRe[m], zi = orbitIm[m]
                let nr = (2 * ((zr * wr) - (zi * wi))) + PerturbationCPU.ldexp((wr * wr) - (wi * wi), e)
                let ni = (2 * ((zr * wi) + (zi * wr))) + PerturbationCPU.ldexp(2 * (wr * wi), e)
                (wr, wi, e) = PerturbationCPU.norm(nr, ni, e)
                m += 1
                let ddr = PerturbationCPU.ldexp(wr, e), ddi = PerturbationCPU.ldexp(wi, e)
                let xr = orbitRe[m] + ddr, xi = orbitIm[m] + ddi
                let zm = (xr * xr) + (xi * xi)
                if !(zm <= bailout2) { return (count, Float(zm)) }
                count += 1
                i += 1
                if m == last || zm < (ddr * ddr) + (ddi * ddi) {
                    dr = xr; di = xi
                    m = mainCount
                    last = orbitCount - 1
                    break
                } else if e > PerturbationCPU.tinyLimit {
                    dr = ddr; di = ddi
                    break
                }
            }
        }
        while i < maxIterations {
            let zr = orbitRe[m], zi = orbitIm[m]
            let nr = (2 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))
            let ni = (2 * ((zr * di) + (zi * dr))) + (2 * (dr * di))
            m += 1
            let xr = orbitRe[m] + nr, xi = orbitIm[m] + ni
            let zm = (xr * xr) + (xi * xi)
            // "not <=" so that a NaN orbit counts as escaped
            if !(zm <= bailout2) { return (count, Float(zm)) }
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
        return (count, 0)
    }

    /// Whether a sample with offset (dRe, dIm)·2^E starts in the tiny phase: xd < −520 (see the
    /// type's documentation).
    @inline(__always)
    static func startsTiny(_ dRe: Double, _ dIm: Double, _ E: Int) -> Bool {
        PerturbationCPU.offsetExponent(dRe, dIm, E) < PerturbationCPU.tinyLimit
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

    /// One Burning Ship sample: escape count and |z|² at escape, for z0 = c = C +
    /// (dRe, dIm)·2^exponent, C the main orbit's start. The orbits hold, after each orbit's first
    /// point, the signed values before the abs() (FormulaOrbit); arguments as `escapeJulia`.
    ///
    /// The order of operations (the contract with perturb_burning_ship_escape): with (zr, zi) the
    /// reference point (O[m] itself at an orbit's start, |O[m]| per component after it), starting
    /// from m = 0, last = mainCount - 1, (zr, zi) = O[0], dc = (ldexp(dRe, E), ldexp(dIm, E)) and
    /// the start in the type's documentation, one step is
    /// - tiny phase:
    ///       pr = ((2 * ((zr * wr) - (zi * wi))) + ldexp((wr * wr) - (wi * wi), e)) + ldexp(dRe, E - e)
    ///       pi = ((2 * ((zr * wi) + (zi * wr))) + ldexp(2 * (wr * wi), e)) + ldexp(dIm, E - e)
    ///       m = m + 1
    ///       (sr, si) = O[m];  ar = sr + ldexp(pr, e);  ai = si + ldexp(pi, e)
    ///       xr = |ar|;  xi = |ai|
    ///       tr = ldexp(sr, -e);  ti = ldexp(si, -e)
    ///       nr = foldDelta(tr, tr + pr, pr);  ni = foldDelta(ti, ti + pi, pi)
    ///       (w, e) = norm(nr, ni), e = e + shift
    ///       mag = (xr * xr) + (xi * xi)
    ///       if !(mag <= bailout2): escaped, stop
    ///       count = count + 1
    ///       ddr = ldexp(wr, e);  ddi = ldexp(wi, e)
    ///       if m == last or mag < (ddr * ddr) + (ddi * ddi): dz = x, m = mainCount,
    ///           last = orbitCount - 1, (zr, zi) = O[m], double phase
    ///       else: (zr, zi) = (|sr|, |si|), and if e > −520: dz = dd, double phase
    /// - double phase:
    ///       wr = ((2 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))) + dcRe
    ///       wi = ((2 * ((zr * di) + (zi * dr))) + (2 * (dr * di))) + dcIm
    ///       m = m + 1
    ///       (sr, si) = O[m];  ar = sr + wr;  ai = si + wi
    ///       xr = |ar|;  xi = |ai|
    ///       nr = foldDelta(sr, ar, wr);  ni = foldDelta(si, ai, wi)
    ///       mag = (xr * xr) + (xi * xi)
    ///       if !(mag <= bailout2): escaped, stop
    ///       count = count + 1
    ///       if mag < (nr * nr) + (ni * ni) or m == last: dz = x, m = mainCount,
    ///           last = orbitCount - 1, (zr, zi) = O[m]
    ///       else: dz = n, (zr, zi) = (|sr|, |si|)
    /// In the tiny phase tr is ±infinity where |S| is far above the delta; then tr + pr has its
    /// sign and foldDelta returns ±pr without using it.
    @inline(__always)
    public static func escapeBurningShip(orbitRe: UnsafePointer<Double>, orbitIm: UnsafePointer<Double>,
                                         mainCount: Int, orbitCount: Int, dRe: Double, dIm: Double, exponent E: Int,
                                         bailout2: Double, maxIterations: Int) -> (count: UInt32, mag: Float) {
        precondition(mainCount >= 2 && orbitCount >= mainCount + 2, "each reference orbit has at least 2 points")
        var m = 0
        var last = mainCount - 1
        var zr = orbitRe[0], zi = orbitIm[0]
        let dcRe = PerturbationCPU.ldexp(dRe, E), dcIm = PerturbationCPU.ldexp(dIm, E)
        var dr = dcRe, di = dcIm
        var count: UInt32 = 0
        var i = 0
        if startsTiny(dRe, dIm, E) {
            var (wr, wi, e) = PerturbationCPU.norm(dRe, dIm, E)
            while i < maxIterations {
                let pr = ((2 * ((zr * wr) - (zi * wi))) + PerturbationCPU.ldexp((wr * wr) - (wi * wi), e))
                    + PerturbationCPU.ldexp(dRe, E - e)
                let pi = ((2 * ((zr * wi) + (zi * wr))) + PerturbationCPU.ldexp(2 * (wr * wi), e))
                    + PerturbationCPU.ldexp(dIm, E - e)
                m += 1
                let sr = orbitRe[m], si = orbitIm[m]
                let ar = sr + PerturbationCPU.ldexp(pr, e), ai = si + PerturbationCPU.ldexp(pi, e)
                let xr = abs(ar), xi = abs(ai)
                let tr = PerturbationCPU.ldexp(sr, -e), ti = PerturbationCPU.ldexp(si, -e)
                let nr = foldDelta(tr, tr + pr, pr), ni = foldDelta(ti, ti + pi, pi)
                (wr, wi, e) = PerturbationCPU.norm(nr, ni, e)
                let zm = (xr * xr) + (xi * xi)
                if !(zm <= bailout2) { return (count, Float(zm)) }
                count += 1
                i += 1
                let ddr = PerturbationCPU.ldexp(wr, e), ddi = PerturbationCPU.ldexp(wi, e)
                if m == last || zm < (ddr * ddr) + (ddi * ddi) {
                    dr = xr; di = xi
                    m = mainCount
                    last = orbitCount - 1
                    zr = orbitRe[m]; zi = orbitIm[m]
                    break
                }
                zr = abs(sr); zi = abs(si)
                if e > PerturbationCPU.tinyLimit {
                    dr = ddr; di = ddi
                    break
                }
            }
        }
        while i < maxIterations {
            let wr = ((2 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))) + dcRe
            let wi = ((2 * ((zr * di) + (zi * dr))) + (2 * (dr * di))) + dcIm
            m += 1
            let sr = orbitRe[m], si = orbitIm[m]
            let ar = sr + wr, ai = si + wi
            let xr = abs(ar), xi = abs(ai)
            let nr = foldDelta(sr, ar, wr), ni = foldDelta(si, ai, wi)
            let zm = (xr * xr) + (xi * xi)
            if !(zm <= bailout2) { return (count, Float(zm)) }
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
        return (count, 0)
    }

    /// One sample of `orbit`'s formula at offset (dRe, dIm)·2^exponent from the centre.
    public static func escape(orbit: FormulaOrbit, dRe: Double, dIm: Double, exponent: Int = 0) -> (count: UInt32, mag: Float) {
        let b2 = PerturbationCPU.bailout2(orbit.bailout)
        return orbit.re.withUnsafeBufferPointer { re in
            orbit.im.withUnsafeBufferPointer { im in
                escape(orbit.formula, re.baseAddress!, im.baseAddress!, orbit.mainCount, orbit.count, dRe, dIm, exponent,
                       b2, orbit.maxIterations)
            }
        }
    }

    @inline(__always)
    private static func escape(_ formula: FractalFormula, _ re: UnsafePointer<Double>, _ im: UnsafePointer<Double>,
                               _ mainCount: Int, _ orbitCount: Int, _ dRe: Double, _ dIm: Double, _ E: Int,
                               _ b2: Double, _ maxIterations: Int) -> (count: UInt32, mag: Float) {
        formula == .julia
            ? escapeJulia(orbitRe: re, orbitIm: im, mainCount: mainCount, orbitCount: orbitCount, dRe: dRe, dIm: dIm,
                          exponent: E, bailout2: b2, maxIterations: maxIterations)
            : escapeBurningShip(orbitRe: re, orbitIm: im, mainCount: mainCount, orbitCount: orbitCount, dRe: dRe,
                                dIm: dIm, exponent: E, bailout2: b2, maxIterations: maxIterations)
    }

    /// One sample row `sy` of a view: `width × supersampling` counts and mags.
    public static func row(orbit: FormulaOrbit, width: Int, height: Int, supersampling: Int, sy: Int,
                           counts: UnsafeMutablePointer<UInt32>, mags: UnsafeMutablePointer<Float>) {
        let b2 = PerturbationCPU.bailout2(orbit.bailout)
        let sw = width * supersampling
        let E = orbit.spacingExponent
        orbit.re.withUnsafeBufferPointer { re in
            orbit.im.withUnsafeBufferPointer { im in
                for sx in 0..<sw {
                    let d = PerturbationCPU.sampleDelta(sx: sx, sy: sy, width: width, height: height, supersampling: supersampling,
                                        spacing: orbit.spacingMantissa)
                    let r = escape(orbit.formula, re.baseAddress!, im.baseAddress!, orbit.mainCount, orbit.count,
                                   d.re, d.im, E, b2, orbit.maxIterations)
                    counts[sx] = r.count
                    mags[sx] = r.mag
                }
            }
        }
    }

    /// The checks FractalJob.validate adds for a julia or burning-ship perturbation render (after
    /// the deep view's own): a c that is a plain decimal, and a zoom within `maxLog2Zoom`. One
    /// clear line for the first that fails.
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
        // On the zoom's digits, so that an absurd zoom fails before any MPFR work: the deltas'
        // exponents are 32-bit integers, and the orbits' precision grows with the depth.
        guard let l2 = zoom.log2Magnitude, l2 < Double(maxLog2Zoom) else {
            throw GlintError(field: "zoom", "\(DeepNumber.quoted(zoom.text)) is beyond the deepest zoom Glint renders (2^\(maxLog2Zoom), about 1e\(Int(Double(maxLog2Zoom) * 0.30103)))")
        }
    }
}
