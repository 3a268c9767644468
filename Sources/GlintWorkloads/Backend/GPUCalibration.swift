import GlintCL
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// What `glint devices --calibrate` measured on a machine with a GPU: per kind of job (and per
/// variant where one kind's variants run at different speeds: blur's formats and methods), the
/// job's whole time on the Swift path and on the GPU at two sizes (the exact blurs also at a
/// small sigma), in a process that has the GPU open, and how much longer a whole command takes on the GPU for a tiny job (loading the driver
/// and making its context). The jobs are the bench's own cases, so that `glint bench` and `auto`
/// agree. With it, `auto` runs a job of a measured kind on the Swift path where the GPU would
/// finish later: in a process that has the GPU open (or runs many jobs), where the GPU's time is
/// the longer; in one that has not, where start-up plus the GPU's time is. A job's time is read
/// off the points by its work (linear between them, as a path's rate changes with size, caches
/// and page faults coming in; the first two's line below the first; proportional above the last). Kinds it has no figure for (deep
/// zooms, whose time is the host's reference orbit on both paths) run on the GPU.
///
/// Kept beside the program cache (`auto-calibration-gpu`) with `AutoCalibration`'s fingerprint
/// (drivers, processor, workers, build); a file with another fingerprint or GPU is not used.
public struct GPUCalibration: Sendable, Equatable {
    /// One calibration job: its work (output pixels, a mist frame's too; canvas samples for iso;
    /// pixel samples for rtow; samples times the iteration limit for fractals, float only) and its
    /// median wall time on each path, in seconds.
    public struct Point: Sendable, Equatable {
        public var work: Double
        public var swiftSeconds: Double
        public var gpuSeconds: Double
    }

    /// A kind's (or variant's) jobs, by growing work.
    public struct Entry: Sendable, Equatable {
        public var points: [Point]
        public init(_ points: [Point]) { self.points = points.sorted { $0.work < $1.work } }

        /// Each path's time for `work`, read off the points. Below the first, the line through the
        /// first two (a GPU's launches and copies do not shrink with the work), but never less
        /// than in proportion.
        func seconds(work: Double) -> (swift: Double, gpu: Double) {
            func at(_ time: KeyPath<Point, Double>) -> Double {
                let first = points[0], last = points[points.count - 1]
                if work <= first.work {
                    let proportional = first[keyPath: time] * work / first.work
                    guard points.count > 1 else { return proportional }
                    let next = points[1]
                    let line = first[keyPath: time] + (next[keyPath: time] - first[keyPath: time]) * (work - first.work) / (next.work - first.work)
                    return max(proportional, line)
                }
                for (a, b) in zip(points, points.dropFirst()) where work <= b.work {
                    return a[keyPath: time] + (b[keyPath: time] - a[keyPath: time]) * (work - a.work) / (b.work - a.work)
                }
                return last[keyPath: time] * work / last.work
            }
            return (at(\.swiftSeconds), at(\.gpuSeconds))
        }
    }

    /// By key: a kind's name, or `kind/variant` (`blur/u8-exact`).
    public var entries: [String: Entry]
    /// Milliseconds a whole tiny command takes longer on the GPU than on the Swift path.
    public var startMs: Double
    /// The GPU measured (its OpenCL name; a calibration applies to that device only).
    public var device: String
    public var written: Int

    public init(entries: [String: Entry], startMs: Double, device: String, written: Int) {
        self.entries = entries
        self.startMs = startMs
        self.device = device
        self.written = written
    }

    /// The keys measured, in order: each kind, blur by format and method (a blur's variant is
    /// `BlurPlan.autoVariant`; the first is the one a blur of unknown variant is taken as).
    public static let keys = ["fractal", "fractal-smooth", "rtow", "blur/u8-recursive", "blur/u8-exact",
                              "blur/f32-recursive", "blur/f32-exact", "mist", "iso", "pulse"]

    static let magic = "GLINT-GPU-CALIBRATION 2"

    /// The file: `auto-calibration-gpu` beside the program cache's folder, or nil without a cache.
    public static var path: String? { AutoCalibration.path.map { $0 + "-gpu" } }

    /// The calibration that holds here, read once per process.
    public static let current: GPUCalibration? = {
        guard let path, let text = try? FileIO.readText(path, limit: 8192) else { return nil }
        return parse(text, fingerprint: AutoCalibration.fingerprint)
    }()

    /// The entry for a job of `kind` and `variant`: the variant's, else the kind's, else the
    /// kind's first measured variant; nil for a kind not measured.
    public func entry(_ kind: AutoKind, variant: String? = nil) -> Entry? { key(kind, variant: variant).flatMap { entries[$0] } }

    /// The key whose figures a job of `kind` and `variant` is read off (`entry`).
    func key(_ kind: AutoKind, variant: String?) -> String? {
        if let variant, entries["\(kind.rawValue)/\(variant)"] != nil { return "\(kind.rawValue)/\(variant)" }
        if entries[kind.rawValue] != nil { return kind.rawValue }
        return Self.keys.first { $0.hasPrefix(kind.rawValue + "/") && entries[$0] != nil }
    }

    /// The file's text: magic, fingerprint, then `name value...` lines; a kind's line holds its
    /// points as `work swift-seconds gpu-seconds` triples.
    func text(fingerprint: String) -> String {
        var lines = [Self.magic, fingerprint, "written \(written)", "start-ms \(startMs)", "device \(device)"]
        for key in entries.keys.sorted() {
            let points = entries[key]!.points.map { "\($0.work) \($0.swiftSeconds) \($0.gpuSeconds)" }
            lines.append("kind \(key) " + points.joined(separator: " "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The calibration in `text`, or nil when it is not one, is damaged or has another fingerprint.
    static func parse(_ text: String, fingerprint: String) -> GPUCalibration? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        guard lines.count >= 5, lines[0] == magic, lines[1] == fingerprint else { return nil }
        var written: Int?, start: Double?, device: String?
        var entries: [String: Entry] = [:]
        for line in lines.dropFirst(2) {
            let fields = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard fields.count == 2 else { return nil }
            switch fields[0] {
            case "written": written = Int(fields[1])
            case "start-ms": start = Double(fields[1])
            case "device": device = fields[1]
            case "kind":
                let parts = fields[1].split(separator: " ").map(String.init)
                guard parts.count >= 4, (parts.count - 1) % 3 == 0, keys.contains(parts[0]), entries[parts[0]] == nil else { return nil }
                let numbers = parts.dropFirst().compactMap(Double.init)
                guard numbers.count == parts.count - 1, numbers.allSatisfy({ $0.isFinite && $0 > 0 }) else { return nil }
                let points = stride(from: 0, to: numbers.count, by: 3).map {
                    Point(work: numbers[$0], swiftSeconds: numbers[$0 + 1], gpuSeconds: numbers[$0 + 2])
                }
                // Two points of the same work say nothing about the rate between them.
                guard Set(points.map(\.work)).count == points.count else { return nil }
                entries[parts[0]] = Entry(points)
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

    /// Each path's estimated wall time for `repeats` jobs of `kind` with `work` each, the GPU's
    /// with its start-up unless it is open; nil for a kind not measured. With the work unknown (a
    /// server's requests, the devices listing) the first calibration job's times, without
    /// start-up: such a caller lives on after one job, as a process with the GPU open does.
    public func seconds(_ kind: AutoKind, variant: String? = nil, work: Double?, repeats: Double = 1,
                        gpuOpen: Bool) -> (swift: Double, gpu: Double)? {
        guard let e = entry(kind, variant: variant) else { return nil }
        guard let work else { return (e.points[0].swiftSeconds, e.points[0].gpuSeconds) }
        let t = e.seconds(work: work)
        return (t.swift * repeats, t.gpu * repeats + (gpuOpen ? 0 : startMs / 1000))
    }

    /// Whether the GPU finishes the job sooner (true for a kind not measured).
    public func prefersGPU(_ kind: AutoKind, variant: String? = nil, work: Double?, repeats: Double = 1, gpuOpen: Bool) -> Bool {
        guard let t = seconds(kind, variant: variant, work: work, repeats: repeats, gpuOpen: gpuOpen) else { return true }
        return t.gpu <= t.swift
    }

    /// One line on a decision, for --verbose.
    func explain(_ kind: AutoKind, variant: String?, work: Double?, repeats: Double, gpuOpen: Bool) -> String {
        guard let t = seconds(kind, variant: variant, work: work, repeats: repeats, gpuOpen: gpuOpen) else { return "" }
        let chose = t.gpu <= t.swift ? device : "the Swift path"
        let used = key(kind, variant: variant) ?? kind.rawValue
        let what = used.contains("/") ? "\(kind.rawValue) (\(used.dropFirst(kind.rawValue.count + 1)))" : kind.rawValue
        return "device: auto chose \(chose) for this \(what) job by this machine's calibration (\(Self.path ?? "auto-calibration-gpu")): "
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
    /// Measures each key's bench cases on the Swift path and on `cc`: at `width` x `height` and at
    /// twice each side (rtow: at 1 and 4 samples a pixel; the exact blurs also at a small sigma,
    /// their work being pixels times taps). Each a warm-up, then the median of the runs that
    /// fill a quarter of a second (5 to 100), as the bench takes its medians.
    /// `progress` names the key being measured.
    public static func measure(on cc: ComputeContext, width: Int, height: Int,
                               progress: (String) -> Void = { _ in }) async throws -> [String: Entry] {
        var entries: [String: Entry] = [:]
        let gpu = Backend.opencl(cc)
        for key in keys {
            progress(key)
            var points: [Point] = []
            for c in try cases(key, width: width, height: height) {
                guard let work = c.autoWork else { throw GlintError("calibration case \(c.id) has no work figure") }
                func median(_ backend: Backend) async throws -> Double {
                    BenchScope.endCase()
                    defer { BenchScope.endCase() }
                    _ = try await c.run(backend, false)
                    var times: [Double] = []
                    let start = Clock.now()
                    while times.count < 5 || (times.count < 100 && Clock.now() - start < 0.25) {
                        times.append(try await c.run(backend, false).wallSeconds)
                    }
                    return BenchStats(times).median / c.autoRepeats
                }
                let s = try await median(.cpu), g = try await median(gpu)
                points.append(Point(work: work, swiftSeconds: max(s, 1e-7), gpuSeconds: max(g, 1e-7)))
            }
            entries[key] = Entry(points)
        }
        return entries
    }

    /// A key's two bench cases.
    static func cases(_ key: String, width w: Int, height h: Int) throws -> [BenchCase] {
        let sizes = [(w, h), (2 * w, 2 * h)]
        func blur(_ sigma: Double, _ method: BlurMethod, float: Bool, small: Double? = nil) -> [BenchCase] {
            func spec(_ s: Double) -> BlurWorkload.Spec { .init(name: "calibration", sigma: s, method: method, float: float) }
            return (small.map { [BlurWorkload.make(spec($0), w, h)] } ?? []) + sizes.map { BlurWorkload.make(spec(sigma), $0.0, $0.1) }
        }
        switch key {
        case "fractal":
            return sizes.map { FractalWorkload.make(.init(name: "calibration", formula: .mandelbrot), $0.0, $0.1) }
        case "fractal-smooth":
            return sizes.map { FractalWorkload.make(.init(name: "calibration", formula: .mandelbrot, smooth: true, palette: .fire, bailout: 256), $0.0, $0.1) }
        case "rtow": return [1, 4].map { RTWorkload.make("cover", w, h, spp: $0) }
        case "blur/u8-recursive": return blur(10, .recursive, float: false)
        case "blur/u8-exact": return blur(10, .exact, float: false, small: 2)
        case "blur/f32-recursive": return blur(8, .recursive, float: true)
        case "blur/f32-exact": return blur(4, .exact, float: true, small: 1)
        case "mist": return sizes.map { MistWorkload.make(width: $0.0, height: $0.1, frames: 4) }
        case "iso": return sizes.map { IsoWorkload.isoCase(name: "calibration", width: $0.0, height: $0.1, radius: 0) }
        case "pulse": return sizes.map { PulseWorkload.frameCase(width: $0.0, height: $0.1) }
        default: throw GlintError("no calibration job for \(key)")
        }
    }
}
