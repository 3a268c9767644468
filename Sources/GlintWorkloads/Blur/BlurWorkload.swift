import GlintCL
import GlintCore

/// The Gaussian blur. Benchmark cases: 8-bit RGBA at OpenCV's comparison sigmas (2, 10, 20, 40) with the
/// auto method, each method alone, and float. Throughput: megapixels per second. On a GPU the wall
/// time includes writing the image to the device and reading the result back; a CPU device works
/// in the host's memory and copies nothing (`BlurSession`).
public enum BlurWorkload: Workload {
    public static let name = "blur"
    public static let parity = "within 1 level (8-bit), relative error at most 1e-5 (float)"

    /// A case: its name and blur, on 8-bit or float pixels.
    struct Spec {
        let name: String, sigma: Double
        var method = BlurMethod.auto, float = false
    }

    public static func benchCases(_ kind: BenchSuiteKind) -> [BenchCase] {
        let standard: [Spec] = [
            Spec(name: "u8-sigma2", sigma: 2), Spec(name: "u8-sigma10", sigma: 10),
            Spec(name: "u8-sigma20", sigma: 20), Spec(name: "u8-sigma40", sigma: 40),
            Spec(name: "u8-sigma10-exact", sigma: 10, method: .exact),
            Spec(name: "f32-sigma8", sigma: 8, float: true),
        ]
        switch kind {
        case .quick:
            return [Spec(name: "u8-sigma2", sigma: 2), Spec(name: "u8-sigma20", sigma: 20),
                    Spec(name: "f32-sigma4-exact", sigma: 4, method: .exact, float: true)].map { make($0, 320, 240) }
        case .standard:
            return standard.map { make($0, 1920, 1080) }
        case .full:
            return standard.map { make($0, 1920, 1080) } + standard.map { make($0, 3840, 2160) }
        case .device:
            return [deviceSized(Spec(name: "u8-sigma10-exact", sigma: 10, method: .exact), step: 0),
                    deviceSized(Spec(name: "f32-sigma8", sigma: 8, float: true), step: 0)]
        }
    }

    /// The device-sized ladder: 1080p, 4K, 8K (a blur's kernels only read and write the image,
    /// so past 8K more pixels change the share of the copies little).
    static func deviceSized(_ spec: Spec, step: Int) -> BenchCase {
        let sizes = [(1920, 1080), (3840, 2160), (7680, 4320)]
        var c = make(spec, sizes[step].0, sizes[step].1)
        if step + 1 < sizes.count { c.larger = { deviceSized(spec, step: step + 1) } }
        c.unsupported = { backend in backend.isOpenCL ? nil : "device-sized cases measure OpenCL devices" }
        return c
    }

    static func make(_ s: Spec, _ width: Int, _ height: Int) -> BenchCase {
        let job = BlurJob(sigma: s.sigma, method: s.method)
        let plan = BlurPlan(job: job, format: s.float ? .f32 : .u8, width: width, height: height)
        // Made when the case runs and released after it (BenchScope).
        let picture = BenchInput { TestPicture.make(width: width, height: height) }
        let floats = BenchInput { picture.get.pixels.map { Float($0) / 255 } }
        let cache = BenchStateCache<BlurSession>()
        let parameters = JSON.object([
            ("sigma", .number(s.sigma)), ("method", .string(s.method.rawValue)), ("ran", .string(plan.method.rawValue)),
            ("format", .string(s.float ? "float RGBA" : "8-bit RGBA")), ("border", .string("reflect101")),
            ("kernel_size", plan.method == .exact ? .int(Int64(2 * plan.radius + 1)) : .null),
            ("box_widths", plan.method == .recursive ? .array(plan.boxWidths.map { .int(Int64($0)) }) : .null),
        ])
        let n = width * height * 4
        var c = BenchCase(
            workload: name, name: s.name, width: width, height: height, parameters: parameters, unit: .megaPixels,
            imageBytes: 2 * n * (s.float ? 4 : 1),
            tolerance: s.float ? "float max relative error 1e-5" : "8-bit channels within 1 level",
            run: { backend, detailed in
                // The Swift path and a device that works in host memory blur between two host
                // buffers; a GPU gets the image written and the result read back every run.
                let session = try cache.get(backend) {
                    let session = try BlurSession(plan: plan, backend: backend)
                    if s.float { try session.load(floats.get) } else { try session.load(picture.get.pixels) }
                    return session
                }
                let (wall, kernel) = try await session.run()
                var output: BenchOutput?
                if detailed {
                    output = s.float ? BenchOutput(floatImage: ImageF(width: width, height: height, pixels: try session.output(Float.self)))
                                     : BenchOutput(image: Image8(width: width, height: height, pixels: try session.output(UInt8.self)))
                }
                return BenchRun(wallSeconds: wall, kernelSeconds: kernel, work: Double(width * height), output: output)
            },
            validate: { candidate, reference in try validateImages(candidate, reference) },
            peakWork: BenchPeakWork(.bytes(perRun: Double(4 * n * (s.float ? 4 : 1))),
                                    counted: "4x the image's bytes: two passes, each reading and writing the image (the least a separable blur moves)"))
        c.autoWork = BlurPlan.autoWork(job, format: plan.format, width: width, height: height)
        c.autoVariant = BlurPlan.autoVariant(job, format: plan.format)
        return c
    }

    /// 8-bit: within 1 level; float: max relative error 1e-5 (docs/DESIGN.md).
    static func validateImages(_ candidate: BenchOutput, _ reference: BenchOutput) throws -> BenchValidation {
        let difference: ImageDifference
        let tolerance: Tolerance
        if let a = candidate.floatImage, let b = reference.floatImage {
            difference = try ImageCompare.compare(a, b)
            tolerance = .floatRelative
        } else if let a = candidate.image, let b = reference.image {
            difference = try ImageCompare.compare(a, b)
            tolerance = .oneLevel
        } else {
            throw GlintError("validation needs images from both runs")
        }
        let summary = difference.fullScale == 1
            ? "max relative error \(Format.significant(difference.overall.maxRelative, 3))" : difference.levelSummary
        return BenchValidation(passed: tolerance.passes(difference), summary: summary, metrics: difference.json)
    }
}

/// A blur job as `glint compare` runs it, on an 8-bit or a float image.
public enum BlurComparison: ComparableJob {
    public var autoKind: AutoKind { .blur }

    case eightBit(BlurJob, Image8)
    case float(BlurJob, ImageF)

    public func comparisonRun(on backend: Backend, detailed: Bool) async throws -> ComparisonRun {
        switch self {
        case .float(let job, let image):
            let r = try await BlurRenderer.blur(image, job, on: backend)
            return ComparisonRun(image: r.image.to8Bit(), floatImage: r.image, wallSeconds: r.wallSeconds, kernelSeconds: r.kernelSeconds)
        case .eightBit(let job, let image):
            return ComparisonRun(try await BlurRenderer.blur(image, job, on: backend))
        }
    }

    /// 8-bit: within 1 level; float: max relative error 1e-5.
    public var comparisonTolerance: Tolerance {
        if case .float = self { return .floatRelative }
        return .oneLevel
    }
}
