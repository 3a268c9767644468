import ArgumentParser
import GlintCore
import GlintWorkloads

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the benchmark suite: timings, throughput and a check of every OpenCL result against the Swift CPU path.",
        discussion: """
            Every case is a fixed job (docs/BENCH.md lists them) run on each backend: the Swift CPU path \
            and every OpenCL device, or only --device. Per case and backend: a warm-up run (which \
            builds the OpenCL programs; build time is reported apart, never inside a case), a \
            calibration run, then enough repetitions to fill a target time (0.25 s with --quick, \
            1 s by default, 2 s with --full; at least 3 or 5). Reported: median, min and max wall \
            time (transfers included) and OpenCL kernel time (profiling events), throughput on the \
            median wall time in the workload's unit (fractal: Giter/s, the escape-count sum per \
            second), peak resident memory against its bound (4x the case's images plus 100 MB; \
            each case starts with the memory of the ones before released), the backend --device \
            auto picks for the case (the auto column), and the validation of the output against the \
            Swift CPU path with the workload's docs/DESIGN.md tolerance.

            Suites: --quick (small images; the whole suite in well under two minutes on two \
            cores), --standard (the default: HD), --full (the standard cases, heavier variants \
            and 4K).

            Outputs: a table on stdout; --json (schema glint-bench/1, documented in docs/BENCH.md), \
            --csv, --markdown (FILE, or - for stdout), --chart FILE.svg. --baseline OLD.json \
            prints each case's change against an earlier run; --results NEW.json reports a saved \
            run instead of running (e.g. to diff two saved runs or to draw a chart).

            Exit status: 0 when every OpenCL case validates, 1 when one does not (or on an \
            error), 2 for a usage error.

            Examples:
              glint bench --quick
              glint bench fractal --device opencl --json run.json --chart run.svg
              glint bench --baseline yesterday.json --json today.json
              glint bench --results today.json --baseline yesterday.json
            """)

    @Argument(help: ArgumentHelp("Workloads to run (default: all). Known: \(Workloads.names.joined(separator: ", ")).",
                                 valueName: "workload"),
              transform: choice("workload", Workloads.names, name: { $0 }))
    var workloads: [String] = []

    @Flag(help: "The suite. (default: --standard)")
    var kind = BenchSuiteKind.standard

    @Flag(help: "Measure each OpenCL device's peak FMA rate and bandwidth first (as glint devices --peak does) and report what fraction of it each case's kernels reach (fractal float: 8 flops per escape iteration; blur and iso: the bytes the kernels must read and write).")
    var peak = false

    @Option(name: .customLong("case"), help: ArgumentHelp("Run only the cases whose name contains TEXT (repeatable), e.g. --case deep.", valueName: "text"))
    var caseFilters: [String] = []

    @Option(name: .long, help: "Run on this backend only (cpu, opencl, opencl:N, gpu), or auto: each case on the backend --device auto picks for it; default: the Swift CPU path and every OpenCL device (the auto column marks auto's pick).")
    var device: String?

    @Option(parsing: .unconditional, help: "Seconds of timed repetitions per case (overrides the suite's target; \(Limits.benchSeconds.text)).",
            transform: number("--seconds", Limits.benchSeconds))
    var seconds: Double?

    @Option(help: "Write the results as JSON (schema glint-bench/1) to FILE, or - for stdout.")
    var json: String?

    @Option(help: "Write the results as CSV to FILE, or - for stdout.")
    var csv: String?

    @Option(help: "Write the results as a Markdown table to FILE, or - for stdout.")
    var markdown: String?

    @Option(help: "Draw throughput per case and device as an SVG bar chart.")
    var chart: String?

    @Option(help: "An earlier run's JSON: print every case's change against it.")
    var baseline: String?

    @Option(help: "Report this saved run's JSON instead of running the suite.")
    var results: String?

    @OptionGroup var out: OutputOptions

    func validate() throws {
        if let seconds, !Limits.benchSeconds.contains(seconds) { throw ValidationError("--seconds must be \(Limits.benchSeconds.text), got \(seconds)") }
        if let device { do { _ = try DeviceChoice(parsing: device) } catch { throw error.usage } }
        for (file, option) in [(json, "--json"), (csv, "--csv"), (markdown, "--markdown"), (chart, "--chart")] {
            if let file, file != "-" { try checkWritable(file, option: option) }
        }
        if let chart, !hasSuffix(chart, ["svg"]) { throw ValidationError("--chart \(chart): must be an .svg file") }
        if results != nil && (device != nil || seconds != nil || kind != .standard || !workloads.isEmpty || !caseFilters.isEmpty || peak) {
            throw ValidationError("--results reports a saved run: it takes no workloads, --case, --device, --seconds, --peak, --quick, --full or --device-sized")
        }
        if kind == .device, device == "cpu" {
            throw ValidationError("--device-sized measures OpenCL devices; --device cpu has none")
        }
    }

    func run() async throws {
        try await reportingErrors(verbose: out.verbose, buildReport: false) {
            // Read the baseline first: an unreadable one should not cost a whole run.
            let old = try baseline.map { try BenchReport(json: try FileIO.readText($0), name: "--baseline \($0)") }
            let report: BenchReport
            if let results {
                report = try BenchReport(json: try FileIO.readText(results), name: "--results \(results)")
            } else {
                report = try await runSuite()
            }
            let toStdout = [json, csv, markdown].contains("-")
            if !out.quiet && !toStdout {
                print(report.table(), terminator: "")
                print(report.memorySummary)
                for b in report.builds {
                    print("\(b.backend) program builds (not in any case): \(b.compiled) compiled, \(b.fromDiskCache) from the disk cache, \(fmt(b.seconds * 1000, 1)) ms")
                }
            }
            if let old, !out.quiet {
                print("\nagainst the baseline \(baseline ?? ""):")
                print(report.baselineTable(against: old), terminator: "")
            }
            // The files are replaced together or not at all; what goes to stdout (-) follows.
            let outputs = OutputSet()
            var toPrint: [String] = []
            for (file, text) in [(json, { report.json.serialized() + "\n" }), (csv, report.csv), (markdown, report.markdown),
                                 (chart, report.chartSVG)] as [(String?, () -> String)] {
                guard let file else { continue }
                if file == "-" { toPrint.append(text()) } else { try outputs.stage(file, Array(text().utf8)) }
            }
            try outputs.commit()
            for text in toPrint { print(text, terminator: "") }
            if report.failures > 0 {
                throw GlintError("\(report.failures) case(s) failed validation against the Swift CPU path")
            }
        }
    }

    private func runSuite() async throws -> BenchReport {
        let start = Clock.now()
        let chosen = Workloads.all.map { $0.workload }.filter { workloads.isEmpty || workloads.contains($0.name) }
        let cases = BenchSuite.cases(kind, of: chosen).filter { c in
            caseFilters.isEmpty || caseFilters.contains { c.name.contains($0) }
        }
        if cases.isEmpty {
            throw GlintError("no \(kind.rawValue) bench case matches --case \(caseFilters.joined(separator: ", --case "))")
        }
        var backends: [(name: String, backend: Backend)] = []
        // Before any OpenCL driver is loaded; without the web stack's libraries (DESIGN: Memory).
        let swiftBase = ProcessMemory.residentBytesWithoutWebStack()
        let inventory = DeviceInventory.scan()
        let choice = try device.map { try DeviceChoice(parsing: $0) }
        if let choice, choice != .auto {
            let b = try Backend.resolve(choice, for: .fractal)  // a named device: the kind decides nothing
            backends = [(b.choiceName(in: inventory), b)]
        } else {
            backends = [("cpu", .cpu)]
            for (i, d) in inventory.devices.enumerated() {
                backends.append(("opencl:\(i)", .opencl(try ComputeContext.shared(for: d))))
            }
            if let problem = inventory.problem, !out.quiet { printError("note: \(problem)") }
        }
        if kind == .device { backends.removeAll { !$0.backend.isOpenCL } }
        if backends.isEmpty { throw GlintError("--device-sized measures OpenCL devices, and there is none here (\(inventory.problem ?? "none found"))") }
        var settings = BenchSettings(kind)
        if let seconds { settings.targetSeconds = seconds }
        let line = ProgressBar("bench", quiet: out.quiet)
        // The peaks first, each device idle: the cases are reported against them.
        var peaks: [String: DevicePeak] = [:]
        if peak || kind == .device {
            for (name, backend) in backends {
                guard case .opencl(let cc) = backend else { continue }
                line.show("\(name): measuring the device's peak rates")
                peaks[name] = try DevicePeak.measure(on: cc)
            }
        }
        let outcome = try await BenchRunner.run(cases: cases, backends: backends, onlyAuto: choice == .auto,
                                                swiftBase: swiftBase, peaks: peaks, settings: settings) { i, n, text in
            line.show("[\(i)/\(n)] \(text)")
        }
        line.finish()
        var report = BenchReport(suite: kind.rawValue, settings: settings, environment: BenchEnvironment.collect(),
                                 builds: outcome.builds, results: outcome.results,
                                 seconds: Clock.now() - start, driverResidentBytes: outcome.driverResidentBytes)
        report.devicePeaks = backends.compactMap { name, backend in
            peaks[name].map { p in
                .object([("backend", .string(name)), ("device", .string(BenchRunner.deviceName(backend))), ("peak", p.json)])
            }
        }
        return report
    }
}

/// `--quick`, `--standard` (the default) or `--full`.
extension BenchSuiteKind: EnumerableFlag {
    public static func help(for value: BenchSuiteKind) -> ArgumentHelp? {
        switch value {
        case .quick: "The quick suite: small images, short calibration."
        case .standard: "The standard suite: HD images (the default)."
        case .full: "The full suite: more cases and larger images."
        case .device: "The device-sized suite, OpenCL only: each case grows (8K frames, more iterations) until its kernels take 80% of the wall time on the device; reported with copy time and the fraction of the device's measured peak (implies --peak); outputs are not checked (the other suites check the same kernels)."
        }
    }

    public static func name(for value: BenchSuiteKind) -> NameSpecification {
        value == .device ? .customLong("device-sized") : .long
    }
}
