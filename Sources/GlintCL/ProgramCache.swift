import GlintCore

/// The on-disk cache of built program binaries.
///
/// Key: the full source (includes inlined), the build options, the platform and device names and
/// the driver and device versions, so a driver update or an edited header never reuses a stale
/// binary. Set `GLINT_KERNEL_CACHE=off` to disable it; `GLINT_CACHE_DIR` moves it (default
/// `$XDG_CACHE_HOME/glint/programs`, else `~/.cache/glint/programs`).
public enum ProgramCache {
    public static let disableVariable = "GLINT_KERNEL_CACHE"
    public static let directoryVariable = "GLINT_CACHE_DIR"
    private static let magic: [UInt8] = Array("GLINTBIN1\n".utf8)

    /// The cache folder, or nil when the cache is disabled or no home folder is known.
    public static var directory: String? {
        if let flag = FileIO.environment(disableVariable)?.lowercased(),
           ["0", "off", "no", "false", "disable", "disabled"].contains(flag) { return nil }
        if let dir = FileIO.environment(directoryVariable), !dir.isEmpty { return dir + "/programs" }
        if let xdg = FileIO.environment("XDG_CACHE_HOME"), !xdg.isEmpty { return xdg + "/glint/programs" }
        if let home = FileIO.environment("HOME"), !home.isEmpty { return home + "/.cache/glint/programs" }
        return nil
    }

    public static func key(source: String, options: String, device: Device) -> String {
        StableHash.of(source, options,
                      (try? device.platform.name) ?? "", (try? device.platform.version) ?? "",
                      (try? device.name) ?? "", (try? device.version) ?? "", (try? device.driverVersion) ?? "")
    }

    /// How a program was obtained.
    public enum Origin: String, Sendable { case compiled, diskCache = "disk cache" }

    /// Loads the program from the disk cache, or compiles it and stores its binary.
    /// A damaged or rejected cache entry is rebuilt and overwritten, never fatal.
    public static func program(source: String, options: String, context: Context) throws(CLError) -> (Program, Origin) {
        guard let dir = directory else {
            return (try Program.build(source: source, context: context, options: options), .compiled)
        }
        let path = dir + "/" + key(source: source, options: options, device: context.device) + ".bin"
        if let bytes = try? FileIO.read(path, limit: 512 << 20), bytes.count > magic.count,
           Array(bytes[0..<magic.count]) == magic,
           let program = try? Program.load(binary: Array(bytes[magic.count...]), context: context, options: options) {
            return (program, .diskCache)
        }
        let program = try Program.build(source: source, context: context, options: options)
        if let binary = try? program.binary(), !binary.isEmpty {
            // A cache that cannot be written (read-only home, full disk) only costs the next start-up.
            try? FileIO.makeDirectories(dir)
            try? FileIO.writeAtomically(path, magic + binary)
        }
        return (program, .compiled)
    }
}
