#if Serve
import Glibc
import GlintCore
import GlintWorkloads

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
