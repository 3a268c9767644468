import GlintCore

/// Median, minimum and maximum of a set of timings, in seconds.
public struct BenchStats: Sendable, Equatable {
    public let median: Double
    public let min: Double
    public let max: Double

    public init(_ values: [Double]) {
        let v = values.sorted()
        precondition(!v.isEmpty, "statistics of no values")
        median = v.count % 2 == 1 ? v[v.count / 2] : (v[v.count / 2 - 1] + v[v.count / 2]) / 2
        min = v[0]
        max = v[v.count - 1]
    }

    public init(median: Double, min: Double, max: Double) {
        self.median = median
        self.min = min
        self.max = max
    }

    /// The same figures times 1000: seconds as milliseconds.
    public var milliseconds: BenchStats { BenchStats(median: median * 1000, min: min * 1000, max: max * 1000) }

    /// `{"median": ..., "min": ..., "max": ...}`, as bench and compare JSON write timings.
    public var json: JSON { .object([("median", .number(median)), ("min", .number(min)), ("max", .number(max))]) }
}

/// What building OpenCL programs cost one backend during the run; never inside a case.
public struct BenchBuild: Sendable {
    public let backend: String
    public let device: String
    public var compiled: Int
    public var fromDiskCache: Int
    public var seconds: Double
}

/// Calibration settings (clpeak's method: warm up, time one run, repeat enough to fill a
/// target time, within bounds).
public struct BenchSettings: Sendable {
    public var targetSeconds: Double
    public var minRepetitions: Int
    public var maxRepetitions: Int
    /// Device-sized cases: grow each case (`BenchCase.larger`) until the kernels take at least
    /// this share of a run's wall time on the backend, and check no output; nil otherwise.
    public var kernelShare: Double?
    public init(targetSeconds: Double, minRepetitions: Int, maxRepetitions: Int, kernelShare: Double? = nil) {
        self.targetSeconds = targetSeconds
        self.minRepetitions = minRepetitions
        self.maxRepetitions = maxRepetitions
        self.kernelShare = kernelShare
    }
    public init(_ kind: BenchSuiteKind) {
        self.init(targetSeconds: kind.targetSeconds, minRepetitions: kind.minRepetitions, maxRepetitions: kind.maxRepetitions,
                  kernelShare: kind == .device ? 0.8 : nil)
    }

    /// Repetitions to fill the target time, given one run's time.
    public func repetitions(forRunSeconds t: Double) -> Int {
        let wanted = t > 0 ? Int((targetSeconds / t).rounded(.up)) : maxRepetitions
        return Swift.min(Swift.max(wanted, minRepetitions), maxRepetitions)
    }
}

public enum BenchRunner {
    /// Where the runner is, for a progress line: case index (from 1), case count, a description.
    public typealias Progress = @Sendable (_ index: Int, _ total: Int, _ text: String) -> Void

    /// Whether two backends are the same path: both the Swift path, or one OpenCL device.
    static func same(_ a: Backend, _ b: Backend) -> Bool {
        switch (a, b) {
        case (.cpu, .cpu): true
        case (.opencl(let x), .opencl(let y)): x.device == y.device
        default: false
        }
    }

    /// Runs every case on every backend (`onlyAuto`: on the one `--device auto` picks for the
    /// case). The Swift CPU path's output is each case's reference, computed (untimed) even when
    /// the CPU backend is not among those benchmarked. Each case starts with the memory of the
    /// cases before it released (`BenchScope`). `swiftBase` is the process's resident size before
    /// any OpenCL driver was loaded (the base of every job peak), where known; without it job
    /// peaks start from the size before the first case, drivers included. `peaks` holds the
    /// devices' measured peaks by backend name: each OpenCL case on one is reported against it.
    public static func run(cases: [BenchCase], backends: [(name: String, backend: Backend)], onlyAuto: Bool = false,
                           swiftBase: UInt64? = nil, peaks: [String: DevicePeak] = [:], settings: BenchSettings,
                           progress: Progress? = nil) async throws
        -> Outcome {
        var results: [BenchResult] = []
        var buildSeconds: [String: Double] = [:]
        let before = backends.map { buildStats($0.backend) }
        let total = cases.count * (onlyAuto ? 1 : backends.count)
        var index = 0
        BenchScope.endCase()
        // Without the web stack's Foundation libraries: no case's memory (DESIGN: Memory).
        let processBase = ProcessMemory.residentBytesWithoutWebStack()
        // What loading the OpenCL drivers and making their contexts added between swiftBase and
        // here: a fixed cost of the vendor's (PoCL's LLVM about 70 MB, NVIDIA's driver and CUDA
        // context about 190 MB), reported once and left out of every job peak (DESIGN: Memory).
        let driverBytes: UInt64? = swiftBase.flatMap { s in processBase.map { $0 > s ? $0 - s : 0 } }
        let jobBase = [swiftBase, processBase].compactMap { $0 }.min()
        for c in cases {
            BenchScope.endCase()
            defer { BenchScope.endCase() }
            var reference: BenchOutput?
            let unchecked = settings.kernelShare != nil
            let auto = (try? Backend.resolve(.auto, for: c.autoKind, estimate: AutoEstimate(
                double: c.autoDouble, iterations: nil, work: c.autoWork, repeats: c.autoRepeats, variant: c.autoVariant,
                startUpPaid: true))) ?? .cpu
            let runs = backends.filter { !onlyAuto || same($0.backend, auto) }
            // The reference comes first when the Swift path is not among the backends run, so
            // that its memory is in no backend's measurement.
            if !unchecked && runs.contains(where: { $0.backend.isOpenCL }) && !runs.contains(where: { !$0.backend.isOpenCL }) {
                progress?(index + 1, total, "\(c.id): reference on the Swift CPU path")
                reference = try await c.run(.cpu, true).output
            }
            for (name, backend) in runs {
                let isAuto = same(backend, auto)
                index += 1
                let device = deviceName(backend)
                var c = c
                var result = BenchResult(case: c, backend: name, device: device,
                                         status: backend.isOpenCL ? (unchecked ? .unchecked : .pass) : .reference)
                result.auto = isAuto
                if let reason = c.unsupported(backend) {
                    result.status = .skipped
                    result.skipReason = reason
                    results.append(result)
                    continue
                }
                progress?(index, total, "\(c.id) on \(name): warm-up")
                // Each backend starts from the case's inputs and state released (the previous
                // backend's included); where the peak cannot be reset there is no job peak.
                BenchScope.endCase()
                var measurable = ProcessMemory.resetPeak()
                var caseBase = ProcessMemory.residentBytes()
                // Warm-up: builds the programs (timed apart), and gives the work and the output.
                let programsBefore = buildStats(backend)
                let buildBefore = programsBefore.seconds
                var warm = try await c.run(backend, true)
                var build = buildStats(backend).seconds - buildBefore
                // A device-sized case grows until its kernels fill a plain run (the detailed warm-up
                // also reads back counts and outputs), each size starting with its own warm-up.
                if let share = settings.kernelShare {
                    while let next = c.larger {
                        let plain = try await c.run(backend, false)
                        if plain.kernelSeconds >= share * plain.wallSeconds { break }
                        c = next()
                        progress?(index, total, "\(c.id) on \(name): warm-up")
                        let before = buildStats(backend).seconds
                        warm = try await c.run(backend, true)
                        let more = buildStats(backend).seconds - before
                        buildSeconds[name, default: 0] += build
                        build = more
                    }
                    result = BenchResult(case: c, backend: name, device: device, status: result.status)
                    result.auto = isAuto
                }
                buildSeconds[name, default: 0] += build
                result.warmupMs = Swift.max(0, warm.wallSeconds - build) * 1000
                result.work = warm.work ?? 0
                if backend.isOpenCL && !unchecked {
                    if reference == nil {
                        progress?(index, total, "\(c.id): reference on the Swift CPU path")
                        reference = try await c.run(.cpu, true).output
                    }
                    if let out = warm.output, let ref = reference {
                        result.validated(try c.validate(out, ref))
                    }
                } else if reference == nil && !unchecked {
                    reference = warm.output
                }
                // Programs built or loaded in the warm-up stay for the process, and like their time
                // their memory is outside every case: the case's memory is measured from here, its
                // inputs and state made again by the next run.
                let programsAfter = buildStats(backend)
                if programsAfter.compiled + programsAfter.fromDiskCache > programsBefore.compiled + programsBefore.fromDiskCache {
                    BenchScope.endCase()
                    measurable = ProcessMemory.resetPeak() && measurable
                    caseBase = ProcessMemory.residentBytes()
                }
                // Calibrate on one more run (the warm-up may include first-touch costs).
                let probe = try await c.run(backend, false)
                let reps = settings.repetitions(forRunSeconds: probe.wallSeconds)
                var walls: [Double] = [], kernels: [Double] = [], copies: [Double] = []
                for r in 0..<reps {
                    if r % 4 == 0 { progress?(index, total, "\(c.id) on \(name): run \(r + 1)/\(reps)") }
                    let copied = backend.transferNanoseconds
                    let run = try await c.run(backend, false)
                    walls.append(run.wallSeconds)
                    kernels.append(run.kernelSeconds)
                    copies.append(Double(backend.transferNanoseconds &- copied) * 1e-9)
                }
                result.repetitions = reps
                // Throughputs and the peak's fraction from the times in seconds, as measured.
                let wall = BenchStats(walls)
                result.wallMs = wall.milliseconds
                result.throughput = result.work / wall.median / c.unit.scale
                if backend.isOpenCL {
                    let kernel = BenchStats(kernels)
                    result.kernelMs = kernel.milliseconds
                    result.copyMs = BenchStats(copies).milliseconds
                    if kernel.median > 0 { result.kernelThroughput = result.work / kernel.median / c.unit.scale }
                    if let peak = peaks[name], let peakWork = c.peakWork,
                       let fraction = peakWork.fraction(of: peak, work: result.work, kernelSeconds: kernel.median) {
                        result.peakFraction = fraction
                        result.peakCounted = peakWork.counted
                    }
                }
                result.peakResidentBytes = ProcessMemory.peakResidentBytes()
                if measurable, let peak = result.peakResidentBytes, let base = jobBase, let caseBase {
                    result.jobPeakBytes = base + (peak > caseBase ? peak - caseBase : 0)
                }
                results.append(result)
            }
        }
        var builds: [BenchBuild] = []
        for ((name, backend), start) in zip(backends, before) where backend.isOpenCL {
            let now = buildStats(backend)
            builds.append(BenchBuild(backend: name, device: deviceName(backend),
                                     compiled: now.compiled - start.compiled,
                                     fromDiskCache: now.fromDiskCache - start.fromDiskCache,
                                     seconds: buildSeconds[name] ?? (now.seconds - start.seconds)))
        }
        return Outcome(results: results, builds: builds,
                       driverResidentBytes: backends.contains { $0.backend.isOpenCL } ? driverBytes : nil)
    }

    /// What `run` measured: each case's result on each backend, the OpenCL program builds, and the
    /// OpenCL drivers' resident memory before the first case (nil without OpenCL or where not
    /// known), which no job peak includes.
    public struct Outcome: Sendable {
        public var results: [BenchResult]
        public var builds: [BenchBuild]
        public var driverResidentBytes: UInt64?
    }

    /// The name baselines match a backend by: the OpenCL device name, or "Swift CPU".
    public static func deviceName(_ backend: Backend) -> String {
        switch backend {
        case .cpu: "Swift CPU"
        case .opencl(let cc): cc.deviceName
        }
    }

    static func buildStats(_ backend: Backend) -> ComputeContext.BuildStats { backend.buildStats }
}

extension Backend {
    /// The device's time in host-device copies on this backend's queue so far (0 on the Swift path).
    var transferNanoseconds: UInt64 {
        if case .opencl(let cc) = self { return cc.queue.transferNanoseconds }
        return 0
    }
}
