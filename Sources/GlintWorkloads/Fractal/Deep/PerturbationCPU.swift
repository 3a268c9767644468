import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// Deep zoom of the Mandelbrot set by perturbation, on the Swift CPU path.
///
/// A sample at c = C + dc (C the view centre) is iterated as a delta against the reference orbit
/// O of C (ReferenceOrbit): with z = O[m] + dz,
///     dz' = 2·O[m]·dz + dz² + dc,   z' = O[m+1] + dz'.
///
/// **Two phases.** dc is carried as a mantissa pair d and the view's exponent E (dc = d·2^E,
/// d = the sample's offset in pixels × the spacing's mantissa), so a sample offset exists at any
/// depth. While |dz| < 2^-520 (the "tiny phase", entered when |dc| is below that) dz is a
/// mantissa pair w with its own exponent e (dz = w·2^e, the larger part of w in [1, 2)): the
/// delta of a 1e1000 view never underflows. Once |dz| reaches 2^-520 it becomes a plain Double
/// (the "double phase", where every view shallower than about 1e150 starts).
///
/// **Rebasing** (Zhuoran): when |z| < |dz| (z is nearer 0 than the reference point O[m]), or the
/// reference has no next point, the delta restarts against the start of the reference: dz = z,
/// m = 0 (O[0] = 0, so z is unchanged), in the double phase. One reference serves every sample.
///
/// **Bilinear approximation** (BLATable, when given): at m − 1 a multiple of 4, the sample takes
/// the longest table step it is valid for, dz ← A·dz + B·dc over 2^k iterations at once.
///
/// Accuracy: 53 bits relative to the delta per step, and the BLA's ε (2^-45) per skipped step;
/// after a sample leaves the reference its remaining steps are about as accurate as plain Double
/// iteration, so a rare sample whose escape is more sensitive than that can differ from exact
/// arithmetic (1 of 192 in the seahorse-valley test at zoom 1e20, by 97 of 9539 iterations).
///
/// Escape counts follow Glint's contract (FractalCPU.escape): z starts at the sample's c, each
/// step is z = z² + c, the count is the number of steps with |z|² <= R² before the first with
/// |z|² > R² (or NaN), at most maxIterations; `mag` is |z|² at escape (0 if it never escapes).
/// A table step of l iterations counts l and tests the escape at its end: every point it skips
/// stays inside the escape radius, as each single step's radius is no more than the room between
/// the reference point and that radius (BLATable).
public enum PerturbationCPU {
    /// Where the tiny phase ends: deltas from 2^tinyLimit up are plain Doubles. Below the tiny
    /// phase's table bound (2^-501), so that a delta leaves it without crawling up to the bound
    /// step by step.
    public static let tinyLimit = -520

    /// The table as the per-sample loop reads it.
    public struct Table {
        public var reals: UnsafePointer<Double>
        public var ints: UnsafePointer<Int32>
        public var offsets: UnsafePointer<Int32>
        public var counts: UnsafePointer<Int32>
        public var levels: Int
        /// The largest R² among the shortest stored steps (no entry is valid for a |dz|² above it).
        public var maxR2: Double
    }

    /// One sample's escape count and |z|² at escape, for c = C + (dRe, dIm)·2^exponent, C the
    /// orbit's centre. `orbitRe`/`orbitIm` hold `orbitCount` >= 2 points O[0] = 0, O[1] = C, ...;
    /// `bailout2` is R²; `table` nil iterates step by step.
    ///
    /// The loop steps the delta through the tiny phase, then the double phase, taking the longest
    /// valid table step where there is one and a plain step otherwise, and rebasing as above (the
    /// method: docs/FRACTALS.md#how-it-works). Its order of operations is part of the contract:
    /// perturb.cl (with common/perturb.h) repeats it operation for operation, compiled with
    /// `#pragma OPENCL FP_CONTRACT OFF` and OpenCL's ldexp and ilogb for `ldexp` and `exponent`,
    /// so that both paths give identical counts; change one only with the other.
    @inline(__always)
    public static func escape(orbitRe: UnsafePointer<Double>, orbitIm: UnsafePointer<Double>, orbitCount: Int,
                              table: Table?, dRe: Double, dIm: Double, exponent E: Int, bailout2: Double,
                              maxIterations: Int) -> (count: UInt32, mag: Float) {
        precondition(orbitCount >= 2, "a reference orbit has at least O[0] and O[1]")
        let orbit = Orbit(re: orbitRe, im: orbitIm, last: orbitCount - 1)
        let dcr = ldexp(dRe, E), dci = ldexp(dIm, E)
        let xd = offsetExponent(dRe, dIm, E)
        var s = State(m: 1, count: 0, dr: dcr, di: dci)
        if s.m == orbit.last {
            s.dr = orbitRe[1] + dcr
            s.di = orbitIm[1] + dci
            s.m = 0
        } else if xd < tinyLimit {
            if let mag = tinyPhase(orbit, table, dRe, dIm, E, xd, bailout2, maxIterations, &s) {
                return (UInt32(s.count), mag)
            }
        }
        let mag = doublePhase(orbit, table, dRe, dIm, E, dcr, dci, bailout2, maxIterations, &s)
        return (UInt32(s.count), mag)
    }

    /// The reference orbit as the loops read it.
    struct Orbit {
        let re: UnsafePointer<Double>
        let im: UnsafePointer<Double>
        let last: Int
    }

    /// A sample between the phases: reference index, count, and the double-phase delta.
    struct State {
        var m: Int
        var count: Int
        var dr: Double
        var di: Double
    }

    /// The tiny phase, from m = 1: returns |z|² if the sample escapes in it, else nil with the
    /// state handed to the double phase (or count = maxIterations).
    @inline(never)
    static func tinyPhase(_ o: Orbit, _ table: Table?, _ dRe: Double, _ dIm: Double, _ E: Int, _ xd: Int,
                          _ bailout2: Double, _ maxIterations: Int, _ s: inout State) -> Float? {
        var (wr, wi, e) = norm(dRe, dIm, E)
        var m = s.m, count = s.count
        defer { s.m = m; s.count = count }
        while count < maxIterations {
            var step = 0, entry = 0
            if let t = table {
                (step, entry) = search(t, m: m, count: count, maxIterations: maxIterations) { idx in
                    let ti = t.ints + idx * BLATable.intsPerEntry
                    return Int(ti[2]) + e + 2 <= -501 && Int(ti[3]) + xd + 2 <= -501
                }
            }
            if step > 0, let t = table {
                let tr = t.reals + entry * BLATable.realsPerEntry, ti = t.ints + entry * BLATable.intsPerEntry
                let ar = tr[0], ai = tr[1], br = tr[2], bi = tr[3]
                let pr = (ar * wr) - (ai * wi), pi = (ar * wi) + (ai * wr)
                let pe = Int(ti[0]) + e
                let qr = (br * dRe) - (bi * dIm), qi = (br * dIm) + (bi * dRe)
                let qe = Int(ti[1]) + E
                let f = pe > qe ? pe : qe
                (wr, wi, e) = norm(ldexp(pr, pe - f) + ldexp(qr, qe - f), ldexp(pi, pe - f) + ldexp(qi, qe - f), f)
            } else {
                step = 1
                let zr = o.re[m], zi = o.im[m]
                let nr = ((2 * ((zr * wr) - (zi * wi))) + ldexp((wr * wr) - (wi * wi), e)) + ldexp(dRe, E - e)
                let ni = ((2 * ((zr * wi) + (zi * wr))) + ldexp(2 * (wr * wi), e)) + ldexp(dIm, E - e)
                (wr, wi, e) = norm(nr, ni, e)
            }
            m += step
            count += step - 1
            let ddr = ldexp(wr, e), ddi = ldexp(wi, e)
            let xr = o.re[m] + ddr, xi = o.im[m] + ddi
            let zm = (xr * xr) + (xi * xi)
            if !(zm <= bailout2) { return Float(zm) }
            count += 1
            if m == o.last || zm < (ddr * ddr) + (ddi * ddi) {
                s.dr = xr; s.di = xi
                m = 0
                return nil
            } else if e > tinyLimit {
                s.dr = ddr; s.di = ddi
                return nil
            }
        }
        return nil
    }

    /// The double phase: returns |z|² at escape, or 0 at maxIterations.
    @inline(never)
    static func doublePhase(_ o: Orbit, _ table: Table?, _ dRe: Double, _ dIm: Double, _ E: Int,
                            _ dcr: Double, _ dci: Double, _ bailout2: Double, _ maxIterations: Int,
                            _ s: inout State) -> Float {
        var m = s.m, count = s.count, dr = s.dr, di = s.di
        defer { s.m = m; s.count = count }
        let firstLevelMask = (1 << BLATable.firstLevel) - 1
        // No table entry is valid where the shortest steps' largest radius is exceeded.
        let maxR2 = table?.maxR2 ?? 0
        while count < maxIterations {
            var nr = 0.0, ni = 0.0, step = 0
            // m = 0 gives (m - 1) & mask == mask: no table step from the start of the reference.
            if (m - 1) & firstLevelMask == 0, let t = table {
                let dz2 = (dr * dr) + (di * di)
                if dz2 < maxR2 {
                    let found = search(t, m: m, count: count, maxIterations: maxIterations) { idx in
                        dz2 < t.reals[idx * BLATable.realsPerEntry + 4]
                    }
                    if found.step > 0 {
                        step = found.step
                        let tr = t.reals + found.entry * BLATable.realsPerEntry
                        let ti = t.ints + found.entry * BLATable.intsPerEntry
                        let ar = tr[0], ai = tr[1], br = tr[2], bi = tr[3]
                        let ae = Int(ti[0]), be = Int(ti[1]) + E
                        nr = ldexp((ar * dr) - (ai * di), ae) + ldexp((br * dRe) - (bi * dIm), be)
                        ni = ldexp((ar * di) + (ai * dr), ae) + ldexp((br * dIm) + (bi * dRe), be)
                    }
                }
            }
            if step == 0 {
                step = 1
                let zr = o.re[m], zi = o.im[m]
                nr = ((2 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))) + dcr
                ni = ((2 * ((zr * di) + (zi * dr))) + (2 * (dr * di))) + dci
            }
            m += step
            count += step - 1
            let xr = o.re[m] + nr, xi = o.im[m] + ni
            let zm = (xr * xr) + (xi * xi)
            // "not <=" so that a NaN orbit counts as escaped
            if !(zm <= bailout2) { return Float(zm) }
            count += 1
            if zm < (nr * nr) + (ni * ni) || m == o.last {
                dr = xr; di = xi
                m = 0
            } else {
                dr = nr; di = ni
            }
        }
        return 0
    }

    /// The longest table step valid at m: levels from `BLATable.firstLevel` up while m − 1 is a
    /// multiple of 2^k, the level has entry (m − 1) >> k, the step fits and `valid` holds;
    /// (2^k, its entry), or (0, 0).
    @inline(__always)
    static func search(_ t: Table, m: Int, count: Int, maxIterations: Int, valid: (Int) -> Bool) -> (step: Int, entry: Int) {
        guard m >= 1 else { return (0, 0) }
        var step = 0, entry = 0
        var k = BLATable.firstLevel
        while k < BLATable.firstLevel + t.levels {
            let l = 1 << k
            if (m - 1) & (l - 1) != 0 { break }
            let j = (m - 1) >> k
            let level = k - BLATable.firstLevel
            if j >= Int(t.counts[level]) || count + l > maxIterations { break }
            let idx = Int(t.offsets[level]) + j
            if !valid(idx) { break }
            step = l
            entry = idx
            k += 1
        }
        return (step, entry)
    }

    /// x × 2^k, correctly rounded (as scalbn and OpenCL's ldexp): one multiply by 2^k while that
    /// is a normal Double; ±0 where the result is far below the smallest subnormal.
    @inline(__always)
    static func ldexp(_ x: Double, _ k: Int) -> Double {
        if k >= -1022 && k <= 1023 { return x * Double(bitPattern: UInt64(k + 1023) << 52) }
        if k < -1200 && abs(x) < 0x1p100 { return x * 0 }
        return scalbn(x, Int32(clamping: k))
    }

    /// ilogb of the offset (dRe, dIm)·2^E (its larger part), BLATable.zeroExponent for 0: a sample
    /// starts in the tiny phase when this is under `tinyLimit`.
    @inline(__always)
    static func offsetExponent(_ dRe: Double, _ dIm: Double, _ E: Int) -> Int {
        let big = abs(dRe) > abs(dIm) ? abs(dRe) : abs(dIm)
        return big == 0 ? BLATable.zeroExponent : big.exponent + E
    }

    /// The constants common/perturb.h takes from the host, for both perturbation programs.
    static let kernelDefines = ["PERTURB_TINY_LIMIT=\(tinyLimit)", "PERTURB_ZERO_EXPONENT=\(BLATable.zeroExponent)",
                                "PERTURB_FIRST_LEVEL=\(BLATable.firstLevel)"]

    /// (re, im) × 2^e rescaled so that the larger of |re|, |im| is in [1, 2); unchanged when that
    /// is 0 or not finite.
    @inline(__always)
    static func norm(_ re: Double, _ im: Double, _ e: Int) -> (Double, Double, Int) {
        let big = abs(re) > abs(im) ? abs(re) : abs(im)
        guard big != 0, big.isFinite else { return (re, im, e) }
        let k = big.exponent
        return (ldexp(re, -k), ldexp(im, -k), e + k)
    }

    /// `escape` against `orbit` for an offset dc given as a Double, step by step (no table),
    /// with its bailout and iteration limit (R² rounded through Float, as
    /// GlintFractalParams.bailout2 is, so counts match FractalCPU's double path exactly).
    public static func escape(orbit: ReferenceOrbit, dcRe: Double, dcIm: Double) -> (count: UInt32, mag: Float) {
        let b2 = bailout2(orbit.bailout)
        return orbit.re.withUnsafeBufferPointer { re in
            orbit.im.withUnsafeBufferPointer { im in
                escape(orbitRe: re.baseAddress!, orbitIm: im.baseAddress!, orbitCount: orbit.count, table: nil,
                       dRe: dcRe, dIm: dcIm, exponent: 0, bailout2: b2, maxIterations: orbit.maxIterations)
            }
        }
    }

    /// R² as the escape test uses it: Double(Float(R × R)), the value GlintFractalParams carries.
    public static func bailout2(_ bailout: Double) -> Double { Double(Float(bailout * bailout)) }

    /// The offset from the centre of sample (sx, sy) in the grid `supersampling` times finer than
    /// the width × height image, as a mantissa pair to scale by 2^E where the pixel spacing is
    /// `spacing` × 2^E: FractalCPU.View.re/im less the centre, in the same order of operations:
    ///     dRe = ((sx + 0.5) / ss - width/2) * spacing
    ///     dIm = -(((sy + 0.5) / ss - height/2) * spacing)
    /// (with the spacing itself and E = 0 this is the Double offset; scaling by 2^E is exact while
    /// the result is a normal Double, so both give the same dc there).
    @inline(__always)
    public static func sampleDelta(sx: Int, sy: Int, width: Int, height: Int, supersampling: Int,
                                   spacing: Double) -> (re: Double, im: Double) {
        let ss = Double(supersampling)
        let halfW = Double(width) * 0.5, halfH = Double(height) * 0.5
        let offRe = ((Double(sx) + 0.5) / ss - halfW) * spacing
        let offIm = ((Double(sy) + 0.5) / ss - halfH) * spacing
        return (offRe, -offIm)
    }

    /// The largest |dc| of a view's samples, bounded above: (width + height) / 2 pixels, as a
    /// Double (0 past Double's range).
    public static func dcMax(orbit: ReferenceOrbit, width: Int, height: Int) -> Double {
        scalbn((Double(width) + Double(height)) * 0.5 * orbit.spacingMantissa, Int32(clamping: orbit.spacingExponent))
    }

    /// One sample row `sy` of a view: `width × supersampling` counts and mags. `table` nil
    /// iterates step by step.
    public static func row(orbit: ReferenceOrbit, table: BLATable?, width: Int, height: Int, supersampling: Int, sy: Int,
                           counts: UnsafeMutablePointer<UInt32>, mags: UnsafeMutablePointer<Float>) {
        let b2 = bailout2(orbit.bailout)
        let sw = width * supersampling
        let E = orbit.spacingExponent
        let empty = BLATable.empty
        let t = table ?? empty
        orbit.re.withUnsafeBufferPointer { re in
            orbit.im.withUnsafeBufferPointer { im in
                t.reals.withUnsafeBufferPointer { tr in
                    t.ints.withUnsafeBufferPointer { ti in
                        t.levelOffsets.withUnsafeBufferPointer { to in
                            t.levelCounts.withUnsafeBufferPointer { tc in
                                let view = table == nil || t.levels == 0 ? nil
                                    : Table(reals: tr.baseAddress!, ints: ti.baseAddress!, offsets: to.baseAddress!,
                                            counts: tc.baseAddress!, levels: t.levels, maxR2: t.maxR2)
                                for sx in 0..<sw {
                                    let d = sampleDelta(sx: sx, sy: sy, width: width, height: height,
                                                        supersampling: supersampling, spacing: orbit.spacingMantissa)
                                    let r = escape(orbitRe: re.baseAddress!, orbitIm: im.baseAddress!, orbitCount: orbit.count,
                                                   table: view, dRe: d.re, dIm: d.im, exponent: E, bailout2: b2,
                                                   maxIterations: orbit.maxIterations)
                                    counts[sx] = r.count
                                    mags[sx] = r.mag
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Every sample of a deep view: the reference orbit of its centre, its BLA table (unless
    /// `bla` is false), then the sample rows in parallel (CPUParallel). Errors: those of
    /// DeepView.validate and ReferenceOrbit.
    public static func render(_ view: DeepView, bla: Bool = true) async throws(GlintError) -> DeepEscapeImage {
        try view.validate()
        let orbit = try ReferenceOrbit(centerRe: view.centerRe, centerIm: view.centerIm, zoom: view.zoom,
                                       height: view.height, bailout: view.bailout, maxIterations: view.maxIterations)
        let table = bla ? BLATable(orbit: orbit, dcMax: dcMax(orbit: orbit, width: view.width, height: view.height)) : nil
        return await render(view, orbit: orbit, table: table)
    }

    /// The sample rows of `view` against an orbit (and table) already computed for it.
    public static func render(_ view: DeepView, orbit: ReferenceOrbit, table: BLATable?) async -> DeepEscapeImage {
        let sw = view.width * view.supersampling, sh = view.height * view.supersampling
        let cb = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: sw * sh)
        let mb = UnsafeMutableBufferPointer<Float>.allocate(capacity: sw * sh)
        defer { cb.deallocate(); mb.deallocate() }
        let c = SharedBuffer(cb), m = SharedBuffer(mb)
        let (w, h, ss) = (view.width, view.height, view.supersampling)
        // Each row writes only its own sw elements.
        await CPUParallel.forEach(sh) { sy in
            row(orbit: orbit, table: table, width: w, height: h, supersampling: ss, sy: sy,
                counts: c.base + sy * sw, mags: m.base + sy * sw)
        }
        let counts = Array(cb), mags = Array(mb)
        return DeepEscapeImage(sampleWidth: sw, sampleHeight: sh, counts: counts, mags: mags, orbit: orbit)
    }
}

/// A deep Mandelbrot view: centre and zoom as decimal text (any number of digits), the rest as
/// FractalJob has them.
public struct DeepView: Sendable {
    public var centerRe: DeepNumber
    public var centerIm: DeepNumber
    /// At zoom 1 the image height spans 2 units of the complex plane.
    public var zoom: DeepNumber
    public var width: Int
    public var height: Int
    /// Samples per pixel side.
    public var supersampling: Int
    public var maxIterations: Int
    /// The escape radius R.
    public var bailout: Double

    public init(centerRe: String, centerIm: String, zoom: String, width: Int, height: Int, supersampling: Int = 1,
                maxIterations: Int, bailout: Double = 2) throws(GlintError) {
        self.centerRe = try DeepNumber(parsing: centerRe, field: "center re")
        self.centerIm = try DeepNumber(parsing: centerIm, field: "center im")
        self.zoom = try DeepNumber(parsing: zoom, field: "zoom")
        self.width = width
        self.height = height
        self.supersampling = supersampling
        self.maxIterations = maxIterations
        self.bailout = bailout
    }

    /// log2 of the deepest zoom: about 1e1,000,000, where a reference orbit needs 3.3 million bits.
    public static let maxLog2Zoom = 3_321_928

    /// 2 / (zoom × height), from MPFR.
    public var pixelSpacing: Double {
        ReferenceOrbit.pixelSpacing(zoom: zoom, height: height,
                                    precision: ReferenceOrbit.precisionBits(zoom: zoom, centerRe: centerRe, centerIm: centerIm))
    }

    /// Checks every field; one clear line for the first bad one.
    public func validate() throws(GlintError) {
        try ImageLimits.check(width: width, height: height)
        try ReferenceOrbit.check(zoom: zoom, height: height, bailout: bailout, maxIterations: maxIterations)
        guard (1...FractalJob.maxSupersampling).contains(supersampling) else {
            throw GlintError(field: "supersampling", "must be between 1 and \(FractalJob.maxSupersampling) (got \(supersampling))")
        }
        guard width * supersampling <= ImageLimits.maxSide, height * supersampling <= ImageLimits.maxSide else {
            throw GlintError(field: "supersampling", "\(supersampling) at \(width)x\(height) needs a sample grid over \(ImageLimits.maxSide) a side")
        }
        // Checked on the zoom's digits, so that an absurd zoom fails before any MPFR work: the
        // exponents of the deltas are 32-bit integers, and the orbit's precision grows with the depth.
        guard let l2 = zoom.log2Magnitude, l2 < Double(DeepView.maxLog2Zoom) else {
            throw GlintError(field: "zoom", "\(DeepNumber.quoted(zoom.text)) is beyond the deepest zoom Glint renders (2^\(DeepView.maxLog2Zoom), about 1e\(Int(Double(DeepView.maxLog2Zoom) * 0.30103)))")
        }
    }
}

/// Escape counts and |z|² at escape for every sample of a DeepView, row by row
/// (sampleWidth × sampleHeight), with the reference orbit they were computed against.
public struct DeepEscapeImage: Sendable {
    public let sampleWidth: Int
    public let sampleHeight: Int
    public let counts: [UInt32]
    public let mags: [Float]
    public let orbit: ReferenceOrbit
}
