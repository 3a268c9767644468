import ArgumentParser
import GlintCL
import GlintCore
import GlintWorkloads
#if canImport(Glibc)
import Glibc
#endif

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the backends: the Swift CPU path and every OpenCL device, with the index opencl:N uses.",
        discussion: "With no OpenCL driver installed, the Swift CPU path still works and this says what to install.")

    @Flag(name: .long, help: "Print the list as JSON.")
    var json = false

    @Flag(name: .long, help: ArgumentHelp(
        "Measure where each kind of job runs faster here, the Swift path or OpenCL, and remember it for --device auto.",
        discussion: "Without a GPU, auto takes the faster of the two CPU paths for each kind of job from a table of measurements; for plain escape-time fractals the answer can differ from processor to processor (PoCL compiles for the processor's widest vectors, the Swift path is AVX2 code everywhere; the measured table takes the Swift path with AVX2 and with AVX-512) and, for a command that runs once, with the size of the job (PoCL loads LLVM at start-up). This measures both paths' rates (escape counts per second, float and double: a warm-up, then the median of half a second of renders of the default view at 256 iterations) and OpenCL's start-up (whole tiny renders in child processes, the median on each path), and writes them beside the program cache (auto-calibration). From then on a fractal command with auto estimates its work (a render at one eighth of the size) and runs where it finishes sooner, start-up included; --verbose says why. With a GPU, it measures the bench's job of each kind but deep zooms (blur in each format and method) at --size and at twice each side, on the Swift path and on the GPU in a process that has the GPU open, and the GPU's start-up, and writes them beside the program cache (auto-calibration-gpu); auto then runs such a job where it finishes sooner, reading its time off the two sizes, a single command weighing the GPU's start-up against its work. A new driver, processor or glint build needs a new calibration."))
    var calibrate = false

    @Flag(name: .long, help: ArgumentHelp(
        "Measure each OpenCL device's peak single-precision FMA rate and global-memory bandwidth with Glint's own small kernels.",
        discussion: "As clpeak does: the work of each kernel grows until a launch takes 10 ms (the copy buffers up to 256 MiB each, past any cache), a warm-up launch, then the median of about 0.2 s of launches timed by profiling events. FLOP/s counts 2 per FMA; bandwidth counts the bytes read and written by a float4 copy. Then the rate of Glint's own copies of that buffer between host memory and the device, wall clock (through pinned staging on a GPU). glint bench --peak and --device-sized report their kernels against these rates. With --json, one object per device."))
    var peak = false

    @Option(name: .long, help: "With --peak: measure only this OpenCL device (opencl, opencl:N, gpu; default: every one).")
    var device: String?

    @Option(name: .long, help: "With --calibrate: the size of the calibration renders (default 1920x1080; with a GPU also twice each side).")
    var size: String?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let size {
            guard calibrate else { throw ValidationError("--size goes with --calibrate") }
            let (w, h) = try parseSize(size)
            if w * h < 64 { throw ValidationError("--size: the calibration renders need at least 64 pixels") }
            if w > 4096 || h > 4096 { throw ValidationError("--size: at most 4096x4096 (with a GPU the calibration also renders at twice each side), got \(size)") }
        }
        if calibrate && json { throw ValidationError("--json lists the devices; it does not go with --calibrate") }
        if peak && calibrate { throw ValidationError("--peak and --calibrate are separate runs; give one") }
        if let device {
            guard peak else { throw ValidationError("--device goes with --peak") }
            do { _ = try DeviceChoice(parsing: device) } catch { throw error.usage }
        }
    }

    func run() async throws {
        try await reportingErrors(verbose: output.verbose, buildReport: false) {
            if calibrate {
                try await runCalibration()
                return
            }
            if peak {
                try runPeak()
                return
            }
            let inventory = DeviceInventory.scan()
            // Where --device auto runs each kind of job.
            let picks = AutoKind.allCases.map { kind in
                (kind, (try? Backend.resolve(.auto, for: kind))?.choiceName(in: inventory) ?? "cpu")
            }
            let targets = picks.reduce(into: [String]()) { if !$0.contains($1.1) { $0.append($1.1) } }
            let auto = targets.count == 1 ? targets[0] : "by job: " + targets.map { target in
                "\(target) for " + picks.filter { $0.1 == target }.map(\.0.rawValue).joined(separator: ", ")
            }.joined(separator: "; ")
            if json {
                print(devicesJSON(inventory, auto: auto, picks: picks).serialized())
                return
            }
            print("cpu         Swift CPU path, \(CPUParallel.workerCount) threads (Swift concurrency, SIMD)")
            for (i, d) in inventory.devices.enumerated() {
                let name = (try? d.name) ?? "?"
                let platform = (try? d.platform.name) ?? "?"
                print("opencl:\(i)".padding(12) + "\(name)  [\(platform)]")
                let kind = (try? d.kind.rawValue) ?? "?"
                let cu = (try? d.computeUnits).map(String.init) ?? "?"
                let mhz = (try? d.maxClockMHz).map(String.init) ?? "?"
                let global = (try? d.globalMemoryBytes).map(bytesText) ?? "?"
                let local = (try? d.localMemoryBytes).map(bytesText) ?? "?"
                let fp64 = (try? d.supportsFP64).map { $0 ? "yes" : "no" } ?? "?"
                print(String().padding(12) + "type \(kind), \(cu) compute units @ \(mhz) MHz, global \(global), local \(local), fp64 \(fp64)")
                print(String().padding(12) + "driver \((try? d.driverVersion) ?? "?"), \((try? d.version) ?? "?")")
            }
            if let problem = inventory.problem {
                print("OpenCL: \(problem)")
            } else if let note = inventory.note {
                print("note: \(note)")
            }
            print("auto        -> \(auto)")
            // With --verbose, and where AutoChoice's table decides (no GPU, an OpenCL CPU device): why.
            let kinds = inventory.devices.map { try? $0.kind }
            if output.verbose && !kinds.contains(.gpu) && kinds.contains(.cpu) {
                for kind in AutoKind.allCases {
                    let (path, why) = AutoChoice.withoutGPU(kind)
                    let reason = kind == .fractal && AutoCalibration.current != nil
                        ? "as calibrated here (glint devices --calibrate)" : "\(path.rawValue): \(why)"
                    print(String().padding(12) + kind.rawValue.padding(16) + reason)
                }
            }
        }
    }
}

extension Devices {
    func runPeak() throws {
        let inventory = DeviceInventory.scan()
        guard !inventory.devices.isEmpty else {
            throw GlintError("no OpenCL device to measure (\(inventory.problem ?? "none found"))")
        }
        var chosen = Array(inventory.devices.enumerated())
        if let device {
            guard case .opencl(let cc) = try Backend.resolve(try DeviceChoice(parsing: device), for: .fractal) else {
                throw GlintError("--device \(device): the peak is measured on an OpenCL device (opencl, opencl:N or gpu)")
            }
            chosen = chosen.filter { $0.element == cc.device }
        }
        var entries: [JSON] = []
        for (i, device) in chosen {
            let cc = try ComputeContext.shared(for: device)
            if !json && !output.quiet { print("opencl:\(i)".padding(12) + cc.deviceName) }
            let peak = try DevicePeak.measure(on: cc)
            if json {
                entries.append(.object([("index", .int(Int64(i))), ("name", .string(cc.deviceName)),
                                        ("type", .string(cc.kind.rawValue)), ("peak", peak.json)]))
                continue
            }
            let pad = String().padding(12)
            print(pad + "FMA, float   \(Format.rate(peak.flops, unit: "FLOP/s"))  (\(peak.fmaItems) work-items x \(peak.fmaRounds) rounds x 16 FMAs of \(peak.fmaWidth) lane\(peak.fmaWidth == 1 ? "" : "s"), median of \(peak.fmaLaunches) launches)")
            print(pad + "copy         \(Format.rate(peak.bytesPerSecond, unit: "B/s"))  (bytes read + written; \(bytesText(UInt64(peak.copyBytes))) buffers, median of \(peak.copyLaunches) launches)")
            let how = cc.queue.stages(bytes: peak.copyBytes) ? "through pinned staging" : "directly"
            print(pad + "host copies  \(Format.rate(peak.hostToDevice, unit: "B/s")) to the device, \(Format.rate(peak.deviceToHost, unit: "B/s")) back  (\(bytesText(UInt64(peak.copyBytes))) \(how), median of 5)")
        }
        if json { print(JSON.object([("devices", .array(entries))]).serialized()) }
    }

    func runCalibration() async throws {
        let inventory = DeviceInventory.scan()
        let kinds = inventory.devices.map { (try? $0.kind) ?? .other }
        if let gpu = kinds.firstIndex(of: .gpu) {
            try await calibrateGPU(inventory.devices[gpu], index: gpu)
            return
        }
        guard let index = kinds.firstIndex(of: .cpu) else {
            throw GlintError("no OpenCL CPU device to calibrate against (\(inventory.problem ?? "none of the OpenCL devices is a CPU")): auto runs these jobs on the Swift path")
        }
        _ = try AutoCalibration.requirePath()
        let (width, height) = try parseSize(size ?? "1920x1080")
        let cc = try ComputeContext.shared(for: inventory.devices[index])
        let name = cc.deviceName
        if !output.quiet { print("calibrating: the Swift path against opencl:\(index) (\(name)), \(width)x\(height) renders") }
        let start = try startUpMilliseconds(device: "opencl:\(index)")
        let sf = try await AutoCalibration.rate(double: false, on: .cpu, width: width, height: height)
        let of = try await AutoCalibration.rate(double: false, on: .opencl(cc), width: width, height: height)
        let sd = try await AutoCalibration.rate(double: true, on: .cpu, width: width, height: height)
        // A device without fp64 cannot run double: rate 0, the Swift path takes every double job.
        let od = cc.supportsFP64 ? try await AutoCalibration.rate(double: true, on: .opencl(cc), width: width, height: height) : 0
        let calibration = AutoCalibration(swiftFloat: sf, openCLFloat: of, swiftDouble: sd, openCLDouble: od,
                                          openCLStartMs: start, device: name, written: Int(time(nil)))
        try calibration.save()
        if output.quiet { return }
        func g(_ r: Double) -> String { fmt(r / 1e9, 2) + " Giter/s" }
        print("float:  Swift path \(g(sf)), OpenCL \(g(of))")
        print("double: Swift path \(g(sd)), OpenCL \(cc.supportsFP64 ? g(od) : "no fp64")")
        print("OpenCL start-up: \(fmt(start, 1)) ms more per command than the Swift path")
        for (label, s, o) in [("float", sf, of), ("double", sd, od)] {
            if o <= s {
                print("auto, \(label): the Swift path for every plain fractal")
            } else {
                // Break-even: W / s = start + W / o.
                let w = start / 1000 / (1 / s - 1 / o)
                print("auto, \(label): the OpenCL device inside a process that has it open; for a single command, from about \(fmt(w / 1e6, 0)) million escape counts (\(fmt(w / s * 1000, 0)) ms on the Swift path)")
            }
        }
        print("wrote \(AutoCalibration.path ?? "auto-calibration")")
    }

    /// With a GPU: each measured kind's calibration job on the Swift path and on the GPU, and the
    /// GPU's start-up, written for `auto` (`GPUCalibration`).
    func calibrateGPU(_ device: Device, index: Int) async throws {
        _ = try AutoCalibration.requirePath()
        let (width, height) = try parseSize(size ?? "1920x1080")
        let cc = try ComputeContext.shared(for: device)
        if !output.quiet { print("calibrating: the Swift path against opencl:\(index) (\(cc.deviceName)), the bench's jobs at \(width)x\(height) and \(2 * width)x\(2 * height)") }
        let start = try startUpMilliseconds(device: "opencl:\(index)")
        let bar = ProgressBar("calibrate", quiet: output.quiet)
        var done = 0
        let entries = try await GPUCalibration.measure(on: cc, width: width, height: height) { key in
            bar.update(Double(done) / Double(GPUCalibration.keys.count))
            done += 1
        }
        bar.finish()
        let calibration = GPUCalibration(entries: entries, startMs: start, device: cc.deviceName, written: Int(time(nil)))
        try calibration.save()
        if output.quiet { return }
        print("GPU start-up: \(fmt(start, 1)) ms more per command than the Swift path")
        for key in GPUCalibration.keys {
            guard let e = entries[key] else { continue }
            let times = e.points.map { "\(fmt($0.swiftSeconds * 1000, 3)) / \(fmt($0.gpuSeconds * 1000, 3)) ms" }
            let (small, large) = (e.points[0], e.points[e.points.count - 1])
            let open = [small, large].map { $0.gpuSeconds <= $0.swiftSeconds }
            let once = small.gpuSeconds + start / 1000 <= small.swiftSeconds
            func path(_ gpu: Bool) -> String { gpu ? "the GPU" : "the Swift path" }
            var verdict = open[0] == open[1] ? path(open[0]) : "\(path(open[0])) for the smaller job, \(path(open[1])) for the larger"
            if once != open[0] { verdict += " (\(path(once)) for a single command of the smaller)" }
            print("\(key.padding(19))Swift path / GPU \(times.joined(separator: "; ")): auto takes \(verdict)")
        }
        print("wrote \(GPUCalibration.path ?? "auto-calibration-gpu")")
    }

    /// How much longer a whole tiny fractal command takes on `device` than on the Swift path:
    /// this program run as child processes (a warm-up each, then 7 alternating), the medians' difference.
    func startUpMilliseconds(device: String) throws -> Double {
        let folder = try FileIO.makeTemporaryFolder(prefix: "glint-calibrate")
        // The probe and whatever a child left under a temporary name go with it.
        defer { FileIO.removeTree(folder) }
        func run(_ device: String) throws -> Double {
            let args = ["/proc/self/exe", "fractal", "mandelbrot", "--size", "64x36", "--device", device, "-q",
                        "-o", folder + "/probe.png"]
            let begin = Clock.now()
            let child: pid_t
            do { child = try Subprocess.spawn(args, quietStdout: true) } catch {
                throw GlintError("calibration: cannot run glint again (\(error.reason))")
            }
            let ending = Subprocess.wait(child)
            guard ending.succeeded else {
                throw GlintError("calibration: glint fractal --device \(device) failed (\(ending.text); its message is above)")
            }
            return (Clock.now() - begin) * 1000
        }
        _ = try run("cpu")
        _ = try run(device)
        var cpu: [Double] = [], cl: [Double] = []
        for _ in 0..<7 {
            cpu.append(try run("cpu"))
            cl.append(try run(device))
        }
        cpu.sort(); cl.sort()
        return max(0, cl[3] - cpu[3])
    }
}

func bytesText(_ b: UInt64) -> String {
    let d = Double(b)
    if d >= 1073741824 { return fmt(d / Double(1 << 30), 1) + " GiB" }
    if d >= 1048576 { return fmt(d / Double(1 << 20), 1) + " MiB" }
    return fmt(d / 1024, 0) + " KiB"
}

func deviceJSON(_ d: Device, index: Int) -> JSON { DeviceInventory.json(for: d, index: index) }

func devicesJSON(_ inventory: DeviceInventory, auto: String, picks: [(AutoKind, String)]) -> JSON {
    .object([
        ("cpu", .object([("threads", .int(Int64(CPUParallel.workerCount)))])),
        ("opencl", .array(inventory.devices.enumerated().map { deviceJSON($1, index: $0) })),
        ("opencl_problem", inventory.problem.map(JSON.string) ?? .null),
        ("auto", .string(auto)),
        ("auto_by_kind", .object(picks.map { ($0.0.rawValue, .string($0.1)) })),
    ])
}

extension Backend {
    /// `cpu` or `opencl:N` for this backend.
    func choiceName(in inventory: DeviceInventory) -> String {
        switch self {
        case .cpu: return "cpu"
        case .opencl(let cc):
            if let i = inventory.devices.firstIndex(of: cc.device) { return "opencl:\(i)" }
            return "opencl"
        }
    }
}

extension String {
    func padding(_ n: Int) -> String { count >= n ? self + " " : self + String(repeating: " ", count: n - count) }
}
