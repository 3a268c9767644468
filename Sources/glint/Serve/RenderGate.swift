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

    /// The renders running now, cancelled all at once when the server stops.
    private var works: [UInt64: Task<Void, Never>] = [:]

    /// Runs `body` in a slot, within `timeout` seconds. The answer comes at the deadline
    /// (`ServeError.timeout`) or when the caller is cancelled (a client's new view), whatever the
    /// body is doing; the body's task is cancelled then (the Swift path's loops stop taking
    /// rows, a fractal on OpenCL launches no more strips, a ray-traced render stops after its
    /// pass) and its slot is freed only when it has actually stopped, so the count of renders
    /// at once stays true.
    func run<T: Sendable>(timeout: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await acquire()
        nextID &+= 1
        let id = nextID
        let outcome = Locked<CheckedContinuation<T, Error>?>(nil)
        let early = Locked<Result<T, Error>?>(nil)
        /// The first result wins; later ones are dropped.
        @Sendable func finish(_ r: Result<T, Error>) {
            let waiting: CheckedContinuation<T, Error>? = outcome.withLock { c in
                defer { c = nil }
                return c
            }
            if let waiting { waiting.resume(with: r) } else { early.withLock { if $0 == nil { $0 = r } } }
        }
        let work = Task.detached {
            do {
                finish(.success(try await withTaskExecutorPreference(RenderThreads.shared) { try await body() }))
            } catch {
                finish(.failure(error))
            }
        }
        let watch = Task.detached { [weak self] in
            _ = await work.result
            await self?.finished(id)
        }
        works[id] = work
        _ = watch
        let timer = Task.detached {
            try? await Task.sleep(for: .seconds(timeout))
            if !Task.isCancelled {
                work.cancel()
                finish(.failure(ServeError.timeout(timeout)))
            }
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, Error>) in
                if let r = early.withLock({ $0 }) { c.resume(with: r) } else {
                    outcome.withLock { $0 = c }
                    // A result may have come between the two looks.
                    if let r = early.withLock({ $0 }) { finish(r) }
                }
            }
        } onCancel: {
            work.cancel()
            finish(.failure(CancellationError()))
        }
    }

    private func finished(_ id: UInt64) {
        works[id] = nil
        release()
    }

    /// Cancels every render (the server is stopping).
    func cancelAll() {
        for w in works.values { w.cancel() }
    }

    var load: (running: Int, waiting: Int) { (running, waiting.count) }
}
#endif
