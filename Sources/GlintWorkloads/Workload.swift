import GlintCore

/// A workload as the tools around it see it: its name and its benchmark cases. Each workload
/// folder defines one (`FractalWorkload`, `RTWorkload`, ...); the command-line tool lists them
/// once (`Workloads.all` in Sources/glint/Workloads.swift) and derives its subcommands, `compare`,
/// `bench` and `--then` from that list. docs/ADDING-A-WORKLOAD.md walks through adding one.
public protocol Workload {
    /// The name the command line, `compare`, `bench` and results use: `fractal`, `rtow`, ...
    static var name: String { get }
    /// What "matching" means between backends, in words (the docs/DESIGN.md parity row).
    static var parity: String { get }
    /// The benchmark cases of a suite, in report order; `BenchCase.workload` is `name`.
    static func benchCases(_ kind: BenchSuiteKind) -> [BenchCase]
}

/// A job `glint compare` can run on any backend: the same job twice, compared with `tolerance`.
public protocol ComparableJob: Sendable {
    /// What "matching" means for this job's output (the docs/DESIGN.md parity row).
    var comparisonTolerance: Tolerance { get }
    /// The job's kind, which decides where `--device auto` runs it.
    var autoKind: AutoKind { get }
    /// Whether the job computes in double precision (a calibrated `auto` weighs plain fractals
    /// by the rate of their precision).
    var autoDouble: Bool { get }
    /// Runs the job once on `backend`; `detailed` asks for the integer outputs too (timed runs
    /// leave them out, as a render would).
    func comparisonRun(on backend: Backend, detailed: Bool) async throws -> ComparisonRun
}

/// One side of a job comparison.
public struct ComparisonRun: Sendable {
    public var image: Image8
    /// The float result, for workloads that make one (blur of a PFM, 16-bit output): compared
    /// instead of `image`.
    public var floatImage: ImageF?
    /// Integer outputs that must be identical (fractal escape counts), when the workload has them.
    public var counts: [UInt32]?
    public var wallSeconds: Double
    public var kernelSeconds: Double
    /// The iteration limit the run found for itself (a fractal's `--iterations auto`).
    public var chosenIterations: Int?

    public init(image: Image8, floatImage: ImageF? = nil, counts: [UInt32]? = nil, wallSeconds: Double, kernelSeconds: Double,
                chosenIterations: Int? = nil) {
        self.image = image
        self.floatImage = floatImage
        self.counts = counts
        self.wallSeconds = wallSeconds
        self.kernelSeconds = kernelSeconds
        self.chosenIterations = chosenIterations
    }
}

/// A render's 8-bit image and times, as the renderers return them.
protocol TimedImage {
    var image: Image8 { get }
    var wallSeconds: Double { get }
    var kernelSeconds: Double { get }
}

extension IsoResult: TimedImage {}
extension RTResult: TimedImage {}
extension BlurResult<Image8>: TimedImage {}

extension ComparisonRun {
    init(_ r: some TimedImage) {
        self.init(image: r.image, wallSeconds: r.wallSeconds, kernelSeconds: r.kernelSeconds)
    }
}

extension ComparableJob {
    public var autoDouble: Bool { false }
}
