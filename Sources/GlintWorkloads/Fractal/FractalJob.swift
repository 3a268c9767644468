import CGlintTypes
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// The escape-time formulas; raw values are the kernels' GLINT_FORMULA_* codes.
public enum FractalFormula: Int32, CaseIterable, Sendable {
    case mandelbrot = 0, julia = 1, burningShip = 2, sierpinskiJulia = 3, imageJulia = 4

    public var name: String {
        switch self {
        case .mandelbrot: "mandelbrot"
        case .julia: "julia"
        case .burningShip: "burning-ship"
        case .sierpinskiJulia: "sierpinski-julia"
        case .imageJulia: "image-julia"
        }
    }
    public init?(name: String) {
        guard let f = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = f
    }

    /// The view that shows the whole set at zoom 1.
    public var defaultCenter: (re: Double, im: Double) {
        switch self {
        case .mandelbrot: (-0.75, 0)
        case .burningShip: (-0.45, -0.5)
        case .julia, .sierpinskiJulia: (0, 0)
        // The tutorial samples the texture at z in [0.01, 0.99]^2.
        case .imageJulia: (0, 0)
        }
    }
}

/// How an escaped sample is coloured (`--color`); raw values are the kernels' GLINT_COLOR_*.
public enum Colouring: String, CaseIterable, Sendable {
    /// The palette at the escape count (smooth or banded).
    case count
    /// Grey by the exterior distance estimate DE = |z|·ln|z|² / |dz/dc|, in pixels: black on the
    /// boundary, white far from it.
    case de
    /// The palette shaded by the slope: the unit normal z/(dz/dc) against a light.
    case slope

    var code: Int32 {
        switch self {
        case .count: GLINT_COLOR_COUNT
        case .de: GLINT_COLOR_DE
        case .slope: GLINT_COLOR_SLOPE
        }
    }
}

public enum Precision: String, CaseIterable, Sendable {
    case float, double
    /// Deep zoom (Mandelbrot, Julia, Burning Ship): each sample iterated as a Double delta against a
    /// reference orbit of the centre computed in arbitrary precision, with rebasing (Mandelbrot:
    /// ReferenceOrbit, PerturbationCPU; Julia and Burning Ship: FormulaOrbit, PerturbationFormulas).
    case perturbation

    /// The first precision that renders `job` faithfully: float, then double, then (Mandelbrot,
    /// Julia, Burning Ship) perturbation; when none does, the deepest the formula has (its validate
    /// says why).
    public static func automatic(for job: FractalJob) -> Precision {
        for candidate in [Precision.float, .double, .perturbation] {
            var j = job
            j.precision = candidate
            // image-julia's texture is read later; its size does not decide the precision.
            if j.formula == .imageJulia && j.texture == nil { j.texture = Image8(width: 1, height: 1) }
            if (try? j.validate()) != nil { return candidate }
        }
        return job.formula.perturbs ? .perturbation : .double
    }
}

/// One fractal render, fully described. A render is a pure function of this value.
public struct FractalJob: Sendable {
    public var formula: FractalFormula = .mandelbrot
    public var width = 1200
    public var height = 800
    /// The view centre, exact (any number of digits): the perturbation's reference orbit is
    /// computed from it; the kernels read its nearest Doubles, `centerRe` and `centerIm`.
    public var exactCenter: DeepComplex {
        get { DeepComplex(re: exact.centerRe.value, im: exact.centerIm.value) }
        set { (exact.centerRe, exact.centerIm) = (Exact(newValue.re), Exact(newValue.im)) }
    }
    /// The zoom, exact: at zoom 1 the image height spans 2 units of the complex plane. Its
    /// nearest Double, `zoom`, is +inf past 1e308.
    public var exactZoom: DeepNumber {
        get { exact.zoom.value }
        set { exact.zoom = Exact(newValue) }
    }
    /// The Julia constant, exact: Julia's perturbation orbits use its digits; the kernels read
    /// its nearest Doubles, `cRe` and `cIm`.
    public var exactC: DeepComplex {
        get { DeepComplex(re: exact.cRe.value, im: exact.cIm.value) }
        set { (exact.cRe, exact.cIm) = (Exact(newValue.re), Exact(newValue.im)) }
    }

    /// The centre, zoom and c as the Doubles nearest the exact values. Setting one (to a finite
    /// Double) sets the exact value to the Double's shortest round-trip text, `DeepNumber(_:)`.
    public var centerRe: Double { get { exact.centerRe.nearest } set { exact.centerRe = Exact(DeepNumber(newValue)) } }
    public var centerIm: Double { get { exact.centerIm.nearest } set { exact.centerIm = Exact(DeepNumber(newValue)) } }
    public var zoom: Double { get { exact.zoom.nearest } set { exact.zoom = Exact(DeepNumber(newValue)) } }
    public var cRe: Double { get { exact.cRe.nearest } set { exact.cRe = Exact(DeepNumber(newValue)) } }
    public var cIm: Double { get { exact.cIm.nearest } set { exact.cIm = Exact(DeepNumber(newValue)) } }
    public var maxIterations = 128
    /// Mandelbrot's z^power + c (2...8, `maxPower`); the other formulas take 2 only.
    public var power = 2
    public var bailout = 2.0
    public var palette: Color.Palette = .tutorial
    public var smooth = false
    /// `--color`: by count, distance estimate or slope (the last two carry the derivative).
    public var colouring: Colouring = .count
    /// Slope shading's light: its direction in the plane, degrees counter-clockwise from +re, and
    /// its height (`--light ANGLE,HEIGHT`).
    public var lightAngle = 45.0
    public var lightHeight = 1.5
    /// An exponential-map strip (`--exp-map`) of the zoom from 1 to this view's, instead of the
    /// view: width and height are then the strip's columns and rows (mandelbrot, perturbation).
    public var expMap: ExpMapLayout?
    /// Samples per pixel side (ss x ss samples per pixel).
    public var supersampling = 1
    public var precision: Precision = .float
    /// The exact centre, zoom and c with their nearest Doubles, converted once when set: a
    /// render reads the stored Doubles (`params`), never the decimal text.
    private var exact = ExactFields()
    /// Main-cardioid and period-2-bulb skipping (Mandelbrot only); changes speed, never pixels.
    public var skipInterior = true
    /// Perturbation: skip iterations by bilinear approximation (BLATable). Off iterates every
    /// step (slower; for comparison). Counts may differ slightly between the two.
    public var bla = true
    /// The image-julia texture.
    public var texture: Image8?

    public init(formula: FractalFormula = .mandelbrot) {
        self.formula = formula
        (centerRe, centerIm) = formula.defaultCenter
    }

    public static let maxIterationLimit = 1 << 24
    public static let maxSupersampling = 16
    /// The largest escape radius (--bailout); it must be above 1.
    public static let maxBailout = 1e9
    /// The highest --power.
    public static let maxPower = 8

    /// log2(power) as a Float, as the kernels' smooth colouring reads it (LOG2_POWER_BITS).
    static func log2Power(_ power: Int) -> Float { Float(log2(Double(power))) }

    /// Checks every field; one clear line for the first bad one.
    public func validate() throws(GlintError) {
        try ImageLimits.check(width: width, height: height)
        guard (2...Self.maxPower).contains(power) else {
            throw GlintError(field: "power", "must be between 2 and \(Self.maxPower) (got \(power))")
        }
        guard power == 2 || formula == .mandelbrot else {
            throw GlintError(field: "power", "\(power) is for mandelbrot only (\(formula.name) is quadratic)")
        }
        if let expMap {
            guard formula == .mandelbrot, precision == .perturbation, supersampling == 1 else {
                throw GlintError(field: "exp-map", "a strip renders mandelbrot by perturbation, one sample a pixel")
            }
            guard width == expMap.columns, height == expMap.rows else {
                throw GlintError(field: "exp-map", "the strip is \(expMap.columns)x\(expMap.rows) (got \(width)x\(height))")
            }
        }
        if colouring != .count {
            guard formula == .mandelbrot || formula == .julia else {
                throw GlintError(field: "color", "\(colouring.rawValue) colours mandelbrot and julia (it needs the complex derivative, which \(formula.name) has not)")
            }
        }
        guard lightAngle.isFinite, abs(lightAngle) <= 360, lightHeight.isFinite, (0...100).contains(lightHeight) else {
            throw GlintError(field: "light", "the angle must be within ±360 degrees and the height 0 to 100 (got \(lightAngle),\(lightHeight))")
        }
        if precision == .perturbation {
            guard formula.perturbs else {
                throw GlintError(field: "precision", "perturbation renders \(FractalFormula.perturbedNames) (deep zoom of \(formula.name) is not built yet)")
            }
            guard (1...Self.maxIterationLimit).contains(maxIterations) else {
                throw GlintError(field: "maxIterations", "must be between 1 and \(Self.maxIterationLimit) (got \(maxIterations))")
            }
            try deepView().validate()
            try PerturbationFormulas.validate(self)   // julia, burning-ship: c and the double deltas' depth
            return
        }
        guard zoom > 0 else { throw GlintError(field: "zoom", "must be a positive number (got \(zoom))") }
        guard zoom.isFinite else {
            throw GlintError(field: "zoom", "\(exactZoom.text) is beyond double precision; deep zoom (perturbation) renders \(FractalFormula.perturbedNames)")
        }
        guard centerRe.isFinite, centerIm.isFinite else { throw GlintError(field: "center", "must be finite") }
        guard (1...Self.maxIterationLimit).contains(maxIterations) else {
            throw GlintError(field: "maxIterations", "must be between 1 and \(Self.maxIterationLimit) (got \(maxIterations))")
        }
        guard bailout.isFinite, bailout > 1, bailout <= Self.maxBailout else {
            throw GlintError(field: "bailout", "must be above 1 and at most 1e9 (got \(bailout))")
        }
        guard (1...Self.maxSupersampling).contains(supersampling) else {
            throw GlintError(field: "supersampling", "must be between 1 and \(Self.maxSupersampling) (got \(supersampling))")
        }
        let samples = width * supersampling
        guard samples <= ImageLimits.maxSide, height * supersampling <= ImageLimits.maxSide else {
            throw GlintError(field: "supersampling", "\(supersampling) at \(width)x\(height) needs a sample grid over \(ImageLimits.maxSide) a side")
        }
        guard cRe.isFinite, cIm.isFinite else { throw GlintError(field: "c", "must be finite") }
        if formula == .imageJulia && texture == nil {
            throw GlintError(field: "texture", "is required by image-julia (an RGBA image)")
        }
        // Past these zooms neighbouring pixels map to the same number: refuse rather than draw blocks.
        let s = 2.0 / (zoom * Double(height))
        let magnitude = max(abs(centerRe), abs(centerIm), Double(Float.leastNormalMagnitude))
        guard s.isNormal, s >= magnitude.ulp else {
            throw GlintError(field: "zoom", "\(zoom) at this centre is beyond double precision (neighbouring pixels would coincide)")
        }
        if precision == .float, !Float(s).isNormal || Float(s) < Float(magnitude).ulp {
            throw GlintError(field: "zoom", "\(zoom) at this centre is beyond float precision (neighbouring pixels would coincide): use double precision")
        }
    }

    /// The view as perturbation sees it: the exact centre and zoom.
    public func deepView() -> DeepView {
        DeepView(centerRe: exactCenter.re, centerIm: exactCenter.im, zoom: exactZoom, width: width, height: height,
                 supersampling: supersampling, maxIterations: maxIterations, bailout: bailout)
    }

    /// The struct the kernels read (and the Swift twin reads the same fields).
    public var params: GlintFractalParams {
        var p = GlintFractalParams()
        let s = 2.0 / (zoom * Double(height))
        p.center_re_bits = centerRe.bitPattern
        p.center_im_bits = centerIm.bitPattern
        p.scale_bits = s.bitPattern
        p.c_re_bits = cRe.bitPattern
        p.c_im_bits = cIm.bitPattern
        let (reHi, reLo) = Self.split(centerRe)
        let (imHi, imLo) = Self.split(centerIm)
        p.center_re_hi = reHi; p.center_re_lo = reLo
        p.center_im_hi = imHi; p.center_im_lo = imLo
        p.scale = Float(s)
        p.c_re = Float(cRe)
        p.c_im = Float(cIm)
        p.bailout2 = Float(bailout * bailout)
        p.log_bailout2 = Float(log(bailout * bailout))
        p.width = Int32(width)
        p.height = Int32(height)
        p.ss = Int32(supersampling)
        p.max_iter = Int32(maxIterations)
        p.tex_width = Int32(texture?.width ?? 0)
        p.tex_height = Int32(texture?.height ?? 0)
        p.palette = palette.rawValue
        p.smooth = smooth ? 1 : 0
        p.power = Int32(power)
        p.color = colouring.code
        p.light_x = Float(cos(lightAngle * .pi / 180))
        p.light_y = Float(sin(lightAngle * .pi / 180))
        p.light_h = Float(lightHeight)
        return p
    }

    /// A double as float hi + float lo, hi the nearest float.
    static func split(_ x: Double) -> (Float, Float) {
        let hi = Float(x)
        return (hi, Float(x - Double(hi)))
    }

    /// Total samples, for throughput figures.
    public var sampleCount: Int { width * height * supersampling * supersampling }
}

/// An exact number and the Double nearest it, set together.
private struct Exact: Sendable {
    let value: DeepNumber
    let nearest: Double

    init(_ value: DeepNumber) {
        self.value = value
        nearest = value.nearestDouble
    }
}

/// FractalJob's exact numbers; the defaults are Mandelbrot's whole-set view and the tutorial's c.
private struct ExactFields: Sendable {
    var centerRe = Exact(DeepNumber(-0.75)), centerIm = Exact(DeepNumber(0.0))
    var zoom = Exact(DeepNumber(1.0))
    var cRe = Exact(DeepNumber(-0.76)), cIm = Exact(DeepNumber(0.15))
}

/// What a render produced.
public struct FractalResult: Sendable {
    public var image: Image8
    /// Each pixel's mean colour before the 8-bit rounding (`image` is this rounded), alpha 1, when
    /// asked for (`FractalRenderer.Outputs.colour`). The values are the palette's display values,
    /// which the 8-bit PNG stores as sRGB: undo the sRGB curve (`Color.srgbToLinear`) for linear light.
    public var colour: ImageF?
    /// Escape counts at the pixel centres (row-major), when asked for.
    public var counts: [UInt32]?
    /// Sum of every sample's escape count (interior samples count max iterations), when asked for.
    public var iterations: UInt64?
    /// Each pixel's distance estimate in pixels (row-major), when asked for: the mean of
    /// |z|·ln|z|² / |dz/dc| over its escaping samples, 0 where none escapes.
    public var distance: [Float]? = nil
    /// OpenCL kernel time from profiling events (0 on the CPU path).
    public var kernelSeconds: Double
    /// Wall time of the render, transfers included.
    public var wallSeconds: Double
}

extension DeepView {
    /// The view of numbers already read (FractalJob.deepView()).
    public init(centerRe: DeepNumber, centerIm: DeepNumber, zoom: DeepNumber, width: Int, height: Int,
                supersampling: Int = 1, maxIterations: Int, bailout: Double = 2) {
        self.centerRe = centerRe
        self.centerIm = centerIm
        self.zoom = zoom
        self.width = width
        self.height = height
        self.supersampling = supersampling
        self.maxIterations = maxIterations
        self.bailout = bailout
    }
}

extension FractalJob: PixelIdentifiable {
    /// Every field but `skipInterior` (which changes speed, never pixels); the centre, zoom and c
    /// as the decimals the view record keeps.
    public func writeIdentity(into identity: inout PixelIdentity) {
        identity.add("view", fields: formula.name, width, height, exactCenter, exactZoom, exactC)
        identity.add("colour", fields: maxIterations, bailout, palette.name, smooth, supersampling, precision.rawValue, bla)
        identity.add("power", fields: power)
        identity.add("shading", fields: colouring.rawValue, lightAngle, lightHeight)
        identity.add("expMap", fields: expMap?.columns ?? 0)
        identity.add("texture", texture)
    }
}
