import Glibc

/// Number and date formatting without Foundation.
public enum Format {
    /// Fixed-point: `fixed(3.14159, 2)` is "3.14"; non-finite values read "nan", "inf", "-inf".
    public static func fixed(_ x: Double, _ digits: Int = 2) -> String {
        guard x.isFinite else { return x.isNaN ? "nan" : (x > 0 ? "inf" : "-inf") }
        var p = 1.0
        for _ in 0..<digits { p *= 10 }
        let r = (abs(x) * p).rounded()
        guard r < 9e18 else { return String(x) }
        let whole = Int64(r / p)
        var frac = String(Int64(r - Double(whole) * p))
        while frac.count < digits { frac = "0" + frac }
        return (x < 0 && r != 0 ? "-" : "") + String(whole) + (digits > 0 ? "." + frac : "")
    }

    /// About `significant` significant digits in fixed notation: 1234, 12.3, 0.0123.
    public static func significant(_ x: Double, _ significant: Int = 3) -> String {
        guard x.isFinite, x != 0 else { return fixed(x, 0) }
        let magnitude = Int(log10(abs(x)).rounded(.down))
        return fixed(x, max(0, significant - 1 - magnitude))
    }

    /// A rate with an SI prefix and 3 significant digits: `rate(6.1e13, unit: "FLOP/s")` is
    /// "61.0 TFLOP/s", `rate(2.5e9, unit: "B/s")` "2.50 GB/s".
    public static func rate(_ x: Double, unit: String) -> String {
        let prefixes: [(Double, String)] = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        for (scale, prefix) in prefixes where abs(x) >= scale { return significant(x / scale) + " " + prefix + unit }
        return significant(x) + " " + unit
    }

    /// A short form for tolerances and limits: 1, 0.5, 1e-05, 40.
    public static func short(_ x: Double) -> String { GlintCore.short(x) }

    /// The current UTC time as ISO 8601, e.g. 2026-11-21T09:30:00Z.
    public static func utcNow() -> String {
        var t = time(nil)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}

/// This process's memory, from /proc (Linux).
public enum ProcessMemory {
    /// Peak resident set size (VmHWM) in bytes, or nil where /proc cannot tell.
    public static func peakResidentBytes() -> UInt64? { status("VmHWM:") }

    /// Resident set size now (VmRSS) in bytes, or nil where /proc cannot tell.
    public static func residentBytes() -> UInt64? { status("VmRSS:") }

    /// The resident size without the pages of the Foundation libraries that `glint serve`'s web
    /// stack links in (no job's memory; a glint built without the Serve trait has none).
    public static func residentBytesWithoutWebStack() -> UInt64? {
        let web = libraryResidentBytes(["libFoundation.so", "libFoundationEssentials.so",
                                        "libFoundationInternationalization.so", "lib_FoundationICU.so"])
        return residentBytes().map { $0 > web ? $0 - web : 0 }
    }

    /// Resident bytes of the mapped libraries whose path contains one of `names` (from
    /// /proc/self/smaps); 0 where they are not loaded or the file cannot be read.
    public static func libraryResidentBytes(_ names: [String]) -> UInt64 {
        guard let text = try? FileIO.readText("/proc/self/smaps") else { return 0 }
        var total: UInt64 = 0
        var counting = false
        for line in text.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-"), !line.hasSuffix(":") && !line.contains(" kB") {
                counting = names.contains { line.contains($0) }
            } else if counting, line.hasPrefix("Rss:") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                if fields.count >= 2, let kb = UInt64(fields[1]) { total += kb * 1024 }
            }
        }
        return total
    }

    private static func status(_ key: String) -> UInt64? {
        guard let text = try? FileIO.readText("/proc/self/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let kb = UInt64(fields[1]) { return kb * 1024 }
        }
        return nil
    }

    /// Resets the peak to the current resident size (writes 5 to /proc/self/clear_refs), so the
    /// next reading is the peak of what follows. Returns false where the kernel refuses.
    @discardableResult
    public static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }
}
