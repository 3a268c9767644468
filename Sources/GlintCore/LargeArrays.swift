#if canImport(Glibc)
import Glibc
#endif

/// Arrays of many megabytes that are filled right after they are made (a frame, a read-back).
public enum LargeArrays {
    /// Below this many bytes an array's pages are left as the allocator gives them.
    static let hugePageThreshold = 4 << 20

    /// Whether large arrays ask for huge pages: set by a command that makes one image and exits
    /// (`glint fractal`). Off elsewhere: once freed, the allocator may reuse the advised range for
    /// other memory of a long-lived process (a server, a benchmark), which the advice would then
    /// bloat, and where the kernel must compact memory to find huge pages the first write waits.
    public static var hugePages: Bool {
        get { hugePageFlag.withLock { $0 } }
        set { hugePageFlag.withLock { $0 = newValue } }
    }
    private static let hugePageFlag = Locked(false)

    /// An array of `count` elements whose contents are left uninitialised: the caller writes
    /// every element before reading any. With `hugePages` on, from `hugePageThreshold` bytes on, the kernel is asked
    /// (`madvise(MADV_HUGEPAGE)`, on Linux with transparent huge pages in `madvise` mode) to back
    /// the whole 2 MiB blocks inside it with huge pages: the first writes then take one page fault
    /// per 2 MiB instead of one per 4 KiB (a 4K RGBA frame: about 16 instead of 8,100). Where the
    /// kernel declines, nothing changes but the speed.
    /// A count of 0 gives the empty array without going through the uninitialised initialiser,
    /// which would store the count into the storage that every empty array shares.
    public static func uninitialized<T: BitwiseCopyable>(_: T.Type = T.self, count: Int) -> [T] {
        guard count > 0 else { return [] }
        return [T](unsafeUninitializedCapacity: count) { buffer, initialised in
            if let base = buffer.baseAddress { adviseHugePages(UnsafeMutableRawPointer(base), bytes: count * MemoryLayout<T>.stride) }
            initialised = count
        }
    }

    /// Below this many bytes a destination is left to fault its pages in as it is written.
    static let prefaultThreshold = 1 << 20

    /// Maps in the pages of `bytes` from `pointer` before something else writes them all (a
    /// device's result read back): one call that populates the range (`MADV_POPULATE_WRITE`,
    /// Linux 5.14 on) instead of a page fault per 4 KiB inside the copy: a driver's copy into
    /// memory never touched is far slower than into mapped pages (docs/GPU.md). Where the kernel
    /// refuses, one byte a page is read and written back unchanged instead: the contents stay
    /// as they were either way.
    public static func prefault(_ pointer: UnsafeMutableRawPointer, bytes: Int) {
        #if os(Linux)
        guard bytes >= prefaultThreshold else { return }
        let page = 4096
        let start = Int(bitPattern: pointer) & ~(page - 1)
        let end = (Int(bitPattern: pointer) + bytes + page - 1) & ~(page - 1)
        if let p = UnsafeMutableRawPointer(bitPattern: start), madvise(p, end - start, 23 /* MADV_POPULATE_WRITE */) == 0 { return }
        var offset = (page - Int(bitPattern: pointer) % page) % page
        while offset < bytes {
            let byte = pointer.load(fromByteOffset: offset, as: UInt8.self)
            pointer.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self)
            offset += page
        }
        #endif
    }

    /// Asks for huge pages over the 2 MiB blocks that lie wholly in `bytes` from `pointer`.
    public static func adviseHugePages(_ pointer: UnsafeMutableRawPointer, bytes: Int) {
        #if os(Linux)
        guard bytes >= hugePageThreshold, hugePages else { return }
        let block = 2 << 20
        let start = (Int(bitPattern: pointer) + block - 1) & ~(block - 1)
        let end = (Int(bitPattern: pointer) + bytes) & ~(block - 1)
        guard end > start, let p = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(p, end - start, MADV_HUGEPAGE)
        #endif
    }
}
