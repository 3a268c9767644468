import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// The on-disk cache of built program binaries.
///
/// Key: the full source (includes inlined), the build options, the platform and device names,
/// the driver and device versions and the drivers' code-generation variables
/// (`codeGenerationEnvironment`), so a driver update, an edited header or another target
/// processor never reuses a stale binary. Set `GLINT_KERNEL_CACHE=off` to disable it; `GLINT_CACHE_DIR` moves it (default
/// `$XDG_CACHE_HOME/glint/programs`, else `~/.cache/glint/programs`).
public enum ProgramCache {
    public static let disableVariable = "GLINT_KERNEL_CACHE"
    public static let directoryVariable = "GLINT_CACHE_DIR"
    /// An entry: this line, then a header line `KEY LENGTH DIGEST` (the entry's own key, the
    /// binary's byte count and its `StableHash` digest), then the binary. Drivers do not check
    /// what they are handed (a truncated PoCL binary aborts inside clBuildProgram), so an entry is
    /// used only when all three match; anything else is rebuilt from source and replaced.
    private static let magic: [UInt8] = Array("GLINTBIN2\n".utf8)

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
                      (try? device.name) ?? "", (try? device.version) ?? "", (try? device.driverVersion) ?? "",
                      codeGenerationEnvironment())
    }

    /// The variables, as `NAME=value` lines in name order, with which a driver builds the same
    /// source for the same device into other code: PoCL's (`POCL_LLVM_CPU_NAME=haswell` makes
    /// AVX2 code on a processor with AVX-512 while the device keeps its name; its vectoriser,
    /// work-group method and extra build flags). Every `POCL_` variable counts but those that
    /// only move its cache or turn on its debug output.
    public static func codeGenerationEnvironment() -> String {
        var pairs: [String] = []
        var entry = environ
        while let c = entry.pointee {
            let pair = String(cString: c)
            let name = pair.prefix { $0 != "=" }
            if name.hasPrefix("POCL_") && name != "POCL_CACHE_DIR" && !name.hasPrefix("POCL_DEBUG") {
                pairs.append(pair)
            }
            entry += 1
        }
        return pairs.sorted().joined(separator: "\n")
    }

    /// How a program was obtained.
    public enum Origin: String, Sendable { case compiled, diskCache = "disk cache" }

    /// The bytes of a cache entry holding `binary` under `key`.
    public static func entry(key: String, binary: [UInt8]) -> [UInt8] {
        magic + Array("\(key) \(binary.count) \(digest(binary))\n".utf8) + binary
    }

    /// The binary of an entry, or nil when the entry is not whole and intact or is another key's.
    public static func binary(fromEntry bytes: [UInt8], key: String) -> [UInt8]? {
        guard bytes.count > magic.count, bytes[0..<magic.count].elementsEqual(magic) else { return nil }
        let headerStart = magic.count
        guard let newline = bytes[headerStart...].prefix(128).firstIndex(of: 0x0A) else { return nil }
        let fields = String(decoding: bytes[headerStart..<newline], as: UTF8.self).split(separator: " ")
        guard fields.count == 3, fields[0] == key, let length = Int(fields[1]), length > 0,
              length == bytes.count - (newline + 1) else { return nil }
        let binary = Array(bytes[(newline + 1)...])
        guard fields[2] == digest(binary) else { return nil }
        return binary
    }

    private static func digest(_ bytes: [UInt8]) -> String { StableHash.of(bytes: bytes) }

    /// Loads the program from the disk cache, or compiles it and stores its binary. A damaged,
    /// foreign or rejected entry is rebuilt and replaced, never fatal; a folder that cannot be
    /// used only costs the cache. `note` says what went wrong with the cache, if anything.
    public static func program(source: String, options: String, context: Context,
                               directory dir: String? = directory) throws(CLError) -> (Program, Origin, note: String?) {
        guard let dir else {
            return (try Program.build(source: source, context: context, options: options), .compiled, nil)
        }
        let key = key(source: source, options: options, device: context.device)
        let path = dir + "/" + key + ".bin"
        var note: String?
        if let bytes = try? FileIO.read(path, limit: 512 << 20) {
            if let binary = binary(fromEntry: bytes, key: key) {
                do {
                    return (try Program.load(binary: binary, context: context, options: options), .diskCache, nil)
                } catch {
                    note = "program cache: the driver refused \(path) (\(error.routine): \(error.status)); rebuilt from source"
                }
            } else {
                note = "program cache: \(path) is damaged or not this program's; rebuilt from source"
            }
        }
        let program = try Program.build(source: source, context: context, options: options)
        if let binary = try? program.binary(), !binary.isEmpty {
            do {
                try FileIO.makeDirectories(dir)
                try FileIO.writeAtomically(path, entry(key: key, binary: binary))
            } catch {
                // A cache that cannot be written (read-only home, full disk) only costs the next start-up.
                note = "program cache unusable, rendering without it: \(error.message)"
            }
        }
        return (program, .compiled, note)
    }
}
