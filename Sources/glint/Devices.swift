import ArgumentParser
import GlintCL
import GlintCore
import GlintWorkloads

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the backends: the Swift CPU path and every OpenCL device, with the index opencl:N uses.",
        discussion: "With no OpenCL driver installed, the Swift CPU path still works and this says what to install.")

    @Flag(name: .long, help: "Print the list as JSON.")
    var json = false

    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await reportingErrors(verbose: output.verbose, buildReport: false) {
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
        }
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
