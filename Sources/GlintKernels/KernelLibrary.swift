import GlintCore

/// The OpenCL C sources Glint builds, with `#include "…"` lines resolved on the host.
///
/// Sources come from the copy embedded at build time, or from a folder named by the
/// `GLINT_KERNELS` environment variable (for kernel work without rebuilding the binary).
/// Includes are inlined once each, with `#line` markers so build logs name the right file and line.
public enum KernelLibrary {
    /// The environment variable that points at a Kernels/ folder to use instead of the embedded copy.
    public static let overrideVariable = "GLINT_KERNELS"

    /// Where the sources come from: `embedded` or the override folder's path.
    public static var origin: String { FileIO.environment(overrideVariable) ?? "embedded" }

    /// The raw text of one file, relative to Kernels/ (e.g. `fractal.cl`, `common/rng.h`).
    public static func file(_ name: String) throws(GlintError) -> String {
        if let folder = FileIO.environment(overrideVariable), !folder.isEmpty {
            return try FileIO.readText(folder + "/" + name)
        }
        guard let text = EmbeddedKernels.files[name] else {
            throw GlintError("kernel source \(name) is not embedded in this build")
        }
        return text
    }

    /// The full source of a kernel file with its includes inlined.
    public static func source(_ name: String) throws(GlintError) -> String {
        var seen: Set<String> = []
        var out = ""
        try append(name, into: &out, seen: &seen)
        return out
    }

    /// Resolves the includes of source text that is not a file (tests, generated kernels).
    public static func source(text: String, name: String) throws(GlintError) -> String {
        var seen: Set<String> = [name]
        var out = ""
        try append(text: text, name: name, into: &out, seen: &seen)
        return out
    }

    private static func append(_ name: String, into out: inout String, seen: inout Set<String>) throws(GlintError) {
        guard seen.insert(name).inserted else { return }
        try append(text: try file(name), name: name, into: &out, seen: &seen)
    }

    private static func append(text: String, name: String, into out: inout String, seen: inout Set<String>) throws(GlintError) {
        out += "#line 1 \"\(name)\"\n"
        var lineNumber = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            if let target = includeTarget(line) {
                try append(resolve(target, from: name), into: &out, seen: &seen)
                out += "#line \(lineNumber + 1) \"\(name)\"\n"
            } else {
                out += line
                out += "\n"
            }
        }
    }

    /// `#include "x.h"` → `x.h`; anything else → nil.
    private static func includeTarget(_ line: Substring) -> String? {
        let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
        guard trimmed.hasPrefix("#include") else { return nil }
        let rest = trimmed.dropFirst("#include".count).drop(while: { $0 == " " || $0 == "\t" })
        guard rest.first == "\"", let end = rest.dropFirst().firstIndex(of: "\"") else { return nil }
        return String(rest[rest.index(after: rest.startIndex)..<end])
    }

    /// Includes are looked up beside the including file first, then from the Kernels/ root.
    private static func resolve(_ target: String, from including: String) -> String {
        if let slash = including.lastIndex(of: "/") {
            let sibling = String(including[..<slash]) + "/" + target
            if (try? file(sibling)) != nil { return sibling }
        }
        return target
    }
}
