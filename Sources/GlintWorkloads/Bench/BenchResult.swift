import GlintCore

/// One case on one backend: its timings, throughput and validation, as the runner measures it and
/// as bench JSON (schema `glint-bench/1`, documented in docs/BENCH.md and docs/bench-schema.json)
/// writes and reads it. Times are in milliseconds, as the JSON holds them, so that a saved run
/// reads back to the very figures it was written with.
public struct BenchResult: Sendable {
    public enum Status: String, Sendable {
        /// The Swift CPU path: the reference the others are checked against.
        case reference
        case pass
        case fail
        /// The backend cannot run the case (e.g. double on a device without fp64).
        case skipped
        /// Timed but not checked against the Swift CPU path: a device-sized case (the standard
        /// cases check the same kernels at sizes the Swift path renders in time).
        case unchecked
    }

    /// The case's `BenchCase.id`, workload, name, size and parameters.
    public var id: String
    public var workload: String
    public var caseName: String
    public var width: Int
    public var height: Int
    public var parameters: JSON
    /// `cpu` or `opencl:N`.
    public var backend: String
    /// The Swift path's label or the OpenCL device's name: what baselines match on.
    public var device: String
    public var status: Status
    public var skipReason: String?
    public var repetitions = 0
    /// The first (warm-up) run, outside the statistics; program builds are not in it.
    public var warmupMs = 0.0
    public var wallMs: BenchStats?
    /// The OpenCL profiling events' time per run (OpenCL only).
    public var kernelMs: BenchStats?
    /// The device's time in copies between host and device per run (profiling events; OpenCL
    /// only; nil in older results).
    public var copyMs: BenchStats?
    /// The fraction of the device's measured peak (`DevicePeak`) the median kernel time reaches,
    /// and how the case's work is counted for it (`BenchPeakWork`); nil without a peak measurement
    /// or where none applies.
    public var peakFraction: Double?
    public var peakCounted: String?
    /// Work per run, in the unit's base quantity.
    public var work = 0.0
    /// The throughput's unit (`BenchUnit.name`); empty in a result read back without a throughput.
    public var unit: String
    /// Throughput on the median wall time, in `unit`.
    public var throughput: Double?
    /// Throughput on the median kernel time (OpenCL only).
    public var kernelThroughput: Double?
    /// Peak resident memory of the process during the case, where Linux can tell.
    public var peakResidentBytes: UInt64?
    /// What a process running only this case would peak at: the bench process's resident size
    /// before its first case and before any OpenCL driver was loaded (the program and its
    /// libraries) plus what the case added over the size it started at. The drivers' own memory
    /// at start (a fixed cost of the vendor's, reported apart: `BenchRunner.Outcome`) is left
    /// out; what a driver allocates for a case is in. The memory bound applies to this. Nil in
    /// older results.
    public var jobPeakBytes: UInt64?
    /// DESIGN's memory bound for the case (4x its images' bytes + 100 MB); nil in older results.
    public var memoryBoundBytes: UInt64?
    /// Whether `--device auto` runs the case on this backend.
    public var auto = false
    /// What validation requires, in words (`BenchCase.tolerance`).
    public var tolerance: String
    public var validationPassed: Bool?
    public var validationSummary: String?
    public var validationMetrics: JSON?

    /// `c` on `backend`, nothing measured yet.
    public init(case c: BenchCase, backend: String, device: String, status: Status) {
        id = c.id
        workload = c.workload
        caseName = c.name
        width = c.width
        height = c.height
        parameters = c.parameters
        self.backend = backend
        self.device = device
        self.status = status
        unit = c.unit.name
        memoryBoundBytes = c.memoryBoundBytes
        tolerance = c.tolerance
    }

    /// Sets the outcome of checking the output against the Swift CPU path's.
    public mutating func validated(_ v: BenchValidation) {
        status = v.passed ? .pass : .fail
        validationPassed = v.passed
        validationSummary = v.summary
        validationMetrics = v.metrics
    }

    /// Whether the peak resident memory went over DESIGN's bound for the case.
    public var overMemoryBound: Bool {
        guard let peak = jobPeakBytes, let bound = memoryBoundBytes else { return false }
        return peak > bound
    }

    /// "counts identical; ..." for checked cases, "reference" or "skipped: why" otherwise.
    public var check: String {
        switch status {
        case .reference: return "reference"
        case .skipped: return "skipped: " + (skipReason ?? "")
        case .pass: return "pass (" + (validationSummary ?? "") + ")"
        case .unchecked: return "timed only (device-sized)"
        case .fail: return "FAIL (" + (validationSummary ?? "") + ")"
        }
    }

    public var json: JSON {
        func bytes(_ b: UInt64?) -> JSON { b.map { .int(Int64($0)) } ?? .null }
        let timing: [(String, JSON)] = [("wall_ms", wallMs?.json ?? .null), ("kernel_ms", kernelMs?.json ?? .null),
                                        ("copy_ms", copyMs?.json ?? .null),
                                        ("peak_fraction", peakFraction.map(JSON.number) ?? .null),
                                        ("peak_counted", peakCounted.map(JSON.string) ?? .null)]
        let head: [(String, JSON)] = [
            ("id", .string(id)), ("workload", .string(workload)), ("case", .string(caseName)),
            ("width", .int(Int64(width))), ("height", .int(Int64(height))), ("parameters", parameters),
            ("backend", .string(backend)), ("device", .string(device)), ("status", .string(status.rawValue)),
            ("skip_reason", skipReason.map(JSON.string) ?? .null),
            ("repetitions", .int(Int64(repetitions))), ("warmup_ms", .number(warmupMs)),
        ]
        return .object(head + timing + [
            ("work", .number(work)),
            ("throughput", throughput.map { .object([("value", .number($0)), ("unit", .string(unit))]) } ?? .null),
            ("kernel_throughput", kernelThroughput.map(JSON.number) ?? .null),
            ("peak_rss_bytes", bytes(peakResidentBytes)),
            ("job_peak_bytes", bytes(jobPeakBytes)),
            ("memory_bound_bytes", bytes(memoryBoundBytes)),
            ("auto", .bool(auto)),
            ("validation", .object([
                ("tolerance", .string(tolerance)),
                ("passed", validationPassed.map(JSON.bool) ?? .null),
                ("summary", validationSummary.map(JSON.string) ?? .null),
                ("metrics", validationMetrics ?? .null),
            ])),
        ])
    }

    /// Reads a case object back; errors name the field (`cases[3].wall_ms.median`).
    public init(json: JSON, at path: String) throws(GlintError) {
        func field(_ key: String) throws(GlintError) -> JSON {
            guard let v = json[key] else { throw GlintError("\(path).\(key) is missing") }
            return v
        }
        func string(_ key: String) throws(GlintError) -> String {
            guard let s = try field(key).stringValue else { throw GlintError("\(path).\(key) must be a string") }
            return s
        }
        func int(_ key: String) throws(GlintError) -> Int {
            guard let i = try field(key).intValue else { throw GlintError("\(path).\(key) must be an integer") }
            return Int(i)
        }
        func number(_ key: String) throws(GlintError) -> Double {
            guard let d = try field(key).doubleValue else { throw GlintError("\(path).\(key) must be a number") }
            return d
        }
        func stats(_ key: String) throws(GlintError) -> BenchStats? {
            let v = try field(key)
            if v == .null { return nil }
            guard let m = v["median"]?.doubleValue, let lo = v["min"]?.doubleValue, let hi = v["max"]?.doubleValue else {
                throw GlintError("\(path).\(key) must be null or an object with numbers median, min and max")
            }
            return BenchStats(median: m, min: lo, max: hi)
        }
        // Sizes in bytes; results saved before some of them were measured have none.
        func bytes(_ v: JSON?) -> UInt64? { v?.intValue.map { UInt64(max(0, $0)) } }
        id = try string("id")
        workload = try string("workload")
        caseName = try string("case")
        width = try int("width")
        height = try int("height")
        parameters = try field("parameters")
        backend = try string("backend")
        device = try string("device")
        let status = try string("status")
        guard let known = Status(rawValue: status) else {
            throw GlintError("\(path).status must be reference, pass, fail, skipped or unchecked (got '\(status)')")
        }
        self.status = known
        skipReason = try field("skip_reason").stringValue
        repetitions = try int("repetitions")
        warmupMs = try number("warmup_ms")
        wallMs = try stats("wall_ms")
        kernelMs = try stats("kernel_ms")
        // Results saved before copies and peaks were measured have none.
        copyMs = json["copy_ms"] == nil ? nil : try stats("copy_ms")
        peakFraction = json["peak_fraction"]?.doubleValue
        peakCounted = json["peak_counted"]?.stringValue
        work = try number("work")
        let t = try field("throughput")
        if t == .null {
            throughput = nil
            unit = ""
        } else {
            guard let v = t["value"]?.doubleValue, let u = t["unit"]?.stringValue else {
                throw GlintError("\(path).throughput must be null or {\"value\": number, \"unit\": string}")
            }
            throughput = v
            unit = u
        }
        kernelThroughput = try field("kernel_throughput").doubleValue
        peakResidentBytes = try bytes(field("peak_rss_bytes"))
        memoryBoundBytes = bytes(json["memory_bound_bytes"])
        jobPeakBytes = bytes(json["job_peak_bytes"])
        auto = json["auto"]?.boolValue ?? false
        let v = try field("validation")
        guard let tol = v["tolerance"]?.stringValue else { throw GlintError("\(path).validation.tolerance must be a string") }
        tolerance = tol
        validationPassed = v["passed"]?.boolValue
        validationSummary = v["summary"]?.stringValue
        validationMetrics = v["metrics"].flatMap { $0 == .null ? nil : $0 }
    }
}
