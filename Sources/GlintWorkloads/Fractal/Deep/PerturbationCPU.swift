import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// Deep zoom of the Mandelbrot set by perturbation, on the Swift CPU path: every sample a delta
/// from the reference orbit O of the view centre C (ReferenceOrbit: O[0] = 0, O[1] = C), stepped
/// by PerturbationEscape with MandelbrotDelta and, unless switched off, BLATable's steps. The
/// method: docs/FRACTALS.md#how-it-works.
///
/// Accuracy: 53 bits relative to the delta per step, and the BLA's ε (2^-45) per skipped step;
/// after a sample leaves the reference its remaining steps are about as accurate as plain Double
/// iteration, so a rare sample whose escape is more sensitive than that can differ from exact
/// arithmetic (1 of 192 in the seahorse-valley test at zoom 1e20, by 97 of 9539 iterations).
///
/// A table step of l iterations counts l and tests the escape at its end: every point it skips
/// stays inside the escape radius, as each single step's radius is no more than the room between
/// the reference point and that radius (BLATable).
public enum PerturbationCPU {
    /// The table as the per-sample loop reads it.
    public typealias Table = PerturbationEscape.Table

    /// One sample's escape count and |z|² at escape, for c = C + (dRe, dIm)·2^exponent, C the
    /// orbit's centre. `orbitRe`/`orbitIm` hold `orbitCount` >= 2 points O[0] = 0, O[1] = C, ...;
    /// `bailout2` is R²; `table` nil iterates step by step.
    @inline(__always)
    static func escape(orbitRe: UnsafePointer<Double>, orbitIm: UnsafePointer<Double>, orbitCount: Int,
                       table: Table?, dRe: Double, dIm: Double, exponent E: Int, bailout2: Double,
                       maxIterations: Int, power: Int = 2) -> (count: UInt32, mag: Float) {
        let r = escape(PerturbationEscape.NoDerivative.self, orbitRe: orbitRe, orbitIm: orbitIm, orbitCount: orbitCount,
                       table: table, dRe: dRe, dIm: dIm, exponent: E, spacing: 0, bailout2: bailout2,
                       maxIterations: maxIterations, power: power)
        return (r.count, r.mag)
    }

    /// `escape`, with the derivative when `D` says so (`spacing`: the pixel spacing's mantissa).
    @inline(__always)
    static func escape<D: PerturbationEscape.DerivativeMode>(
        _: D.Type, orbitRe: UnsafePointer<Double>, orbitIm: UnsafePointer<Double>, orbitCount: Int, table: Table?,
        dRe: Double, dIm: Double, exponent E: Int, spacing: Double, bailout2: Double, maxIterations: Int, power: Int
    ) -> PerturbationEscape.Outcome {
        precondition(orbitCount >= 2, "a reference orbit has at least O[0] and O[1]")
        let orbit = PerturbationEscape.Orbit(re: orbitRe, im: orbitIm, mainStart: 1, mainLast: orbitCount - 1,
                                             criticalStart: 0, criticalLast: orbitCount - 1)
        func run<F: DeltaFormula>(_: F.Type) -> PerturbationEscape.Outcome {
            PerturbationEscape.escape(F.self, D.self, orbit, table, dRe: dRe, dIm: dIm, E: E, spacing: spacing,
                                      bailout2: bailout2, maxIterations: maxIterations)
        }
        switch power {
        case 3: return run(PowerDelta<Power3>.self)
        case 4: return run(PowerDelta<Power4>.self)
        case 5: return run(PowerDelta<Power5>.self)
        case 6: return run(PowerDelta<Power6>.self)
        case 7: return run(PowerDelta<Power7>.self)
        case 8: return run(PowerDelta<Power8>.self)
        default: return run(MandelbrotDelta.self)
        }
    }

    /// The constants Kernels/deep/floatexp.h and escape.h take from the host.
    static let kernelDefines = ["PERTURB_TINY_LIMIT=\(FloatExpComplex.tinyLimit)",
                                "PERTURB_ZERO_EXPONENT=\(BLATable.zeroExponent)",
                                "PERTURB_FIRST_LEVEL=\(BLATable.firstLevel)"]

    /// `escape` against `orbit` for an offset dc given as a Double, step by step (no table),
    /// with its bailout and iteration limit (R² rounded through Float, as
    /// GlintFractalParams.bailout2 is, so counts match FractalCPU's double path exactly).
    public static func escape(orbit: ReferenceOrbit, dcRe: Double, dcIm: Double) -> (count: UInt32, mag: Float) {
        let b2 = bailout2(orbit.bailout)
        return orbit.re.withUnsafeBufferPointer { re in
            orbit.im.withUnsafeBufferPointer { im in
                escape(orbitRe: re.baseAddress!, orbitIm: im.baseAddress!, orbitCount: orbit.count, table: nil,
                       dRe: dcRe, dIm: dcIm, exponent: 0, bailout2: b2, maxIterations: orbit.maxIterations,
                       power: orbit.power)
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
                           counts: UnsafeMutablePointer<UInt32>, mags: UnsafeMutablePointer<Float>,
                           u: UnsafeMutablePointer<Float>? = nil, strip: ExpMapTables? = nil) {
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
                                /// Every sample of the row: its offset from the strip's tables or the view's
                                /// grid, and with `u` the derivative too (z/d at escape).
                                func samples<D: PerturbationEscape.DerivativeMode>(_: D.Type) {
                                    for sx in 0..<sw {
                                        let d: (re: Double, im: Double, exponent: Int)
                                        // The derivative's unit: the view's pixel spacing, or a strip row's pixel side.
                                        let spacing: Double
                                        if let strip {
                                            d = strip.offset(sx: sx, sy: sy)
                                            spacing = strip.spacing(sy: sy)
                                        } else {
                                            let o = sampleDelta(sx: sx, sy: sy, width: width, height: height,
                                                                supersampling: supersampling, spacing: orbit.spacingMantissa)
                                            d = (o.re, o.im, E)
                                            spacing = orbit.spacingMantissa
                                        }
                                        let r = escape(D.self, orbitRe: re.baseAddress!, orbitIm: im.baseAddress!,
                                                       orbitCount: orbit.count, table: view, dRe: d.re, dIm: d.im,
                                                       exponent: d.exponent, spacing: spacing, bailout2: b2,
                                                       maxIterations: orbit.maxIterations, power: orbit.power)
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
