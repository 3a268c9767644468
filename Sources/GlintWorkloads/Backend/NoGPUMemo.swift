import GlintCL
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// `--device auto` on a machine without an OpenCL GPU runs most kinds of job on the Swift path,
/// but learning that there is no GPU means loading every OpenCL driver: PoCL brings LLVM, 25 to
/// 30 ms of every short command. After a scan that found no GPU this memo is written beside the
/// program cache, with a fingerprint of what decides which devices the drivers can show: the ICD
/// files (`OCL_ICD_VENDORS` or /etc/OpenCL/vendors) and the libraries they name (size, time,
/// inode), the dynamic linker's cache, the environment variables the ICD loader, the drivers and
/// GPU runtimes read, and the GPU device nodes in /dev. A later `auto` job of a kind the Swift
/// path runs reads the memo instead of scanning while the fingerprint is unchanged and the memo
/// is less than a day old. Only the absence of a GPU is remembered: with a GPU, `auto` opens it
/// and scans anyway. `GLINT_KERNEL_CACHE=off` turns the memo off with the program cache.
public enum NoGPUMemo {
    static let magic = "GLINT-NO-GPU 1"
    /// A memo older than this is not used (and is rewritten by the next scan).
    public static let maxAgeSeconds = 86_400

    /// The memo's file: `no-opencl-gpu` beside the program cache's folder, or nil without one.
    public static var path: String? {
        guard let programs = ProgramCache.directory, let slash = programs.lastIndex(of: "/") else { return nil }
        return String(programs[..<slash]) + "/no-opencl-gpu"
    }

    /// Whether `auto` took the Swift path on the memo's word in this process (for --verbose).
    public static var decided: Bool { decidedFlag.withLock { $0 } }
    private static let decidedFlag = Locked(false)

    /// `auto` for a kind the Swift path runs: whether the memo answers, so that no driver is
    /// loaded (and `decided` says so).
    static func answersAuto() -> Bool {
        guard holds() else { return false }
        decidedFlag.withLock { $0 = true }
        return true
    }

    /// Whether a memo says that this machine, with the same drivers and environment, has no
    /// OpenCL GPU.
    public static func holds() -> Bool {
        guard let path, let text = try? FileIO.readText(path, limit: 4096) else { return false }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 3, lines[0] == magic, let written = Int(lines[2]) else { return false }
        let now = Int(time(nil))
        guard now >= written, now - written < maxAgeSeconds else { return false }
        return lines[1] == fingerprint()
    }

    /// Records that a scan found no GPU. A folder or file that cannot be written only costs the memo.
    public static func remember() {
        guard let path, let slash = path.lastIndex(of: "/") else { return }
        try? FileIO.makeDirectories(String(path[..<slash]))
        try? FileIO.writeAtomically(path, Array("\(magic)\n\(fingerprint())\n\(Int(time(nil)))\n".utf8))
    }

    /// Environment variables that can change which OpenCL devices appear (POCL_CACHE_DIR, which
    /// glint itself may set before a scan, moves a cache and is left out).
    static let environmentPrefixes = ["OCL_", "POCL_", "CUDA_", "NVIDIA_", "ROCR_", "HIP_", "GPU_", "ZE_", "CL_", "LD_LIBRARY_PATH", "LD_PRELOAD"]

    /// A digest of everything listed in the type's description.
    static func fingerprint() -> String {
        var parts: [String] = []
        let vendors = FileIO.environment("OCL_ICD_VENDORS") ?? "/etc/OpenCL/vendors"
        let icds = FileIO.isDirectory(vendors)
            ? ((try? FileIO.folderEntries(vendors)) ?? []).filter { $0.hasSuffix(".icd") }.map { vendors + "/" + $0 }
            : [vendors]
        parts.append("vendors \(vendors)")
        for icd in icds {
            let library = ((try? FileIO.readText(icd, limit: 4096)) ?? "").split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            parts.append("icd \(icd) \(stamp(icd)) \(library) \(libraryStamp(library))")
        }
        parts.append("ld.so.cache \(stamp("/etc/ld.so.cache"))")
        var names: [String] = []
        var e = environ
        while let entry = e.pointee {
            let pair = String(cString: entry)
            let name = pair.prefix { $0 != "=" }
            if name != "POCL_CACHE_DIR" && environmentPrefixes.contains(where: { name.hasPrefix($0) }) { names.append(pair) }
            e += 1
        }
        parts += names.sorted()
        for dir in ["/dev", "/dev/dri", "/dev/accel"] {
            for name in (try? FileIO.folderEntries(dir)) ?? []
            where dir != "/dev" || ["nvidia", "kfd", "dxg", "mali", "kgsl"].contains(where: { name.hasPrefix($0) }) {
                parts.append("node \(dir)/\(name)")
            }
        }
        return StableHash.of(parts.joined(separator: "\n"))
    }

    /// A file's identity and version: device, inode, size and modification time ("-" if absent).
    static func stamp(_ path: String) -> String {
        var st = stat()
        guard stat(path, &st) == 0 else { return "-" }
        return "\(st.st_dev):\(st.st_ino):\(st.st_size):\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
    }

    /// The stamp of the library an ICD file names: its path, or a bare name looked up where the
    /// dynamic linker looks first (LD_LIBRARY_PATH, then the multiarch and plain library folders;
    /// the linker's cache is stamped apart).
    static func libraryStamp(_ library: String) -> String {
        if library.isEmpty { return "-" }
        if library.contains("/") { return stamp(library) }
        let path = (FileIO.environment("LD_LIBRARY_PATH") ?? "").split(separator: ":").map(String.init)
        for dir in path + ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                           "/lib/aarch64-linux-gnu", "/usr/local/lib", "/usr/lib", "/lib"] {
            let s = stamp(dir + "/" + library)
            if s != "-" { return dir + "/" + library + " " + s }
        }
        return "-"
    }
}
