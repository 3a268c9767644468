import GlintCL
import GlintCore

/// An image between passes: on the host (the Swift path) or in a device buffer of the shared
/// context (OpenCL), RGBA 8-bit, row-major. Passes on a device hand buffers to each other; the
/// host sees the pixels once, at the end.
public enum StageImage: Sendable {
    case host(Image8)
    case device(Buffer<UInt8>, width: Int, height: Int)

    public var width: Int {
        switch self {
        case .host(let i): i.width
        case .device(_, let w, _): w
        }
    }
    public var height: Int {
        switch self {
        case .host(let i): i.height
        case .device(_, _, let h): h
        }
    }

    /// The pixels on the host (one read-back for a device image).
    public func hostImage(queue: CommandQueue?) throws -> Image8 {
        switch self {
        case .host(let i):
            return i
        case .device(let buffer, let w, let h):
            guard let queue else { throw GlintError("a device image needs its queue to be read") }
            let pixels = try buffer.read(queue: queue)
            // A buffer of exactly the image (every pass's output) is the array as it is, no copy.
            return Image8(width: w, height: h, pixels: pixels.count == w * h * 4 ? pixels : Array(pixels.prefix(w * h * 4)))
        }
    }
}

/// One pass of a `--then` chain (`--then NAME ...`): it takes the image before it and gives the next.
public protocol ChainPass: Sendable {
    /// The pass's name and settings, e.g. "iso depth 30".
    var summary: String { get }
    /// Applies the pass on `backend`; a device image stays on the device. Returns the output and
    /// the kernel time it took.
    func apply(_ input: StageImage, on backend: Backend) async throws -> (StageImage, Double)
}

/// The isometric transform as a chain pass.
public struct IsoPass: ChainPass {
    /// The depth, corner radius and supersampling (the source is the image the pass is given).
    public let settings: IsoJob

    public init(_ settings: IsoJob) { self.settings = settings }

    public var summary: String {
        "iso depth \(Format.short(settings.depth))" + (settings.cornerRadius > 0 ? " radius \(Format.short(settings.cornerRadius))" : "")
    }

    func job(width: Int, height: Int, source: Image8?) -> IsoJob {
        settings.reapplied(to: source, width: width, height: height)
    }

    public func apply(_ input: StageImage, on backend: Backend) async throws -> (StageImage, Double) {
        switch (input, backend) {
        case (.device(let src, let w, let h), .opencl(let cc)):
            let j = job(width: w, height: h, source: nil)
            try j.validate()
            let (out, seconds) = try IsoRenderer.renderOnDevice(j, source: src, on: cc)
            let (cw, ch) = j.canvasSize
            return (.device(out, width: cw, height: ch), seconds)
        default:
            let queue: CommandQueue? = if case .opencl(let cc) = backend { cc.queue } else { nil }
            let image = try input.hostImage(queue: queue)
            let r = try await IsoRenderer.render(job(width: image.width, height: image.height, source: image), on: backend)
            return (.host(r.image), r.kernelSeconds)
        }
    }
}

/// The Gaussian blur as a chain pass (8-bit RGBA).
public struct BlurPass: ChainPass {
    public var job: BlurJob

    public init(job: BlurJob) { self.job = job }

    public var summary: String { "blur sigma \(Format.short(job.sigma)) (\(job.resolvedMethod.rawValue))" }

    public func apply(_ input: StageImage, on backend: Backend) async throws -> (StageImage, Double) {
        try job.validate()
        switch (input, backend) {
        case (.device(let src, let w, let h), .opencl(let cc)):
            let plan = BlurPlan(job: job, format: .u8, width: w, height: h)
            let blur = try CLBlur(plan: plan, on: cc)
            let dst = try Buffer<UInt8>(context: cc.context, count: w * h * 4)
            var seconds = 0.0
            for e in try blur.encode(src: src, dst: dst) { seconds += Double(try e.durationNanoseconds()) * 1e-9 }
            return (.device(dst, width: w, height: h), seconds)
        default:
            let queue: CommandQueue? = if case .opencl(let cc) = backend { cc.queue } else { nil }
            let r = try await BlurRenderer.blur(try input.hostImage(queue: queue), job, on: backend)
            return (.host(r.image), r.kernelSeconds)
        }
    }
}
