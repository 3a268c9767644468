#if Serve
import CGlintTypes
import Glibc
import GlintCore
import GlintWorkloads

/// One device worker: a `glint serve` process of its own that runs one request at a time. Its
/// replies are read by a thread of its own; should the process end (a driver's abort), the
/// request in flight fails with a 503 and the worker is not used again.
final class DeviceWorker: @unchecked Sendable {
    let pid: pid_t
    private let toWorker: Int32
    private let fromWorker: Int32
    /// Whether `toWorker` is still open; every write holds it, so a message never goes to a
    /// descriptor closed (and perhaps reused) meanwhile.
    private let writable = Locked(true)
    private let maxPayload: Int

    private struct Pending {
        var id: Int
        var continuation: CheckedContinuation<WorkerMessage, any Error>
        var onMessage: (@Sendable (WorkerMessage) -> Void)?
    }
    private struct State {
        var pending: Pending?
        var nextID = 0
        /// Why it can take no more requests (it ended), once it cannot.
        var ended: ServeError?
        /// Cancelled and not yet answered: not handed out again until it answers.
        var cancelling = false
        /// Its exit has been collected: its pid may now be another process's, never signalled.
        var reaped = false
    }
    private let state = Locked(State())
    /// Called once when the process has ended, with its description.
    private let onEnd: @Sendable (DeviceWorker, String, Bool) -> Void

    /// Seconds a cancelled request has to end before its worker is killed.
    static let cancelGrace = 2.0

    init(executable: String, arguments: [String], maxPayload: Int, onEnd: @escaping @Sendable (DeviceWorker, String, Bool) -> Void) throws {
        var requests: [Int32] = [0, 0], replies: [Int32] = [0, 0]
        guard glint_pipe_cloexec(&requests) == 0 else { throw GlintError("cannot make a pipe for a device worker: \(FileIO.errnoText())") }
        guard glint_pipe_cloexec(&replies) == 0 else {
            close(requests[0]); close(requests[1])
            throw GlintError("cannot make a pipe for a device worker: \(FileIO.errnoText())")
        }
        let pid: pid_t
        do {
            pid = try Subprocess.spawn([executable] + arguments, stdin: requests[0], dups: [(replies[1], 3)], closeFrom: 4,
                                       environment: ["\(DeviceWorkerMain.variable)=3"])
        } catch {
            for fd in requests + replies { close(fd) }
            throw GlintError("cannot start a device worker: \(error.reason)")
        }
        close(requests[0])
        close(replies[1])
        self.pid = pid
        toWorker = requests[1]
        fromWorker = replies[0]
        self.maxPayload = maxPayload
        self.onEnd = onEnd
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        pthread_create(&thread, nil, { arg in
            Unmanaged<DeviceWorker>.fromOpaque(arg!).takeRetainedValue().readReplies()
            return nil
        }, box)
        pthread_detach(thread)
    }

    var isUsable: Bool { state.withLock { $0.ended == nil && !$0.cancelling && $0.pending == nil } }
    var hasEnded: Bool { state.withLock { $0.ended != nil } }

    /// Sends a request and waits for its answer ("done"); its other messages go to `onMessage`.
    /// Cancelling the calling task cancels the request (then kills the worker should it not end
    /// within `cancelGrace`).
    func call(_ fields: [(String, JSON)], payload: [UInt8] = [], onMessage: (@Sendable (WorkerMessage) -> Void)? = nil) async throws -> WorkerMessage {
        let id: Int = state.withLock { $0.nextID += 1; return $0.nextID }
        let reply = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<WorkerMessage, any Error>) in
                let refused: ServeError? = state.withLock { s in
                    if let e = s.ended { return e }
                    if s.pending != nil { return ServeError(status: 500, message: "a device worker was handed a second request") }
                    s.pending = Pending(id: id, continuation: c, onMessage: onMessage)
                    return nil
                }
                if let refused { c.resume(throwing: refused); return }
                if !send(WorkerMessage(header: .object(fields + [("id", .int(Int64(id)))]), payload: payload)) {
                    // The process is gone or going: its reader ends the request.
                    signal(SIGKILL)
                }
                if Task.isCancelled { cancel(id) }
            }
        } onCancel: {
            cancel(id)
        }
        if reply.string("kind") == "error" {
            let status = reply.int("status") ?? 500
            if status == 499 { throw CancellationError() }
            throw ServeError(status: status, message: reply.string("message") ?? "the device worker failed")
        }
        return reply
    }

    /// Writes a message while the pipe is open; false when it could not.
    private func send(_ message: WorkerMessage) -> Bool {
        writable.withLock { open in
            guard open else { return false }
            do { try message.write(to: toWorker) } catch { return false }
            return true
        }
    }

    /// Sends `sig` to the process unless its exit has been collected.
    private func signal(_ sig: Int32) {
        state.withLock { s in if !s.reaped { kill(pid, sig) } }
    }

    private func cancel(_ id: Int) {
        let live: Bool = state.withLock { s in
            guard s.pending?.id == id, s.ended == nil else { return false }
            s.cancelling = true
            return true
        }
        guard live else { return }
        _ = send(WorkerMessage(header: .object([("op", .string("cancel")), ("id", .int(Int64(id)))])))
        Task.detached { [self] in
            try? await Task.sleep(for: .seconds(Self.cancelGrace))
            state.withLock { s in
                guard s.pending?.id == id, s.ended == nil, !s.reaped else { return }
                s.ended = ServeError(status: 503, message: "the device worker did not stop within \(Format.short(Self.cancelGrace)) s of a cancellation and was ended")
                kill(pid, SIGKILL)
            }
        }
    }

    /// Ends the process (it is idle, or the server stops).
    func terminate() {
        state.withLock { s in
            if s.ended == nil { s.ended = ServeError(status: 503, message: "the server is stopping") }
            if !s.reaped { kill(pid, SIGKILL) }
        }
    }

    private func readReplies() {
        while let m = WorkerMessage.read(from: fromWorker, maxPayload: maxPayload) {
            let id = m.int("id")
            let kind = m.string("kind")
            if kind == "done" || kind == "error" {
                let pending: Pending? = state.withLock { s in
                    guard let p = s.pending, p.id == id else { return nil }
                    s.pending = nil
                    s.cancelling = false
                    return p
                }
                pending?.continuation.resume(returning: m)
            } else {
                let handler = state.withLock { s in s.pending?.id == id ? s.pending?.onMessage : nil }
                handler?(m)
            }
        }
        // The end of its replies: it has ended, or sent what is not a message (then it is ended
        // here). Its stdin closes, under the write lock, before its exit is collected.
        close(fromWorker)
        writable.withLock { open in
            open = false
            close(toWorker)
        }
        signal(SIGKILL)
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        state.withLock { $0.reaped = true }
        let ending = Subprocess.wait(pid)
        let how: String
        var unexpected = true
        switch ending {
        case .killed(let sig):
            let name = String(cString: strsignal(sig))
            how = sig == SIGABRT ? "ended by \(name) (signal \(sig): an OpenCL driver's abort, most likely)" : "ended by \(name) (signal \(sig))"
        case .exited(let code): how = "exited with status \(code)"
        case .lost(let text): how = "was lost (\(text))"
        }
        let pending: Pending? = state.withLock { s in
            if s.ended != nil { unexpected = false }
            let reason = s.ended ?? ServeError(status: 503, message: "the device's process \(how): this request is lost; the next one starts a new process (the server's log says more)")
            s.ended = reason
            let p = s.pending
            s.pending = nil
            return p
        }
        pending?.continuation.resume(throwing: state.withLock { $0.ended! })
        onEnd(self, how, unexpected && pending != nil)
    }
}

/// The server's device workers: each request takes an idle one or starts one, and gives it back
/// when answered; a worker that ended is replaced by the next request. Live mists hold one of
/// their own for as long as they run.
final class DeviceWorkers: DeviceRunner {
    let executable: String
    let arguments: [String]
    /// Idle workers kept for the next requests (the render slots).
    let keepIdle: Int
    private let idle = Locked<[DeviceWorker]>([])
    private let all = Locked<[pid_t: DeviceWorker]>([:])
    private let stopped = Locked(false)
    /// Workers that ended other than by the server's hand, and during a request.
    let crashes = Locked(0)

    /// This program's own file (as `ps` then shows the workers), else /proc/self/exe.
    static var ownExecutable: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return n > 0 ? String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "/proc/self/exe"
    }

    /// Processes at most: each holds a device, and a live mist holds one for as long as it runs.
    let maxWorkers: Int
    let maxPayload: Int

    init(executable: String = DeviceWorkers.ownExecutable, arguments: [String], keepIdle: Int, maxPixels: Int) {
        self.executable = executable
        self.arguments = arguments
        self.keepIdle = max(1, keepIdle)
        maxWorkers = 2 * self.keepIdle + 8
        maxPayload = WorkerMessage.maxPayload(maxPixels: maxPixels)
    }

    private func start() throws -> DeviceWorker {
        guard !stopped.withLock({ $0 }) else { throw ServeError(status: 503, message: "the server is stopping") }
        // At the cap an idle worker makes room; without one the request is refused.
        if all.withLock({ $0.count }) >= maxWorkers {
            if let spare = idle.withLock({ list in list.firstIndex(where: { $0.isUsable }).map { list.remove(at: $0) } }) {
                spare.terminate()
            } else {
                throw ServeError(status: 503, message: "the server runs at most \(maxWorkers) device workers (renders and live views) and all are busy; try again shortly")
            }
        }
        let worker = try DeviceWorker(executable: executable, arguments: arguments, maxPayload: maxPayload) { [weak self] worker, how, duringRequest in
            guard let self else { return }
            self.all.withLock { if $0[worker.pid] === worker { $0.removeValue(forKey: worker.pid) } }
            self.idle.withLock { $0.removeAll { $0 === worker } }
            if duringRequest {
                self.crashes.withLock { $0 += 1 }
                let text = "glint serve: a device worker (pid \(worker.pid)) \(how) during a request: that request failed with a 503; the server and its other requests go on, and the next request starts a new worker\n"
                _ = Array(text.utf8).withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            }
        }
        all.withLock { $0[worker.pid] = worker }
        return worker
    }

    /// An idle worker, or a new one.
    private func take() throws -> DeviceWorker {
        let found: DeviceWorker? = idle.withLock { list in
            list.removeAll { $0.hasEnded }
            guard let i = list.lastIndex(where: { $0.isUsable }) else { return nil }
            return list.remove(at: i)
        }
        return try found ?? start()
    }

    /// Back to the idle list. A cancelled worker is kept there while it ends its request, and
    /// handed out again once it has answered; past `keepIdle` the oldest usable ones end.
    private func giveBack(_ w: DeviceWorker) {
        guard !w.hasEnded else { return }
        let stopping = stopped.withLock { $0 }
        let surplus: [DeviceWorker] = idle.withLock { list in
            list.removeAll { $0.hasEnded }
            if stopping { return [w] }
            list.append(w)
            var drop: [DeviceWorker] = []
            while list.count > keepIdle, let i = list.firstIndex(where: { $0.isUsable }) { drop.append(list.remove(at: i)) }
            return drop
        }
        for d in surplus { d.terminate() }
    }

    /// One request on a worker of the pool.
    func call(_ fields: [(String, JSON)], payload: [UInt8] = [], onMessage: (@Sendable (WorkerMessage) -> Void)? = nil) async throws -> WorkerMessage {
        let w = try take()
        defer { giveBack(w) }
        return try await w.call(fields, payload: payload, onMessage: onMessage)
    }

    /// Starts the first worker ahead of the first request.
    func warmUp() throws { giveBack(try start()) }

    func stopAll() {
        stopped.withLock { $0 = true }
        for w in all.withLock({ Array($0.values) }) { w.terminate() }
    }

    /// The live processes (for tests and the log).
    var pids: [pid_t] { all.withLock { Array($0.keys) } }

    private static func job(_ op: String, _ job: DeviceJob, device: String) -> [(String, JSON)] {
        [("op", .string(op)), ("workload", .string(job.workload)), ("args", .array(job.args.map { .string($0) })), ("device", .string(device))]
    }

    func describe(device: String, kind: AutoKind) async throws -> DeviceDescription {
        let m = try await call([("op", .string("describe")), ("device", .string(device)), ("kind", .string(kind.rawValue))])
        return DeviceDescription(json: m["description"] ?? .null)
    }

    func run(_ job: DeviceJob, device: String, detailed: Bool) async throws -> DeviceRun {
        let m = try await call(Self.job("run", job, device: device) + [("detailed", .bool(detailed))])
        return DeviceRun(run: try ComparisonRun.fromWire(m), device: m.string("device") ?? device)
    }

    func rtow(_ job: DeviceJob, device: String, wantsPass: @escaping @Sendable () -> Bool,
              pass: @escaping @Sendable (RTPassFrame) -> Void) async throws -> RTFinalFrame {
        let m = try await call(Self.job("rtow", job, device: device)) { m in
            guard wantsPass(), let image = try? Image8.fromWire(m) else { return }
            pass(RTPassFrame(image: image, samplesPerPixel: m.int("spp") ?? 0, targetSamplesPerPixel: m.int("target_spp") ?? 0,
                             seconds: m.double("seconds"), samplesTraced: m.int("samples") ?? 0, device: m.string("device") ?? device))
        }
        return RTFinalFrame(image: try Image8.fromWire(m), wallSeconds: m.double("wall"), kernelSeconds: m.double("kernel"),
                            samples: m.int("samples") ?? 0, samplesPerPixel: m.int("spp") ?? 0, targetSamplesPerPixel: m.int("target_spp") ?? 0,
                            stoppedEarly: m["stopped"]?.boolValue ?? false, device: m.string("device") ?? device)
    }

    func pulse(_ job: DeviceJob, device: String, frame: Int) async throws -> DeviceRun {
        let m = try await call(Self.job("pulse", job, device: device) + [("frame", .int(Int64(frame)))])
        return DeviceRun(run: try ComparisonRun.fromWire(m), device: m.string("device") ?? device)
    }

    func strip(_ job: DeviceJob, device: String, autoIterations: Bool,
               progress: @escaping @Sendable (StripProgress) -> Void) async throws -> StripResult {
        let m = try await call(Self.job("strip", job, device: device) + [("auto", .bool(autoIterations))]) { m in
            progress(StripProgress(phase: m.string("phase") ?? "strip", fraction: m.double("fraction"), iterations: m.int("iterations")))
        }
        return StripResult(image: try Image8.fromWire(m), iterations: m.int("iterations") ?? 0, device: m.string("device") ?? device)
    }

    func mist(_ job: DeviceJob, device: String, width: Int, height: Int) async throws -> any MistRunner {
        // Its own worker, for the renderer's state between frames; ended with the view.
        let w = try start()
        do {
            let m = try await w.call(Self.job("mist-open", job, device: device) + [("width", .int(Int64(width))), ("height", .int(Int64(height)))])
            return WorkerMist(worker: w, device: m.string("device") ?? device)
        } catch {
            w.terminate()
            throw error
        }
    }
}

/// A live mist whose renderer lives in a device worker of its own.
struct WorkerMist: MistRunner {
    let worker: DeviceWorker
    let device: String

    func next(wipes: [MistWipe], gravity: SIMD2<Double>?, camera: Image8?) async throws -> (image: Image8, frame: Int)? {
        var fields: [(String, JSON)] = [("op", .string("mist-next"))]
        fields.append(("wipes", .array(wipes.map { w in
            .object([("radius", .number(w.radius)), ("points", .array(w.points.map { .array([.number($0.x), .number($0.y)]) }))])
        })))
        if let g = gravity { fields.append(("gravity", .array([.number(g.x), .number(g.y)]))) }
        if let camera { fields += camera.wireHeader }
        let m = try await worker.call(fields, payload: camera?.pixels ?? [])
        if m["end"]?.boolValue == true { return nil }
        return (try Image8.fromWire(m), m.int("frame") ?? 0)
    }

    func close() { worker.terminate() }
}
#endif
