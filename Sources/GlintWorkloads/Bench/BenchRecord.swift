import GlintCore

/// One row of results, as written to and read back from bench JSON (schema `glint-bench/1`,
/// documented in docs/BENCH.md and docs/bench-schema.json).
public struct BenchRecord: Sendable {
    public var id: String
    public var workload: String
    public var caseName: String
    public var width: Int
    public var height: Int
    public var parameters: JSON
    public var backend: String
    public var device: String
    public var status: String
    public var skipReason: String?
    public var repetitions: Int
    public var warmupMs: Double
    public var wallMs: BenchStats?
    public var kernelMs: BenchStats?
    /// The device's copy time per run (OpenCL; nil in older results).
    public var copyMs: BenchStats?
    /// The fraction of the device's measured peak the kernels reach, and how the case's work is
    /// counted for it (nil without a peak measurement or where none applies).
    public var peakFraction: Double?
    public var peakCounted: String?
    public var work: Double
    public var unit: String
    public var throughput: Double?
    public var kernelThroughput: Double?
    public var peakResidentBytes: UInt64?
    /// What a process running only this case would peak at (`BenchResult.jobPeakBytes`); nil in
    /// older results.
    public var jobPeakBytes: UInt64?
    /// DESIGN's memory bound for the case (4x its images' bytes + 100 MB); nil in older results.
    public var memoryBoundBytes: UInt64?
    /// Whether `--device auto` runs the case on this backend.
    public var auto: Bool
    public var tolerance: String
    public var validationPassed: Bool?
    public var validationSummary: String?
    public var validationMetrics: JSON?

    public init(_ r: BenchResult) {
        let c = r.caseInfo
        id = c.id
        workload = c.workload
        caseName = c.name
        width = c.width
        height = c.height
        parameters = c.parameters
        backend = r.backend
        device = r.device
        status = r.status.rawValue
        skipReason = r.skipReason
        repetitions = r.repetitions
        warmupMs = r.warmupSeconds * 1000
        wallMs = r.wall.map { BenchStats(median: $0.median * 1000, min: $0.min * 1000, max: $0.max * 1000) }
        kernelMs = r.kernel.map { BenchStats(median: $0.median * 1000, min: $0.min * 1000, max: $0.max * 1000) }
        copyMs = r.copy.map { BenchStats(median: $0.median * 1000, min: $0.min * 1000, max: $0.max * 1000) }
        peakFraction = r.peakFraction
        peakCounted = r.peakFraction == nil ? nil : c.peakWork?.counted
        work = r.work
        unit = c.unit.name
        throughput = r.throughput
        kernelThroughput = r.kernelThroughput
        peakResidentBytes = r.peakResidentBytes
        memoryBoundBytes = c.memoryBoundBytes
        jobPeakBytes = r.jobPeakBytes
        auto = r.autoPick
        tolerance = c.tolerance
        validationPassed = r.validation?.passed
        validationSummary = r.validation?.summary
        validationMetrics = r.validation?.metrics
    }

    /// Whether the peak resident memory went over DESIGN's bound for the case.
    public var overMemoryBound: Bool {
        guard let peak = jobPeakBytes, let bound = memoryBoundBytes else { return false }
        return peak > bound
    }

    /// "counts identical; ..." for checked cases, "reference" or "skipped: why" otherwise.
    public var check: String {
        switch status {
        case "reference": return "reference"
        case "skipped": return "skipped: " + (skipReason ?? "")
        case "pass": return "pass (" + (validationSummary ?? "") + ")"
        case "unchecked": return "timed only (device-sized)"
        default: return "FAIL (" + (validationSummary ?? "") + ")"
        }
    }

    public var json: JSON {
        func stats(_ s: BenchStats?) -> JSON {
            guard let s else { return .null }
            return .object([("median", .number(s.median)), ("min", .number(s.min)), ("max", .number(s.max))])
        }
        let peak: JSON = peakResidentBytes.map { .int(Int64($0)) } ?? .null
        let bound: JSON = memoryBoundBytes.map { .int(Int64($0)) } ?? .null
        let jobPeak: JSON = jobPeakBytes.map { .int(Int64($0)) } ?? .null
        let fraction: JSON = peakFraction.map(JSON.number) ?? .null
        let counted: JSON = peakCounted.map(JSON.string) ?? .null
        let timing: [(String, JSON)] = [("wall_ms", stats(wallMs)), ("kernel_ms", stats(kernelMs)), ("copy_ms", stats(copyMs)),
                                        ("peak_fraction", fraction), ("peak_counted", counted)]
        let head: [(String, JSON)] = [
            ("id", .string(id)), ("workload", .string(workload)), ("case", .string(caseName)),
            ("width", .int(Int64(width))), ("height", .int(Int64(height))), ("parameters", parameters),
            ("backend", .string(backend)), ("device", .string(device)), ("status", .string(status)),
            ("skip_reason", skipReason.map(JSON.string) ?? .null),
            ("repetitions", .int(Int64(repetitions))), ("warmup_ms", .number(warmupMs)),
        ]
        return .object(head + timing + [
            ("work", .number(work)),
            ("throughput", throughput.map { .object([("value", .number($0)), ("unit", .string(unit))]) } ?? .null),
            ("kernel_throughput", kernelThroughput.map(JSON.number) ?? .null),
            ("peak_rss_bytes", peak),
            ("job_peak_bytes", jobPeak),
            ("memory_bound_bytes", bound),
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
        id = try string("id")
        workload = try string("workload")
        caseName = try string("case")
        width = try int("width")
        height = try int("height")
        parameters = try field("parameters")
        backend = try string("backend")
        device = try string("device")
        status = try string("status")
        guard ["reference", "pass", "fail", "skipped", "unchecked"].contains(status) else {
            throw GlintError("\(path).status must be reference, pass, fail, skipped or unchecked (got '\(status)')")
        }
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
        peakResidentBytes = try field("peak_rss_bytes").intValue.map { UInt64(max(0, $0)) }
        // Results saved before these fields existed have neither.
        memoryBoundBytes = json["memory_bound_bytes"]?.intValue.map { UInt64(max(0, $0)) }
        jobPeakBytes = json["job_peak_bytes"]?.intValue.map { UInt64(max(0, $0)) }
        auto = json["auto"]?.boolValue ?? false
        let v = try field("validation")
        guard let tol = v["tolerance"]?.stringValue else { throw GlintError("\(path).validation.tolerance must be a string") }
        tolerance = tol
        validationPassed = v["passed"]?.boolValue
        validationSummary = v["summary"]?.stringValue
        validationMetrics = v["metrics"].flatMap { $0 == .null ? nil : $0 }
    }
}
