#if Serve
import Foundation
import GlintWorkloads

/// Threads of their own for the server's renders. The Swift path's loops keep every thread they
/// run on busy for a whole row, and an OpenCL wait blocks its thread; on Swift's shared pool (one
/// thread per core) a render would leave none for answering requests: no 503, no timeout, no
/// cancellation while it runs. Renders run with this executor as their preference (their child
/// tasks, the per-core workers, inherit it), so the shared pool stays free for the server.
final class RenderThreads: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [UnownedJob] = []
    private var head = 0

    init(count: Int) {
        for k in 0..<max(1, count) {
            let thread = Thread { [self] in work() }
            thread.name = "glint-render-\(k)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        queue.append(unowned)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == queue.count { condition.wait() }
            let job = queue[head]
            head += 1
            // Drop what was taken now and then, not on every job.
            if head > 1024 && head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// One thread per core the Swift path uses, plus one for OpenCL waits and live views.
    static let shared = RenderThreads(count: CPUParallel.workerCount + 1)
}
#endif
