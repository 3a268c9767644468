import GlintCore

/// The misty window. Benchmark case: whole frames (blur + weights + drops + compose, and on OpenCL the
/// camera upload and the frame read-back) with a moving camera (two pictures alternating), so
/// every frame blurs. Throughput: frames per second over a run of frames. PNG writing is not timed.
public enum MistWorkload: Workload {
    public static let name = "mist"
    public static let parity = "the last frame within 1 level"

    public static func benchCases(_ kind: BenchSuiteKind) -> [BenchCase] {
        switch kind {
        case .quick: return [make(width: 320, height: 180, frames: 10)]
        case .standard: return [make(width: 1920, height: 1080, frames: 30)]
        case .full: return [make(width: 1920, height: 1080, frames: 30), make(width: 3840, height: 2160, frames: 10)]
        // A mist frame is a chain of small passes on the host's schedule (the live window's
        // frame rate), not a job that grows with the device.
        case .device: return []
        }
    }

    static func make(width: Int, height: Int, frames: Int) -> BenchCase {
        var job = MistJob()
        job.frames = frames
        job.seed = 1
        let pictures = BenchInput { [TestPicture.make(width: width, height: height), TestPicture.make(width: width, height: height, shift: 3)] }
        let frozen = job
        // One renderer per backend, rewound for every run: a video pipeline keeps its buffers.
        let renderers = BenchStateCache<MistRenderer>()
        let parameters = JSON.object([
            ("frames", .int(Int64(frames))), ("sigma", .number(job.sigma)), ("drops", .int(Int64(job.drops))),
            ("method", .string(job.method.rawValue)), ("camera", .string("two pictures alternating (a blur every frame)")),
        ])
        var c = BenchCase(
            workload: name, name: "frames-sigma40", width: width, height: height, parameters: parameters, unit: .frames,
            imageBytes: 3 * width * height * 4,  // the two camera pictures and the frame
            tolerance: "8-bit channels within 1 level (last frame)",
            run: { backend, detailed in
                let renderer = try renderers.get(backend) { try MistRenderer(job: frozen, width: width, height: height, backend: backend) }
                try renderer.rewind()
                // The first frame builds programs and touches every buffer: outside the timing.
                let pictures = pictures.get
                var last = try await renderer.renderNext(camera: pictures[0])
                let kernelBefore = renderer.kernelSeconds
                let start = Clock.now()
                for f in 1..<max(frames, 2) { last = try await renderer.renderNext(camera: pictures[f % 2]) }
                let wall = Clock.now() - start
                return BenchRun(wallSeconds: wall, kernelSeconds: renderer.kernelSeconds - kernelBefore,
                                work: Double(max(frames, 2) - 1), output: detailed ? BenchOutput(image: last) : nil)
            },
            validate: { candidate, reference in try BlurWorkload.validateImages(candidate, reference) })
        c.autoWork = Double(width * height)
        c.autoRepeats = Double(max(frames, 2) - 1)
        return c
    }
}

/// A mist job as `glint compare` runs it: `frames` frames from `camera`, the last one compared.
public struct MistComparison: ComparableJob {
    public var autoKind: AutoKind { .mist }

    public var job: MistJob
    public var width: Int
    public var height: Int
    /// Camera frame k (nil: the camera did not move).
    public var camera: @Sendable (Int) throws -> Image8?

    public init(job: MistJob, width: Int, height: Int, camera: @escaping @Sendable (Int) throws -> Image8?) {
        self.job = job
        self.width = width
        self.height = height
        self.camera = camera
    }

    public func comparisonRun(on backend: Backend, detailed: Bool) async throws -> ComparisonRun {
        let renderer = try MistRenderer(job: job, width: width, height: height, backend: backend)
        let start = Clock.now()
        var last = Image8(width: 0, height: 0)
        for f in 0..<job.frames { last = try await renderer.renderNext(camera: try camera(f)) }
        return ComparisonRun(image: last, wallSeconds: Clock.now() - start, kernelSeconds: renderer.kernelSeconds)
    }

    public var comparisonTolerance: Tolerance { .oneLevel }
}
