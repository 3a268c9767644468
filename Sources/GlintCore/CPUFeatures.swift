#if canImport(Glibc)
import Glibc
#endif

/// What the processor can do, read from /proc/cpuinfo (Linux).
public enum CPUFeatures {
    /// The flags of the first processor, e.g. `avx2`, `fma`.
    public static let flags: Set<String> = {
        guard let text = try? FileIO.readText("/proc/cpuinfo", limit: 8 << 20) else { return [] }
        for line in text.split(separator: "\n") where line.hasPrefix("flags") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            return Set(line[line.index(after: colon)...].split(separator: " ").map(String.init))
        }
        return []
    }()

    /// Threads for work spread over the cores (the Swift CPU path's workers, the fast PNG
    /// writer's parts): `GLINT_THREADS` if set, else the number of online cores.
    public static var workerCount: Int {
        if let v = getenv("GLINT_THREADS"), let n = Int(String(cString: v)), n > 0 { return n }
        return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// Nil when this build can run here; else why not. The x86-64 build's SIMD code needs AVX2 and FMA.
    public static var unsupportedReason: String? {
        #if arch(x86_64)
        let f = flags
        if f.isEmpty { return nil }  // no /proc/cpuinfo: cannot tell, so do not refuse
        let missing = ["avx2", "fma"].filter { !f.contains($0) }
        if missing.isEmpty { return nil }
        return "this glint build needs an x86-64 CPU with AVX2 and FMA (Intel Haswell / AMD Excavator, 2013, or later); this CPU lacks \(missing.joined(separator: ", "))"
        #else
        return nil
        #endif
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs.
    public func trimmingCharacters() -> String {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
