import ArgumentParser
import GlintCore
import GlintWorkloads

struct Compare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run one job on two backends, or compare two image files: error metrics, a diff heat map and the speed-up.",
        usage: """
            glint compare --a <device> --b <device> [options] <workload> [workload options]
            glint compare --images <a.png> <b.png> [options]
            """,
        discussion: """
            Job mode runs the same job on --a and --b (auto, cpu, opencl, opencl:N, gpu): first \
            once for the output (building any OpenCL program outside the timing), then --runs \
            more times for the timings. Everything after the workload name is that workload's \
            own options, exactly as for rendering (but not --device or -o).

            Printed per channel (R, G, B, and A when either image has transparency) and overall: \
            the largest and mean absolute difference and the RMSE (in 8-bit levels; plain values \
            for PFM), the PSNR in dB (infinite for identical images), and the count and share of \
            pixels differing by more than 1 level. A job also reports each side's median wall \
            time (transfers included) and OpenCL kernel time, and the speed-up of B over A.

            Tolerance: a job uses its workload's (docs/DESIGN.md): \
            \(Workloads.all.map { "\($0.workload.name) \($0.workload.parity)" }.joined(separator: "; ")). Image pairs default to within 1 level (PNG) or a relative \
            error of 1e-5 (PFM). --tolerance sets one: exact, N or max:N (largest difference), \
            mean:P% (mean difference below P% of full scale), psnr:DB, rel:X (largest relative \
            difference), joined by commas, e.g. mean:0.5%,psnr:40 (the ray tracer's).

            Exit status: 0 within the tolerance, 1 outside it, 2 when no comparison could be \
            made (a usage error, an unreadable or mismatched image, a failed run).

            Examples:
              glint compare --a cpu --b opencl fractal mandelbrot --size 800x600
              glint compare --a cpu --b gpu --json cmp.json --diff heat.png fractal julia --smooth --palette fire
              glint compare --images reference.png candidate.png --tolerance 2 --diff heat.png
            """)

    @Option(help: "Backend A for a job (auto, cpu, opencl, opencl:N, gpu).")
    var a: String?

    @Option(help: "Backend B for a job.")
    var b: String?

    @Option(parsing: .upToNextOption, help: ArgumentHelp("Compare two image files (PNG or PFM) instead of running a job.",
                                                         valueName: "a b"))
    var images: [String] = []

    @Option(help: "Write a false-colour heat map of the difference (PNG): dimmed image A where equal; dark blue to white for the smallest to the largest difference.")
    var diff: String?

    @Option(help: "Write every figure as JSON to FILE, or - for stdout.")
    var json: String?

    @Option(help: "Write the overall figures as tab-separated values to FILE: a header line and one line of values (for scripts).")
    var tsv: String?

    @Option(parsing: .unconditional, help: "Override the tolerance: exact, N or max:N, mean:P%, psnr:DB, rel:X, joined by commas.")
    var tolerance: String?

    @Option(parsing: .unconditional, help: "Timed runs per side after the first, for a job (median reported; 1 to \(Limits.runs.upperBound)). (default: 3)",
            transform: wholeNumber("--runs", Limits.runs))
    var runs = 3

    @OptionGroup var limits: InputLimitOptions
    @OptionGroup var out: OutputOptions

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("The workload (\(Workloads.names.joined(separator: ", "))) and its options.", valueName: "workload"))
    var job: [String] = []

    /// Compare's own options may also follow the workload; they are taken out of its arguments.
    mutating func liftOwnOptions() throws {
        guard !job.isEmpty else { return }
        var rest: [String] = [job[0]]
        var i = 1
        let own = ["--a", "--b", "--diff", "--json", "--tsv", "--tolerance", "--runs"]
        while i < job.count {
            let arg = job[i]
            var name = arg, value: String?
            if let eq = arg.firstIndex(of: "="), arg.hasPrefix("--") {
                name = String(arg[..<eq])
                value = String(arg[arg.index(after: eq)...])
            }
            guard own.contains(name) else { rest.append(arg); i += 1; continue }
            if value == nil {
                guard i + 1 < job.count else { throw ValidationError("\(name) needs a value") }
                value = job[i + 1]
                i += 1
            }
            i += 1
            switch name {
            case "--a": a = value
            case "--b": b = value
            case "--diff": diff = value
            case "--json": json = value
            case "--tsv": tsv = value
            case "--tolerance": tolerance = value
            default:
                runs = try checkedInt(value ?? "", option: "--runs", Limits.runs)
            }
        }
        job = rest
    }

    func validate() throws {
        if !images.isEmpty {
            guard images.count == 2 else { throw ValidationError("--images takes two files: --images A.png B.png") }
            guard job.isEmpty, a == nil, b == nil else {
                throw ValidationError("give either --images A B, or --a/--b and a workload, not both")
            }
        }
        if let tolerance { do { _ = try Tolerance(parsing: tolerance) } catch { throw ValidationError(error.message) } }
        if let diff {
            guard hasSuffix(diff, ["png"]) else { throw ValidationError("--diff \(diff): must be a .png file") }
            try checkWritable(diff, option: "--diff")
        }
        if let json, json != "-" { try checkWritable(json, option: "--json") }
        if let tsv {
            if tsv == "-" { throw ValidationError("--tsv writes a file; give its path (--json - prints to standard output)") }
            if tsv == json || tsv == diff { throw ValidationError("--tsv \(tsv): the same file as --\(tsv == json ? "json" : "diff")") }
            try checkWritable(tsv, option: "--tsv")
        }
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
    }

    mutating func run() async throws {
        // The passthrough argument swallows --help; answer it here.
        if let first = job.first, ["--help", "-h", "help"].contains(first) {
            print(Compare.helpMessage())
            return
        }
        if let first = job.first, let type = Workloads.named(first), job.contains(where: { $0 == "--help" || $0 == "-h" }) {
            print("glint compare --a DEVICE --b DEVICE \(first) takes the options of glint \(first), except --device and -o:\n")
            print(type.helpMessage())
            return
        }
        try liftOwnOptions()
        try validate()
        let command = self
        do {
            let passed = try await command.compare()
            if !passed { throw ExitCode(1) }
        } catch let e as ExitCode {
            throw e
        } catch let e as ValidationError {
            printError("error: \(e.message)")
            throw ExitCode(2)
        } catch {
            let text = (error as? GlintError)?.flagged.message ?? "\(error)"
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            printError("error: " + (out.verbose || lines.count <= 1 ? text : "\(lines[0]) (run with --verbose for details)"))
            throw ExitCode(2)
        }
    }

    /// Runs the comparison; true when within tolerance.
    func compare() async throws -> Bool {
        if !images.isEmpty { return try compareFiles() }
        guard let workloadName = job.first else {
            throw ValidationError("nothing to compare: give --images A B, or --a DEVICE --b DEVICE and a workload (\(Workloads.names.sorted().joined(separator: ", ")))")
        }
        guard let type = Workloads.named(workloadName) else {
            throw ValidationError("unknown workload '\(workloadName)': compare knows \(Workloads.names.sorted().joined(separator: ", "))")
        }
        guard let a, let b else { throw ValidationError("a job comparison needs both --a DEVICE and --b DEVICE") }
        let parsed: ParsableCommand
        do {
            parsed = try type.parse(Array(job.dropFirst()))
        } catch {
            throw ValidationError("\(workloadName): " + usageMessage(for: error, type: type, help: nil))
        }
        guard let command = parsed as? any WorkloadCommand else { throw ValidationError("\(workloadName): not a workload") }
        if command.device.device != nil { throw ValidationError("\(workloadName): compare runs the job on --a and --b; drop --device") }
        if let conflict = command.comparisonConflict() { throw ValidationError(conflict) }
        return try await compareJob(command, a: a, b: b)
    }

    private func compareJob(_ command: any WorkloadCommand, a: String, b: String) async throws -> Bool {
        // Checked before the job: a mistyped device is a usage error however long the job.
        for text in [a, b] { do { _ = try DeviceChoice(parsing: text) } catch { throw error.usage } }
        let title = try command.comparisonTitle()
        let job: any ComparableJob
        do { job = try command.comparableJob() } catch let e as GlintError { throw e.flagged }
        let backendA: Backend, backendB: Backend
        do {
            let estimate = AutoEstimate(double: job.autoDouble, iterations: nil)
            backendA = try Backend.resolve(try DeviceChoice(parsing: a), for: job.autoKind, estimate: estimate)
            backendB = try Backend.resolve(try DeviceChoice(parsing: b), for: job.autoKind, estimate: estimate)
        } catch let e as GlintError {
            throw e.usage
        }
        let line = ProgressBar("compare", quiet: out.quiet)
        var sides: [(output: ComparisonRun, wall: BenchStats, kernel: BenchStats, build: Double)] = []
        for (label, backend) in [("A", backendA), ("B", backendB)] {
            let buildBefore = backend.buildStats.seconds
            line.show("\(title): \(label) on \(backend.label), first run")
            let first = try await job.comparisonRun(on: backend, detailed: true)
            let build = backend.buildStats.seconds - buildBefore
            var walls: [Double] = [], kernels: [Double] = []
            for r in 0..<runs {
                line.show("\(title): \(label) on \(backend.label), timed run \(r + 1)/\(runs)")
                let timed = try await job.comparisonRun(on: backend, detailed: false)
                walls.append(timed.wallSeconds)
                kernels.append(timed.kernelSeconds)
            }
            sides.append((first, BenchStats(walls), BenchStats(kernels), build))
        }
        line.finish()
        let difference: ImageDifference
        if let fa = sides[0].output.floatImage, let fb = sides[1].output.floatImage {
            difference = try ImageCompare.compare(fa, fb)
        } else {
            difference = try ImageCompare.compare(sides[0].output.image, sides[1].output.image)
        }
        let tol = try tolerance.map { try Tolerance(parsing: $0) } ?? job.comparisonTolerance
        var verdicts = tol.evaluate(difference)
        var countsJSON = JSON.null
        var counts: (total: Int, differing: Int)?
        if let ca = sides[0].output.counts, let cb = sides[1].output.counts {
            let differing = zip(ca, cb).reduce(0) { $0 + ($1.0 == $1.1 ? 0 : 1) } + abs(ca.count - cb.count)
            verdicts.insert((differing == 0, differing == 0 ? "escape counts identical (\(ca.count))"
                                                          : "escape counts: \(differing) of \(ca.count) differ (must be identical)"), at: 0)
            countsJSON = .object([("total", .int(Int64(ca.count))), ("differing", .int(Int64(differing)))])
            counts = (ca.count, differing)
        }
        let passed = verdicts.allSatisfy(\.passed)
        let speedup = sides[1].wall.median > 0 ? sides[0].wall.median / sides[1].wall.median : .infinity
        if !out.quiet && json != "-" {
            print("\(title): A = \(backendA.label), B = \(backendB.label)")
            print(metricsTable(difference), terminator: "")
            for (label, side, backend) in [("A", sides[0], backendA), ("B", sides[1], backendB)] {
                var text = "\(label): median wall \(fmt(side.wall.median * 1000, 2)) ms over \(runs) run\(runs == 1 ? "" : "s")"
                if backend.isOpenCL {
                    text += ", kernels \(fmt(side.kernel.median * 1000, 2)) ms"
                    if side.build > 0 { text += " (program build \(fmt(side.build * 1000, 0)) ms, not timed)" }
                }
                print(text)
            }
            print("speed-up of B over A: \(fmt(speedup, 2))x (median wall time)")
            printVerdicts(verdicts, tolerance: tol, passed: passed)
        }
        // --diff, --json and --tsv are replaced together or not at all.
        let outputs = OutputSet()
        if let diff { try outputs.stage(diff, PNG.encode(ImageCompare.heatMap(difference, background: sides[0].output.image), alpha: false)) }
        if let tsv {
            func ms(_ x: Double) -> String { String(x * 1000) }
            try outputs.stage(tsv, tsvText(mode: "job", a: backendA.label, b: backendB.label, difference, tolerance: tol, passed: passed,
                                           counts: counts,
                                           times: [ms(sides[0].wall.median), ms(sides[1].wall.median),
                                                   backendA.isOpenCL ? ms(sides[0].kernel.median) : "",
                                                   backendB.isOpenCL ? ms(sides[1].kernel.median) : "", String(speedup)]))
        }
        if let json {
            func side(_ s: (output: ComparisonRun, wall: BenchStats, kernel: BenchStats, build: Double), _ backend: Backend) -> JSON {
                .object([("backend", .string(backend.label)),
                         ("wall_ms", s.wall.milliseconds.json),
                         ("kernel_ms", backend.isOpenCL ? s.kernel.milliseconds.json : .null),
                         ("build_ms", .number(s.build * 1000))])
            }
            let doc = JSON.object([
                ("mode", .string("job")), ("job", .string(title)), ("runs", .int(Int64(runs))),
                ("a", side(sides[0], backendA)), ("b", side(sides[1], backendB)),
                ("speedup", speedup.isFinite ? .number(speedup) : .null),
                ("counts", countsJSON),
            ] + metricsJSON(difference, tolerance: tol, verdicts: verdicts, passed: passed))
            try emit(json, doc, into: outputs)
        } else {
            try outputs.commit()
        }
        return passed
    }

    private func compareFiles() throws -> Bool {
        let (pa, pb) = (images[0], images[1])
        let pfm = hasSuffix(pa, ["pfm"])
        guard pfm == hasSuffix(pb, ["pfm"]) else {
            throw GlintError("--images \(pa) \(pb): compare two PNGs or two PFMs, not one of each")
        }
        let difference: ImageDifference
        let background: Image8
        if pfm {
            let ia = try PFM.read(pa), ib = try PFM.read(pb)
            difference = try ImageCompare.compare(ia, ib)
            background = ia.to8Bit()
        } else {
            let ia = try PNG.read(pa), ib = try PNG.read(pb)
            difference = try ImageCompare.compare(ia, ib)
            background = ia
        }
        let tol = try tolerance.map { try Tolerance(parsing: $0) } ?? (pfm ? .floatRelative : .oneLevel)
        let verdicts = tol.evaluate(difference)
        let passed = verdicts.allSatisfy(\.passed)
        if !out.quiet && json != "-" {
            print("\(pa) vs \(pb): \(difference.width)x\(difference.height)\(pfm ? ", float" : "")")
            print(metricsTable(difference), terminator: "")
            printVerdicts(verdicts, tolerance: tol, passed: passed)
        }
        let outputs = OutputSet()
        if let diff { try outputs.stage(diff, PNG.encode(ImageCompare.heatMap(difference, background: background), alpha: false)) }
        if let tsv {
            try outputs.stage(tsv, tsvText(mode: "images", a: pa, b: pb, difference, tolerance: tol, passed: passed, counts: nil, times: []))
        }
        if let json {
            try emit(json, .object([("mode", .string("images")), ("a", .string(pa)), ("b", .string(pb))]
                                   + metricsJSON(difference, tolerance: tol, verdicts: verdicts, passed: passed)), into: outputs)
        } else {
            try outputs.commit()
        }
        return passed
    }

    // MARK: Reporting

    private func metricsTable(_ d: ImageDifference) -> String {
        let float = d.fullScale == 1
        let over = float ? "> 1/255" : "> 1 level"
        var rows = [["channel", "max", "mean", "RMSE", "PSNR dB", "pixels " + over, "share"]]
        func value(_ x: Double) -> String { float ? Format.significant(x, 4) : fmt(x, x == x.rounded() ? 0 : 3) }
        func row(_ name: String, _ c: ChannelDifference) -> [String] {
            [name, value(c.maxAbs), value(c.meanAbs), value(c.rmse), c.psnr.isFinite ? fmt(c.psnr, 2) : "inf",
             String(c.pixelsOver), fmt(c.shareOver * 100, 3) + "%"]
        }
        for (name, c) in zip(d.channelNames, d.channels) { rows.append(row(name, c)) }
        rows.append(row("overall", d.overall))
        if float {
            rows[0].append("max rel")
            for (i, c) in (d.channels + [d.overall]).enumerated() { rows[i + 1].append(Format.significant(c.maxRelative, 3)) }
        }
        var widths = [Int](repeating: 0, count: rows[0].count)
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        return rows.map { r in
            r.enumerated().map { i, c in c + String(repeating: " ", count: widths[i] - c.count + 2) }.joined()
        }.joined(separator: "\n") + "\n"
    }

    private func printVerdicts(_ verdicts: [(passed: Bool, text: String)], tolerance: Tolerance, passed: Bool) {
        for v in verdicts { print("  \(v.passed ? "ok  " : "FAIL") \(v.text)") }
        print(passed ? "within tolerance (\(tolerance))" : "OUTSIDE tolerance (\(tolerance))")
    }

    private func metricsJSON(_ d: ImageDifference, tolerance: Tolerance, verdicts: [(passed: Bool, text: String)],
                             passed: Bool) -> [(String, JSON)] {
        func channel(_ name: String, _ c: ChannelDifference) -> JSON {
            .object([("channel", .string(name)), ("max_abs", .number(c.maxAbs)), ("mean_abs", .number(c.meanAbs)),
                     ("rmse", .number(c.rmse)), ("psnr_db", c.psnr.isFinite ? .number(c.psnr) : .null),
                     ("pixels_over_threshold", .int(Int64(c.pixelsOver))), ("share_over_threshold", .number(c.shareOver)),
                     ("max_relative", .number(c.maxRelative))])
        }
        return [
            ("width", .int(Int64(d.width))), ("height", .int(Int64(d.height))),
            ("full_scale", .number(d.fullScale)), ("threshold", .number(d.threshold)),
            ("channels", .array(zip(d.channelNames, d.channels).map(channel))),
            ("overall", channel("overall", d.overall)),
            ("tolerance", .string(tolerance.description)),
            ("criteria", .array(verdicts.map { .object([("passed", .bool($0.passed)), ("text", .string($0.text))]) })),
            ("passed", .bool(passed)),
        ]
    }

    /// `--tsv`: a header and one line, tab-separated; a field is empty where it does not apply (the
    /// counts outside fractal jobs, times for image files, kernel times on the Swift path); PSNR and
    /// speed-up may be inf. Times in ms; differences in 8-bit levels (plain values for PFM).
    private func tsvText(mode: String, a: String, b: String, _ d: ImageDifference, tolerance: Tolerance, passed: Bool,
                         counts: (total: Int, differing: Int)?, times: [String]) -> [UInt8] {
        let o = d.overall
        let fields: [(String, String)] = [
            ("mode", mode), ("a", a), ("b", b), ("passed", passed ? "true" : "false"), ("tolerance", tolerance.description),
            ("max_abs", String(o.maxAbs)), ("mean_abs", String(o.meanAbs)), ("rmse", String(o.rmse)), ("psnr_db", String(o.psnr)),
            ("pixels_over_threshold", String(o.pixelsOver)),
            ("counts_total", counts.map { String($0.total) } ?? ""), ("counts_differing", counts.map { String($0.differing) } ?? ""),
        ] + zip(["a_wall_ms", "b_wall_ms", "a_kernel_ms", "b_kernel_ms", "speedup"], times + Array(repeating: "", count: 5)).map { ($0, $1) }
        func clean(_ s: String) -> String { String(s.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 }) }
        return Array((fields.map(\.0).joined(separator: "\t") + "\n" + fields.map { clean($0.1) }.joined(separator: "\t") + "\n").utf8)
    }

    /// Stages the JSON file with the other `outputs` and commits them all; `-` prints it once
    /// the files are in place.
    private func emit(_ file: String, _ doc: JSON, into outputs: OutputSet) throws {
        let text = doc.serialized() + "\n"
        if file != "-" { try outputs.stage(file, Array(text.utf8)) }
        try outputs.commit()
        if file == "-" { print(text, terminator: "") }
    }

}
