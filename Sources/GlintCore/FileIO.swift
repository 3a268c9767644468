#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// File access on plain POSIX calls, so the library does not need Foundation.
public enum FileIO {
    /// Reads a whole file, refusing files larger than `limit` bytes before reading them.
    public static func read(_ path: String, limit: Int = 1 << 30) throws(GlintError) -> [UInt8] {
        try read(path, head: 0) { _ throws(GlintError) in limit }
    }

    /// Reads a file whose header says how long it may be: first up to `head` bytes (fewer when
    /// the file is shorter), then `limit(headBytes)` tells the most bytes the whole file may hold
    /// (throwing for a bad header), and the rest is read only up to that bound. A file longer than
    /// the bound is refused before its body is read, and one that grows past it while read (or
    /// whose size says nothing, as /proc's) once it passes it, so nothing reads without end or
    /// allocates what a header merely claims. Streams are refused at open (`openForReading`).
    public static func read(_ path: String, head: Int,
                            limit: ([UInt8]) throws(GlintError) -> Int) throws(GlintError) -> [UInt8] {
        let (fd, size) = try openForReading(path)
        defer { close(fd) }

        // `bytes[..<done]` is what has been read; the buffer grows by doubling (from what a
        // regular file's size promises), never past what the caller allows.
        var bytes: [UInt8] = []
        var done = 0
        /// Reads until `target` bytes are in or the file ends; false at the end of the file.
        func fill(to target: Int) throws(GlintError) -> Bool {
            while done < target {
                if done == bytes.count {
                    let grow = max(bytes.count, size - done + 1, 4096)
                    var bigger = [UInt8](repeating: 0, count: bytes.count + min(target - done, grow))
                    bigger.withUnsafeMutableBytes { to in bytes.withUnsafeBytes { to.copyMemory(from: $0) } }
                    bytes = bigger
                }
                let room = min(bytes.count, target) - done
                let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, room) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw GlintError("cannot read \(path): \(errnoText())")
                }
                if n == 0 { return false }
                done += n
            }
            return true
        }
        if head > 0 { _ = try fill(to: head) }
        let bound = try limit(Array(bytes[..<done]))
        if size > bound {
            throw GlintError("\(path) is \(size) bytes, over the \(bound)-byte limit\(head > 0 ? " its header allows" : "")")
        }
        // One byte past the bound tells a stream that is too long from one that fits exactly.
        if try fill(to: bound + 1) {
            throw GlintError("\(path) is over the \(bound)-byte limit\(head > 0 ? " its header allows" : "")")
        }
        bytes.removeLast(bytes.count - done)
        return bytes
    }

    /// The first `count` bytes of a file (fewer when it is shorter).
    public static func readHead(_ path: String, count: Int) throws(GlintError) -> [UInt8] {
        let (fd, _) = try openForReading(path)
        defer { close(fd) }
        return try read(fd, count: count, path: path)
    }

    /// Opens an input file and returns it with its size, refusing in one line anything but a
    /// regular file: a folder, and a FIFO, socket or device (a stream has no size to bound its
    /// read by, and a FIFO's open would wait for a writer for ever, so it is opened without
    /// blocking and refused before any read). Reads block as usual once it is open.
    public static func openForReading(_ path: String) throws(GlintError) -> (fd: Int32, size: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw GlintError("cannot open \(path): \(errnoText())") }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let why = errnoText()
            close(fd)
            throw GlintError("cannot read \(path): \(why)")
        }
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            return (fd, Int(st.st_size))
        case S_IFDIR:
            close(fd)
            throw GlintError("\(path) is a directory, not a file")
        default:
            close(fd)
            let kind = (st.st_mode & S_IFMT) == S_IFIFO ? "a FIFO" : (st.st_mode & S_IFMT) == S_IFSOCK ? "a socket" : "a device"
            throw GlintError("\(path) is \(kind), not a regular file: inputs are read from files (a stream only as '-' where an option takes one)")
        }
    }

    /// Up to `count` bytes of `fd`, at `offset` (pread) or at its position when nil, retrying
    /// on EINTR: fewer only at the end of the file. `path` names it in errors.
    static func read(_ fd: Int32, count: Int, offset: Int? = nil, path: String) throws(GlintError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { b in
                if let offset { pread(fd, b.baseAddress! + done, count - done, off_t(offset + done)) }
                else { Glibc.read(fd, b.baseAddress! + done, count - done) }
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw GlintError("cannot read \(path): \(errnoText())")
            }
            if n == 0 { break }
            done += n
        }
        bytes.removeLast(count - done)
        return bytes
    }

    /// Reads a UTF-8 text file.
    public static func readText(_ path: String, limit: Int = 64 << 20) throws(GlintError) -> String {
        String(decoding: try read(path, limit: limit), as: UTF8.self)
    }

    /// Writes `bytes` to a temporary name beside `path`, then renames it over `path`:
    /// a crash or a full disk never leaves a half-written file under the final name.
    public static func writeAtomically(_ path: String, _ bytes: [UInt8]) throws(GlintError) {
        let tmp = temporaryName(beside: path)
        try writeNew(tmp, bytes, name: path)
        if rename(tmp, path) != 0 {
            let why = errnoText()
            unlink(tmp)
            throw GlintError("cannot write \(path): \(why)")
        }
    }

    /// A unique temporary name beside `path`: `<path>.tmp-<pid>-<random>`.
    static func temporaryName(beside path: String) -> String {
        "\(path).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// Creates `path` (which must not exist) holding `bytes`; on any failure the partial file is
    /// removed and the one-line error names `name` ("cannot write NAME: No space left on device").
    static func writeNew(_ path: String, _ bytes: [UInt8], name: String) throws(GlintError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw GlintError("cannot write \(name): \(errnoText())") }
        if !writeAll(fd, bytes) {
            let why = errnoText()
            close(fd); unlink(path)
            throw GlintError("cannot write \(name): \(why)")
        }
        if close(fd) != 0 {
            let why = errnoText()
            unlink(path)
            throw GlintError("cannot write \(name): \(why)")
        }
    }

    /// Writes all of `bytes` to `fd`, retrying on EINTR and after short writes: false (errno
    /// set) when a write fails or writes nothing (a pipe whose reader has gone).
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                done += n
            }
            return true
        }
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    public static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Bytes an unprivileged user may still write on the file system holding `path` (or, while
    /// `path` does not exist yet, its nearest existing parent); nil when none can be asked.
    public static func freeBytes(_ path: String) -> UInt64? {
        var probe = path.isEmpty ? "." : path
        while !exists(probe) {
            guard let slash = probe.lastIndex(of: "/") else { probe = "."; break }
            probe = slash == probe.startIndex ? "/" : String(probe[..<slash])
        }
        var st = statvfs()
        guard statvfs(probe, &st) == 0 else { return nil }
        return UInt64(st.f_bavail) * UInt64(st.f_frsize)
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

    /// The names in a folder (not . and ..), sorted.
    public static func folderEntries(_ dir: String) throws(GlintError) -> [String] {
        guard let d = opendir(dir) else { throw GlintError("cannot read folder \(dir): \(errnoText())") }
        defer { closedir(d) }
        var names: [String] = []
        while let entry = readdir(d) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// A new, empty folder `PREFIX-XXXXXX` in $TMPDIR (else /tmp), made by mkdtemp (mode 0700).
    public static func makeTemporaryFolder(prefix: String) throws(GlintError) -> String {
        let base = environment("TMPDIR").map { $0.isEmpty ? "/tmp" : $0 } ?? "/tmp"
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw GlintError("cannot make a temporary folder in \(base): \(errnoText())") }
        return String(cString: made)
    }

    /// Removes a folder and what is in it (a temporary folder of glint's own; symbolic links are
    /// removed, never followed).
    public static func removeTree(_ path: String) {
        for name in (try? folderEntries(path)) ?? [] {
            let child = path + "/" + name
            var info = stat()
            if lstat(child, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR { removeTree(child) } else { unlink(child) }
        }
        rmdir(path)
    }

    public static func environment(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        return String(cString: v)
    }

    public static func errnoText() -> String { String(cString: strerror(errno)) }
}
