import GlintCL
import GlintCore
import GlintKernels
import Glibc

/// Where a benchmark ran: enough to tell two result files' machines and builds apart.
public enum BenchEnvironment {
    /// The `environment` object of bench JSON (docs/BENCH.md documents each field).
    public static func collect() -> JSON {
        let inventory = DeviceInventory.scan()
        var platforms: [JSON] = []
        if let all = try? Platform.all() {
            for p in all {
                platforms.append(.object([
                    ("name", .string((try? p.name) ?? "")),
                    ("vendor", .string((try? p.vendor) ?? "")),
                    ("version", .string((try? p.version) ?? "")),
                ]))
            }
        }
        return .object([
            ("glint_version", .string(GlintBuild.version)),
            ("git_commit", .string(GlintBuild.commit)),
            ("date", .string(Format.utcNow())),
            ("os", .string(operatingSystem())),
            ("kernel", .string(kernelRelease())),
            ("cpu_model", .string(cpuModel())),
            ("cpu_cores", .int(Int64(sysconf(Int32(_SC_NPROCESSORS_ONLN))))),
            ("cpu_threads_used", .int(Int64(CPUParallel.workerCount))),
            ("memory_bytes", .int(Int64(sysconf(Int32(_SC_PHYS_PAGES))) * Int64(sysconf(Int32(_SC_PAGESIZE))))),
            ("opencl_platforms", .array(platforms)),
            ("opencl_devices", .array(inventory.devices.enumerated().map { DeviceInventory.json(for: $1, index: $0) })),
            ("opencl_problem", inventory.problem.map(JSON.string) ?? .null),
        ])
    }

    /// "model name" from /proc/cpuinfo (or the architecture where there is none).
    public static func cpuModel() -> String {
        if let text = try? FileIO.readText("/proc/cpuinfo") {
            for line in text.split(separator: "\n") where line.hasPrefix("model name") {
                if let colon = line.firstIndex(of: ":") { return line[line.index(after: colon)...].trimmingCharacters() }
            }
        }
        return machine()
    }

    /// PRETTY_NAME from /etc/os-release, else the kernel's name.
    public static func operatingSystem() -> String {
        if let text = try? FileIO.readText("/etc/os-release") {
            for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
                return String(line.dropFirst("PRETTY_NAME=".count).filter { $0 != "\"" })
            }
        }
        return "Linux"
    }

    public static func kernelRelease() -> String {
        var u = utsname()
        uname(&u)
        return withUnsafeBytes(of: &u.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            + " " + machine()
    }

    static func machine() -> String {
        var u = utsname()
        uname(&u)
        return withUnsafeBytes(of: &u.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}

extension DeviceInventory {
    /// One OpenCL device as JSON (the `glint devices --json` and bench environment shape).
    public static func json(for d: Device, index: Int) -> JSON {
        .object([
            ("index", .int(Int64(index))),
            ("name", .string((try? d.name) ?? "")),
            ("platform", .string((try? d.platform.name) ?? "")),
            ("platform_version", .string((try? d.platform.version) ?? "")),
            ("vendor", .string((try? d.vendor) ?? "")),
            ("type", .string((try? d.kind.rawValue) ?? "other")),
            ("compute_units", .int(Int64((try? d.computeUnits) ?? 0))),
            ("max_clock_mhz", .int(Int64((try? d.maxClockMHz) ?? 0))),
            ("global_memory_bytes", .int(Int64((try? d.globalMemoryBytes) ?? 0))),
            ("local_memory_bytes", .int(Int64((try? d.localMemoryBytes) ?? 0))),
            ("fp64", .bool((try? d.supportsFP64) ?? false)),
            ("driver_version", .string((try? d.driverVersion) ?? "")),
            ("device_version", .string((try? d.version) ?? "")),
            ("native_vector_width_float", .int(Int64((try? d.nativeFloatVectorWidth) ?? 0))),
        ])
    }
}
