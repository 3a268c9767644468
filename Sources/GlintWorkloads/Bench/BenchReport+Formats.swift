import GlintCore

/// A run's reports for people and other tools: the terminal table, Markdown, CSV, the
/// comparison with a baseline and the SVG chart.
extension BenchReport {
    // MARK: Text tables

    static let columns = ["backend", "auto", "case", "size", "reps", "median ms", "min ms", "max ms", "kernel ms", "copy ms",
                          "throughput", "% of peak", "job peak MB", "check"]

    func cells(_ r: BenchResult) -> [String] {
        func ms(_ x: Double?) -> String { x.map { Format.significant($0, 3) } ?? "-" }
        var peak = r.jobPeakBytes.map { Format.significant(Double($0) / 1e6, 3) } ?? "-"
        if r.overMemoryBound, let bound = r.memoryBoundBytes { peak += " > " + Format.significant(Double(bound) / 1e6, 3) }
        return [r.backend, r.auto ? "auto" : "", "\(r.workload) \(r.caseName)", "\(r.width)x\(r.height)",
                r.status == .skipped ? "-" : String(r.repetitions),
                ms(r.wallMs?.median), ms(r.wallMs?.min), ms(r.wallMs?.max), ms(r.kernelMs?.median), ms(r.copyMs?.median),
                r.throughput.map { Format.significant($0, 3) + " " + r.unit } ?? "-",
                r.peakFraction.map { Format.fixed($0 * 100, 1) } ?? "-", peak, r.check]
    }

    /// The cases whose peak resident memory went over their bound.
    public var overMemoryBound: [BenchResult] { results.filter(\.overMemoryBound) }

    /// One line on memory: every case within DESIGN's bound, or which were not.
    public var memorySummary: String {
        let over = overMemoryBound
        let measured = results.filter { $0.jobPeakBytes != nil && $0.memoryBoundBytes != nil }.count
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
        let rows = [Self.columns] + results.map(cells)
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
        for r in results {
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
        for r in results {
            let row = [r.id, r.workload, r.caseName, String(r.width), String(r.height), r.backend, r.device, r.status.rawValue,
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
        for r in results {
            let match = baseline.results.indices.first { !used.contains($0) && baseline.results[$0].id == r.id && baseline.results[$0].device == r.device }
                ?? baseline.results.indices.first { !used.contains($0) && baseline.results[$0].id == r.id && baseline.results[$0].backend == r.backend }
            if let m = match { used.insert(m) }
            out.append(Change(id: r.id, device: r.device, oldMs: match.flatMap { baseline.results[$0].wallMs?.median },
                              newMs: r.wallMs?.median))
        }
        for (i, old) in baseline.results.enumerated() where !used.contains(i) {
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
        let measured = results.filter { $0.throughput != nil }
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
