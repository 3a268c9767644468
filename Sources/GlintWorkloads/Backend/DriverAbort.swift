import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// An OpenCL driver that aborts (PoCL does when it cannot write a compiled kernel) ends the
/// process with its own lines only; once a device is open, a SIGABRT first writes one line
/// saying what ended glint and where to look, then ends the process as the abort would have.
enum DriverAbort {
    /// The line the handler writes: set once a device is open, read only by the handler.
    nonisolated(unsafe) private static var line: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private static var length = 0
    private static let armed = Locked(false)

    /// Names `device` in the line and installs the handler (once per process).
    static func arm(device: String) {
        armed.withLock { done in
            guard !done else { return }
            done = true
            let text = "error: glint was aborted (SIGABRT) while the OpenCL device \(device) was in use: the driver ended the process (its own lines are above). PoCL does so when it cannot write a compiled kernel: check the free space of its cache (POCL_CACHE_DIR, else ~/.cache/pocl) and ulimit -f\n"
            let bytes = Array(text.utf8CString)
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
            copy.initialize(from: bytes, count: bytes.count)
            line = copy
            length = bytes.count - 1
            signal(SIGABRT) { _ in
                if let line = DriverAbort.line { _ = write(2, line, DriverAbort.length) }
                signal(SIGABRT, SIG_DFL)
                raise(SIGABRT)
            }
        }
    }
}
