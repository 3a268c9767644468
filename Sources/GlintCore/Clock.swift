#if canImport(Glibc)
import Glibc
#endif

/// Monotonic wall-clock time in seconds.
public enum Clock {
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }
}
