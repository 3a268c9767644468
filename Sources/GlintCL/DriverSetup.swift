import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// What the drivers need from the process before OpenCL is first touched.
public enum DriverSetup {
    /// PoCL compiles kernels into a cache folder: `$POCL_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/pocl/kcache`, else `$HOME/.cache/pocl/kcache`. When that folder cannot be
    /// created or written (a read-only or missing home, as in containers and batch jobs), PoCL
    /// gives up its devices altogether and OpenCL reports none. Unless the user chose a folder
    /// with POCL_CACHE_DIR, a usable fallback is set instead: `$TMPDIR/glint-pocl-UID`, a folder of this user's that
    /// no one else may write.
    /// Returns a note for --verbose when it did so, or why it could not. Call before the first
    /// OpenCL call; later calls do nothing.
    public static func preparePoCLCache() -> String? { pocl }

    private static let pocl: String? = {
        if let dir = FileIO.environment("POCL_CACHE_DIR"), !dir.isEmpty { return nil }
        guard let dir = poclDefaultCacheFolder(), !usable(dir) else { return nil }
        let tmp = FileIO.environment("TMPDIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let fallback = "\(tmp)/glint-pocl-\(getuid())"
        guard ownPrivateFolder(fallback) else {
            return "PoCL's kernel cache folder \(dir) is not writable and neither is \(fallback): set POCL_CACHE_DIR to a writable folder"
        }
        setenv("POCL_CACHE_DIR", fallback, 1)
        return "PoCL's kernel cache folder \(dir) is not writable: POCL_CACHE_DIR set to \(fallback)"
    }()

    /// Why the user's own POCL_CACHE_DIR cannot serve as PoCL's cache (which makes PoCL report no
    /// devices), or nil when it is unset or usable.
    public static func userCacheProblem() -> String? {
        guard let dir = FileIO.environment("POCL_CACHE_DIR"), !dir.isEmpty, !usable(dir) else { return nil }
        return "POCL_CACHE_DIR=\(dir) is not a folder this user can write, and PoCL offers no devices without its kernel cache: point it at a writable folder or unset it"
    }

    /// Room PoCL needs to write a compiled kernel: it aborts the whole process when it cannot.
    public static let cacheRoom: UInt64 = 64 << 20

    /// Why PoCL could not write a compiled kernel to its cache now (too little free space where
    /// it keeps it, or a file-size limit below `cacheRoom`), or nil. Checked before a PoCL device
    /// is opened, since PoCL aborts the process on such a write rather than report an error.
    public static func cacheWriteProblem() -> String? {
        let dir = FileIO.environment("POCL_CACHE_DIR").flatMap { $0.isEmpty ? nil : $0 } ?? poclDefaultCacheFolder() ?? "."
        if let free = FileIO.freeBytes(dir), free < cacheRoom {
            return "PoCL's kernel cache (\(dir)) has \(free >> 20) MiB free, and PoCL ends the process when it cannot write a kernel there: free \(cacheRoom >> 20) MiB or more, or set POCL_CACHE_DIR to a folder on another disk"
        }
        var size = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &size) == 0, size.rlim_cur != rlim_t.max, size.rlim_cur < cacheRoom {
            return "the file-size limit (ulimit -f) is \(size.rlim_cur >> 10) KiB, and PoCL ends the process when it cannot write a kernel to its cache: raise it to \(cacheRoom >> 10) KiB or more"
        }
        return nil
    }

    /// The folder PoCL would use for its cache without POCL_CACHE_DIR, or nil if it has none.
    static func poclDefaultCacheFolder() -> String? {
        if let xdg = FileIO.environment("XDG_CACHE_HOME"), !xdg.isEmpty { return xdg + "/pocl/kcache" }
        if let home = FileIO.environment("HOME"), !home.isEmpty { return home + "/.cache/pocl/kcache" }
        return nil
    }

    /// Whether `dir` is (or is now created as) a real folder owned by this user that no one else
    /// may write: PoCL runs the binaries it finds in its cache, so a folder in a shared /tmp that
    /// someone else made is never used.
    static func ownPrivateFolder(_ dir: String) -> Bool {
        _ = mkdir(dir, 0o700)
        var st = stat()
        guard lstat(dir, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, st.st_uid == getuid(),
              st.st_mode & 0o022 == 0 else { return false }
        return access(dir, W_OK | X_OK) == 0
    }

    /// Whether `dir` exists or can be created, and is a folder this process can write into.
    static func usable(_ dir: String) -> Bool {
        if !FileIO.isDirectory(dir) { try? FileIO.makeDirectories(dir) }
        return FileIO.isDirectory(dir) && access(dir, W_OK | X_OK) == 0
    }
}
