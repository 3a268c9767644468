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
///
/// The value lives in its own allocation, not in a stored property. With a stored property, a
/// `Locked<Void>` (`CallGate`'s) made ThreadSanitizer report a "Swift access race" in `withLock`
/// that was not one (swiftlang/swift#72487): the runtime lays a zero-sized field of a generic
/// class out at offset 0, so the `inout` access to it is recorded as an 8-byte write to the
/// object's header (`__tsan_external_write(self + 0)`), which then "races" with the next caller's
/// unlocked read of that header (the metadata pointer a generic method reads before it can lock).
/// Nothing is written there. Through a pointer, the value's real loads and stores are what
/// ThreadSanitizer checks, and a zero-sized value has none.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    public init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with the value while holding the lock. Not re-entrant.
    @inline(__always)
    public func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
