import GlintCL
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// A deterministic RGBA test picture: gradients, a sine pattern, hard-edged squares and noise
/// (edges and noise are where blur methods differ most).
public enum TestPicture {
    public static func make(width: Int, height: Int, seed: UInt64 = 1, shift: Int = 0) -> Image8 {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let xs = x + shift
                let squares = ((xs / 24) + (y / 24)) % 2 == 0
                pixels[i] = UInt8(truncatingIfNeeded: xs * 255 / max(width - 1, 1))
                let wave: Double = sin(Double(xs) / 9) * cos(Double(y) / 7)
                let s: Double = (wave * 0.5 + 0.5) * 255
                pixels[i + 1] = UInt8(max(0, min(255, s)))
                let noise = CounterRNG.philox(x: UInt32(xs), y: UInt32(y), sample: 0, dim: 0, seed: seed).x
                pixels[i + 2] = squares ? UInt8(truncatingIfNeeded: noise >> 24) : 40
            }
        }
        return Image8(width: width, height: height, pixels: pixels)
    }
}

/// Per-backend state that timed runs reuse (a video pipeline keeps its buffers), made on first use.
final class BenchStateCache<State: Sendable>: Sendable {
    private let states = Locked<[String: State]>([:])
    func get(_ backend: Backend, make: () throws -> State) rethrows -> State {
        let key = backend.label
        if let s = states.withLock({ $0[key] }) { return s }
        let s = try make()
        states.withLock { $0[key] = s }
        return s
    }
}

/// The blur's benchmark cases: 8-bit RGBA at OpenCV's comparison sigmas (2, 10, 20, 40) with the
/// auto method, each method alone, and float. Throughput: megapixels per second. Wall time
/// includes, on OpenCL, writing the image to the device and reading the result back.
enum BlurBench {
    struct Spec {
        let name: String
        let sigma: Double
        var method = BlurMethod.auto
        var float = false
    }

    static func cases(_ kind: BenchSuiteKind) -> [BenchCase] {
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
        let picture = TestPicture.make(width: width, height: height)
        let floats = picture.pixels.map { Float($0) / 255 }
        let cache = BenchStateCache<State>()
        let parameters = JSON.object([
            ("sigma", .number(s.sigma)), ("method", .string(s.method.rawValue)), ("ran", .string(plan.method.rawValue)),
            ("format", .string(s.float ? "float RGBA" : "8-bit RGBA")), ("border", .string("reflect101")),
            ("kernel_size", plan.method == .exact ? .int(Int64(2 * plan.radius + 1)) : .null),
            ("box_widths", plan.method == .recursive ? .array(plan.boxWidths.map { .int(Int64($0)) }) : .null),
        ])
        let n = width * height * 4
        return BenchCase(
            workload: "blur", name: s.name, width: width, height: height, parameters: parameters, unit: .megaPixels,
            tolerance: s.float ? "float max relative error 1e-5" : "8-bit channels within 1 level",
            run: { backend, detailed in
                let state = try cache.get(backend) {
                    let st = State()
                    let bytes = n * (s.float ? 4 : 1)
                    st.src = .allocate(byteCount: bytes, alignment: 64)
                    st.dst = .allocate(byteCount: bytes, alignment: 64)
                    if s.float { floats.withUnsafeBytes { st.src!.copyMemory(from: $0.baseAddress!, byteCount: bytes) } }
                    else { picture.pixels.withUnsafeBytes { st.src!.copyMemory(from: $0.baseAddress!, byteCount: bytes) } }
                    switch backend {
                    case .cpu: st.cpu = CPUBlur(plan: plan)
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
                        try src.write(floats, queue: q)
                        let events = try state.cl!.encode(src: src, dst: dst)
                        try dst.read(into: UnsafeMutableBufferPointer(start: state.dst!.assumingMemoryBound(to: Float.self), count: n), count: n, queue: q)
                        for e in events { kernel += Double(try e.durationNanoseconds()) * 1e-9 }
                    } else {
                        let src = state.clSrc as! Buffer<UInt8>, dst = state.clDst as! Buffer<UInt8>
                        try src.write(picture.pixels, queue: q)
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
        let o = difference.overall
        let summary = difference.fullScale == 1
            ? "max relative error \(Format.significant(o.maxRelative, 3))"
            : "max \(Format.short(o.maxAbs)) level\(o.maxAbs == 1 ? "" : "s"), PSNR " + (o.psnr.isFinite ? Format.fixed(o.psnr, 1) + " dB" : "inf")
        return BenchValidation(passed: tolerance.passes(difference), summary: summary, metrics: difference.json)
    }
}

/// The mist's benchmark case: whole frames (blur + weights + drops + compose, and on OpenCL the
/// camera upload and the frame read-back) with a moving camera (two pictures alternating), so
/// every frame blurs. Throughput: frames per second over a run of frames. PNG writing is not timed.
enum MistBench {
    static func cases(_ kind: BenchSuiteKind) -> [BenchCase] {
        switch kind {
        case .quick: return [make(width: 320, height: 180, frames: 10)]
        case .standard: return [make(width: 1920, height: 1080, frames: 30)]
        case .full: return [make(width: 1920, height: 1080, frames: 30), make(width: 3840, height: 2160, frames: 10)]
        }
    }

    static func make(width: Int, height: Int, frames: Int) -> BenchCase {
        var job = MistJob()
        job.frames = frames
        job.seed = 1
        let pictures = [TestPicture.make(width: width, height: height), TestPicture.make(width: width, height: height, shift: 3)]
        let frozen = job
        let parameters = JSON.object([
            ("frames", .int(Int64(frames))), ("sigma", .number(job.sigma)), ("drops", .int(Int64(job.drops))),
            ("method", .string(job.method.rawValue)), ("camera", .string("two pictures alternating (a blur every frame)")),
        ])
        return BenchCase(
            workload: "mist", name: "frames-sigma40", width: width, height: height, parameters: parameters, unit: .frames,
            tolerance: "8-bit channels within 1 level (last frame)",
            run: { backend, detailed in
                let renderer = try MistRenderer(job: frozen, width: width, height: height, backend: backend)
                // The first frame builds programs and touches every buffer: outside the timing.
                var last = try await renderer.renderNext(camera: pictures[0])
                let kernelBefore = renderer.kernelSeconds
                let start = Clock.now()
                for f in 1..<max(frames, 2) { last = try await renderer.renderNext(camera: pictures[f % 2]) }
                let wall = Clock.now() - start
                return BenchRun(wallSeconds: wall, kernelSeconds: renderer.kernelSeconds - kernelBefore,
                                work: Double(max(frames, 2) - 1), output: detailed ? BenchOutput(image: last) : nil)
            },
            validate: { candidate, reference in try BlurBench.validateImages(candidate, reference) })
    }
}
