import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// Deep zoom of the Mandelbrot set by perturbation, on the Swift CPU path.
///
/// A sample at c = C + dc (C the view centre, dc a small Double) is iterated as a delta against
/// the reference orbit O of C (ReferenceOrbit): with z = O[m] + dz,
///     dz' = 2·O[m]·dz + dz² + dc,   z' = O[m+1] + dz'.
/// dz and dc are Doubles ("perturbation with double deltas"), so this works while the deltas are
/// normal Doubles: sample spacings above about 1e-300 (`minimumSampleSpacing`); deeper needs an
/// extended-range delta (mantissa + separate exponent), which is not here.
///
/// Rebasing (Zhuoran): when |z| < |dz| (z is nearer 0 than the reference point O[m]), or the
/// reference has no next point, the delta is restarted against the start of
/// the reference: dz = z, m = 0 (O[0] = 0, so z is unchanged). This replaces glitch detection:
/// a single reference serves every sample. Accuracy: 53 bits relative to the delta; after a
/// sample leaves the reference its remaining steps are about as accurate as plain Double
/// iteration, so a rare sample whose escape is more sensitive than that can differ from exact
/// arithmetic (1 of 192 in the seahorse-valley test at zoom 1e20, by 97 of 9539 iterations).
///
/// Escape counts follow Glint's contract (FractalCPU.escape): z starts at the sample's c, each
/// step is z = z² + c, the count is the number of steps with |z|² <= R² before the first with
/// |z|² > R² (or NaN), at most maxIterations; `mag` is |z|² at escape (0 if it never escapes).
public enum PerturbationCPU {
    /// The smallest sample spacing (pixel spacing / supersampling) the double deltas are used
    /// for: 2^-1000 ≈ 9.3e-302, leaving 22 binary orders of magnitude above the smallest normal
    /// Double (2^-1022) for deltas that shrink during the iteration.
    public static let minimumSampleSpacing = 0x1p-1000

    /// One sample's escape count and |z|² at escape, for c = C + (dcRe, dcIm), C the orbit's
    /// centre. `orbitRe`/`orbitIm` hold `orbitCount` >= 2 points O[0] = 0, O[1] = C, ...;
    /// `bailout2` is R².
    ///
    /// The order of operations is part of the contract (an OpenCL twin must repeat it operation
    /// for operation, compiled with `#pragma OPENCL FP_CONTRACT OFF` so that nothing is fused
    /// into an fma): with (zr, zi) = O[m] and (dr, di) = dz, one step is
    ///     nr = ((2 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))) + dcRe
    ///     ni = ((2 * ((zr * di) + (zi * dr))) + (2 * (dr * di))) + dcIm
    ///     m = m + 1
    ///     xr = O[m].re + nr;  xi = O[m].im + ni
    ///     mag = (xr * xr) + (xi * xi)
    ///     if !(mag <= bailout2): escaped, stop
    ///     count = count + 1
    ///     if mag < (nr * nr) + (ni * ni) or m == orbitCount - 1: (dr, di) = (xr, xi), m = 0
    ///     else: (dr, di) = (nr, ni)
    /// starting from m = 1, dz = dc (z0 = c = O[1] + dc). If the orbit has only 2 points (C
    /// itself escaped), it starts rebased: dz = O[1] + dc, m = 0.
    @inline(__always)
    public static func escape(orbitRe: UnsafePointer<Double>, orbitIm: UnsafePointer<Double>, orbitCount: Int,
                              dcRe: Double, dcIm: Double, bailout2: Double,
                              maxIterations: Int) -> (count: UInt32, mag: Float) {
        precondition(orbitCount >= 2, "a reference orbit has at least O[0] and O[1]")
        let last = orbitCount - 1
        var m = 1
        var dr = dcRe, di = dcIm
        if m == last {
            dr = orbitRe[1] + dcRe
            di = orbitIm[1] + dcIm
            m = 0
        }
        var count: UInt32 = 0
        var mag: Float = 0
        var i = 0
        while i < maxIterations {
            let zr = orbitRe[m], zi = orbitIm[m]
            let nr = ((2 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))) + dcRe
            let ni = ((2 * ((zr * di) + (zi * dr))) + (2 * (dr * di))) + dcIm
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
                m = 0
            } else {
                dr = nr; di = ni
            }
            i += 1
        }
        return (count, mag)
    }

    /// `escape` against `orbit`, with its bailout and iteration limit (R² rounded through Float,
    /// as GlintFractalParams.bailout2 is, so counts match FractalCPU's double path exactly).
    public static func escape(orbit: ReferenceOrbit, dcRe: Double, dcIm: Double) -> (count: UInt32, mag: Float) {
        let b2 = bailout2(orbit.bailout)
        return orbit.re.withUnsafeBufferPointer { re in
            orbit.im.withUnsafeBufferPointer { im in
                escape(orbitRe: re.baseAddress!, orbitIm: im.baseAddress!, orbitCount: orbit.count,
                       dcRe: dcRe, dcIm: dcIm, bailout2: b2, maxIterations: orbit.maxIterations)
            }
        }
    }

    /// R² as the escape test uses it: Double(Float(R × R)), the value GlintFractalParams carries.
    public static func bailout2(_ bailout: Double) -> Double { Double(Float(bailout * bailout)) }

    /// The delta from the centre of sample (sx, sy) in the grid `supersampling` times finer than
    /// the width × height image, with pixel spacing `spacing`: FractalCPU.View.re/im less the
    /// centre, in the same order of operations:
    ///     dcRe = ((sx + 0.5) / ss - width/2) * spacing
    ///     dcIm = -(((sy + 0.5) / ss - height/2) * spacing)
    @inline(__always)
    public static func sampleDelta(sx: Int, sy: Int, width: Int, height: Int, supersampling: Int,
                                   spacing: Double) -> (re: Double, im: Double) {
        let ss = Double(supersampling)
        let halfW = Double(width) * 0.5, halfH = Double(height) * 0.5
        let offRe = ((Double(sx) + 0.5) / ss - halfW) * spacing
        let offIm = ((Double(sy) + 0.5) / ss - halfH) * spacing
        return (offRe, -offIm)
    }

    /// One sample row `sy` of a view: `width × supersampling` counts and mags.
    public static func row(orbit: ReferenceOrbit, width: Int, height: Int, supersampling: Int, sy: Int,
                           counts: UnsafeMutablePointer<UInt32>, mags: UnsafeMutablePointer<Float>) {
        let b2 = bailout2(orbit.bailout)
        let sw = width * supersampling
        orbit.re.withUnsafeBufferPointer { re in
            orbit.im.withUnsafeBufferPointer { im in
                for sx in 0..<sw {
                    let dc = sampleDelta(sx: sx, sy: sy, width: width, height: height, supersampling: supersampling,
                                         spacing: orbit.pixelSpacing)
                    let r = escape(orbitRe: re.baseAddress!, orbitIm: im.baseAddress!, orbitCount: orbit.count,
                                   dcRe: dc.re, dcIm: dc.im, bailout2: b2, maxIterations: orbit.maxIterations)
                    counts[sx] = r.count
                    mags[sx] = r.mag
                }
            }
        }
    }

    /// Every sample of a deep view: the reference orbit of its centre, then the sample rows in
    /// parallel (CPUParallel). Errors: those of DeepView.validate and ReferenceOrbit.
    public static func render(_ view: DeepView) async throws(GlintError) -> DeepEscapeImage {
        try view.validate()
        let orbit = try ReferenceOrbit(centerRe: view.centerRe, centerIm: view.centerIm, zoom: view.zoom,
                                       height: view.height, bailout: view.bailout, maxIterations: view.maxIterations)
        return await render(view, orbit: orbit)
    }

    /// The sample rows of `view` against an orbit already computed for it.
    public static func render(_ view: DeepView, orbit: ReferenceOrbit) async -> DeepEscapeImage {
        let sw = view.width * view.supersampling, sh = view.height * view.supersampling
        let cb = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: sw * sh)
        let mb = UnsafeMutableBufferPointer<Float>.allocate(capacity: sw * sh)
        defer { cb.deallocate(); mb.deallocate() }
        let c = SharedBuffer(cb), m = SharedBuffer(mb)
        let (w, h, ss) = (view.width, view.height, view.supersampling)
        // Each row writes only its own sw elements.
        await CPUParallel.forEach(sh) { sy in
            row(orbit: orbit, width: w, height: h, supersampling: ss, sy: sy,
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

    /// 2 / (zoom × height), from MPFR.
    public var pixelSpacing: Double {
        ReferenceOrbit.pixelSpacing(zoom: zoom, height: height, precision: ReferenceOrbit.precisionBits(zoom: zoom))
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
        // Checked on the zoom's digits first, so that an absurd zoom fails before any MPFR work.
        let log2Spacing = 1 - (zoom.log2Magnitude ?? 0) - log2(Double(height * supersampling))
        guard log2Spacing > -1100, pixelSpacing / Double(supersampling) >= PerturbationCPU.minimumSampleSpacing else {
            throw GlintError(field: "zoom", "\(DeepNumber.quoted(zoom.text)) with \(height) rows at supersampling \(supersampling) is beyond double-delta perturbation (sample spacing under 2^-1000, about 9.3e-302)")
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
