#if Serve
import Glibc
import GlintCore
import GlintWorkloads

/// The zoom videos of `glint serve` (POST /api/zoomvideo, docs/SERVE.md): a fractal view's zoom
/// from 1 to its zoom, made as `glint fractal --exp-map` and `glint zoomvideo` make it (one
/// strip, then every frame resampled from it), in a render slot of the gate, in the background
/// while the page polls its progress. The results lie in the server's temporary folder under
/// `videos/`, written under temporary names and renamed when complete.
final class ZoomVideos: Sendable {
    let folder: String
    /// Seconds one video may take, from its slot to its last byte (--video-timeout).
    let timeout: Double
    /// Videos being made or waiting at once. Each holds a render slot for its whole run, so at
    /// most all but one of the slots go to videos and the page's views still get renders.
    let maxActive: Int
    /// Finished videos kept (the oldest go first past either bound).
    static let keptCount = 8
    static let keptBytes = 1 << 30

    private let jobs = Locked<[ZoomVideoJob]>([])

    init(folder: String, timeout: Double, slots: Int) throws {
        self.folder = folder
        self.timeout = timeout
        maxActive = max(1, slots - 1)
        try FileIO.makeDirectories(folder)
    }

    func job(_ id: String) -> ZoomVideoJob? { jobs.withLock { list in list.first { $0.id == id } } }

    /// Registers a job if fewer than `maxActive` are under way; nil when the limit is reached.
    func add(_ make: (String) -> ZoomVideoJob) -> ZoomVideoJob? {
        var id = ""
        for _ in 0..<2 { id += String(UInt64.random(in: .min ... .max) & 0xFFFF_FFFF, radix: 16).leftPadded(to: 8) }
        let job = make(id)
        let added = jobs.withLock { list -> Bool in
            guard list.filter({ $0.snapshot.isActive }).count < maxActive else { return false }
            list.append(job)
            return true
        }
        if added { prune() }
        return added ? job : nil
    }

    /// Drops the oldest ended jobs (and their files) past `keptCount` jobs or `keptBytes` of results.
    func prune() {
        let gone: [ZoomVideoJob] = jobs.withLock { list in
            var dropped: [ZoomVideoJob] = []
            while true {
                let ended = list.filter { !$0.snapshot.isActive }
                let bytes = ended.reduce(0) { $0 + $1.snapshot.bytes }
                guard ended.count > Self.keptCount || bytes > Self.keptBytes, let oldest = ended.first,
                      let k = list.firstIndex(where: { $0 === oldest }) else { break }
                dropped.append(list.remove(at: k))
            }
            return dropped
        }
        for job in gone { job.removeResult() }
    }

    /// The videos under way (the server is stopping).
    func cancelAll() {
        for job in jobs.withLock({ $0 }) { job.cancel() }
    }
}

/// What a zoom video is made of: the frames and where they go.
struct ZoomVideoSettings: Sendable {
    enum Format: String, Sendable { case mp4, tar }

    var width: Int, height: Int
    var fps: Double
    var frames: Int
    var columns: Int
    var format: Format

    static let defaultSize = ImageSize(width: 640, height: 360)
    static let sides = 16...1920
    static let fpsRange = 1.0...60.0
    static let secondsRange = 0.1...120.0
    static let frameRange = 2...3600
    static let columnRange = 64...4096
    /// Frame pixels of one video in all (1080p for 500 frames): bounds the work and the file.
    static let maxTotalPixels = 1 << 30

    var fileExtension: String { format.rawValue }
    var contentType: String { format == .mp4 ? "video/mp4" : "application/x-tar" }

    /// Reads the request's `size`, `seconds` or `frames`, `fps`, `columns` and `format`, each
    /// range-checked, with the defaults 640x360, 5 s, 30 fps, 1024 columns and mp4 when ffmpeg
    /// is installed (tar of PNG frames otherwise).
    init(_ doc: JSON, maxPixels: Int, ffmpeg: Bool) throws {
        func number(_ key: String, _ range: ClosedRange<Double>, _ fallback: Double) throws -> Double {
            guard let value = doc[key], value != .null else { return fallback }
            guard let x = value.doubleValue ?? value.stringValue.flatMap(Double.init), x.isFinite, range.contains(x) else {
                throw ServeError.bad("\"\(key)\" must be a number from \(numberText(range.lowerBound)) to \(numberText(range.upperBound)) (got \(JSON.printable(value.serialized(pretty: false), limit: 30)))")
            }
            return x
        }
        func whole(_ key: String, _ range: ClosedRange<Int>, _ fallback: Int) throws -> Int {
            let x = try number(key, Double(range.lowerBound)...Double(range.upperBound), Double(fallback))
            guard x == x.rounded() else { throw ServeError.bad("\"\(key)\" must be a whole number (got \(numberText(x)))") }
            return Int(x)
        }
        var size = Self.defaultSize
        if let text = try doc.optionalString("size") {
            guard let s = try? parseSize(text, option: "size") else {
                throw ServeError.bad("\"size\" is WxH, e.g. 640x360 (got \(JSON.quotedForMessage(text)))")
            }
            size = ImageSize(width: s.0, height: s.1)
        }
        guard Self.sides.contains(size.width), Self.sides.contains(size.height) else {
            throw ServeError.bad("\"size\": a zoom video's sides are \(Self.sides.lowerBound) to \(Self.sides.upperBound) pixels (got \(size.width)x\(size.height))")
        }
        guard size.width * size.height <= maxPixels else {
            throw ServeError.tooLarge("\"size\" \(size.width)x\(size.height) is over the server's limit of \(maxPixels) pixels a picture (--max-pixels)")
        }
        (width, height) = (size.width, size.height)
        fps = try number("fps", Self.fpsRange, 30)
        if doc["frames"] != nil && doc["frames"] != .null {
            if doc["seconds"] != nil && doc["seconds"] != .null { throw ServeError.bad("give \"seconds\" or \"frames\", not both") }
            frames = try whole("frames", Self.frameRange, 150)
        } else {
            let seconds = try number("seconds", Self.secondsRange, 5)
            let n = (seconds * fps).rounded()
            guard Double(Self.frameRange.lowerBound)...Double(Self.frameRange.upperBound) ~= n else {
                throw ServeError.bad("\(numberText(seconds)) s at \(numberText(fps)) fps is \(numberText(n)) frames; a zoom video has \(Self.frameRange.lowerBound) to \(Self.frameRange.upperBound)")
            }
            frames = Int(n)
        }
        guard width * height * frames <= Self.maxTotalPixels else {
            throw ServeError.tooLarge("\(frames) frames of \(width)x\(height) are over the server's limit of \(Self.maxTotalPixels) frame pixels a video: fewer frames or a smaller size")
        }
        columns = try whole("columns", Self.columnRange, 1024)
        switch try doc.optionalString("format") ?? "auto" {
        case "auto": format = ffmpeg ? .mp4 : .tar
        case "mp4":
            guard ffmpeg else { throw ServeError.bad("\"format\": mp4 needs ffmpeg, which is not installed on the server; ask for tar (PNG frames) or auto") }
            format = .mp4
        case "tar": format = .tar
        case let other: throw ServeError.bad("\"format\" is auto, mp4 or tar (got \(JSON.quotedForMessage(other, limit: 20)))")
        }
    }
}

/// One zoom video: its settings, its progress as the page polls it, and its task.
final class ZoomVideoJob: Sendable {
    enum Phase: String, Sendable { case waiting, iterations, strip, frames, done, failed, cancelled }

    struct State: Sendable {
        var phase = Phase.waiting
        /// 0 to 1 within the phase.
        var fraction = 0.0
        var frame = 0
        var error: ServeError?
        var bytes = 0
        var wallSeconds: Double?
        var iterations: Int
        var commands: [String]
        var isActive: Bool { ![.done, .failed, .cancelled].contains(phase) }
        /// The strip is most of a deep video's work (a 1e20 view at the defaults: 322 s of strip
        /// on PoCL, 17 s of frames), so it fills most of the bar.
        var progress: Double {
            switch phase {
            case .waiting, .iterations: 0
            case .strip: 0.85 * fraction
            case .frames: 0.85 + 0.15 * fraction
            case .done: 1
            case .failed, .cancelled: 0
            }
        }
    }

    let id: String
    let settings: ZoomVideoSettings
    let device: String
    /// The result's path once complete; written before as `temporaryPath`.
    let path: String
    let temporaryPath: String
    let created = Clock.now()
    private let state: Locked<State>
    private let task = Locked<Task<Void, Never>?>(nil)

    init(id: String, settings: ZoomVideoSettings, device: String, folder: String, iterations: Int, commands: [String]) {
        self.id = id
        self.settings = settings
        self.device = device
        path = "\(folder)/\(id).\(settings.fileExtension)"
        temporaryPath = "\(folder)/\(id).part.\(settings.fileExtension)"
        state = Locked(State(iterations: iterations, commands: commands))
    }

    var snapshot: State { state.withLock { $0 } }
    var downloadName: String { "glint-zoom-\(id).\(settings.fileExtension)" }

    func update(_ change: (inout State) -> Void) {
        state.withLock { s in if s.isActive { change(&s) } }
    }

    func start(_ body: @escaping @Sendable () async -> Void) {
        task.withLock { $0 = Task { await body() } }
    }

    /// Stops the job (its slot is freed once its work has stopped; the work removes its
    /// temporary files) and drops any result: a finished one reads as cancelled too.
    func cancel() {
        let wasActive = state.withLock { s -> Bool in
            defer { if s.isActive || s.phase == .done { s.phase = .cancelled } }
            return s.isActive
        }
        if wasActive { task.withLock { $0 }?.cancel() }
        removeResult()
    }

    func removeResult() {
        unlink(path)
    }

    var json: JSON {
        let s = snapshot
        var fields: [(String, JSON)] = [
            ("id", .string(id)), ("state", .string(s.phase.rawValue)), ("progress", .number((s.progress * 1000).rounded() / 1000)),
            ("frame", .int(Int64(s.frame))), ("frames", .int(Int64(settings.frames))),
            ("size", .string("\(settings.width)x\(settings.height)")), ("fps", .number(settings.fps)),
            ("columns", .int(Int64(settings.columns))), ("format", .string(settings.format.rawValue)),
            ("iterations", .int(Int64(s.iterations))), ("device", .string(device)),
            ("commands", .array(s.commands.map { .string($0) })),
            ("error", s.error.map { .string($0.shownMessage) } ?? .null),
        ]
        if s.phase == .done {
            fields += [("download", .string("/api/zoomvideo/\(id)/file")), ("file", .string(downloadName)),
                       ("bytes", .int(Int64(s.bytes)))]
        }
        if let wall = s.wallSeconds { fields.append(("wall_s", .number((wall * 1000).rounded() / 1000))) }
        return .object(fields)
    }
}

/// The two command lines that make the same video: the strip, then its frames.
func zoomVideoCommands(args: [String], iterations: Int?, settings: ZoomVideoSettings) -> [String] {
    var shown = args.map { Uploads.fileName(forToken: $0) ?? $0 }
    if let iterations {
        // The count auto found, so that the command makes this very video.
        if let at = shown.lastIndex(where: { $0 == "--iterations" }), at + 1 < shown.count { shown[at + 1] = String(iterations) }
        shown = shown.map { $0.hasPrefix("--iterations=") ? "--iterations=\(iterations)" : $0 }
    }
    let strip = (["glint", "fractal"] + shown + ["--exp-map", String(settings.columns), "-o", "strip.png"]).map(shellQuoted).joined(separator: " ")
    var video = ["glint", "zoomvideo", "strip.png", "--size", "\(settings.width)x\(settings.height)", "--fps", numberText(settings.fps),
                 "--frames", String(settings.frames)]
    video += settings.format == .mp4 ? ["--video", "zoom.mp4"] : ["-o", "frames"]
    return [strip, video.map(shellQuoted).joined(separator: " ")]
}

/// The arguments without any --size (a strip's size comes from its columns and zoom).
func withoutSize(_ args: [String]) -> [String] { ServeJob.splitSize(args).rest }

/// Makes `job`'s video: the strip of `strip` on `backend` (its iterations found first with
/// auto), then every frame, into the job's temporary file, renamed into place when complete.
/// Cancellation stops it between strip rows and between frames; whatever way it ends short,
/// its temporary files are removed.
func makeZoomVideo(_ job: ZoomVideoJob, strip given: FractalJob, stripJob: DeviceJob, autoIterations: Bool, args: [String],
                   devices: any DeviceRunner, device: String) async throws -> Int {
    do {
        return try await makeZoomVideoFile(job, strip: given, stripJob: stripJob, autoIterations: autoIterations, args: args,
                                           devices: devices, device: device)
    } catch {
        unlink(job.temporaryPath)
        throw error
    }
}

private func makeZoomVideoFile(_ job: ZoomVideoJob, strip given: FractalJob, stripJob deviceJob: DeviceJob, autoIterations: Bool,
                               args: [String], devices: any DeviceRunner, device: String) async throws -> Int {
    let settings = job.settings
    var stripJob = given
    if autoIterations { job.update { $0.phase = .iterations } }
    // The strip on the device (its iteration count first, when auto); the frames and their
    // encoding here.
    let rendered = try await devices.strip(deviceJob, device: device, autoIterations: autoIterations) { p in
        job.update { s in
            if p.phase == "strip" {
                if autoIterations && s.phase == .iterations, let n = p.iterations {
                    s.iterations = n
                    s.commands = zoomVideoCommands(args: args, iterations: n, settings: settings)
                }
                (s.phase, s.fraction) = (.strip, p.fraction)
            }
        }
    }
    stripJob.maxIterations = rendered.iterations
    try Task.checkCancellation()
    guard let layout = stripJob.expMap else { throw GlintError("the strip job has no exp-map layout") }
    let record = ExpMapRecord.entry(job: stripJob, layout: layout)
    let strip = try ExpMapStrip(image: rendered.image, text: [record])
    job.update { ($0.phase, $0.fraction) = (.frames, 0) }
    let frames = await ExpMapFrames(strip: strip, width: settings.width, height: settings.height)
    let n = settings.frames
    switch settings.format {
    case .mp4:
        let encoder = try VideoEncoder(path: job.temporaryPath, width: settings.width, height: settings.height, fps: settings.fps)
        // Stops ffmpeg and removes its file when the job ends short (a no-op once committed).
        defer { encoder.discard() }
        for k in 0..<n {
            try Task.checkCancellation()
            try encoder.append(await frames.frame(zoomLog2: strip.zoomLog2(frame: k, of: n)))
            job.update { ($0.frame, $0.fraction) = (k + 1, Double(k + 1) / Double(n)) }
        }
        try encoder.finish()
        try encoder.commit()
    case .tar:
        // The strip as glint fractal --exp-map writes it (glint zoomvideo reads it again), then
        // the frames as glint zoomvideo -o writes them.
        let tar = try TarWriter(path: job.temporaryPath)
        defer { tar.discard() }
        try tar.add("strip.png", PNG.encode(rendered.image, alpha: false, text: [record]))
        for k in 0..<n {
            try Task.checkCancellation()
            let image = await frames.frame(zoomLog2: strip.zoomLog2(frame: k, of: n))
            try tar.add("frames/" + frameName(k), PNG.encode(image, alpha: false))
            job.update { ($0.frame, $0.fraction) = (k + 1, Double(k + 1) / Double(n)) }
        }
        try tar.finish()
    }
    try Task.checkCancellation()
    guard rename(job.temporaryPath, job.path) == 0 else {
        let why = FileIO.errnoText()
        unlink(job.temporaryPath)
        throw GlintError("cannot move the video into place: \(why)")
    }
    var info = stat()
    return stat(job.path, &info) == 0 ? Int(info.st_size) : 0
}

/// A POSIX tar archive (ustar) written as it goes: each file's header, its bytes, padding to
/// 512 bytes; two zero blocks end it. `discard` removes it unless `finish` completed it.
final class TarWriter {
    let path: String
    private var fd: Int32
    private var finished = false
    private let mtime = Int(time(nil))

    init(path: String) throws {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw GlintError("cannot create \(path): \(FileIO.errnoText())") }
    }

    private func write(_ bytes: [UInt8]) throws {
        guard FileIO.writeAll(fd, bytes) else { throw GlintError("cannot write \(path): \(FileIO.errnoText())") }
    }

    /// The 512-byte ustar header of a regular file.
    static func header(name: String, size: Int, mtime: Int) -> [UInt8] {
        var h = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, at offset: Int, width: Int) {
            for (i, b) in text.utf8.prefix(width).enumerated() { h[offset + i] = b }
        }
        func octal(_ value: Int, at offset: Int, width: Int) {
            put(String(value, radix: 8).leftPadded(to: width - 1), at: offset, width: width - 1)
        }
        put(name, at: 0, width: 100)
        octal(0o644, at: 100, width: 8)
        octal(0, at: 108, width: 8)
        octal(0, at: 116, width: 8)
        octal(size, at: 124, width: 12)
        octal(mtime, at: 136, width: 12)
        put("        ", at: 148, width: 8)
        h[156] = UInt8(ascii: "0")
        put("ustar", at: 257, width: 6)
        put("00", at: 263, width: 2)
        put("glint", at: 265, width: 32)
        put("glint", at: 297, width: 32)
        let sum = h.reduce(0) { $0 + Int($1) }
        put(String(sum, radix: 8).leftPadded(to: 6), at: 148, width: 6)
        h[154] = 0
        h[155] = UInt8(ascii: " ")
        return h
    }

    func add(_ name: String, _ bytes: [UInt8]) throws {
        precondition(name.utf8.count < 100, "tar names here are short")
        try write(Self.header(name: name, size: bytes.count, mtime: mtime))
        try write(bytes)
        let pad = (512 - bytes.count % 512) % 512
        if pad > 0 { try write([UInt8](repeating: 0, count: pad)) }
    }

    func finish() throws {
        try write([UInt8](repeating: 0, count: 1024))
        guard close(fd) == 0 else {
            fd = -1
            throw GlintError("cannot write \(path): \(FileIO.errnoText())")
        }
        fd = -1
        finished = true
    }

    /// Closes and removes an unfinished archive.
    func discard() {
        if fd >= 0 { close(fd); fd = -1 }
        if !finished { unlink(path) }
    }

    deinit { discard() }
}
#endif
