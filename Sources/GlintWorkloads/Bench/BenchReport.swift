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

/// A whole benchmark run: environment, settings, builds and cases; written as JSON, CSV,
/// Markdown, a terminal table or an SVG chart, and compared with a baseline.
public struct BenchReport: Sendable {
    public static let schema = "glint-bench/1"

    public var suite: String
    public var settings: BenchSettings
    public var environment: JSON
    public var builds: [BenchBuild]
    public var records: [BenchRecord]
    public var seconds: Double
    /// The OpenCL drivers' resident memory before the first case, left out of every job peak
    /// (`BenchResult.jobPeakBytes`); nil without OpenCL, where not known, and in older results.
    public var driverResidentBytes: UInt64?

    public init(suite: String, settings: BenchSettings, environment: JSON, builds: [BenchBuild],
                records: [BenchRecord], seconds: Double, driverResidentBytes: UInt64? = nil) {
        self.suite = suite
        self.settings = settings
        self.environment = environment
        self.builds = builds
        self.records = records
        self.seconds = seconds
        self.driverResidentBytes = driverResidentBytes
    }

    public var failures: Int { records.filter { $0.status == "fail" }.count }

    /// The devices' measured peaks (`glint bench --peak`): one object per OpenCL backend with its
    /// name, device and `DevicePeak.json`; empty when not measured.
    public var devicePeaks: [JSON] = []

    public var json: JSON {
        let counts: [(String, JSON)] = [
            ("cases", .int(Int64(records.count))),
            ("reference", .int(Int64(records.filter { $0.status == "reference" }.count))),
            ("passed", .int(Int64(records.filter { $0.status == "pass" }.count))),
            ("failed", .int(Int64(failures))),
            ("skipped", .int(Int64(records.filter { $0.status == "skipped" }.count))),
            ("unchecked", .int(Int64(records.filter { $0.status == "unchecked" }.count))),
        ]
        let summary: JSON = .object(counts + [
            ("seconds", .number(seconds)),
            ("opencl_driver_resident_bytes", driverResidentBytes.map { .int(Int64($0)) } ?? .null),
        ])
        return .object([
            ("schema", .string(Self.schema)),
            ("suite", .string(suite)),
            ("settings", .object([
                ("target_seconds", .number(settings.targetSeconds)),
                ("min_repetitions", .int(Int64(settings.minRepetitions))),
                ("max_repetitions", .int(Int64(settings.maxRepetitions))),
            ])),
            ("environment", environment),
            ("device_peaks", .array(devicePeaks)),
            ("builds", .array(builds.map { b in
                .object([("backend", .string(b.backend)), ("device", .string(b.device)),
                         ("compiled", .int(Int64(b.compiled))), ("from_disk_cache", .int(Int64(b.fromDiskCache))),
                         ("ms", .number(b.seconds * 1000))])
            })),
            ("cases", .array(records.map(\.json))),
            ("summary", summary),
        ])
    }

    /// Reads bench JSON written by `glint bench --json`; `name` labels errors.
    public init(json text: String, name: String) throws(GlintError) {
        let root: JSON
        do { root = try JSON.parse(text) } catch { throw GlintError("\(name): not valid JSON (\(error.message))") }
        guard root["schema"]?.stringValue == Self.schema else {
            throw GlintError("\(name): not glint bench results (schema must be \"\(Self.schema)\")")
        }
        guard let cases = root["cases"]?.arrayValue else { throw GlintError("\(name): cases must be an array") }
        var records: [BenchRecord] = []
        for (i, c) in cases.enumerated() {
            do { records.append(try BenchRecord(json: c, at: "cases[\(i)]")) } catch {
                throw GlintError("\(name): \(error.message)")
            }
        }
        let s = root["settings"]
        self.init(suite: root["suite"]?.stringValue ?? "",
                  settings: BenchSettings(targetSeconds: s?["target_seconds"]?.doubleValue ?? 0,
                                          minRepetitions: Int(s?["min_repetitions"]?.intValue ?? 0),
                                          maxRepetitions: Int(s?["max_repetitions"]?.intValue ?? 0)),
                  environment: root["environment"] ?? .null,
                  builds: (root["builds"]?.arrayValue ?? []).map { b in
                      BenchBuild(backend: b["backend"]?.stringValue ?? "", device: b["device"]?.stringValue ?? "",
                                 compiled: Int(b["compiled"]?.intValue ?? 0),
                                 fromDiskCache: Int(b["from_disk_cache"]?.intValue ?? 0),
                                 seconds: (b["ms"]?.doubleValue ?? 0) / 1000)
                  },
                  records: records, seconds: root["summary"]?["seconds"]?.doubleValue ?? 0,
                  driverResidentBytes: root["summary"]?["opencl_driver_resident_bytes"]?.intValue.map { UInt64(max(0, $0)) })
        devicePeaks = root["device_peaks"]?.arrayValue ?? []
    }

    // MARK: Text tables

    static let columns = ["backend", "auto", "case", "size", "reps", "median ms", "min ms", "max ms", "kernel ms", "copy ms",
                          "throughput", "% of peak", "job peak MB", "check"]

    func cells(_ r: BenchRecord) -> [String] {
        func ms(_ x: Double?) -> String { x.map { Format.significant($0, 3) } ?? "-" }
        var peak = r.jobPeakBytes.map { Format.significant(Double($0) / 1e6, 3) } ?? "-"
        if r.overMemoryBound, let bound = r.memoryBoundBytes { peak += " > " + Format.significant(Double(bound) / 1e6, 3) }
        return [r.backend, r.auto ? "auto" : "", "\(r.workload) \(r.caseName)", "\(r.width)x\(r.height)",
                r.status == "skipped" ? "-" : String(r.repetitions),
                ms(r.wallMs?.median), ms(r.wallMs?.min), ms(r.wallMs?.max), ms(r.kernelMs?.median), ms(r.copyMs?.median),
                r.throughput.map { Format.significant($0, 3) + " " + r.unit } ?? "-",
                r.peakFraction.map { Format.fixed($0 * 100, 1) } ?? "-", peak, r.check]
    }

    /// The cases whose peak resident memory went over their bound.
    public var overMemoryBound: [BenchRecord] { records.filter(\.overMemoryBound) }

    /// One line on memory: every case within DESIGN's bound, or which were not.
    public var memorySummary: String {
        let over = overMemoryBound
        let measured = records.filter { $0.jobPeakBytes != nil && $0.memoryBoundBytes != nil }.count
        if measured == 0 { return "memory: no peak resident sizes in these results" }
        let drivers = driverResidentBytes.map {
            "; the OpenCL drivers' own \(Format.significant(Double($0) / 1e6, 3)) MB at start not in any job peak"
        } ?? ""
        if over.isEmpty { return "memory: every case's job peak within its bound (4x its images' bytes + 100 MB)" + drivers }
        return "memory: over the bound (4x the images' bytes + 100 MB): "
            + over.map { "\($0.id) on \($0.backend)" }.joined(separator: ", ") + drivers
    }

    /// An aligned plain-text table, one line per case.
    public func table() -> String {
        let rows = [Self.columns] + records.map(cells)
        var widths = [Int](repeating: 0, count: Self.columns.count)
        for row in rows { for (i, c) in row.enumerated() { widths[i] = max(widths[i], c.count) } }
        var out = ""
        for row in rows {
            var line = ""
            for (i, c) in row.enumerated() {
                line += i + 1 == row.count ? c : c + String(repeating: " ", count: widths[i] - c.count + 2)
            }
            out += line + "\n"
        }
        return out
    }

    /// A GitHub-flavoured Markdown table with a line naming the machine.
    public func markdown() -> String {
        var out = "Glint \(environment["glint_version"]?.stringValue ?? "") (\(environment["git_commit"]?.stringValue?.prefix(12) ?? "")), "
            + "\(suite) suite, \(environment["cpu_model"]?.stringValue ?? "") (\(environment["cpu_cores"]?.intValue ?? 0) cores), "
            + "\(environment["date"]?.stringValue ?? "")\n\n"
        out += "| " + Self.columns.joined(separator: " | ") + " |\n"
        out += "|" + Self.columns.map { _ in "---" }.joined(separator: "|") + "|\n"
        for r in records {
            out += "| " + cells(r).map { $0.replacingPipes() }.joined(separator: " | ") + " |\n"
        }
        return out
    }

    /// RFC 4180 CSV with a header row; times in milliseconds.
    public func csv() -> String {
        let header = ["id", "workload", "case", "width", "height", "backend", "device", "status", "repetitions",
                      "wall_ms_median", "wall_ms_min", "wall_ms_max", "kernel_ms_median", "kernel_ms_min", "kernel_ms_max",
                      "throughput", "unit", "kernel_throughput", "peak_rss_bytes", "job_peak_bytes", "memory_bound_bytes", "auto", "validation",
                      "copy_ms_median", "peak_fraction"]
        func q(_ s: String) -> String {
            s.contains(",") || s.contains("\"") || s.contains("\n") ? "\"" + s.replacingQuotes() + "\"" : s
        }
        func n(_ x: Double?) -> String { x.map { String($0) } ?? "" }
        var out = header.joined(separator: ",") + "\n"
        for r in records {
            let row = [r.id, r.workload, r.caseName, String(r.width), String(r.height), r.backend, r.device, r.status,
                       String(r.repetitions), n(r.wallMs?.median), n(r.wallMs?.min), n(r.wallMs?.max),
                       n(r.kernelMs?.median), n(r.kernelMs?.min), n(r.kernelMs?.max), n(r.throughput), r.unit,
                       n(r.kernelThroughput), r.peakResidentBytes.map { String($0) } ?? "",
                       r.jobPeakBytes.map { String($0) } ?? "", r.memoryBoundBytes.map { String($0) } ?? "", r.auto ? "true" : "false", r.check,
                       n(r.copyMs?.median), n(r.peakFraction)]
            out += row.map(q).joined(separator: ",") + "\n"
        }
        return out
    }

    // MARK: Baseline

    /// One case's change against a baseline run.
    public struct Change: Sendable {
        public let id: String
        public let device: String
        public let oldMs: Double?
        public let newMs: Double?
        /// (old median / new median - 1): positive when the new run is faster.
        public var speedup: Double? {
            guard let o = oldMs, let n = newMs, n > 0 else { return nil }
            return o / n - 1
        }
    }

    /// Every case of this run against `baseline`, matched by case id and device (then by id and
    /// backend name), plus the baseline's cases this run no longer has.
    public func changes(against baseline: BenchReport) -> [Change] {
        var out: [Change] = []
        var used = Set<Int>()
        for r in records {
            let match = baseline.records.indices.first { !used.contains($0) && baseline.records[$0].id == r.id && baseline.records[$0].device == r.device }
                ?? baseline.records.indices.first { !used.contains($0) && baseline.records[$0].id == r.id && baseline.records[$0].backend == r.backend }
            if let m = match { used.insert(m) }
            out.append(Change(id: r.id, device: r.device, oldMs: match.flatMap { baseline.records[$0].wallMs?.median },
                              newMs: r.wallMs?.median))
        }
        for (i, old) in baseline.records.enumerated() where !used.contains(i) {
            out.append(Change(id: old.id, device: old.device, oldMs: old.wallMs?.median, newMs: nil))
        }
        return out
    }

    /// The baseline comparison as an aligned table; `threshold` marks changes beyond it.
    public func baselineTable(against baseline: BenchReport, threshold: Double = 0.05) -> String {
        let changes = changes(against: baseline)
        var rows = [["case", "device", "baseline ms", "now ms", "change"]]
        for c in changes {
            var change = "-"
            if let s = c.speedup {
                let pct = (s >= 0 ? "+" : "") + Format.fixed(s * 100, 1) + "%"
                change = pct + (s > threshold ? " faster" : s < -threshold ? " SLOWER" : "")
            } else if c.newMs == nil {
                change = "not run now"
            } else if c.oldMs == nil {
                change = "new"
            }
            rows.append([c.id, c.device, c.oldMs.map { Format.significant($0, 3) } ?? "-",
                         c.newMs.map { Format.significant($0, 3) } ?? "-", change])
        }
        var widths = [Int](repeating: 0, count: 5)
        for row in rows { for (i, c) in row.enumerated() { widths[i] = max(widths[i], c.count) } }
        return rows.map { row in
            row.enumerated().map { i, c in i == 4 ? c : c + String(repeating: " ", count: widths[i] - c.count + 2) }.joined()
        }.joined(separator: "\n") + "\n"
    }

    // MARK: Chart

    /// An SVG bar chart of throughput per case (one group) and device (one bar each). Each
    /// group is scaled to its own fastest bar, since units differ between workloads; the value
    /// and unit are written on every bar.
    public func chartSVG() -> String {
        let measured = records.filter { $0.throughput != nil }
        var devices: [String] = []
        for r in measured where !devices.contains(r.device) { devices.append(r.device) }
        var ids: [String] = []
        for r in measured where !ids.contains(r.id) { ids.append(r.id) }
        let colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
        let labelWidth = 300.0, barArea = 460.0, barHeight = 16.0, gap = 12.0, top = 56.0
        var y = top
        var body = ""
        for id in ids {
            let group = measured.filter { $0.id == id }
            let best = group.compactMap(\.throughput).max() ?? 1
            body += "<text x=\"8\" y=\"\(y + barHeight * Double(group.count) / 2 + 4)\" class=\"label\">\(xml(id))</text>\n"
            for r in group {
                let v = r.throughput ?? 0
                let w = max(1, barArea * v / max(best, 1e-30))
                let colour = colours[(devices.firstIndex(of: r.device) ?? 0) % colours.count]
                body += "<rect x=\"\(labelWidth)\" y=\"\(y)\" width=\"\(Format.fixed(w, 1))\" height=\"\(barHeight - 2)\" fill=\"\(colour)\">"
                    + "<title>\(xml(r.device)): \(Format.significant(v, 4)) \(xml(r.unit))</title></rect>\n"
                body += "<text x=\"\(Format.fixed(labelWidth + w + 4, 1))\" y=\"\(y + barHeight - 5)\" class=\"value\">"
                    + "\(Format.significant(v, 3)) \(xml(r.unit))</text>\n"
                y += barHeight
            }
            y += gap
        }
        var legend = ""
        for (i, d) in devices.enumerated() {
            let ly = 36.0
            let lx = 8.0 + Double(i) * 250
            legend += "<rect x=\"\(lx)\" y=\"\(ly - 10)\" width=\"12\" height=\"12\" fill=\"\(colours[i % colours.count])\"/>"
                + "<text x=\"\(lx + 16)\" y=\"\(ly)\" class=\"label\">\(xml(String(d.prefix(36))))</text>\n"
        }
        let width = labelWidth + barArea + 140, height = y + 10
        let title = "Glint bench (\(suite)): throughput per case, each group scaled to its fastest device"
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))">
            <style>text { font-family: sans-serif; font-size: 12px; fill: #222 } .title { font-size: 14px; font-weight: bold } .value { font-size: 11px }</style>
            <rect width="100%" height="100%" fill="white"/>
            <text x="8" y="16" class="title">\(xml(title))</text>
            \(legend)\(body)</svg>

            """
    }

    private func xml(_ s: String) -> String {
        var out = ""
        for ch in s {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(ch)
            }
        }
        return out
    }
}

extension String {
    fileprivate func replacingPipes() -> String { split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|") }
    fileprivate func replacingQuotes() -> String { split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") }
}
