#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value behind a POSIX mutex: the process's one lock type.
///
/// The standard library's `Mutex` locks with raw futex system calls on Linux, which
/// ThreadSanitizer does not see: it reported accesses made under that lock as races
/// (`ComputeContext.shared(for:)`). A `pthread_mutex_t` is intercepted by every sanitizer, so
/// `swift test --sanitize=thread` checks Glint's locking instead of guessing at it.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock. Not re-entrant.
    @inline(__always)
    public func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
