#if Serve
import GlintCore
import GlintWorkloads

/// Where the server's device work runs: everything that opens a device or renders goes through
/// one of these. `glint serve` uses `DeviceWorkers` (separate processes, so that an OpenCL
/// driver's abort costs one request); tests that drive the server in process use
/// `InProcessDevices`, which is also what each worker process runs.
///
/// A job is a workload and its arguments as the command reads them (`ServeJob.commandArgs`:
/// uploads already turned into files), so that it can cross to another process as text.
protocol DeviceRunner: Sendable {
    /// The label of the backend `device` resolves to for a job of `kind` (opening the device),
    /// and the OpenCL devices there are.
    func describe(device: String, kind: AutoKind) async throws -> DeviceDescription
    /// One render, as `glint compare` runs it (`detailed`: the float image and counts too).
    func run(_ job: DeviceJob, device: String, detailed: Bool) async throws -> DeviceRun
    /// The ray tracer pass by pass: `pass` gets each running image (when `wantsPass` says so).
    func rtow(_ job: DeviceJob, device: String, wantsPass: @escaping @Sendable () -> Bool,
              pass: @escaping @Sendable (RTPassFrame) -> Void) async throws -> RTFinalFrame
    /// Frame `frame` of a pulse.
    func pulse(_ job: DeviceJob, device: String, frame: Int) async throws -> DeviceRun
    /// A zoom video's strip: its iteration count when `autoIterations`, then the strip itself.
    func strip(_ job: DeviceJob, device: String, autoIterations: Bool,
               progress: @escaping @Sendable (StripProgress) -> Void) async throws -> StripResult
    /// A live mist: its renderer, kept until `close`.
    func mist(_ job: DeviceJob, device: String, width: Int, height: Int) async throws -> any MistRunner
}

/// A live mist's renderer, wherever it runs.
protocol MistRunner: Sendable {
    var device: String { get }
    /// The next frame with these wipes and gravity (and camera picture); nil past the last frame.
    func next(wipes: [MistWipe], gravity: SIMD2<Double>?, camera: Image8?) async throws -> (image: Image8, frame: Int)?
    func close()
}

struct DeviceJob: Sendable {
    var workload: String
    var args: [String]

    init(workload: String, args: [String]) {
        self.workload = workload
        self.args = args
    }

    init(_ job: ServeJob) { self.init(workload: job.workload, args: job.commandArgs) }

    /// The command, parsed as `glint <workload>` parses it. The last few are kept: a live view
    /// sends the same job every frame, and a parsed command is a value never changed.
    func command() throws -> any WorkloadCommand {
        let key = ([workload] + args).joined(separator: "\u{0}")
        if let hit = Self.parsed.withLock({ list in list.first { $0.key == key }?.command }) { return hit }
        let command = try ServeJob.parseCommand(workload: workload, args: args)
        Self.parsed.withLock { list in
            list.insert((key, command), at: 0)
            if list.count > 8 { list.removeLast() }
        }
        return command
    }

    private static let parsed = Locked<[(key: String, command: any WorkloadCommand)]>([])
}

struct DeviceDescription: Sendable {
    var label: String
    var devices: [(id: String, name: String, type: String)]
    var problem: String?

    var json: JSON {
        .object([("label", .string(label)),
                 ("devices", .array(devices.map { .object([("id", .string($0.id)), ("name", .string($0.name)), ("type", .string($0.type))]) })),
                 ("problem", problem.map { .string($0) } ?? .null)])
    }

    init(label: String, devices: [(id: String, name: String, type: String)], problem: String?) {
        (self.label, self.devices, self.problem) = (label, devices, problem)
    }

    init(json: JSON) {
        label = json["label"]?.stringValue ?? "?"
        devices = (json["devices"]?.arrayValue ?? []).map { d in
            (id: d["id"]?.stringValue ?? "?", name: d["name"]?.stringValue ?? "?", type: d["type"]?.stringValue ?? "?")
        }
        problem = json["problem"]?.stringValue
    }
}

struct DeviceRun: Sendable {
    var run: ComparisonRun
    var device: String
}

struct RTPassFrame: Sendable {
    var image: Image8
    var samplesPerPixel: Int, targetSamplesPerPixel: Int
    var seconds: Double
    var samplesTraced: Int
    var device: String
}

struct RTFinalFrame: Sendable {
    var image: Image8
    var wallSeconds: Double, kernelSeconds: Double
    var samples: Int, samplesPerPixel: Int, targetSamplesPerPixel: Int
    var stoppedEarly: Bool
    var device: String
}

struct StripProgress: Sendable {
    /// "iterations" while the count is chosen, "strip" while the strip renders.
    var phase: String
    var fraction: Double
    var iterations: Int?
}

struct StripResult: Sendable {
    var image: Image8
    var iterations: Int
    var device: String
}

/// Device work in this process.
struct InProcessDevices: DeviceRunner {
    func backend(_ device: String, for kind: AutoKind, double: Bool = false) throws -> Backend {
        let choice: DeviceChoice
        do { choice = try DeviceChoice(parsing: device) } catch { throw ServeError.bad(error.flagged.message) }
        do {
            return try Backend.resolve(choice, for: kind, estimate: AutoEstimate(double: double, iterations: nil))
        } catch let e as GlintError { throw ServeError.bad(e.flagged.message) }
    }

    func describe(device: String, kind: AutoKind) async throws -> DeviceDescription {
        let label = try backend(device, for: kind).label
        let inventory = DeviceInventory.scan()
        return DeviceDescription(label: label, devices: inventory.devices.enumerated().map { i, d in
            (id: "opencl:\(i)", name: (try? d.name) ?? "?", type: (try? d.kind.rawValue) ?? "?")
        }, problem: inventory.problem)
    }

    func run(_ job: DeviceJob, device: String, detailed: Bool) async throws -> DeviceRun {
        let comparable: any ComparableJob
        do { comparable = try job.command().comparableJob() } catch { throw ServeError.from(error, preparing: true) }
        let backend = try backend(device, for: comparable.autoKind, double: comparable.autoDouble)
        return DeviceRun(run: try await comparable.comparisonRun(on: backend, detailed: detailed), device: backend.label)
    }

    func rtow(_ job: DeviceJob, device: String, wantsPass: @escaping @Sendable () -> Bool,
              pass: @escaping @Sendable (RTPassFrame) -> Void) async throws -> RTFinalFrame {
        guard let command = try job.command() as? RTOW else { throw ServeError.bad("not a ray-tracing job") }
        let rt: RTJob
        do { rt = try command.makeJob() } catch { throw ServeError.from(error, preparing: true) }
        let backend = try backend(device, for: .rtow)
        let label = backend.label
        let progress = Locked<RTProgress?>(nil)
        var options = RTRenderer.Options(snapshotInterval: 0, snapshot: { acc in
            guard wantsPass() else { return }
            let p = progress.withLock { $0 }
            pass(RTPassFrame(image: acc.gammaImage(), samplesPerPixel: acc.samplesPerPixel, targetSamplesPerPixel: rt.samplesPerPixel,
                             seconds: p?.seconds ?? 0, samplesTraced: p?.samplesTraced ?? 0, device: label))
        }, shouldStop: { Task.isCancelled })
        options.launchSeconds = 0.05
        let settings = options
        let result = try await RTRenderer.render(rt, on: backend, options: settings, progress: { p in progress.withLock { $0 = p } })
        return RTFinalFrame(image: result.image, wallSeconds: result.wallSeconds, kernelSeconds: result.kernelSeconds,
                            samples: result.samples, samplesPerPixel: result.samplesPerPixel,
                            targetSamplesPerPixel: rt.samplesPerPixel, stoppedEarly: result.stoppedEarly, device: backend.label)
    }

    func pulse(_ job: DeviceJob, device: String, frame: Int) async throws -> DeviceRun {
        guard let command = try job.command() as? Pulse else { throw ServeError.bad("not a pulse job") }
        let pulse: PulseJob
        do { pulse = try command.makeJob() } catch { throw ServeError.from(error, preparing: true) }
        let backend = try backend(device, for: .pulse)
        let t0 = Clock.now()
        let out = try PulseRenderer.render(pulse, frame: frame, on: backend)
        return DeviceRun(run: ComparisonRun(image: out.image, wallSeconds: Clock.now() - t0, kernelSeconds: out.kernelSeconds),
                         device: backend.label)
    }

    func strip(_ job: DeviceJob, device: String, autoIterations: Bool,
               progress: @escaping @Sendable (StripProgress) -> Void) async throws -> StripResult {
        guard let command = try job.command() as? Fractal else { throw ServeError.bad("a zoom video zooms into a fractal view") }
        var strip: FractalJob
        do {
            strip = try command.makeJob()
            try strip.validate()
        } catch { throw ServeError.from(error, preparing: true) }
        let backend = try backend(device, for: strip.autoKind)
        if autoIterations {
            progress(StripProgress(phase: "iterations", fraction: 0))
            strip.maxIterations = try await AutoIterations.choose(for: strip, on: backend).iterations
        }
        try Task.checkCancellation()
        let iterations = strip.maxIterations
        progress(StripProgress(phase: "strip", fraction: 0, iterations: iterations))
        let rendered = try await FractalRenderer.render(strip, on: backend, progress: { f in
            progress(StripProgress(phase: "strip", fraction: f, iterations: iterations))
        })
        return StripResult(image: rendered.image, iterations: iterations, device: backend.label)
    }

    func mist(_ job: DeviceJob, device: String, width: Int, height: Int) async throws -> any MistRunner {
        guard let command = try job.command() as? Mist else { throw ServeError.bad("not a mist job") }
        let options = command.options
        do { try options.validate() } catch { throw ServeError.bad(error.flagged.message) }
        let backend = try backend(device, for: .mist)
        do {
            return LocalMist(renderer: try MistRenderer(job: options, width: width, height: height, backend: backend), device: backend.label)
        } catch {
            throw ServeError.from(error, preparing: true)
        }
    }
}

/// A live mist's renderer in this process.
final class LocalMist: MistRunner, @unchecked Sendable {
    let renderer: MistRenderer
    let device: String

    init(renderer: MistRenderer, device: String) {
        self.renderer = renderer
        self.device = device
    }

    func next(wipes: [MistWipe], gravity: SIMD2<Double>?, camera: Image8?) async throws -> (image: Image8, frame: Int)? {
        let frame = renderer.frame
        guard frame < MistJob.maxFrames else { return nil }
        for w in wipes { renderer.addWipe(MistWipe(start: frame, points: w.points, radius: w.radius)) }
        if let gravity { renderer.setGravity(gravity) }
        return (try await renderer.renderNext(camera: camera), frame)
    }

    func close() {}
}
#endif
