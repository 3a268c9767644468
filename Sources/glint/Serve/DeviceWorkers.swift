#if Serve
import CGlintTypes
import Glibc
import GlintCore
import GlintWorkloads

/// Messages between the server and its device workers, over pipes: a 4-byte little-endian
/// length, that many bytes of JSON (the header), then `bytes` bytes of payload (pixels) when the
/// header counts any.
struct WorkerMessage: Sendable {
    var header: JSON
    var payload: [UInt8] = []

    subscript(_ key: String) -> JSON? { header[key] }
    func int(_ key: String) -> Int? { header[key]?.intValue.map { Int($0) } }
    func double(_ key: String) -> Double { header[key]?.doubleValue ?? 0 }
    func string(_ key: String) -> String? { header[key]?.stringValue }

    /// A header over this is not one of ours (a frame's wipes may take a few MB).
    static let maxHeader = 64 << 20

    func write(to fd: Int32) throws {
        var fields = header.objectValue ?? []
        fields.removeAll { $0.0 == "bytes" }
        fields.append(("bytes", .int(Int64(payload.count))))
        let text = Array(JSON.object(fields).serialized(pretty: false).utf8)
        var n = UInt32(text.count).littleEndian
        var head = [UInt8](repeating: 0, count: 4)
        withUnsafeBytes(of: &n) { head = Array($0) }
        try Self.writeAll(fd, head + text)
        try Self.writeAll(fd, payload)
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { p in
            var done = 0
            while done < p.count {
                let n = Glibc.write(fd, p.baseAddress! + done, p.count - done)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw GlintError("the pipe to the device worker is closed: \(FileIO.errnoText())") }
                done += n
            }
        }
    }

    /// The next message, or nil at the end of the pipe or on one that is not a message (a
    /// header that does not read, a payload over `maxPayload` bytes).
    static func read(from fd: Int32, maxPayload: Int) -> WorkerMessage? {
        guard let head = readExactly(fd, 4) else { return nil }
        let length = Int(head.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }.littleEndian)
        guard length <= maxHeader, let text = readExactly(fd, length),
              let header = try? JSON.parse(String(decoding: text, as: UTF8.self)) else { return nil }
        let count = header["bytes"]?.intValue.map { Int($0) } ?? 0
        guard count >= 0, count <= maxPayload, let payload = readExactly(fd, count) else { return nil }
        return WorkerMessage(header: header, payload: payload)
    }

    /// The most payload a message may carry for pictures of up to `maxPixels`: a run's 8-bit
    /// and float pictures and its counts (24 bytes a pixel), and 1 MiB more.
    static func maxPayload(maxPixels: Int) -> Int { maxPixels * 24 + (1 << 20) }

    private static func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
        var ok = true
        // Not zero-filled first: every byte is read into place, or the message is dropped.
        let out = [UInt8](unsafeUninitializedCapacity: count) { p, initialized in
            var done = 0
            while done < count {
                let n = Glibc.read(fd, p.baseAddress! + done, count - done)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { ok = false; break }
                done += n
            }
            // On a short read the bytes past `done` are zeroed, so that the array is whole.
            if done < count { (p.baseAddress! + done).initialize(repeating: 0, count: count - done) }
            initialized = count
        }
        return ok ? out : nil
    }
}

// MARK: Pictures on the wire

extension Image8 {
    var wireHeader: [(String, JSON)] { [("width", .int(Int64(width))), ("height", .int(Int64(height)))] }

    /// The picture a message carries: the header's size, the payload's first bytes at `offset`.
    static func fromWire(_ m: WorkerMessage, offset: Int = 0, prefix: String = "") throws -> Image8 {
        guard let w = m.int(prefix + "width"), let h = m.int(prefix + "height"), (0...ImageLimits.maxSide).contains(w),
              (0...ImageLimits.maxSide).contains(h), offset + w * h * 4 <= m.payload.count else {
            throw ServeError(status: 500, message: "a device worker sent a malformed picture")
        }
        // A payload that is just the picture is taken as it is, not copied.
        if offset == 0 && m.payload.count == w * h * 4 { return Image8(width: w, height: h, pixels: m.payload) }
        return Image8(width: w, height: h, pixels: Array(m.payload[offset ..< offset + w * h * 4]))
    }
}

extension ComparisonRun {
    /// The header fields and payload of a run: the picture, then the float picture and counts
    /// where the run has them.
    var wire: (fields: [(String, JSON)], payload: [UInt8]) {
        var fields = image.wireHeader + [("wall", .number(wallSeconds)), ("kernel", .number(kernelSeconds))]
        if let n = chosenIterations { fields.append(("iterations", .int(Int64(n)))) }
        var payload = image.pixels
        if let f = floatImage {
            fields += [("float_width", .int(Int64(f.width))), ("float_height", .int(Int64(f.height)))]
            f.pixels.withUnsafeBytes { payload += $0 }
        }
        if let c = counts {
            fields.append(("counts", .int(Int64(c.count))))
            c.withUnsafeBytes { payload += $0 }
        }
        return (fields, payload)
    }

    static func fromWire(_ m: WorkerMessage) throws -> ComparisonRun {
        let image = try Image8.fromWire(m)
        var offset = image.pixels.count
        var float: ImageF?
        if let w = m.int("float_width"), let h = m.int("float_height") {
            guard (0...ImageLimits.maxSide).contains(w), (0...ImageLimits.maxSide).contains(h), offset + w * h * 16 <= m.payload.count else {
                throw ServeError(status: 500, message: "a device worker sent a malformed run")
            }
            let n = w * h * 4
            var pixels = [Float](repeating: 0, count: n)
            pixels.withUnsafeMutableBytes { d in m.payload.withUnsafeBytes { s in d.copyMemory(from: UnsafeRawBufferPointer(rebasing: s[offset ..< offset + n * 4])) } }
            float = ImageF(width: w, height: h, pixels: pixels)
            offset += n * 4
        }
        var counts: [UInt32]?
        if let n = m.int("counts") {
            guard n >= 0, n <= m.payload.count, offset + n * 4 <= m.payload.count else { throw ServeError(status: 500, message: "a device worker sent a malformed run") }
            var c = [UInt32](repeating: 0, count: n)
            c.withUnsafeMutableBytes { d in m.payload.withUnsafeBytes { s in d.copyMemory(from: UnsafeRawBufferPointer(rebasing: s[offset ..< offset + n * 4])) } }
            counts = c
        }
        return ComparisonRun(image: image, floatImage: float, counts: counts, wallSeconds: m.double("wall"),
                             kernelSeconds: m.double("kernel"), chosenIterations: m.int("iterations"))
    }
}

// MARK: The server's side

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

// MARK: The worker's side

/// A device worker's process: `glint serve` started by the server with `variable` set to the
/// descriptor it answers on; it reads requests on standard input and ends when that closes.
enum DeviceWorkerMain {
    static let variable = "GLINT_SERVE_DEVICE_WORKER"

    static var replyDescriptor: Int32? { FileIO.environment(variable).flatMap { Int32($0) } }

    private static let out = Locked<Int32>(-1)
    /// The request being run, and its id (a cancel names the one it means).
    private static let current = Locked<(id: JSON, task: Task<Void, Never>)?>(nil)
    /// Seconds between the ray tracer's pass pictures sent to the server at most.
    static let passInterval = 0.2
    nonisolated(unsafe) private static var mist: (any MistRunner)?

    static func send(_ fields: [(String, JSON)], payload: [UInt8] = []) {
        out.withLock { fd in try? WorkerMessage(header: .object(fields), payload: payload).write(to: fd) }
    }

    /// Reads and runs requests until standard input closes, then ends the process.
    static func run(replyDescriptor fd: Int32) async -> Never {
        out.withLock { $0 = fd }
        signal(SIGPIPE, SIG_IGN)
        // Ctrl-C in a terminal reaches the whole process group: the server stops its workers.
        signal(SIGINT, SIG_IGN)
        // The requests are read on a thread of their own, so that a cancel arrives while a
        // render keeps the concurrency pool's threads busy. The server holds the only other end
        // of standard input (every descriptor is close-on-exec or closed at spawn), so when it
        // ends, for whatever reason, the read ends and so does this process, mid-render or not.
        var thread = pthread_t()
        pthread_create(&thread, nil, { _ in
            while let m = WorkerMessage.read(from: 0, maxPayload: WorkerMessage.maxPayload(maxPixels: ImageLimits.inputPixels)) {
                DeviceWorkerMain.take(m)
            }
            // No exit handlers: renders may still be running on other threads.
            _exit(0)
        }, nil)
        pthread_detach(thread)
        while true { try? await Task.sleep(for: .seconds(3600)) }
    }

    private static func take(_ m: WorkerMessage) {
        let id = m["id"] ?? .null
        if m.string("op") == "cancel" {
            current.withLock { c in if let c, c.id == id { c.task.cancel() } }
            return
        }
        let task = Task.detached {
            do {
                let fields = try await handle(m, id: id)
                send([("kind", .string("done")), ("id", id)] + fields.fields, payload: fields.payload)
            } catch {
                let e = ServeError.from(error, preparing: false)
                send([("kind", .string("error")), ("id", id), ("status", .int(Int64(e.status))), ("message", .string(e.message))])
            }
        }
        current.withLock { $0 = (id, task) }
    }

    private static func handle(_ m: WorkerMessage, id: JSON) async throws -> (fields: [(String, JSON)], payload: [UInt8]) {
        let devices = InProcessDevices()
        let device = m.string("device") ?? "auto"
        let job = DeviceJob(workload: m.string("workload") ?? "", args: m["args"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        switch m.string("op") {
        case "describe":
            guard let kind = AutoKind(rawValue: m.string("kind") ?? "") else { throw ServeError.bad("unknown kind") }
            return ([("description", try await devices.describe(device: device, kind: kind).json)], [])
        case "run", "pulse":
            let r = m.string("op") == "run" ? try await devices.run(job, device: device, detailed: m["detailed"]?.boolValue ?? false)
                                            : try await devices.pulse(job, device: device, frame: m.int("frame") ?? 0)
            let wire = r.run.wire
            return (wire.fields + [("device", .string(r.device))], wire.payload)
        case "rtow":
            // Passes at most every passInterval: each is a whole picture through the pipe.
            let lastPass = Locked(-Double.infinity)
            let f = try await devices.rtow(job, device: device, wantsPass: {
                lastPass.withLock { t in
                    guard Clock.now() - t >= passInterval else { return false }
                    t = Clock.now()
                    return true
                }
            }) { p in
                send([("kind", .string("pass")), ("id", id), ("spp", .int(Int64(p.samplesPerPixel))), ("device", .string(p.device)),
                      ("target_spp", .int(Int64(p.targetSamplesPerPixel))), ("seconds", .number(p.seconds)),
                      ("samples", .int(Int64(p.samplesTraced)))] + p.image.wireHeader, payload: p.image.pixels)
            }
            return (f.image.wireHeader + [("wall", .number(f.wallSeconds)), ("kernel", .number(f.kernelSeconds)),
                                          ("samples", .int(Int64(f.samples))), ("spp", .int(Int64(f.samplesPerPixel))),
                                          ("target_spp", .int(Int64(f.targetSamplesPerPixel))), ("stopped", .bool(f.stoppedEarly)),
                                          ("device", .string(f.device))], f.image.pixels)
        case "strip":
            let s = try await devices.strip(job, device: device, autoIterations: m["auto"]?.boolValue ?? false) { p in
                var fields: [(String, JSON)] = [("kind", .string("progress")), ("id", id), ("phase", .string(p.phase)), ("fraction", .number(p.fraction))]
                if let n = p.iterations { fields.append(("iterations", .int(Int64(n)))) }
                send(fields)
            }
            return (s.image.wireHeader + [("iterations", .int(Int64(s.iterations))), ("device", .string(s.device))], s.image.pixels)
        case "mist-open":
            let runner = try await devices.mist(job, device: device, width: m.int("width") ?? 0, height: m.int("height") ?? 0)
            mist = runner
            return ([("device", .string(runner.device))], [])
        case "mist-next":
            guard let runner = mist else { throw ServeError.bad("no mist is open in this worker") }
            let wipes = (m["wipes"]?.arrayValue ?? []).map { w in
                MistWipe(start: 0, points: (w["points"]?.arrayValue ?? []).compactMap { p in
                    guard let a = p.arrayValue, a.count == 2, let x = a[0].doubleValue, let y = a[1].doubleValue else { return nil }
                    return SIMD2(x, y)
                }, radius: w["radius"]?.doubleValue ?? 0.05)
            }
            let g = m["gravity"]?.arrayValue.flatMap { a -> SIMD2<Double>? in
                guard a.count == 2, let x = a[0].doubleValue, let y = a[1].doubleValue else { return nil }
                return SIMD2(x, y)
            }
            let camera = m.int("width") != nil ? try Image8.fromWire(m) : nil
            guard let (image, frame) = try await runner.next(wipes: wipes, gravity: g, camera: camera) else { return ([("end", .bool(true))], []) }
            return (image.wireHeader + [("frame", .int(Int64(frame)))], image.pixels)
        default:
            throw ServeError.bad("unknown device-worker request \(JSON.quotedForMessage(m.string("op") ?? "", limit: 30))")
        }
    }
}
#endif
