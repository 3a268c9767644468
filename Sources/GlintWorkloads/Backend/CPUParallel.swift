import Synchronization
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// The Swift CPU path's parallel loop: Swift-concurrency tasks, one per core, pulling
/// row indices from a shared counter so uneven rows (fractal interiors) balance out.
public enum CPUParallel {
    /// Worker count: `GLINT_THREADS` if set, else the number of online cores.
    public static var workerCount: Int { CPUFeatures.workerCount }

    /// Calls `body(i)` for every `i` in `0..<count`, spread over the workers; `progress`
    /// is called with the number done so far (from worker tasks, so it must be thread-safe).
    /// When the calling task is cancelled the workers stop taking indices: some are never run.
    public static func forEach(_ count: Int, progress: (@Sendable (Int) -> Void)? = nil,
                               _ body: @escaping @Sendable (Int) -> Void) async {
        let next = SharedCounter(), done = SharedCounter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<min(workerCount, max(count, 1)) {
                group.addTask {
                    while true {
                        // A cancelled task (a view the server's client left) stops taking items;
                        // the caller discards what was made.
                        let i = next.value.wrappingAdd(1, ordering: .relaxed).oldValue
                        if i >= count || Task.isCancelled { break }
                        body(i)
                        let n = done.value.wrappingAdd(1, ordering: .relaxed).newValue
                        progress?(n)
                    }
                }
            }
        }
    }
}

/// A raw buffer that worker tasks write disjoint parts of. The caller guarantees that no two
/// tasks touch the same element and that the storage outlives the loop.
public struct SharedBuffer<T>: @unchecked Sendable {
    public let base: UnsafeMutablePointer<T>
    public let count: Int
    public init(_ buffer: UnsafeMutableBufferPointer<T>) {
        base = buffer.baseAddress!
        count = buffer.count
    }
    @inline(__always) public subscript(i: Int) -> T {
        get { base[i] }
        nonmutating set { base[i] = newValue }
    }
}

/// An atomic counter that tasks can share.
final class SharedCounter: Sendable {
    let value = Atomic<Int>(0)
}
