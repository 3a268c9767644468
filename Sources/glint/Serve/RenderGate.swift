#if Serve
import GlintCore

/// At most `slots` renders at once and `queueLimit` waiting for a slot; beyond that a request is
/// refused at once (503), so a burst of clients never piles up unbounded work or memory.
actor RenderGate {
    let slots: Int
    let queueLimit: Int
    private var running = 0
    private var waiting: [(id: UInt64, resume: CheckedContinuation<Void, Error>)] = []
    private var nextID: UInt64 = 0
    /// Renders started and requests refused as busy since start (for the log and tests).
    private(set) var started = 0
    private(set) var refused = 0

    init(slots: Int, queueLimit: Int) {
        self.slots = slots
        self.queueLimit = queueLimit
    }

    /// Waits for a slot (cancellable while waiting); throws `ServeError.busy` when the queue is full.
    private func acquire() async throws {
        if running < slots {
            running += 1
            started += 1
            return
        }
        guard waiting.count < queueLimit else {
            refused += 1
            throw ServeError.busy
        }
        nextID &+= 1
        let id = nextID
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
                if Task.isCancelled { c.resume(throwing: CancellationError()) } else { waiting.append((id, c)) }
            }
        } onCancel: {
            Task { await self.dropWaiter(id) }
        }
        started += 1
    }

    private func dropWaiter(_ id: UInt64) {
        guard let k = waiting.firstIndex(where: { $0.id == id }) else { return }
        waiting.remove(at: k).resume.resume(throwing: CancellationError())
    }

    /// Hands the slot to the first waiter, or frees it.
    private func release() {
        if waiting.isEmpty { running -= 1 } else { waiting.removeFirst().resume.resume() }
    }

    /// Runs `body` in a slot, within `timeout` seconds: past it the body's task is cancelled
    /// (the Swift path's loops stop taking rows, a ray-traced render stops after its pass), the
    /// slot is held until the body has actually stopped, and the caller gets `ServeError.timeout`.
    func run<T: Sendable>(timeout: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            // On the render threads: the shared pool stays free to answer and to time out.
            group.addTask { try await withTaskExecutorPreference(RenderThreads.shared) { try await body() } }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                group.cancelAll()
                // Wait for the render to notice, so the slot really is free when we answer.
                while (try? await group.next()) != nil {}
                if Task.isCancelled { throw CancellationError() }
                throw ServeError.timeout(timeout)
            }
            return value
        }
    }

    var load: (running: Int, waiting: Int) { (running, waiting.count) }
}
#endif
