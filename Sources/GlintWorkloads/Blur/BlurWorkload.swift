import GlintCL
import GlintCore

/// The Gaussian blur. Benchmark cases: 8-bit RGBA at OpenCV's comparison sigmas (2, 10, 20, 40) with the
/// auto method, each method alone, and float. Throughput: megapixels per second. Wall time
/// includes, on OpenCL, writing the image to the device and reading the result back.
public enum BlurWorkload: Workload {
    public static let name = "blur"
    public static let parity = "within 1 level (8-bit), relative error at most 1e-5 (float)"

    struct Spec {
        let name: String
        let sigma: Double
        var method = BlurMethod.auto
        var float = false
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
        }
    }

    final class State: @unchecked Sendable {
        var cpu: CPUBlur?
        var cl: CLBlur?
        var src: UnsafeMutableRawPointer?, dst: UnsafeMutableRawPointer?
        var clSrc: (any KernelArgument)?, clDst: (any KernelArgument)?
        deinit { src?.deallocate(); dst?.deallocate() }
    }

    static func make(_ s: Spec, _ width: Int, _ height: Int) -> BenchCase {
        let job = BlurJob(sigma: s.sigma, method: s.method)
        let plan = BlurPlan(job: job, format: s.float ? .f32 : .u8, width: width, height: height)
        // Made when the case runs and released after it (BenchScope).
        let picture = BenchInput { TestPicture.make(width: width, height: height) }
        let floats = BenchInput { picture.get.pixels.map { Float($0) / 255 } }
        let cache = BenchStateCache<State>()
        let parameters = JSON.object([
            ("sigma", .number(s.sigma)), ("method", .string(s.method.rawValue)), ("ran", .string(plan.method.rawValue)),
            ("format", .string(s.float ? "float RGBA" : "8-bit RGBA")), ("border", .string("reflect101")),
            ("kernel_size", plan.method == .exact ? .int(Int64(2 * plan.radius + 1)) : .null),
            ("box_widths", plan.method == .recursive ? .array(plan.boxWidths.map { .int(Int64($0)) }) : .null),
        ])
        let n = width * height * 4
        return BenchCase(
            workload: name, name: s.name, width: width, height: height, parameters: parameters, unit: .megaPixels,
            imageBytes: 2 * n * (s.float ? 4 : 1),
            tolerance: s.float ? "float max relative error 1e-5" : "8-bit channels within 1 level",
            run: { backend, detailed in
                let state = try cache.get(backend) {
                    let st = State()
                    let bytes = n * (s.float ? 4 : 1)
                    st.dst = .allocate(byteCount: bytes, alignment: 64)
                    switch backend {
                    case .cpu:
                        // OpenCL uploads from the input itself: only the Swift path keeps an
                        // aligned host copy (as a caller's own buffer would be).
                        st.src = .allocate(byteCount: bytes, alignment: 64)
                        if s.float { floats.get.withUnsafeBytes { st.src!.copyMemory(from: $0.baseAddress!, byteCount: bytes) } }
                        else { picture.get.pixels.withUnsafeBytes { st.src!.copyMemory(from: $0.baseAddress!, byteCount: bytes) } }
                        st.cpu = CPUBlur(plan: plan)
                    case .opencl(let cc):
                        st.cl = try CLBlur(plan: plan, on: cc)
                        if s.float {
                            st.clSrc = try Buffer<Float>(context: cc.context, count: n)
                            st.clDst = try Buffer<Float>(context: cc.context, count: n)
                        } else {
                            st.clSrc = try Buffer<UInt8>(context: cc.context, count: n)
                            st.clDst = try Buffer<UInt8>(context: cc.context, count: n)
                        }
                    }
                    return st
                }
                let start = Clock.now()
                var kernel = 0.0
                switch backend {
                case .cpu:
                    await state.cpu!.run(src: UnsafeRawPointer(state.src!), dst: state.dst!)
                case .opencl(let cc):
                    let q = cc.queue
                    if s.float {
                        let src = state.clSrc as! Buffer<Float>, dst = state.clDst as! Buffer<Float>
                        try src.write(floats.get, queue: q)
                        let events = try state.cl!.encode(src: src, dst: dst)
                        try dst.read(into: UnsafeMutableBufferPointer(start: state.dst!.assumingMemoryBound(to: Float.self), count: n), count: n, queue: q)
                        for e in events { kernel += Double(try e.durationNanoseconds()) * 1e-9 }
                    } else {
                        let src = state.clSrc as! Buffer<UInt8>, dst = state.clDst as! Buffer<UInt8>
                        try src.write(picture.get.pixels, queue: q)
                        let events = try state.cl!.encode(src: src, dst: dst)
                        try dst.read(into: UnsafeMutableBufferPointer(start: state.dst!.assumingMemoryBound(to: UInt8.self), count: n), count: n, queue: q)
                        for e in events { kernel += Double(try e.durationNanoseconds()) * 1e-9 }
                    }
                }
                let wall = Clock.now() - start
                var output: BenchOutput?
                if detailed {
                    if s.float {
                        let p = state.dst!.assumingMemoryBound(to: Float.self)
                        output = BenchOutput(floatImage: ImageF(width: width, height: height, pixels: Array(UnsafeBufferPointer(start: p, count: n))))
                    } else {
                        let p = state.dst!.assumingMemoryBound(to: UInt8.self)
                        output = BenchOutput(image: Image8(width: width, height: height, pixels: Array(UnsafeBufferPointer(start: p, count: n))))
                    }
                }
                return BenchRun(wallSeconds: wall, kernelSeconds: kernel, work: Double(width * height), output: output)
            },
            validate: { candidate, reference in try validateImages(candidate, reference) })
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
            let r = try await BlurRenderer.blur(image, job, on: backend)
            return ComparisonRun(image: r.image, wallSeconds: r.wallSeconds, kernelSeconds: r.kernelSeconds)
        }
    }

    /// 8-bit: within 1 level; float: max relative error 1e-5.
    public var comparisonTolerance: Tolerance {
        if case .float = self { return .floatRelative }
        return .oneLevel
    }
}
