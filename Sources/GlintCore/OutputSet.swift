#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The files one command writes, appearing together or not at all.
///
/// `stage` writes each file in full to a unique temporary name beside its destination (so the
/// final rename stays on one filesystem); `commit` renames them all into place once every one
/// is complete. A failure before then (a full disk, a file-size limit, a failed render) leaves
/// every existing output untouched: `discard`, or the deinit of a set never committed, unlinks
/// the temporaries.
///
///     let outputs = OutputSet()
///     try outputs.stage("r.png", try PNG.encode(image, alpha: false))
///     try outputs.stage("r.pfm", try PFM.encode(linear))
///     try outputs.commit()
public final class OutputSet {
    private struct Entry { var path: String; var temporary: String }
    private var entries: [Entry] = []

    public init() {}

    /// The destinations staged so far, in order.
    public var paths: [String] { entries.map(\.path) }

    /// Writes `bytes` to a temporary name beside `path`; the file appears as `path` at `commit`.
    /// Staging a path again replaces what was staged for it.
    public func stage(_ path: String, _ bytes: [UInt8]) throws(GlintError) {
        if FileIO.isDirectory(path) { throw GlintError("cannot write \(path): it is a folder") }
        let temporary = FileIO.temporaryName(beside: path)
        try FileIO.writeNew(temporary, bytes, name: path)
        if let i = entries.firstIndex(where: { $0.path == path }) {
            unlink(entries[i].temporary)
            entries[i].temporary = temporary
        } else {
            entries.append(Entry(path: path, temporary: temporary))
        }
    }

    /// Renames every staged file into place, in the order staged. Renames within a folder do
    /// not run out of space; should one still fail, the files not yet renamed are removed and
    /// the error names the file.
    public func commit() throws(GlintError) {
        while !entries.isEmpty {
            let e = entries.removeFirst()
            if rename(e.temporary, e.path) != 0 {
                let why = FileIO.errnoText()
                unlink(e.temporary)
                discard()
                throw GlintError("cannot write \(e.path): \(why)")
            }
        }
    }

    /// Removes every temporary file; existing outputs are left as they were.
    public func discard() {
        for e in entries { unlink(e.temporary) }
        entries.removeAll()
    }

    deinit { discard() }
}

/// A sequence of files (an animation's frames) written into a hidden staging folder inside
/// `folder`, `.glint-staging-<host>-<pid>-<random>/`, and moved into `folder` only when every one
/// is complete (`commit`). Staging folders a killed run of this machine left behind (their pid
/// no longer a process) are removed when the next one starts there. Until then the frames already in `folder` are untouched; `discard` (or
/// the deinit of one never committed) removes the staging folder, and `folder` too when this
/// created it and it is still empty.
///
/// Safe to use from several tasks (frames written while the next renders), as long as `commit`
/// and `discard` come after the last `write` has returned.
public final class StagedFolder: Sendable {
    /// The destination folder.
    public let folder: String
    /// The hidden staging folder inside it.
    public let staging: String
    /// The folders `init` created (mkdir -p), outermost first.
    private let created: [String]
    private struct State { var names: [String] = []; var seen: Set<String> = []; var done = false }
    private let state = Locked(State())

    /// Creates `folder` (and its parents) when missing, then the staging folder inside it.
    public init(_ folder: String) throws(GlintError) {
        self.folder = folder
        var made: [String] = []
        var prefix = folder.hasPrefix("/") ? "/" : ""
        for part in folder.split(separator: "/") {
            prefix += part
            if mkdir(prefix, 0o755) == 0 {
                made.append(prefix)
            } else if errno != EEXIST {
                let why = FileIO.errnoText()
                Self.removeEmpty(made)
                throw GlintError("cannot create folder \(prefix): \(why)")
            }
            prefix += "/"
        }
        guard FileIO.isDirectory(folder) else {
            Self.removeEmpty(made)
            throw GlintError("\(folder) is a file, not a folder")
        }
        let dir = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        Self.removeAbandoned(in: dir.isEmpty ? "/" : dir)
        let staging = "\(dir.isEmpty ? "/" : dir)/\(Self.prefix)\(Self.host)-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        guard mkdir(staging, 0o755) == 0 else {
            let why = FileIO.errnoText()
            Self.removeEmpty(made)
            throw GlintError("cannot write to folder \(folder): \(why)")
        }
        self.staging = staging
        created = made
    }

    static let prefix = ".glint-staging-"

    /// This machine's name, in staging folders' names: a pid means something only on its own
    /// machine (a farm's nodes may share the folder).
    public static let host: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(cString: buffer).filter { $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-" }
        return name.isEmpty ? "localhost" : name
    }()

    /// Removes the staging folders in `dir` of runs on this machine that ended without cleaning
    /// up (killed): `<prefix><host>-<pid>-<random>` whose pid is no process. Others (another
    /// machine's, a live run's) are left alone.
    static func removeAbandoned(in dir: String) {
        guard let names = try? FileIO.folderEntries(dir) else { return }
        let mine = prefix + host + "-"
        for name in names where name.hasPrefix(mine) {
            let parts = name.dropFirst(mine.count).split(separator: "-")
            guard parts.count == 2, let pid = Int32(parts[0]), pid > 0, pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { FileIO.removeTree(dir + "/" + name) }
        }
    }

    /// The path `name` has inside the destination folder.
    public func destination(_ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// Writes `name` (a plain file name) into the staging folder; messages name its destination.
    public func write(_ name: String, _ bytes: [UInt8]) throws(GlintError) {
        precondition(!name.isEmpty && !name.contains("/"), "StagedFolder.write: \(name) is not a plain file name")
        let fresh = state.withLock { s in
            if s.seen.contains(name) { return false }
            s.seen.insert(name)
            s.names.append(name)
            return true
        }
        if !fresh { unlink(staging + "/" + name) }
        try FileIO.writeNew(staging + "/" + name, bytes, name: destination(name))
    }

    /// Moves every file written into `folder`, replacing files of the same names, and removes the
    /// staging folder.
    public func commit() throws(GlintError) {
        let names = state.withLock { s in
            precondition(!s.done, "StagedFolder.commit after commit or discard")
            return s.names
        }
        for (i, name) in names.enumerated() {
            if rename(staging + "/" + name, destination(name)) != 0 {
                let why = FileIO.errnoText()
                state.withLock { $0.names = Array(names[i...]) }
                discard()
                throw GlintError("cannot write \(destination(name)): \(why)")
            }
        }
        state.withLock { s in s.names = []; s.done = true }
        rmdir(staging)
    }

    /// Removes the staging folder and what it holds; then `folder` and the parents `init`
    /// created, each only while empty. Files already in `folder` are untouched.
    public func discard() {
        let names: [String]? = state.withLock { s in
            if s.done { return nil }
            s.done = true
            return s.names
        }
        guard let names else { return }
        for name in names { unlink(staging + "/" + name) }
        // Anything else in the staging folder (it is this process's own) goes too.
        if let d = opendir(staging) {
            var others: [String] = []
            while let entry = readdir(d) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                if name != "." && name != ".." { others.append(name) }
            }
            closedir(d)
            for name in others { unlink(staging + "/" + name) }
        }
        rmdir(staging)
        Self.removeEmpty(created)
    }

    deinit { discard() }

    /// rmdir of each folder, innermost first: only empty ones go.
    private static func removeEmpty(_ folders: [String]) {
        for dir in folders.reversed() { rmdir(dir) }
    }
}
