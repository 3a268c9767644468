#if Serve
import ArgumentParser
import Dispatch
import CGlintTypes
import Glibc
import GlintCore
import GlintWorkloads
import HummingbirdWebSocket
import Hummingbird

/// One page's WebSocket connection: its views, one at a time. A new view cancels the one in
/// flight; frames of a cancelled view are never sent. Replies go through one writer task, so a
/// frame's JSON and its PNG always arrive together and in order. A frame's PNG is encoded in the
/// background while the view renders its next frame; `OrderedOutbox` keeps every reply in the
/// order it was queued. A view keeps at most two frames queued (encoding or waiting for the
/// client) while it renders a third, so a connection holds at most three frames' pixels.
final class ServeSession: Sendable {
    let context: ServeContext
    private let state = Locked(State())
    private let outbox: AsyncStream<Outgoing>.Continuation
    private let outgoing: AsyncStream<Outgoing>
    /// The number of this connection, for its temporary files.
    private let number: Int

    private static let counter = Locked(0)

    enum Outgoing: Sendable {
        case text(String)
        case frame(String, [UInt8])
    }

    /// A reply in the order: what goes out, the view it belongs to (nil: any), and whether it
    /// counts as a frame in `pendingFrames`.
    struct Queued: Sendable {
        var item: Outgoing
        var generation: Int?
        var isFrame: Bool
        var isDone = false
    }

    struct State {
        var current: Task<Void, Never>?
        var generation = 0
        var lastImage: Image8?
        /// Frames queued for the writer and not yet sent: live views and passes wait while
        /// there are two.
        var pendingFrames = 0
        /// Bytes queued for the writer: past `maxQueued` (a client that does not read) messages
        /// are dropped rather than kept.
        var pendingBytes = 0
        /// A mist view is running: only then are wipes and camera frames kept.
        var mistRunning = false
        // Live mist input, taken by the frame loop.
        var wipes: [MistWipe] = []
        var gravity: SIMD2<Double>?
        var cameraSize: (width: Int, height: Int)?
        var camera: Image8?
        /// Every reply takes its place here when queued.
        var order = OrderedOutbox<Queued>()
        /// The view one of whose frames could not be encoded: it is stopped, its error sent in
        /// the frame's place and its "done" dropped.
        var failedView: Int?
    }

    init(context: ServeContext) {
        self.context = context
        (outgoing, outbox) = AsyncStream.makeStream(of: Outgoing.self)
        number = Self.counter.withLock { $0 += 1; return $0 }
    }

    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
        let writer = Task { [outgoing, state] in
            for await item in outgoing {
                switch item {
                case .text(let t):
                    try? await outbound.write(.text(t))
                    state.withLock { $0.pendingBytes -= t.utf8.count }
                case .frame(let meta, let png):
                    try? await outbound.write(.text(meta))
                    try? await outbound.write(.binary(ByteBuffer(bytes: png)))
                    state.withLock {
                        $0.pendingFrames -= 1
                        $0.pendingBytes -= meta.utf8.count + png.count
                    }
                }
            }
        }
        // Stopping the server closes the connection ("going away"); the page may reconnect later.
        context.sessions.withLock { $0[number] = { [self] in
            stop()
            Task { try? await outbound.close(.goingAway, reason: "the server is stopping") }
        } }
        defer { _ = context.sessions.withLock { $0.removeValue(forKey: number) } }
        do {
            for try await message in inbound.messages(maxSize: context.maxBody) {
                // The limit as the body of an HTTP request has it (a message of one frame is
                // not held to maxSize, which bounds a message's frames as they are joined).
                let size = switch message { case .text(let text): text.utf8.count; case .binary(let buffer): buffer.readableBytes }
                if size > context.maxBody {
                    sendError(.tooLarge("a message of \(size) bytes is over the server's limit of \(context.maxBody) bytes (--max-body)"), id: .null)
                    continue
                }
                switch message {
                case .text(let text): handle(text)
                case .binary(let buffer): camera(Array(buffer.readableBytesView))
                }
            }
        } catch {
            // A message over --max-body, or the connection dropped: the view ends with it.
            send(.object([("type", .string("error")), ("status", .int(413)),
                          ("error", .string("a message is over the server's limit of \(context.maxBody) bytes (--max-body), or the connection failed"))]))
        }
        stop()
        outbox.finish()
        await writer.value
        unlink(lastFile)
        unlink("\(context.folder)/camera-\(number).png")
        // A connection's frames were freed with it; give the pages malloc keeps back to the system,
        // so that the server's memory falls back once clients leave.
        _ = glint_trim_heap()
    }

    // MARK: Messages

    private func handle(_ text: String) {
        var given: JSON = .null
        do {
            let doc = try JSON.requestObject(Array(text.utf8))
            given = doc["id"] ?? .null
            let id = given
            let type = try doc.optionalString("type") ?? ""
            switch type {
            case "render":
                let job = try ServeJob(workload: try doc.optionalString("workload") ?? "", args: try doc.argList(),
                                       uploads: context.uploads, last: { try self.writeLast() })
                try context.checkSize(job)
                let device = try doc.optionalString("device")
                let preview = doc["preview"]?.boolValue ?? false
                start(id) { gen in try await self.render(job, device: device, preview: preview, id: id, gen: gen) }
            case "mist":
                let device = try doc.optionalString("device")
                let args = try doc.argList()
                let source = try doc.optionalString("source") ?? "render"
                let size = try doc.optionalString("size")
                let setup = try mistSetup(args: args, source: source, size: size)
                start(id) { gen in try await self.liveMist(setup, device: device, id: id, gen: gen) }
            case "pulse":
                let job = try ServeJob(workload: "pulse", args: try doc.argList(), uploads: context.uploads)
                try context.checkSize(job)
                let device = try doc.optionalString("device")
                start(id) { gen in try await self.livePulse(job, device: device, id: id, gen: gen) }
            case "wipe":
                guard let points = doc["points"]?.arrayValue, !points.isEmpty, points.count <= 1000 else {
                    throw ServeError.bad("a wipe needs \"points\": [[x, y], ...] (1 to 1000 points, fractions of the width and height)")
                }
                let xy = try points.map { p -> SIMD2<Double> in
                    guard let a = p.arrayValue, a.count == 2, let x = a[0].doubleValue, let y = a[1].doubleValue,
                          x.isFinite, y.isFinite, abs(x) <= 10, abs(y) <= 10 else {
                        throw ServeError.bad("a wipe's points are [x, y] pairs of numbers, fractions of the width and height")
                    }
                    return SIMD2(x, y)
                }
                var radius = 0.05
                if let r = doc["radius"], r != .null {
                    guard let v = r.doubleValue, v > 0, v <= 1 else { throw ServeError.bad("a wipe's \"radius\" is a number in (0, 1]") }
                    radius = v
                }
                state.withLock { s in
                    // Kept only for a running mist, and at most 64 strokes a frame.
                    guard s.mistRunning else { return }
                    if s.wipes.count >= 64 { s.wipes.removeFirst() }
                    s.wipes.append(MistWipe(start: 0, points: xy, radius: radius))
                }
            case "gravity":
                guard let x = doc["x"]?.doubleValue, let y = doc["y"]?.doubleValue, x.isFinite, y.isFinite,
                      abs(x) <= 1e6, abs(y) <= 1e6 else {
                    throw ServeError.bad("gravity needs numbers \"x\" and \"y\" (image directions, y down), each within +-1e6")
                }
                state.withLock { $0.gravity = SIMD2(x, y) }
            case "stop":
                stop()
            default:
                throw ServeError.bad("unknown message type \(JSON.quotedForMessage(type, limit: 30)): render, mist, pulse, wipe, gravity or stop")
            }
        } catch {
            sendError(ServeError.from(error, preparing: true), id: given)
        }
    }

    /// A camera frame for the live mist: raw RGBA of the session's size.
    private func camera(_ bytes: [UInt8]) {
        let problem: String? = state.withLock { s in
            guard let size = s.cameraSize else { return "a binary message is a camera frame; start a mist view with \"source\": \"camera\" first" }
            guard bytes.count == size.width * size.height * 4 else {
                return "a camera frame must be \(size.width)x\(size.height) RGBA, \(size.width * size.height * 4) bytes; got \(bytes.count)"
            }
            s.camera = Image8(width: size.width, height: size.height, pixels: bytes)
            return nil
        }
        if let problem { sendError(.bad(problem), id: .null) }
    }

    // MARK: Views

    /// Starts a view: the one in flight is cancelled, and only this one's frames are sent from now.
    private func start(_ id: JSON, _ body: @escaping @Sendable (Int) async throws -> Void) {
        state.withLock { s in
            s.current?.cancel()
            s.generation += 1
            s.wipes = []
            s.gravity = nil
            s.cameraSize = nil
            s.camera = nil
            s.mistRunning = false
            let gen = s.generation
            s.current = Task {
                do {
                    try await body(gen)
                    if self.isCurrent(gen) { self.send(.object([("type", .string("done")), ("id", id)]), view: gen, isDone: true) }
                } catch {
                    let e = ServeError.from(error, preparing: false)
                    if e.status != 499 && self.isCurrent(gen) { self.sendError(e, id: id, view: gen) }
                }
            }
        }
    }

    private func stop() {
        state.withLock { s in
            s.current?.cancel()
            s.current = nil
            s.generation += 1
            s.mistRunning = false
            s.wipes = []
            s.cameraSize = nil
            s.camera = nil
        }
    }

    private func isCurrent(_ gen: Int) -> Bool {
        !Task.isCancelled && state.withLock { $0.generation == gen }
    }

    /// The time a view may take before a pass is shown on the way to it: about what a person
    /// takes for an answer to a gesture.
    static let passSeconds = 0.15
    /// Pictures smaller than this (320x200) come as preview and final only.
    static let passMinPixels = 320 * 200

    /// A still view: a quarter-size preview first where the workload has a size, a half-size
    /// pass for a slow fractal, then the picture; a ray-traced view after every pass instead.
    private func render(_ job: ServeJob, device: String?, preview: Bool, id: JSON, gen: Int) async throws {
        let defaultSize = ImageSize(width: 1200, height: 800)
        // A smaller picture on the way to the view's (1/`divisor` of its size): rendered, sent
        // unless superseded, and its wall time returned; nil where the job has none so small.
        func onTheWay(stage: String, divisor: Int, also: [String] = []) async throws -> Double? {
            guard let small = try job.preview(uploads: context.uploads, defaultSize: defaultSize, divisor: divisor, also: also) else { return nil }
            let out = try await context.render(small, device: device)
            if isCurrent(gen) { sendFrame(out, id: id, gen: gen, stage: stage, command: job.cli, keep: false) }
            return out.wallSeconds
        }
        let large = job.requestedPixels() >= Self.passMinPixels
        if job.workload == "rtow" {
            // A picture of 320x200 or more answers first at a quarter of its size and one sample
            // per pixel: a sixteenth of its first pass's cost.
            if preview && large { _ = try await onTheWay(stage: "preview", divisor: 4, also: ["--spp", "1"]) }
            return try await progressive(job, device: device, id: id, gen: gen)
        }
        // A view whose whole picture would take past the pass threshold (16 times the quarter's
        // pixels) gets a half-size pass between: a quarter of the final's cost, shown at once.
        // Below passMinPixels a device's fixed cost per render dominates that estimate.
        if preview, let seconds = try await onTheWay(stage: "preview", divisor: 4),
           isCurrent(gen), large, seconds * 16 > Self.passSeconds {
            _ = try await onTheWay(stage: "pass", divisor: 2)
        }
        let out = try await context.render(job, device: device)
        // A picture made from the last one (iso of the view) does not replace it: applied again,
        // the pass works on the view, not on its own result.
        let keep = !job.args.contains("upload:last")
        if isCurrent(gen) { sendFrame(out, id: id, gen: gen, stage: "final", command: job.cli, keep: keep) }
    }

    /// The ray tracer pass by pass: the running image after each pass, then the final one.
    private func progressive(_ job: ServeJob, device: String?, id: JSON, gen: Int) async throws {
        let cli = job.cli
        let devices = context.devices, deviceJob = DeviceJob(job), deviceText = context.deviceText(device)
        // A pass the page has not taken yet is not followed by another picture (asked before a
        // pass is made, and again when it has come).
        let wanted: @Sendable () -> Bool = { [self] in self.isCurrent(gen) && self.state.withLock { $0.pendingFrames < 2 } }
        let result = try await context.gate.run(timeout: context.renderTimeout) {
            try await devices.rtow(deviceJob, device: deviceText, wantsPass: wanted, pass: { [self] p in
                guard wanted() else { return }
                let rate = p.seconds > 0 ? Double(p.samplesTraced) / p.seconds : 0
                self.sendFrame(Rendered(image: p.image, wallSeconds: p.seconds, kernelSeconds: 0, device: p.device),
                               id: id, gen: gen, stage: "pass", command: cli, keep: false,
                               extra: [("spp", .int(Int64(p.samplesPerPixel))), ("target_spp", .int(Int64(p.targetSamplesPerPixel))),
                                       ("samples_per_second", .number(rate))])
            })
        }
        guard isCurrent(gen), !result.stoppedEarly else { return }
        let rate = result.wallSeconds > 0 ? Double(result.samples) / result.wallSeconds : 0
        sendFrame(Rendered(image: result.image, wallSeconds: result.wallSeconds, kernelSeconds: result.kernelSeconds, device: result.device),
                  id: id, gen: gen, stage: "final", command: cli, keep: true,
                  extra: [("spp", .int(Int64(result.samplesPerPixel))), ("target_spp", .int(Int64(result.targetSamplesPerPixel))),
                          ("samples_per_second", .number(rate))])
    }

    struct MistSetup: Sendable {
        var job: DeviceJob
        var width: Int, height: Int
        var still: Image8?
        var camera: Bool
        var cli: String
    }

    /// The live mist's job and picture: an upload, the last picture of this connection, or the
    /// camera frames the client sends.
    private func mistSetup(args: [String], source: String, size: String?) throws -> MistSetup {
        if args.contains(where: { $0 == "--input" || $0.hasPrefix("--input=") }) {
            throw ServeError.bad("a live mist's picture is its \"source\" (camera, render or upload:ID), not --input")
        }
        if args.contains(where: { $0 == "--frames" || $0.hasPrefix("--frames=") }) {
            throw ServeError.bad("a live mist runs until the page stops it: no --frames")
        }
        var still: Image8?
        var width = 0, height = 0
        let input: String
        switch source {
        case "camera":
            guard let size else { throw ServeError.bad("a camera mist needs \"size\": \"WxH\", the size of the frames the page sends") }
            let s: (Int, Int)
            do { s = try parseSize(size, option: "size") } catch let e as ValidationError { throw ServeError.bad(e.message) }
            (width, height) = s
            guard width * height <= context.maxPixels, width * height * 4 <= context.maxBody else {
                throw ServeError.tooLarge("camera frames of \(size) are over the server's limits: \(context.maxPixels) pixels (--max-pixels), \(context.maxBody) bytes a message (--max-body)")
            }
            // The command reads a picture of the frames' size; the frames replace it.
            input = "\(context.folder)/camera-\(number).png"
            try PNG.write(Image8(width: width, height: height), to: input, alpha: false)
        case "render":
            input = try writeLast()
        default:
            guard let path = context.uploads.path(forToken: source) else {
                throw ServeError.bad("\"source\" is camera, render (the last picture sent here) or an upload:ID, got \(JSON.quotedForMessage(source))")
            }
            input = path
        }
        if source != "camera" {
            do { still = try PNG.read(input) } catch { throw ServeError.bad(error.message) }
            (width, height) = (still!.width, still!.height)
        }
        guard width * height <= context.maxPixels else {
            throw ServeError.tooLarge("a \(width)x\(height) picture is over the server's limit of \(context.maxPixels) pixels (--max-pixels)")
        }
        let job = try ServeJob(workload: "mist", args: args, uploads: context.uploads, extra: ["--input", input, "--frames", "\(MistJob.maxFrames)"])
        guard let mist = job.command as? Mist else { throw ServeError.bad("not a mist job") }
        do { try mist.options.validate() } catch { throw ServeError.bad(error.flagged.message) }
        let shown = source == "camera" ? "-" : (Uploads.fileName(forToken: source) ?? "view.png")
        let cli = (["glint", "mist", "--input", shown] + args + (source == "camera" ? ["--size", "\(width)x\(height)"] : []) + ["-o", "mist-frames"])
            .map(shellQuoted).joined(separator: " ")
        return MistSetup(job: DeviceJob(job), width: width, height: height, still: still, camera: source == "camera", cli: cli)
    }

    /// Frames at up to `fps` a second while the client keeps up (at most two frames queued).
    private func pace(_ fps: Double, since t0: Double) async throws {
        let wait = 1 / fps - (Clock.now() - t0)
        if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
        while state.withLock({ $0.pendingFrames >= 2 }) { try await Task.sleep(for: .milliseconds(5)) }
    }

    private func liveMist(_ setup: MistSetup, device: String?, id: JSON, gen: Int) async throws {
        state.withLock { s in
            if setup.camera { s.cameraSize = (setup.width, setup.height) }
            s.mistRunning = true
        }
        let mist = try await context.devices.mist(setup.job, device: context.deviceText(device), width: setup.width, height: setup.height)
        defer { mist.close() }
        var first = true
        var shown = 0
        var start = Clock.now()
        while isCurrent(gen) {
            let t0 = Clock.now()
            let (wipes, gravity, camera) = state.withLock { s in
                let taken = (s.wipes, s.gravity, s.camera)
                s.wipes = []
                s.gravity = nil
                s.camera = nil
                return taken
            }
            var picture: Image8? = first ? setup.still : nil
            if setup.camera { picture = camera }
            if first && picture == nil {
                // The camera's first frame has not come yet.
                try await Task.sleep(for: .milliseconds(20))
                continue
            }
            first = false
            let sharp = picture
            guard let (image, frame) = try await context.gate.run(timeout: context.renderTimeout, {
                try await mist.next(wipes: wipes, gravity: gravity, camera: sharp)
            }) else { return }
            shown += 1
            if shown == 1 { start = Clock.now() }
            let elapsed = Clock.now() - start
            if isCurrent(gen) {
                sendFrame(Rendered(image: image, wallSeconds: Clock.now() - t0, kernelSeconds: 0, device: mist.device),
                              id: id, gen: gen, stage: "live", command: setup.cli, keep: false,
                              extra: [("frame", .int(Int64(frame))), ("fps", .number(elapsed > 0 ? Double(shown - 1) / elapsed : 0))])
            }
            try await pace(30, since: t0)
        }
    }

    private func livePulse(_ job: ServeJob, device: String?, id: JSON, gen: Int) async throws {
        guard let command = job.command as? Pulse else { throw ServeError.bad("not a pulse job") }
        let pulse: PulseJob
        do { pulse = try command.makeJob() } catch { throw ServeError.from(error, preparing: true) }
        let devices = context.devices, deviceJob = DeviceJob(job), deviceText = context.deviceText(device)
        var start = Clock.now()
        let origin = start
        var shown = 0
        while isCurrent(gen) {
            let t0 = Clock.now()
            // The oscillator's time: frame k of a sequence at the job's rate, wrapping within it.
            let k = Int((t0 - origin) * pulse.fps) % max(pulse.frames, 1)
            let out = try await context.gate.run(timeout: context.renderTimeout) { try await devices.pulse(deviceJob, device: deviceText, frame: k) }
            shown += 1
            if shown == 1 { start = Clock.now() }
            if isCurrent(gen) {
                let elapsed = Clock.now() - start
                sendFrame(Rendered(image: out.run.image, wallSeconds: Clock.now() - t0, kernelSeconds: out.run.kernelSeconds, device: out.device),
                              id: id, gen: gen, stage: "live", command: job.cli, keep: false,
                              extra: [("frame", .int(Int64(k))), ("fps", .number(elapsed > 0 ? Double(shown - 1) / elapsed : 0))])
            }
            try await pace(30, since: t0)
        }
    }

    // MARK: Sending

    /// Queued bytes past which messages are dropped (a client that sends but never reads); a
    /// message is always taken into an empty queue, so a frame larger than this still goes out.
    static let maxQueued = 16 << 20

    /// Queues a text reply; one of a view (`view`) is dropped if that view has ended by the time
    /// the replies before it have gone out, and its "done" also if one of its frames failed.
    private func send(_ doc: JSON, view: Int? = nil, isDone: Bool = false) {
        let text = doc.serialized(pretty: false)
        state.withLock { s in
            let ticket = s.order.ticket()
            release(s.order.finish(ticket, Queued(item: .text(text), generation: view, isFrame: false, isDone: isDone)), in: &s)
        }
    }

    /// Hands the replies now due to the writer, in order, but a frame of a view that has ended
    /// and anything past `maxQueued` bytes (a client that does not read).
    private func release(_ due: [Queued], in s: inout State) {
        for queued in due {
            let bytes: Int
            switch queued.item {
            case .text(let t): bytes = t.utf8.count
            case .frame(let meta, let png): bytes = meta.utf8.count + png.count
            }
            let stale = queued.generation.map { $0 != s.generation || (queued.isDone && $0 == s.failedView) } ?? false
            let full = s.pendingBytes > 0 && s.pendingBytes + bytes > Self.maxQueued
            guard !stale, !full else {
                if queued.isFrame { s.pendingFrames -= 1 }
                if full { context.droppedMessages.withLock { $0 += 1 } }
                continue
            }
            s.pendingBytes += bytes
            outbox.yield(queued.item)
        }
    }

    private func sendError(_ e: ServeError, id: JSON, view: Int? = nil) {
        send(Self.errorReply(e, id: id), view: view)
    }

    private static func errorReply(_ e: ServeError, id: JSON) -> JSON {
        .object([("type", .string("error")), ("id", id), ("status", .int(Int64(e.status))), ("error", .string(e.shownMessage))])
    }

    /// Queues a frame and encodes its PNG in the background; it goes out after everything queued
    /// before it. Once a new view has started, no frame of an older one goes out (checked when
    /// queued and again when due).
    private func sendFrame(_ out: Rendered, id: JSON, gen: Int?, stage: String, command: String, keep: Bool,
                           extra: [(String, JSON)] = []) {
        let meta = JSON.object([("type", .string("frame")), ("id", id), ("stage", .string(stage)),
                                ("width", .int(Int64(out.image.width))), ("height", .int(Int64(out.image.height))),
                                ("device", .string(out.device)), ("wall_ms", .number(out.wallSeconds * 1000)),
                                ("kernel_ms", .number(out.kernelSeconds * 1000)), ("command", .string(command))]
                               + (out.chosenIterations.map { [("iterations", .int(Int64($0)))] } ?? []) + extra)
        let text = meta.serialized(pretty: false)
        let ticket: Int? = state.withLock { s in
            guard gen == nil || s.generation == gen else { return nil }
            if keep { s.lastImage = out.image }
            s.pendingFrames += 1
            return s.order.ticket()
        }
        guard let ticket else { return }
        DispatchQueue.global().async { [self] in
            let queued: Queued
            do {
                queued = Queued(item: .frame(text, try out.png()), generation: gen, isFrame: true)
            } catch {
                let e = ServeError.from(error, preparing: false)
                queued = Queued(item: .text(Self.errorReply(e, id: id).serialized(pretty: false)), generation: gen, isFrame: false)
            }
            state.withLock { s in
                if !queued.isFrame {
                    // The view ends with its error, as when rendering fails.
                    s.pendingFrames -= 1
                    if gen == nil || gen == s.generation {
                        s.failedView = gen
                        s.current?.cancel()
                    }
                }
                release(s.order.finish(ticket, queued), in: &s)
            }
        }
    }

    private var lastFile: String { "\(context.folder)/last-\(number).png" }

    /// The last full picture sent on this connection, as a file a job can read.
    private func writeLast() throws -> String {
        guard let image = state.withLock({ $0.lastImage }) else {
            throw ServeError.bad("upload:last: no picture has been rendered on this connection yet")
        }
        try PNG.write(image, to: lastFile, alpha: false)
        return lastFile
    }
}
#endif
