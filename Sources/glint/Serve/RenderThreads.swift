#if Serve
import Glibc
import GlintWorkloads

/// Threads of their own for the server's renders. The Swift path's loops keep every thread they
/// run on busy for a whole row, and an OpenCL wait blocks its thread; on Swift's shared pool (one
/// thread per core) a render would leave none for answering requests: no 503, no timeout, no
/// cancellation while it runs. Renders run with this executor as their preference (their child
/// tasks, the per-core workers, inherit it), so the shared pool stays free for the server.
final class RenderThreads: TaskExecutor, @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let ready = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var queue: [UnownedJob] = []
    private var head = 0

    init(count: Int) {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(ready, nil)
        for _ in 0..<max(1, count) {
            var thread = pthread_t()
            let box = Unmanaged.passRetained(self).toOpaque()
            pthread_create(&thread, nil, { arg in
                Unmanaged<RenderThreads>.fromOpaque(arg!).takeRetainedValue().work()
                return nil
            }, box)
            pthread_detach(thread)
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        pthread_mutex_lock(mutex)
        queue.append(unowned)
        pthread_cond_signal(ready)
        pthread_mutex_unlock(mutex)
    }

    private func work() -> Never {
        while true {
            pthread_mutex_lock(mutex)
            while head == queue.count { pthread_cond_wait(ready, mutex) }
            let job = queue[head]
            head += 1
            // Drop what was taken now and then, not on every job.
            if head > 1024 && head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            pthread_mutex_unlock(mutex)
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// One thread per core the Swift path uses, plus one for OpenCL waits and live views.
    static let shared = RenderThreads(count: CPUParallel.workerCount + 1)
}
#endif
