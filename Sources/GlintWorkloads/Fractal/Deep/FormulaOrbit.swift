import CMPFR
import GlintCore

/// The reference orbits that perturbation of Julia and Burning Ship (PerturbationFormulas)
/// iterates the samples' small deltas against, computed in MPFR at the precision the zoom needs
/// and stored rounded to Double.
///
/// Two orbits, one after the other in `re`/`im`:
/// - the main orbit, `mainCount` points from the view centre C: Z[0] = C (where a sample at C
///   starts: both formulas start z at the pixel), Z[n+1] = f(Z[n]);
/// - the critical orbit, `count - mainCount` points from the critical point 0: W[0] = 0,
///   W[n+1] = f(W[n]), at `re[mainCount]`, `im[mainCount]`. A sample that rebases (its z nearer 0
///   than its delta, or its reference at an end) continues as a delta from W[0] = 0 with dz = z.
///
/// f is Glint's step (FractalCPU): Julia z² + c with the fixed constant c (`--c`, its decimal text
/// read exactly); Burning Ship |z² + C| per component, C the pixel (here the centre). For Burning
/// Ship every point after the first of an orbit is stored as its value before the abs() (signed):
/// the point is its abs, and the sign tells which way the fold went, which the deltas need.
/// Julia stores the points themselves.
///
/// Each orbit ends after `maxIterations + 1` points (a sample that never rebases takes at most
/// `maxIterations` steps from Z[0]), or at its first point after the start with
/// |point|² > max(R², 4), which is kept (tested on the stored Doubles).
///
/// Memory: 16 bytes per point, two orbits: 32 × (maxIterations + 1) bytes at most (512 MB at
/// Glint's limit of 2^24 iterations).
public struct FormulaOrbit: DeepReference, Sendable {
    /// julia or burningShip.
    public let formula: FractalFormula
    /// The main orbit, then the critical orbit (see the type's documentation), rounded to nearest.
    public let re: [Double]
    public let im: [Double]
    /// Points of the main orbit (at least 2); the critical orbit starts at this index.
    public let mainCount: Int
    /// MPFR precision of the iteration, in bits (ReferenceOrbit.precisionBits of the zoom).
    public let precisionBits: Int
    /// Whether each orbit ended by escaping (rather than at its full length).
    public let mainEscaped: Bool
    public let criticalEscaped: Bool
    /// The escape radius R and the iteration limit the orbits were computed for.
    public let bailout: Double
    public let maxIterations: Int
    /// The view's pixel spacing 2 / (zoom × height), from MPFR (DeepReference gives its parts).
    public let spacing: ReferenceOrbit.Spacing

    /// Points in both orbits together.
    public var count: Int { re.count }

    /// The orbits of a view centred at (centerRe, centerIm); `c` is Julia's constant (ignored for
    /// Burning Ship). Errors (GlintError, one line): a formula without perturbation here, and
    /// those of ReferenceOrbit's checks (zoom, height, bailout, iterations).
    public init(formula: FractalFormula, centerRe: DeepNumber, centerIm: DeepNumber, zoom: DeepNumber,
                cRe: DeepNumber, cIm: DeepNumber, height: Int, bailout: Double, maxIterations: Int) throws(GlintError) {
        guard formula == .julia || formula == .burningShip else {
            throw GlintError(field: "formula", "\(formula.name) has no reference orbit here (julia and burning-ship do)")
        }
        try ReferenceOrbit.check(zoom: zoom, height: height, bailout: bailout, maxIterations: maxIterations)
        let bits = ReferenceOrbit.precisionBits(zoom: zoom)
        self.formula = formula
        precisionBits = bits
        self.bailout = bailout
        self.maxIterations = maxIterations
        spacing = ReferenceOrbit.Spacing(zoom: zoom, height: height, precision: bits)

        let centre = (MPFRNumber(centerRe, precision: bits), MPFRNumber(centerIm, precision: bits))
        // Julia adds its constant; Burning Ship the centre (its reference pixel).
        let add = formula == .julia ? (MPFRNumber(cRe, precision: bits), MPFRNumber(cIm, precision: bits)) : centre
        let limit = max(bailout * bailout, 4)
        let points = maxIterations + 1
        var re = [Double](), im = [Double]()
        re.reserveCapacity(2 * points)
        im.reserveCapacity(2 * points)
        let fold = formula == .burningShip
        let main = try ReferenceOrbit.append(from: centre, adding: add, fold: fold, testingStart: false, points: points,
                                         limit: limit, bits: bits, re: &re, im: &im)
        mainCount = re.count
        let zero = (MPFRNumber(precision: bits), MPFRNumber(precision: bits))
        let critical = try ReferenceOrbit.append(from: zero, adding: add, fold: fold, testingStart: false, points: points,
                                             limit: limit, bits: bits, re: &re, im: &im)
        mainEscaped = main
        criticalEscaped = critical
        self.re = re
        self.im = im
    }

    /// The orbits `job` (julia or burning-ship, by perturbation) renders against: its exact
    /// centre, zoom and c.
    public init(job: FractalJob) throws(GlintError) {
        try self.init(formula: job.formula, centerRe: job.exactCenter.re, centerIm: job.exactCenter.im,
                      zoom: job.exactZoom, cRe: job.exactC.re, cIm: job.exactC.im,
                      height: job.height, bailout: job.bailout, maxIterations: job.maxIterations)
    }

}

extension FractalFormula {
    /// Whether `--precision perturbation` (deep zoom) renders this formula: Mandelbrot
    /// (PerturbationCPU), Julia and Burning Ship (PerturbationFormulas).
    public var perturbs: Bool { self == .mandelbrot || self == .julia || self == .burningShip }

    /// The formulas `perturbs` is true of, for messages: "mandelbrot, julia and burning-ship".
    public static var perturbedNames: String {
        let names = allCases.filter(\.perturbs).map(\.name)
        return names.dropLast().joined(separator: ", ") + " and " + names.last!
    }
}
