import GlintCL
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// `--device auto` on a machine without an OpenCL GPU runs most kinds of job on the Swift path,
/// but learning that there is no GPU means loading every OpenCL driver: PoCL brings LLVM, 25 to
/// 30 ms of every short command. After a clean scan that found no GPU this memo is written
/// beside the program cache, with a fingerprint of what decides which devices the drivers can
/// show (taken before the scan):
/// - every ICD file of every vendors folder the loaders read (`OCL_ICD_VENDORS`,
///   `OPENCL_VENDOR_PATH`, /etc/OpenCL/vendors, /usr/share/OpenCL/vendors,
///   /usr/local/etc/OpenCL/vendors) and the library each names (size, time, inode);
/// - the dynamic linker's cache, the host name and the boot (a driver upgraded before a reboot);
/// - the environment variables that ICD loaders, drivers and GPU runtimes read;
/// - the GPU device nodes in /dev, whether this user may open each, the user and its groups.
/// A later `auto` job of a kind the Swift path runs takes the memo's word, instead of scanning,
/// while the fingerprint is unchanged and the memo is less than a day old. Only the absence of
/// a GPU is remembered: any scan that sees a GPU removes the memo, a scan that failed or could
/// not read a device's type leaves it alone, and `GLINT_KERNEL_CACHE=off` turns it off with
/// the program cache.
public enum NoGPUMemo {
    static let magic = "GLINT-NO-GPU 1"
    /// A memo older than this is not used (and is rewritten by the next clean scan).
    public static let maxAgeSeconds = 86_400

    /// The memo's file: `no-opencl-gpu` beside the program cache's folder, or nil without one.
    public static var path: String? {
        guard let programs = ProgramCache.directory, let slash = programs.lastIndex(of: "/") else { return nil }
        return String(programs[..<slash]) + "/no-opencl-gpu"
    }

    /// Whether `auto` took the Swift path on the memo's word in this process (for --verbose).
    public static var decided: Bool { decidedFlag.withLock { $0 } }
    private static let decidedFlag = Locked(false)

    /// `auto` for `kind`: whether the memo answers that the Swift path runs it (no GPU, and
    /// AutoChoice's table sends `kind` to the Swift path, or the memo records no OpenCL CPU
    /// device), so that no driver is loaded (and `decided` says so).
    static func answersAuto(for kind: AutoKind) -> Bool {
        if AutoChoice.prefersOpenCLCPU(kind) {
            guard case CPUDevice.none? = cpuDevice() else { return false }
        } else {
            guard holds() else { return false }
        }
        decidedFlag.withLock { $0 = true }
        return true
    }

    /// Whether a memo says that this machine, with the same drivers and environment, has no
    /// OpenCL GPU.
    public static func holds() -> Bool { holdingLines() != nil }

    /// The lines of a memo that holds (magic, fingerprint, time, then what it records), or nil.
    static func holdingLines() -> [Substring]? {
        guard let path, let text = try? FileIO.readText(path, limit: 4096) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 3, lines[0] == magic, let written = Int(lines[2]) else { return nil }
        let now = Int(time(nil))
        guard now >= written, now - written < maxAgeSeconds, lines[1] == fingerprint else { return nil }
        return lines
    }

    /// After this process's scan: a GPU removes the memo; a clean scan without one (drivers
    /// loaded, every device's type read) writes it with `fingerprint`, taken before the scan.
    /// A folder or file that cannot be written only costs the memo.
    static func update(after inventory: DeviceInventory, fingerprint: String) {
        guard let path, let slash = path.lastIndex(of: "/") else { return }
        let kinds = inventory.devices.map { try? $0.kind }
        if kinds.contains(.gpu) {
            unlink(path)
            return
        }
        guard inventory.problem == nil, !kinds.contains(where: { $0 == nil }) else { return }
        // The first OpenCL CPU device's native float vector width: "-" for no such device, "?"
        // where it could not be read.
        var width = "-"
        if let i = kinds.firstIndex(where: { $0 == .cpu }) {
            width = (try? inventory.devices[i].nativeFloatVectorWidth).map(String.init) ?? "?"
        }
        try? FileIO.makeDirectories(String(path[..<slash]))
        try? FileIO.writeAtomically(path, Array("\(magic)\n\(fingerprint)\n\(Int(time(nil)))\n\(width)\n".utf8))
    }

    /// What a holding memo says of the machine's OpenCL CPU device.
    enum CPUDevice: Equatable {
        case none
        case width(Int)
        /// Not recorded (a memo of an older glint) or not readable.
        case unknown
    }

    /// The memo's record of the OpenCL CPU device, or nil when no memo holds.
    static func cpuDevice() -> CPUDevice? {
        guard let lines = holdingLines() else { return nil }
        guard lines.count >= 4, !lines[3].isEmpty else { return .unknown }
        if lines[3] == "-" { return CPUDevice.none }
        guard let w = Int(lines[3]), w >= 1, w <= 64 else { return .unknown }
        return .width(w)
    }

    /// Environment variables that can change which OpenCL devices appear, by prefix (POCL_CACHE_DIR,
    /// which glint itself may set, moves a cache and is left out).
    static let environmentPrefixes = [
        "OCL_", "OPENCL_", "POCL_", "CL_", "CUDA_", "NVIDIA_", "ROCR_", "HIP_", "HSA_", "GPU_", "ZE_", "RUSTICL_",
        "CLOVER_", "MESA_", "NEO_", "LD_LIBRARY_PATH", "LD_PRELOAD",
    ]

    /// The vendors folders ICD loaders read (all of them are fingerprinted, whichever is used).
    static let vendorFolders = ["/etc/OpenCL/vendors", "/usr/share/OpenCL/vendors", "/usr/local/etc/OpenCL/vendors"]

    /// This process's fingerprint, taken once: before its scan (`DeviceInventory` reads it first)
    /// and before anything here changes the environment.
    public static let fingerprint: String = computeFingerprint()

    /// The drivers' part alone (ICD files, libraries, the linker's cache, the environment): what
    /// `AutoCalibration` needs unchanged (a reboot or another user does not change a speed).
    static let driversFingerprint: String = computeFingerprint(session: false)

    static func computeFingerprint(session: Bool = true) -> String {
        var parts: [String] = []
        var folders = vendorFolders
        for name in ["OCL_ICD_VENDORS", "OPENCL_VENDOR_PATH"] {
            guard let value = FileIO.environment(name), !value.isEmpty else { continue }
            if FileIO.isDirectory(value) {
                folders.append(value)
            } else {
                // A single ICD file (or a library given directly), by path or by name in the folders.
                parts.append("\(name) \(value) \(stamp(value)) \(icdLibrary(value))")
                for folder in vendorFolders { parts.append("\(name) in \(folder) \(stamp(folder + "/" + value))") }
            }
        }
        for folder in folders {
            parts.append("folder \(folder) \(stamp(folder))")
            for name in (try? FileIO.folderEntries(folder)) ?? [] {
                let icd = folder + "/" + name
                parts.append("icd \(icd) \(stamp(icd)) \(icdLibrary(icd))")
            }
        }
        parts.append("ld.so.cache \(stamp("/etc/ld.so.cache"))")
        if session { sessionParts(&parts) }
        // The environment the process started with (not what it set since: no race with a
        // setenv, and POCL_CACHE_DIR as glint may set it is never in it).
        let environment = ((try? FileIO.read("/proc/self/environ", limit: 1 << 20)) ?? []).split(separator: 0)
        parts += environment.map { String(decoding: $0, as: UTF8.self) }.filter { pair in
            let name = pair.prefix { $0 != "=" }
            return name != "POCL_CACHE_DIR" && environmentPrefixes.contains(where: { name.hasPrefix($0) })
        }.sorted()
        if session { nodeParts(&parts) }
        return StableHash.of(parts.joined(separator: "\n"))
    }

    /// The boot, the host and the user.
    static func sessionParts(_ parts: inout [String]) {
        parts.append("boot \((try? FileIO.readText("/proc/sys/kernel/random/boot_id", limit: 256)) ?? "-")")
        var host = [CChar](repeating: 0, count: 256)
        if gethostname(&host, host.count - 1) == 0 { parts.append("host " + String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
        parts.append("user \(getuid()) \(getgid()) groups \(groups())")
    }

    /// The GPU device nodes and whether this user may open each.
    static func nodeParts(_ parts: inout [String]) {
        for dir in ["/dev", "/dev/dri", "/dev/accel"] {
            for name in (try? FileIO.folderEntries(dir)) ?? []
            where dir != "/dev" || ["nvidia", "kfd", "dxg", "mali", "kgsl"].contains(where: { name.hasPrefix($0) }) {
                let node = dir + "/" + name
                parts.append("node \(node) \(access(node, R_OK | W_OK) == 0 ? "rw" : "-")")
            }
        }
    }

    /// The supplementary groups, sorted.
    static func groups() -> String {
        let n = getgroups(0, nil)
        guard n > 0 else { return "-" }
        var list = [gid_t](repeating: 0, count: Int(n))
        let got = getgroups(n, &list)
        return got < 0 ? "-" : list.prefix(Int(got)).sorted().map(String.init).joined(separator: ",")
    }

    /// The library an ICD file names, with its stamp; for a file that is a library itself, "-".
    static func icdLibrary(_ icd: String) -> String {
        guard icd.hasSuffix(".icd"), let text = try? FileIO.readText(icd, limit: 4096) else { return "-" }
        let library = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters() } ?? ""
        return library + " " + libraryStamp(library)
    }

    /// A file's identity and version: device, inode, size and modification time ("-" if absent).
    static func stamp(_ path: String) -> String {
        var st = stat()
        guard stat(path, &st) == 0 else { return "-" }
        return "\(st.st_dev):\(st.st_ino):\(st.st_size):\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
    }

    /// The stamp of a library an ICD file names: its path, or a bare name looked up where the
    /// dynamic linker looks first (LD_LIBRARY_PATH, then the multiarch and plain library folders;
    /// the linker's cache is stamped apart).
    static func libraryStamp(_ library: String) -> String {
        if library.isEmpty { return "-" }
        if library.contains("/") { return stamp(library) }
        let path = (FileIO.environment("LD_LIBRARY_PATH") ?? "").split(separator: ":").map(String.init)
        for dir in path + ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                           "/lib/aarch64-linux-gnu", "/usr/local/lib", "/usr/lib64", "/usr/lib", "/lib"] {
            let s = stamp(dir + "/" + library)
            if s != "-" { return dir + "/" + library + " " + s }
        }
        return "-"
    }
}
