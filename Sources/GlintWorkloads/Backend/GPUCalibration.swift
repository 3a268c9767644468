import GlintCL
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// What `glint devices --calibrate` measured on a machine with a GPU: per kind of job, a job's
/// whole time on the Swift path and on the GPU (kernels, copies and the host's share, in a
/// process that has the GPU open), and how much longer a whole command takes on the GPU for a
/// tiny job (loading the driver and making its context). With it, `auto` runs a job of a measured
/// kind on the Swift path where the GPU would finish later: in a process that has the GPU open,
/// where the GPU's time is the longer; in one that has not, where start-up plus the GPU's time,
/// scaled to the job's work, is longer than the Swift path's. Kinds it has no figure for (deep
/// zooms, whose time is the host's reference orbit on both paths, and mist) run on the GPU.
///
/// Kept beside the program cache (`auto-calibration-gpu`) with `AutoCalibration`'s fingerprint
/// (drivers, processor, workers, build); a file with another fingerprint or GPU is not used.
public struct GPUCalibration: Sendable, Equatable {
    /// One kind's calibration job: its work (output pixels; canvas samples for iso; pixel samples
    /// for rtow; samples times the iteration limit for fractals, float only) and its median wall
    /// time on each path, in seconds.
    public struct Entry: Sendable, Equatable {
        public var work: Double
        public var swiftSeconds: Double
        public var gpuSeconds: Double
        public init(work: Double, swiftSeconds: Double, gpuSeconds: Double) {
            self.work = work
            self.swiftSeconds = swiftSeconds
            self.gpuSeconds = gpuSeconds
        }
    }

    public var entries: [AutoKind: Entry]
    /// Milliseconds a whole tiny command takes longer on the GPU than on the Swift path.
    public var startMs: Double
    /// The GPU measured (its OpenCL name; a calibration applies to that device only).
    public var device: String
    public var written: Int

    public init(entries: [AutoKind: Entry], startMs: Double, device: String, written: Int) {
        self.entries = entries
        self.startMs = startMs
        self.device = device
        self.written = written
    }

    /// The kinds measured, in order.
    public static let kinds: [AutoKind] = [.fractal, .fractalSmooth, .rtow, .blur, .iso, .pulse]

    static let magic = "GLINT-GPU-CALIBRATION 1"

    /// The file: `auto-calibration-gpu` beside the program cache's folder, or nil without a cache.
    public static var path: String? { AutoCalibration.path.map { $0 + "-gpu" } }

    /// The calibration that holds here, read once per process.
    public static let current: GPUCalibration? = {
        guard let path, let text = try? FileIO.readText(path, limit: 4096) else { return nil }
        return parse(text, fingerprint: AutoCalibration.fingerprint)
    }()

    /// The file's text: magic, fingerprint, then `name value...` lines.
    func text(fingerprint: String) -> String {
        var lines = [Self.magic, fingerprint, "written \(written)", "start-ms \(startMs)", "device \(device)"]
        for kind in Self.kinds {
            guard let e = entries[kind] else { continue }
            lines.append("kind \(kind.rawValue) \(e.work) \(e.swiftSeconds) \(e.gpuSeconds)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The calibration in `text`, or nil when it is not one, is damaged or has another fingerprint.
    static func parse(_ text: String, fingerprint: String) -> GPUCalibration? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        guard lines.count >= 5, lines[0] == magic, lines[1] == fingerprint else { return nil }
        var written: Int?, start: Double?, device: String?
        var entries: [AutoKind: Entry] = [:]
        for line in lines.dropFirst(2) {
            let fields = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard fields.count == 2 else { return nil }
            switch fields[0] {
            case "written": written = Int(fields[1])
            case "start-ms": start = Double(fields[1])
            case "device": device = fields[1]
            case "kind":
                let parts = fields[1].split(separator: " ").map(String.init)
                guard parts.count == 4, let kind = AutoKind(rawValue: parts[0]),
                      let work = Double(parts[1]), let s = Double(parts[2]), let g = Double(parts[3]),
                      [work, s, g].allSatisfy({ $0.isFinite && $0 > 0 }) else { return nil }
                entries[kind] = Entry(work: work, swiftSeconds: s, gpuSeconds: g)
            default: return nil
            }
        }
        guard let written, let start, start.isFinite, start >= 0, start < 60_000, let device, !entries.isEmpty else { return nil }
        return GPUCalibration(entries: entries, startMs: start, device: device, written: written)
    }

    /// Writes this calibration for this machine (atomically).
    public func save() throws {
        let path = try AutoCalibration.requirePath() + "-gpu"
        let contents = text(fingerprint: AutoCalibration.fingerprint)
        guard Self.parse(contents, fingerprint: AutoCalibration.fingerprint) != nil else {
            throw GlintError("the calibration's figures are out of range (start-up \(Format.fixed(startMs, 0)) ms, \(entries.count) kinds measured): nothing written")
        }
        try FileIO.makeDirectories(String(path[..<path.lastIndex(of: "/")!]))
        try FileIO.writeAtomically(path, Array(contents.utf8))
    }

    /// Each path's estimated wall time for a job of `kind` with `work`, the GPU's with its
    /// start-up unless it is open; nil for a kind not measured. With the work unknown (a server's
    /// requests, the devices listing) the calibration job's times, without start-up: such a
    /// caller lives on after one job, as a process with the GPU open does.
    public func seconds(_ kind: AutoKind, work: Double?, gpuOpen: Bool) -> (swift: Double, gpu: Double)? {
        guard let e = entries[kind] else { return nil }
        guard let work else { return (e.swiftSeconds, e.gpuSeconds) }
        let scale = work / e.work
        return (e.swiftSeconds * scale, e.gpuSeconds * scale + (gpuOpen ? 0 : startMs / 1000))
    }

    /// Whether the GPU finishes the job sooner (true for a kind not measured).
    public func prefersGPU(_ kind: AutoKind, work: Double?, gpuOpen: Bool) -> Bool {
        guard let t = seconds(kind, work: work, gpuOpen: gpuOpen) else { return true }
        return t.gpu <= t.swift
    }

    /// One line on a decision, for --verbose.
    func explain(_ kind: AutoKind, work: Double?, gpuOpen: Bool) -> String {
        guard let t = seconds(kind, work: work, gpuOpen: gpuOpen) else { return "" }
        let chose = t.gpu <= t.swift ? device : "the Swift path"
        return "device: auto chose \(chose) for this \(kind.rawValue) job by this machine's calibration (\(Self.path ?? "auto-calibration-gpu")): "
            + "about \(Format.fixed(t.swift * 1000, 1)) ms on the Swift path against \(Format.fixed(t.gpu * 1000, 1)) ms on \(device)"
            + (gpuOpen || work == nil ? " (start-up not counted)" : " (\(Format.fixed(startMs, 0)) ms of it start-up)")
    }
}

// MARK: Measuring

extension IsoJob {
    /// The job's work in `GPUCalibration`'s units: canvas pixels times samples per pixel.
    public var calibrationWork: Double {
        let (w, h) = canvasSize
        return Double(w * h * supersampling * supersampling)
    }
}

extension FractalJob {
    /// The job's work in `GPUCalibration`'s units: samples times the iteration limit.
    public var calibrationWork: Double {
        Double(width * height * supersampling * supersampling) * Double(maxIterations)
    }
}

extension GPUCalibration {
    /// Measures each kind's calibration job at `width` x `height` on the Swift path and on `cc`:
    /// a warm-up each, then the median of three runs. `progress` names the kind being measured.
    public static func measureKinds(on cc: ComputeContext, width: Int, height: Int,
                                    progress: (AutoKind) -> Void = { _ in }) async throws -> [AutoKind: Entry] {
        var entries: [AutoKind: Entry] = [:]
        let gpu = Backend.opencl(cc)
        for kind in kinds {
            progress(kind)
            let (work, run) = try job(kind, width: width, height: height)
            func median(_ backend: Backend) async throws -> Double {
                _ = try await run(backend)
                var times: [Double] = []
                for _ in 0..<3 { times.append(try await run(backend)) }
                return times.sorted()[1]
            }
            let s = try await median(.cpu), g = try await median(gpu)
            entries[kind] = Entry(work: work, swiftSeconds: max(s, 1e-7), gpuSeconds: max(g, 1e-7))
        }
        return entries
    }

    /// A kind's calibration job: its work and a run that returns its wall time.
    static func job(_ kind: AutoKind, width: Int, height: Int) throws
        -> (work: Double, run: @Sendable (Backend) async throws -> Double) {
        let pixels = Double(width * height)
        switch kind {
        case .fractal, .fractalSmooth:
            var job = AutoCalibration.calibrationJob(double: false, width: width, height: height)
            job.smooth = kind == .fractalSmooth
            let frozen = job
            return (job.calibrationWork, { try await FractalRenderer.render(frozen, on: $0).wallSeconds })
        case .rtow:
            var job = RTJob(scene: RTScene.cover(seed: 0))
            job.width = width
            job.height = height
            job.samplesPerPixel = 4
            job.maxDepth = 50
            let frozen = job
            return (pixels * 4, { try await RTRenderer.render(frozen, on: $0).wallSeconds })
        case .blur:
            let picture = TestPicture.make(width: width, height: height)
            return (pixels, { try await BlurRenderer.blur(picture, BlurJob(sigma: 10), on: $0).wallSeconds })
        case .iso:
            var job = IsoJob(sourceWidth: width, sourceHeight: height)
            job.depth = 20
            let frozen = job.reapplied(to: TestPicture.make(width: width, height: height), width: width, height: height)
            return (frozen.calibrationWork, { try await IsoRenderer.render(frozen, on: $0).wallSeconds })
        case .pulse:
            var job = PulseJob()
            job.width = width
            job.height = height
            job.frames = 1
            let frozen = job
            return (pixels, { backend in
                let start = Clock.now()
                _ = try PulseRenderer.render(frozen, frame: 0, on: backend)
                return Clock.now() - start
            })
        case .fractalDeep, .mist:
            throw GlintError("no calibration job for \(kind.rawValue)")
        }
    }
}
