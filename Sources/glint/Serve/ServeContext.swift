#if Serve
import GlintCore
import GlintWorkloads

/// What every request of one server shares: its limits, the render gate, the uploads.
final class ServeContext: Sendable {
    let gate: RenderGate
    let uploads: Uploads
    /// The zoom videos made and being made (POST /api/zoomvideo).
    let videos: ZoomVideos
    /// The server's --device, used when a request names none.
    let device: String
    let renderTimeout: Double
    let maxPixels: Int, maxBody: Int
    /// The server's temporary folder: uploads and the pictures a connection hands to a job.
    let folder: String
    let verbose: Bool

    /// The open WebSocket connections: each one's way to close itself (the server is stopping).
    let sessions = Locked<[Int: @Sendable () -> Void]>([:])

    /// Replies dropped because their connection's queue was full (a client that does not read).
    let droppedMessages = Locked(0)

    /// Open connections, against --max-connections.
    let connections: ConnectionLimit
    /// Seconds a connection may stay without a request in progress (idle, or its request's head
    /// not yet all sent) before it is closed (--idle-timeout).
    let idleSeconds: Int

    /// Where renders run: device workers in `glint serve`, this process in tests.
    let devices: any DeviceRunner

    init(device: String, slots: Int, queue: Int, renderTimeout: Double, maxPixels: Int, maxBody: Int, folder: String, verbose: Bool,
         videoTimeout: Double = 600, maxConnections: Int = 256, idleSeconds: Int = 30, devices: any DeviceRunner = InProcessDevices()) throws {
        self.devices = devices
        connections = ConnectionLimit(limit: maxConnections)
        self.idleSeconds = idleSeconds
        self.device = device
        gate = RenderGate(slots: slots, queueLimit: queue)
        self.renderTimeout = renderTimeout
        self.maxPixels = maxPixels
        self.maxBody = maxBody
        self.folder = folder
        self.verbose = verbose
        ServeError.privateFolders.withLock { $0.append(folder) }
        try FileIO.makeDirectories(folder + "/uploads")
        uploads = Uploads(folder: folder + "/uploads")
        videos = try ZoomVideos(folder: folder + "/videos", timeout: videoTimeout, slots: slots)
    }

    /// The device a request names, else the server's.
    func deviceText(_ device: String?) -> String { device ?? self.device }

    private let described = Locked<DeviceDescription?>(nil)

    /// The server's device as a fractal resolves it, and the OpenCL devices there are: asked of
    /// the device runner once (it opens the device), then kept.
    func deviceDescription() async throws -> DeviceDescription {
        if let d = described.withLock({ $0 }) { return d }
        let d = try await devices.describe(device: device, kind: .fractal)
        described.withLock { $0 = d }
        return d
    }

    /// Refuses a job over the pixel limit before anything is made.
    func checkSize(_ job: ServeJob) throws {
        let pixels = job.requestedPixels()
        guard pixels <= maxPixels else {
            throw ServeError.tooLarge("\(job.workload): \(pixels) pixels is over the server's limit of \(maxPixels) a render (--max-pixels)")
        }
    }

    /// One render of `job` on `device`, in a slot of the gate and within the time limit.
    func render(_ job: ServeJob, device: String?) async throws -> Rendered {
        try checkSize(job)
        // A fractal's job is read here for its view record; other workloads are read where they
        // render (a picture's workload would load its picture twice).
        var view: FractalJob?
        if job.command is Fractal {
            do { view = (try job.command.comparableJob() as? FractalComparison)?.job } catch { throw ServeError.from(error, preparing: true) }
        }
        let out: DeviceRun
        do {
            out = try await gate.run(timeout: renderTimeout) { try await self.devices.run(DeviceJob(job), device: self.deviceText(device), detailed: false) }
        } catch {
            throw ServeError.from(error, preparing: false)
        }
        try Task.checkCancellation()
        let run = out.run
        // The fractal job as rendered: the count auto found is the one its view record names.
        let fractal = view.map { v in
            var j = v
            if let n = run.chosenIterations { j.maxIterations = n }
            return j
        }
        return Rendered(image: run.image, wallSeconds: run.wallSeconds, kernelSeconds: run.kernelSeconds, device: out.device,
                        chosenIterations: run.chosenIterations, fractalJob: fractal)
    }
}

/// A finished picture and what it cost.
struct Rendered: Sendable {
    var image: Image8
    var wallSeconds: Double
    var kernelSeconds: Double
    var device: String
    /// The count `--iterations auto` found for this picture.
    var chosenIterations: Int? = nil
    /// The fractal job that made the picture (its view record), for other workloads nil.
    var fractalJob: FractalJob? = nil

    /// PNG for the wire: `fast` compression (a frame's wait matters more than its bytes), with
    /// alpha when the picture has transparency (iso's corners), as the command line writes it.
    func png() throws -> [UInt8] {
        var opaque = true
        image.pixels.withUnsafeBufferPointer { p in
            var i = 3
            while i < p.count { if p[i] != 255 { opaque = false; break }; i += 4 }
        }
        return try PNG.encode(image, alpha: !opaque, compression: .fast)
    }

    /// The PNG `glint fractal ... -o FILE.png` writes for the same job: RGB, its view record, the
    /// command line's default compression (renderStill in FractalRun.swift).
    func filePNG() throws -> [UInt8] {
        guard let job = fractalJob else { throw ServeError.bad("only a fractal view's PNG carries a view record") }
        return try PNG.encode(image, alpha: false, text: [FractalLocation(job: job).textEntry], compression: .auto)
    }
}

extension JSON {
    /// A JSON object from a request body, or a 400 saying what is wrong with it.
    static func requestObject(_ bytes: [UInt8]) throws -> JSON {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw ServeError.bad("the body is not UTF-8 text") }
        let doc: JSON
        do { doc = try JSON.parse(text) } catch { throw ServeError.bad("the body is not valid JSON (\(error.message))") }
        guard case .object = doc else { throw ServeError.bad("the body must be a JSON object, e.g. {\"workload\": \"fractal\", \"args\": [\"mandelbrot\"]}") }
        return doc
    }

    /// A request's `args`: an array of strings (absent: none).
    func argList() throws -> [String] {
        guard let value = self["args"] else { return [] }
        guard let items = value.arrayValue else { throw ServeError.bad("\"args\" must be an array of strings") }
        return try items.map { item in
            guard let s = item.stringValue else {
                let type = item.typeName
                throw ServeError.bad("\"args\" must be an array of strings, got \("aeiou".contains(type.first ?? "x") ? "an" : "a") \(type)")
            }
            return s
        }
    }

    /// An optional true/false field.
    func optionalBool(_ key: String) throws -> Bool? {
        guard let value = self[key], value != .null else { return nil }
        guard let b = value.boolValue else { throw ServeError.bad("\"\(key)\" must be true or false") }
        return b
    }

    /// An optional string field.
    func optionalString(_ key: String) throws -> String? {
        guard let value = self[key], value != .null else { return nil }
        guard let s = value.stringValue else { throw ServeError.bad("\"\(key)\" must be a string") }
        return s
    }

    static func errorBody(_ e: ServeError) -> String {
        JSON.object([("error", .string(e.shownMessage)), ("status", .int(Int64(e.status)))]).serialized(pretty: false)
    }
}

/// Base64 (RFC 4648, padded) for the PNGs of /api/compare's JSON. Written here rather than taken
/// from Foundation, which the Serve trait does link (for its web stack, docs/DESIGN.md "Memory"):
/// glint's own modules import no Foundation (docs/BACKENDS.md, "Build notes").
enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            let b0 = UInt32(bytes[i]), b1 = n > 1 ? UInt32(bytes[i + 1]) : 0, b2 = n > 2 ? UInt32(bytes[i + 2]) : 0
            let v = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(v >> 18 & 63)])
            out.append(alphabet[Int(v >> 12 & 63)])
            out.append(n > 1 ? alphabet[Int(v >> 6 & 63)] : UInt8(ascii: "="))
            out.append(n > 2 ? alphabet[Int(v & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension Array where Element == UInt8 {
    var base64: String { Base64.encode(self) }
}
#endif
