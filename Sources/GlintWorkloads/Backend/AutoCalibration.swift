import GlintCL
import GlintCore
import GlintKernels
#if canImport(Glibc)
import Glibc
#endif

/// What `glint devices --calibrate` measured on this machine for the kind of job whose faster
/// CPU path is likeliest to differ from machine to machine: plain escape-time fractals
/// (`fractal`). The Swift path and an OpenCL CPU device (PoCL) share the same cores; which one
/// renders faster depends on the processor (PoCL compiles for its widest vectors, the Swift path
/// is AVX2 code everywhere; `AutoChoice`'s measurements favour the Swift path with AVX2 and with
/// AVX-512), and a command that runs once also pays OpenCL's start-up (PoCL loads LLVM), which
/// the Swift path does not.
///
/// Kept beside the program cache (`auto-calibration`), with a fingerprint of the drivers and
/// their environment (as `NoGPUMemo` takes them, less the boot and the user), the processor (its
/// name and feature flags), the Swift path's worker count and the build; a
/// calibration whose fingerprint differs is not used. With one, `auto` on a machine without a
/// GPU runs a `fractal` job where it finishes sooner:
/// - in a process that has loaded OpenCL already (a benchmark, a server, a second job), on the
///   path with the higher measured rate;
/// - in one that has not, the command's whole wait: the Swift path takes W / (Swift rate), the
///   OpenCL device its start-up plus W / (its rate), W being the job's escape-count sum, which
///   the command estimates beforehand from a render at one eighth of the size on the Swift path.
/// Without one, `AutoChoice`'s table decides.
public struct AutoCalibration: Sendable, Equatable {
    /// Escape counts per second (skipped interior points counted as iterated, as `glint bench`
    /// counts them), float and double, on each path; `openCLDouble` is 0 for a device without fp64.
    public var swiftFloat: Double
    public var openCLFloat: Double
    public var swiftDouble: Double
    public var openCLDouble: Double
    /// Milliseconds a whole command takes longer on the OpenCL device than on the Swift path for
    /// a tiny render: loading the drivers, the context, the program from the disk cache.
    public var openCLStartMs: Double
    /// The OpenCL device measured (for people; the fingerprint decides validity).
    public var device: String
    /// When it was measured (seconds since 1970).
    public var written: Int

    public init(swiftFloat: Double, openCLFloat: Double, swiftDouble: Double, openCLDouble: Double,
                openCLStartMs: Double, device: String, written: Int) {
        self.swiftFloat = swiftFloat
        self.openCLFloat = openCLFloat
        self.swiftDouble = swiftDouble
        self.openCLDouble = openCLDouble
        self.openCLStartMs = openCLStartMs
        self.device = device
        self.written = written
    }

    static let magic = "GLINT-AUTO-CALIBRATION 1"

    /// The file: `auto-calibration` beside the program cache's folder, or nil without a cache.
    public static var path: String? {
        guard let programs = ProgramCache.directory, let slash = programs.lastIndex(of: "/") else { return nil }
        return String(programs[..<slash]) + "/auto-calibration"
    }

    /// What must be unchanged for a calibration to hold: the drivers and their environment (as
    /// the no-GPU memo sees them), the processor, the Swift path's workers and this build.
    public static let fingerprint: String = StableHash.of([
        NoGPUMemo.driversFingerprint, BenchEnvironment.cpuModel(), CPUFeatures.flags.sorted().joined(separator: " "),
        "\(CPUFeatures.workerCount)",
        GlintBuild.version, GlintBuild.commit,
    ].joined(separator: "\n"))

    /// The calibration that holds here, read once per process.
    public static let current: AutoCalibration? = load()

    static func load() -> AutoCalibration? {
        guard let path, let text = try? FileIO.readText(path, limit: 4096) else { return nil }
        return parse(text, fingerprint: fingerprint)
    }

    /// The file's text: magic, fingerprint, then `name value` lines.
    func text(fingerprint: String) -> String {
        var lines = [Self.magic, fingerprint]
        lines.append("written \(written)")
        lines.append("swift-float \(swiftFloat)")
        lines.append("opencl-float \(openCLFloat)")
        lines.append("swift-double \(swiftDouble)")
        lines.append("opencl-double \(openCLDouble)")
        lines.append("opencl-start-ms \(openCLStartMs)")
        lines.append("device \(device)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The calibration in `text`, or nil when it is not one, is damaged or has another fingerprint.
    static func parse(_ text: String, fingerprint: String) -> AutoCalibration? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count >= 9, lines[0] == magic, lines[1] == fingerprint else { return nil }
        var values: [String: String] = [:]
        for line in lines.dropFirst(2) where !line.isEmpty {
            guard let space = line.firstIndex(of: " ") else { return nil }
            values[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        func rate(_ key: String, zero: Bool = false) -> Double? {
            guard let v = values[key].flatMap(Double.init), v.isFinite, v > 0 || (zero && v == 0) else { return nil }
            return v
        }
        // opencl-double is 0 for a device without fp64.
        guard let sf = rate("swift-float"), let of = rate("opencl-float"), let sd = rate("swift-double"),
              let od = rate("opencl-double", zero: true), let start = values["opencl-start-ms"].flatMap(Double.init),
              start.isFinite, start >= 0, start < 60_000, let written = values["written"].flatMap(Int.init),
              let device = values["device"] else { return nil }
        return AutoCalibration(swiftFloat: sf, openCLFloat: of, swiftDouble: sd, openCLDouble: od,
                               openCLStartMs: start, device: device, written: written)
    }

    /// The file's path, or the error that there is no cache folder to keep it in (checked before
    /// measuring, and again when writing).
    public static func requirePath() throws -> String {
        guard let path else {
            throw GlintError("no cache folder to keep a calibration in (GLINT_KERNEL_CACHE=off, or no HOME): set GLINT_CACHE_DIR")
        }
        return path
    }

    /// Writes this calibration for this machine (atomically).
    public func save() throws {
        let path = try Self.requirePath()
        try FileIO.makeDirectories(String(path[..<path.lastIndex(of: "/")!]))
        try FileIO.writeAtomically(path, Array(text(fingerprint: Self.fingerprint).utf8))
    }

    /// The estimated wall time of `iterations` escape counts on each path, in seconds (OpenCL's
    /// with its start-up when `startUp`).
    public func seconds(iterations: Double, double: Bool, startUp: Bool) -> (swift: Double, openCL: Double) {
        let (s, o) = double ? (swiftDouble, openCLDouble) : (swiftFloat, openCLFloat)
        return (iterations / s, o > 0 ? (startUp ? openCLStartMs / 1000 : 0) + iterations / o : .infinity)
    }

    /// Whether the OpenCL CPU device finishes a `fractal` job sooner: by rate alone when OpenCL is
    /// loaded already or the work is unknown, else with OpenCL's start-up counted.
    public func prefersOpenCL(double: Bool, iterations: Double?, openCLLoaded: Bool) -> Bool {
        guard let iterations, !openCLLoaded else {
            return double ? openCLDouble > swiftDouble : openCLFloat > swiftFloat
        }
        let t = seconds(iterations: iterations, double: double, startUp: true)
        return t.openCL < t.swift
    }
}

extension AutoCalibration {
    /// One line on a decision, for --verbose.
    func explain(_ estimate: AutoEstimate, openCLLoaded: Bool, chose: String) -> String {
        let (s, o) = estimate.double ? (swiftDouble, openCLDouble) : (swiftFloat, openCLFloat)
        var line = "device: auto chose \(chose) for this fractal by this machine's calibration (\(Self.path ?? "auto-calibration")): "
        if let w = estimate.iterations, !openCLLoaded {
            let t = seconds(iterations: w, double: estimate.double, startUp: true)
            line += "about \(Format.significant(w / 1e6, 3)) million escape counts, \(Format.fixed(t.swift * 1000, 1)) ms on the Swift path against "
                + "\(Format.fixed(openCLStartMs, 1)) ms of OpenCL start-up and \(Format.fixed((t.openCL - openCLStartMs / 1000) * 1000, 1)) ms on \(device)"
        } else {
            line += "Swift path \(Format.fixed(s / 1e9, 2)) Giter/s against \(Format.fixed(o / 1e9, 2)) Giter/s on \(device)"
                + (estimate.double ? " (double)" : " (float)")
        }
        return line
    }
}

/// A `fractal` job as `auto` weighs it with a calibration: its precision and, where the caller
/// knows it, its escape-count sum (a command that runs once; nil inside a longer-lived process).
public struct AutoEstimate: Sendable {
    public var double: Bool
    public var iterations: Double?
    /// One job's work in `GPUCalibration`'s units (`GPUCalibration.Point`), where the caller
    /// knows it, and how many such jobs the command runs (an animation's frames).
    public var work: Double?
    public var repeats: Double
    /// The job's variant where a kind has several (`BlurPlan.autoVariant`).
    public var variant: String?
    /// Whether the caller runs many jobs in one process (the bench), so that the GPU's start-up
    /// is paid once whether or not it is open yet.
    public var startUpPaid: Bool
    public init(double: Bool, iterations: Double?, work: Double? = nil, repeats: Double = 1, variant: String? = nil,
                startUpPaid: Bool = false) {
        self.double = double
        self.iterations = iterations
        self.work = work
        self.repeats = repeats
        self.variant = variant
        self.startUpPaid = startUpPaid
    }
}

/// Why `auto` chose as it did for the last job that a calibration decided (for --verbose).
public enum AutoDecision {
    private static let last = Locked<String?>(nil)
    public static var note: String? { last.withLock { $0 } }
    static func record(_ text: String) { last.withLock { $0 = text } }
}

// MARK: Measuring

extension AutoCalibration {
    /// The calibration view: the default Mandelbrot view, 256 iterations, float or double.
    static func calibrationJob(double: Bool, width: Int, height: Int) -> FractalJob {
        var job = FractalJob(formula: .mandelbrot)
        job.width = width
        job.height = height
        job.maxIterations = 256
        job.precision = double ? .double : .float
        return job
    }

    /// Escape counts per second of the calibration view on `backend`: a warm-up run (programs
    /// built, pages touched) that also sums the counts, then the median wall time of as many runs
    /// as fill `seconds` (at least 7, at most 500).
    public static func rate(double: Bool, on backend: Backend, width: Int = 1920, height: Int = 1080,
                            seconds: Double = 0.5) async throws -> Double {
        let job = calibrationJob(double: double, width: width, height: height)
        let warm = try await FractalRenderer.render(job, on: backend, outputs: FractalRenderer.Outputs(iterations: true))
        guard let iterations = warm.iterations, iterations > 0 else { throw GlintError("calibration: the render counted no iterations") }
        var times: [Double] = []
        let start = Clock.now()
        while times.count < 500 && (times.count < 7 || Clock.now() - start < seconds) {
            times.append(try await FractalRenderer.render(job, on: backend).wallSeconds)
        }
        times.sort()
        return Double(iterations) / max(times[times.count / 2], 1e-9)
    }

    /// A job's escape-count sum, estimated from a render at one eighth of its size each way (at
    /// least 8 pixels) on the Swift path: the same view, supersampling and formula, 1/64 of the
    /// work, scaled up by the ratio of the pixel counts.
    public static func estimateIterations(_ job: FractalJob) async throws -> Double {
        var probe = job
        probe.width = max(8, job.width / 8)
        probe.height = max(8, job.height / 8)
        let r = try await FractalRenderer.render(probe, on: .cpu, outputs: FractalRenderer.Outputs(iterations: true))
        return Double(r.iterations ?? 0) * Double(job.width * job.height) / Double(probe.width * probe.height)
    }
}
