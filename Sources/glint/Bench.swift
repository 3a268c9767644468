import ArgumentParser
import GlintCore
import GlintWorkloads

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Benchmark workloads per backend: median time, throughput, and a check against the Swift CPU path.",
        discussion: """
            fractal: Mandelbrot at --size (default 1920x1080), --iterations (default 256), the view \
            [-2.53,1.03]x[-1,1] (centre -0.75,0, zoom 1). Each case: one warm-up, then runs until \
            --seconds have passed (at least --min-runs); the median, min and max wall time per frame, \
            the median OpenCL kernel time (profiling events), and Giter/s = escape-count sum / median \
            wall time. Cases with cardioid/bulb skipping count the skipped points' iterations as done \
            (the picture is the same); the no-skip cases iterate every one. Program build time is \
            reported apart, never inside a case. Every OpenCL case's escape counts are compared with \
            the Swift CPU path's: they must be identical.
            """)

    @Argument(help: "Workload to benchmark: fractal.")
    var workload = "fractal"

    @Option(help: "Image size WxH.")
    var size = "1920x1080"

    @Option(help: "Iteration limit.")
    var iterations = 256

    @Option(help: "Seconds of timed runs per case (after the warm-up).")
    var seconds = 2.0

    @Option(name: .customLong("min-runs"), help: "At least this many timed runs per case.")
    var minRuns = 3

    @Option(name: .long, help: "Run on this backend only (auto, cpu, opencl, opencl:N, gpu); default: the CPU path and every OpenCL device.")
    var device: String?

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @OptionGroup var out: OutputOptions

    func validate() throws {
        guard workload == "fractal" else { throw ValidationError("unknown workload '\(workload)': bench knows fractal") }
        _ = try parseSize(size)
        guard seconds > 0, seconds <= 600 else { throw ValidationError("--seconds must be in (0, 600]") }
        guard minRuns >= 1 else { throw ValidationError("--min-runs must be at least 1") }
        if let json { try checkWritable(json, option: "--json") }
    }

    func run() async throws {
        try await reportingErrors(verbose: out.verbose) {
            let (w, h) = try parseSize(size)
            var backends: [(String, Backend)] = []
            let inventory = DeviceInventory.scan()
            if let device {
                let b = try Backend.resolve(try DeviceChoice(parsing: device))
                backends = [(b.choiceName(in: inventory), b)]
            } else {
                backends = [("cpu", .cpu)]
                for (i, d) in inventory.devices.enumerated() {
                    backends.append(("opencl:\(i)", .opencl(try ComputeContext.shared(for: d))))
                }
                if let problem = inventory.problem, !out.quiet { print("note: \(problem)") }
            }
            struct Case { let name: String; let precision: Precision; let skip: Bool }
            let cases = [
                Case(name: "mandelbrot float", precision: .float, skip: true),
                Case(name: "mandelbrot float no-skip", precision: .float, skip: false),
                Case(name: "mandelbrot double no-skip", precision: .double, skip: false),
            ]
            var rows: [JSON] = []
            if !out.quiet {
                print("fractal: \(w)x\(h), \(iterations) iterations, view centre -0.75,0 zoom 1; \(fmt(seconds, 1)) s per case")
                print("backend".padding(12) + "case".padding(28) + "median ms".padding(11) + "min ms".padding(9)
                      + "kernel ms".padding(11) + "Giter/s".padding(9) + "check")
            }
            var reference: [String: [UInt32]] = [:]
            var failures = 0
            for c in cases {
                var job = FractalJob(formula: .mandelbrot)
                job.width = w; job.height = h; job.maxIterations = iterations
                job.precision = c.precision; job.skipInterior = c.skip
                for (label, backend) in backends {
                    if case .opencl(let cc) = backend, c.precision == .double, !cc.supportsFP64 { continue }
                    // Build outside the timing (and validate): one run that returns counts.
                    let buildBefore = buildSeconds(backend)
                    let first = try await FractalRenderer.render(job, on: backend, outputs: .init(counts: true, iterations: true))
                    let build = buildSeconds(backend) - buildBefore
                    let counts = first.counts ?? []
                    var check = "reference"
                    if backend.isOpenCL {
                        // Every OpenCL case is checked against the Swift path, benchmarked or not.
                        if reference[c.name] == nil {
                            reference[c.name] = try await FractalRenderer.render(job, on: .cpu, outputs: .init(counts: true)).counts
                        }
                        let ref = reference[c.name] ?? []
                        let diff = zip(ref, counts).reduce(0) { $0 + ($1.0 == $1.1 ? 0 : 1) } + abs(ref.count - counts.count)
                        check = diff == 0 ? "pass (counts identical)" : "FAIL (\(diff) counts differ)"
                    } else if reference[c.name] == nil {
                        reference[c.name] = counts
                    }
                    var walls: [Double] = [], kernels: [Double] = []
                    let start = Clock.now()
                    while walls.count < minRuns || Clock.now() - start < seconds {
                        let r = try await FractalRenderer.render(job, on: backend)
                        walls.append(r.wallSeconds)
                        kernels.append(r.kernelSeconds)
                    }
                    walls.sort(); kernels.sort()
                    let median = walls[walls.count / 2]
                    let kernelMedian = kernels[kernels.count / 2]
                    let giter = Double(first.iterations ?? 0) / median / 1e9
                    if !out.quiet {
                        print(label.padding(12) + c.name.padding(28) + fmt(median * 1000, 1).padding(11)
                              + fmt(walls[0] * 1000, 1).padding(9)
                              + (backend.isOpenCL ? fmt(kernelMedian * 1000, 1) : "-").padding(11)
                              + fmt(giter, 2).padding(9) + check)
                    }
                    rows.append(.object([
                        ("backend", .string(label)), ("device", .string(backend.label)), ("case", .string(c.name)),
                        ("width", .int(Int64(w))), ("height", .int(Int64(h))), ("iterations_limit", .int(Int64(iterations))),
                        ("runs", .int(Int64(walls.count))),
                        ("wall_ms_median", .number(median * 1000)), ("wall_ms_min", .number(walls[0] * 1000)),
                        ("wall_ms_max", .number(walls[walls.count - 1] * 1000)),
                        ("kernel_ms_median", backend.isOpenCL ? .number(kernelMedian * 1000) : .null),
                        ("iterations_total", .int(Int64(first.iterations ?? 0))),
                        ("giter_per_s", .number(giter)),
                        ("build_ms", .number(build * 1000)),
                        ("check", .string(check)),
                    ]))
                    if check.hasPrefix("FAIL") { failures += 1 }
                }
            }
            if let json {
                try FileIO.writeAtomically(json, Array(JSON.object([("workload", .string("fractal")), ("cases", .array(rows))]).serialized().utf8))
            }
            for (label, backend) in backends {
                if case .opencl(let cc) = backend, !out.quiet {
                    let s = cc.buildStats
                    print("\(label) program builds: \(s.compiled) compiled, \(s.fromDiskCache) from the disk cache, \(fmt(s.seconds * 1000, 1)) ms in all")
                }
            }
            if failures > 0 { throw GlintError("\(failures) case(s) failed validation against the Swift CPU path") }
        }
    }

    private func buildSeconds(_ b: Backend) -> Double {
        if case .opencl(let cc) = b { return cc.buildStats.seconds }
        return 0
    }
}
