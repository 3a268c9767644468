#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// File access on plain POSIX calls, so the library does not need Foundation.
public enum FileIO {
    /// Reads a whole file, refusing files larger than `limit` bytes before reading them.
    public static func read(_ path: String, limit: Int = 1 << 30) throws(GlintError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw GlintError("cannot open \(path): \(errnoText())") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw GlintError("cannot read \(path): \(errnoText())") }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw GlintError("\(path) is a directory, not a file") }
        let size = Int(st.st_size)
        guard size <= limit else { throw GlintError("\(path) is \(size) bytes, over the \(limit)-byte limit") }
        // Files under /proc report size 0 and pipes have none: read until end of file, growing
        // the buffer, never past the limit.
        var bytes = [UInt8](repeating: 0, count: max(size, 4096))
        var done = 0
        while true {
            if done == bytes.count {
                guard bytes.count < limit else {
                    throw GlintError("\(path) is over the \(limit)-byte limit")
                }
                bytes.append(contentsOf: [UInt8](repeating: 0, count: min(bytes.count, limit - bytes.count)))
            }
            let room = bytes.count - done
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, room) }
            if n < 0 {
                if errno == EINTR { continue }
                throw GlintError("cannot read \(path): \(errnoText())")
            }
            if n == 0 { break }
            done += n
        }
        bytes.removeLast(bytes.count - done)
        return bytes
    }

    /// Reads a UTF-8 text file.
    public static func readText(_ path: String, limit: Int = 64 << 20) throws(GlintError) -> String {
        String(decoding: try read(path, limit: limit), as: UTF8.self)
    }

    /// Writes `bytes` to a temporary name beside `path`, then renames it over `path`:
    /// a crash or a full disk never leaves a half-written file under the final name.
    public static func writeAtomically(_ path: String, _ bytes: [UInt8]) throws(GlintError) {
        let tmp = "\(path).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw GlintError("cannot write \(path): \(errnoText())") }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                let why = errnoText()
                close(fd); unlink(tmp)
                throw GlintError("cannot write \(path): \(why)")
            }
            done += n
        }
        if close(fd) != 0 {
            let why = errnoText()
            unlink(tmp)
            throw GlintError("cannot write \(path): \(why)")
        }
        if rename(tmp, path) != 0 {
            let why = errnoText()
            unlink(tmp)
            throw GlintError("cannot write \(path): \(why)")
        }
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    public static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// `mkdir -p`.
    public static func makeDirectories(_ path: String) throws(GlintError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw GlintError("cannot create directory \(prefix): \(errnoText())")
            }
            prefix += "/"
        }
    }

    public static func environment(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        return String(cString: v)
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}
