import GlintCore

/// What a run hands back for validation: whichever of these the workload produces.
public struct BenchOutput: Sendable {
    public var image: Image8?
    public var floatImage: ImageF?
    public var counts: [UInt32]?
}

/// One timed execution of a case.
public struct BenchRun: Sendable {
    public var wallSeconds: Double
    /// Sum of the OpenCL profiling events' durations; 0 on the Swift path.
    public var kernelSeconds: Double
    /// Work done, in the unit's base quantity (iterations, samples, pixels); required from a
    /// detailed run, optional otherwise.
    public var work: Double?
    /// The output, from a detailed run.
    public var output: BenchOutput?
}

/// The outcome of checking an OpenCL case's output against the Swift CPU path's.
public struct BenchValidation: Sendable {
    public var passed: Bool
    /// One line, e.g. "counts identical; colours max 1 level, PSNR 58.1 dB".
    public var summary: String
    /// The measured figures (max_abs, mean_abs, rmse, psnr, pixels_over, ...).
    public var metrics: JSON
}

/// A throughput unit: `work / seconds / scale`, named `name` (Giter/s, Msamples/s, MP/s).
public struct BenchUnit: Sendable, Equatable {
    public let name: String
    public let scale: Double
    public init(name: String, scale: Double) {
        self.name = name
        self.scale = scale
    }
    public static let gigaIterations = BenchUnit(name: "Giter/s", scale: 1e9)
    public static let megaSamples = BenchUnit(name: "Msamples/s", scale: 1e6)
    public static let megaPixels = BenchUnit(name: "MP/s", scale: 1e6)
    public static let frames = BenchUnit(name: "frames/s", scale: 1)
}

/// How a case's work compares with a device's peak rates (`DevicePeak`): the flops of its
/// kernels (per unit of work: a fractal's 8 flops per escape iteration) or the global-memory
/// bytes they must move at least (per run), and how that is counted, in words.
public struct BenchPeakWork: Sendable {
    public enum Measure: Sendable { case flops(perWork: Double), bytes(perRun: Double) }
    public let measure: Measure
    public let counted: String
    public init(_ measure: Measure, counted: String) {
        self.measure = measure
        self.counted = counted
    }

    /// The fraction of `peak` a kernel time reaches for `work` units of work.
    public func fraction(of peak: DevicePeak, work: Double, kernelSeconds: Double) -> Double? {
        guard kernelSeconds > 0 else { return nil }
        switch measure {
        case .flops(let perWork): return work * perWork / kernelSeconds / peak.flops
        case .bytes(let perRun): return perRun / kernelSeconds / peak.bytesPerSecond
        }
    }
}

/// One benchmark case: a fixed job of one workload that any backend can run.
public struct BenchCase: Sendable {
    /// The workload's `Workload.name` (`fractal`, `rtow`, `blur`, ...), as `glint bench WORKLOAD`
    /// names it.
    public let workload: String
    /// The case within the workload, e.g. `mandelbrot-float`.
    public let name: String
    public let width: Int
    public let height: Int
    /// The job's other settings, recorded in the results.
    public let parameters: JSON
    public let unit: BenchUnit
    /// The job's kind, which decides where `--device auto` runs it.
    public let autoKind: AutoKind
    /// Whether the job computes in double precision (for a calibrated `auto`).
    public let autoDouble: Bool
    /// One job's work in `GPUCalibration`'s units, the jobs in one run (mist's frames) and the
    /// job's variant (blur's format and method), which a GPU calibration weighs; nil where unknown.
    public var autoWork: Double?
    public var autoRepeats: Double = 1
    public var autoVariant: String?
    /// The bytes of the images the job holds (inputs and outputs): its peak resident memory must
    /// stay within 4x this plus 100 MB (docs/DESIGN.md).
    public let imageBytes: Int
    /// What validation requires, in words (the docs/DESIGN.md parity row).
    public let tolerance: String
    /// Why `backend` cannot run this case (e.g. no fp64), or nil.
    public var unsupported: @Sendable (Backend) -> String?
    /// Runs the job once; `detailed` asks for the work done and the output.
    public let run: @Sendable (_ backend: Backend, _ detailed: Bool) async throws -> BenchRun
    /// Checks an output against the Swift CPU path's.
    public let validate: @Sendable (_ candidate: BenchOutput, _ reference: BenchOutput) throws -> BenchValidation
    /// What the kernels' time is compared with in the device's peak rates; nil where no peak
    /// applies (double precision against a float peak, the ray tracer's mixed work).
    public var peakWork: BenchPeakWork?
    /// A device-sized case's next size (more pixels or more work), or nil at the largest: the
    /// runner grows a case until its kernels take most of the wall time (`BenchSettings`).
    public var larger: (@Sendable () -> BenchCase)?

    public init(workload: String, name: String, width: Int, height: Int, parameters: JSON, unit: BenchUnit,
                autoKind: AutoKind? = nil, autoDouble: Bool = false, imageBytes: Int? = nil,
                tolerance: String, unsupported: @escaping @Sendable (Backend) -> String? = { _ in nil },
                run: @escaping @Sendable (Backend, Bool) async throws -> BenchRun,
                validate: @escaping @Sendable (BenchOutput, BenchOutput) throws -> BenchValidation,
                peakWork: BenchPeakWork? = nil) {
        self.workload = workload
        self.name = name
        self.width = width
        self.height = height
        self.parameters = parameters
        self.unit = unit
        guard let kind = autoKind ?? AutoKind(workload: workload) else {
            preconditionFailure("bench case \(workload)/\(name): give its autoKind (AutoKind has no kind named \(workload))")
        }
        self.autoKind = kind
        self.autoDouble = autoDouble
        self.imageBytes = imageBytes ?? width * height * 4
        self.tolerance = tolerance
        self.unsupported = unsupported
        self.run = run
        self.validate = validate
        self.peakWork = peakWork
    }

    /// Stable across runs and machines: `fractal/mandelbrot-float@1920x1080`. Baselines match on it.
    public var id: String { "\(workload)/\(name)@\(width)x\(height)" }

    /// DESIGN's memory bound for this case: 4x its images' bytes plus 100 MB.
    public var memoryBoundBytes: UInt64 { UInt64(4 * imageBytes + 100_000_000) }
}

/// Which cases a suite holds.
public enum BenchSuiteKind: String, Sendable, CaseIterable {
    /// Small sizes: the whole suite in well under two minutes on two cores (CI runs it).
    case quick
    /// The usual sizes (HD images).
    case standard
    /// The standard cases plus larger sizes and heavier variants.
    case full
    /// OpenCL devices only: cases that grow (8K frames, more iterations) until the kernels take
    /// at least 80% of the wall time on the device, reported against its measured peak.
    case device

    /// Seconds of timed repetitions each case aims for (clpeak-style calibration).
    public var targetSeconds: Double {
        switch self {
        case .quick: 0.25
        case .standard: 1.0
        case .full: 2.0
        case .device: 1.0
        }
    }
    public var minRepetitions: Int { self == .quick || self == .device ? 3 : 5 }
    public var maxRepetitions: Int { self == .quick ? 200 : 1000 }
}

/// The cases of a suite over a list of workloads.
public enum BenchSuite {
    /// The cases of `workloads`, in the list's order.
    public static func cases(_ kind: BenchSuiteKind, of workloads: [any Workload.Type]) -> [BenchCase] {
        workloads.flatMap { $0.benchCases(kind) }
    }
}

extension BenchValidation {
    /// An 8-bit image against the Swift path's within `tolerance` (one level unless said).
    public static func images(_ candidate: BenchOutput, _ reference: BenchOutput,
                              tolerance: Tolerance = .oneLevel) throws -> BenchValidation {
        guard let a = candidate.image, let b = reference.image else { throw GlintError("validation needs images from both runs") }
        let d = try ImageCompare.compare(a, b)
        return BenchValidation(passed: tolerance.passes(d), summary: d.levelSummary, metrics: d.json)
    }
}

extension ImageDifference {
    /// "max 1 level, PSNR 58.1 dB".
    public var levelSummary: String {
        "max \(Format.short(overall.maxAbs)) level\(overall.maxAbs == 1 ? "" : "s"), PSNR "
            + (overall.psnr.isFinite ? Format.fixed(overall.psnr, 1) + " dB" : "inf")
    }

    /// The overall figures as JSON (PSNR null when infinite, i.e. identical).
    public var json: JSON {
        let o = overall
        return .object([
            ("max_abs", .number(o.maxAbs)), ("mean_abs", .number(o.meanAbs)), ("rmse", .number(o.rmse)),
            ("psnr_db", o.psnr.isFinite ? .number(o.psnr) : .null),
            ("pixels_over_threshold", .int(Int64(o.pixelsOver))), ("share_over_threshold", .number(o.shareOver)),
            ("threshold", .number(threshold)), ("full_scale", .number(fullScale)),
        ])
    }
}
