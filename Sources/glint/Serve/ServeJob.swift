#if Serve
import ArgumentParser
import Glibc
import GlintCore
import GlintWorkloads

/// What went wrong with a request, and whose fault it is: the HTTP status and one line.
struct ServeError: Error, Sendable {
    var status: Int
    var message: String

    static func bad(_ message: String) -> ServeError { ServeError(status: 400, message: message) }
    static func tooLarge(_ message: String) -> ServeError { ServeError(status: 413, message: message) }
    static let busy = ServeError(status: 503, message: "the server is busy: every render slot and the whole queue are taken; try again shortly")
    static func timeout(_ seconds: Double) -> ServeError {
        ServeError(status: 504, message: "the render ran past the server's limit of \(Format.short(seconds)) s (--render-timeout)")
    }

    /// The servers' temporary folders (one a process, more in tests), which no reply shows.
    static let privateFolders = Locked<[String]>([])

    /// The message as a client reads it: an uploaded picture named by its upload:ID, the
    /// server's other files by their names, never by the server's own paths.
    var shownMessage: String {
        var text = message
        for folder in Self.privateFolders.withLock({ $0 }) where text.contains(folder) {
            text = text.replacing(folder + "/uploads/", with: "upload:")
                .replacing(/(upload:[0-9a-f]{16})\.png/) { $0.1 }
                .replacing(folder + "/", with: "")
                .replacing(folder, with: "the server's folder")
        }
        return text
    }

    /// Any error as the server reports it. While a job is read (`preparing`) its errors are the
    /// client's (400) and say what the command line would; in a render they are the server's (500).
    static func from(_ error: Error, preparing: Bool) -> ServeError {
        switch error {
        case let e as ServeError: return e
        case let e as ValidationError: return .bad(e.message)
        case is CancellationError: return ServeError(status: 499, message: "cancelled")
        case let e as GlintError where e == ReferenceOrbit.cancelled || e == Locator.cancelled:
            return ServeError(status: 499, message: "cancelled")
        default:
            let text = (error as? GlintError)?.flagged.message ?? "\(error)"
            let first = text.split(separator: "\n").first.map(String.init) ?? text
            return ServeError(status: preparing ? 400 : 500, message: first)
        }
    }
}

/// A job the page asked for: a workload's command line, checked by the command's own parser.
/// (`command` is a parsed command: a value read once and never changed.)
struct ServeJob: @unchecked Sendable {
    /// How an option of a workload may be used from the page.
    enum Use { case flag, value, picture }

    /// The options a page may give, per workload. Everything else (outputs, animations, shards,
    /// the device, limits, reporting) is refused: the server decides those.
    static let allowed: [String: [String: Use]] = [
        "fractal": ["--size": .value, "--center": .value, "--zoom": .value, "--precision": .value,
                    "--iterations": .value, "--bailout": .value, "--palette": .value, "--smooth": .flag,
                    "--no-smooth": .flag, "--ss": .value, "--c": .value, "--location": .picture,
                    "--texture": .picture, "--bla": .flag, "--no-bla": .flag, "--no-skip": .flag,
                    "--power": .value, "--color": .value, "--light": .value],
        "rtow": ["--scene": .value, "--size": .value, "--spp": .value, "--depth": .value, "--seed": .value,
                 "--lookfrom": .value, "--lookat": .value, "--vup": .value, "--vfov": .value, "--aperture": .value,
                 "--focus-dist": .value, "--orbit": .value, "--distance": .value, "--turn": .value,
                 "--roll": .value, "--app-glass": .flag],
        "blur": ["--sigma": .value, "--method": .value, "--border": .value],
        "mist": ["--input": .picture, "--fps": .value, "--sigma": .value, "--method": .value, "--drops": .value,
                 "--gravity": .value, "--seed": .value, "--classic": .flag, "--fogged": .flag, "--frames": .value],
        "iso": ["--depth": .value, "--corner-radius": .value, "--ss": .value],
        "pulse": ["--fps": .value, "--hue": .value, "--purity-center": .value, "--purity-range": .value,
                  "--size": .value],
    ]
    /// Workloads whose positional argument is a picture (the others' is a name, or none).
    static let pictureArgument: Set<String> = ["blur", "iso"]
    /// The built-in scenes: a page may not name a scene file.
    static let scenes: Set<String> = ["ch8", "ch10", "cover"]

    let workload: String
    /// The arguments as the page gave them (`upload:ID` kept), and as the command reads them.
    let args: [String]
    let resolvedArgs: [String]
    /// What the command was parsed from: `resolvedArgs` and the server's own arguments.
    let commandArgs: [String]
    let command: any WorkloadCommand

    /// The command line a user runs for the same picture: uploads named by their file names.
    var cli: String {
        let shown = args.map { Uploads.fileName(forToken: $0) ?? $0 }
        return (["glint", workload] + shown + ["-o", "\(workload).png"]).map(shellQuoted).joined(separator: " ")
    }

    /// Reads a request's workload and arguments. `uploads` turns `upload:ID` into a file.
    /// `extra` are arguments of the server's own (a picture it wrote), read after the client's.
    init(workload: String, args: [String], uploads: Uploads, last: (() throws -> String)? = nil, extra: [String] = []) throws {
        guard let options = Self.allowed[workload] else {
            throw ServeError.bad("unknown workload '\(JSON.printable(workload, limit: 40))': the server knows \(Self.allowed.keys.sorted().joined(separator: ", "))")
        }
        guard args.count <= 200, args.allSatisfy({ $0.utf8.count <= 20_000 }) else {
            throw ServeError.tooLarge("too many or too long arguments (at most 200, each at most 20000 characters)")
        }
        func picture(_ token: String, for what: String) throws -> String {
            if token == "upload:last" {
                guard let last else { throw ServeError.bad("\(what): upload:last names the last picture of a WebSocket connection; over HTTP, upload the picture (POST /api/upload)") }
                return try last()
            }
            guard let path = uploads.path(forToken: token) else {
                throw ServeError.bad("\(what) takes an uploaded picture (upload:ID from POST /api/upload), got \(JSON.quotedForMessage(token))")
            }
            return path
        }
        var resolved: [String] = []
        var i = 0
        var positional = 0
        while i < args.count {
            let arg = args[i]
            i += 1
            guard arg.hasPrefix("-"), arg.count > 1, Double(arg) == nil else {
                positional += 1
                if Self.pictureArgument.contains(workload) {
                    guard positional == 1 else { throw ServeError.bad("\(workload) takes one picture, got a second: \(JSON.quotedForMessage(arg))") }
                    resolved.append(try picture(arg, for: "the picture of \(workload)"))
                } else {
                    resolved.append(arg)
                }
                continue
            }
            var name = arg, inline: String?
            if let eq = arg.firstIndex(of: "=") {
                name = String(arg[..<eq])
                inline = String(arg[arg.index(after: eq)...])
            }
            guard let use = options[name] else {
                throw ServeError.bad("\(workload): \(JSON.quotedForMessage(name, limit: 40)) is not available here (the server chooses outputs, devices and limits; the page may give \(options.keys.sorted().joined(separator: " ")))")
            }
            switch use {
            case .flag:
                guard inline == nil else { throw ServeError.bad("\(name) takes no value") }
                resolved.append(name)
            case .value, .picture:
                let value: String
                if let inline { value = inline } else {
                    guard i < args.count else { throw ServeError.bad("\(name) needs a value") }
                    value = args[i]
                    i += 1
                }
                // A mist still over HTTP is the last of --frames frames: a few seconds' worth. The
                // page's value is read as the command's parser reads it (1e6, " 1000000" and
                // 6.01e2 are numbers too); the server's own arguments (`extra`) are not capped.
                if name == "--frames", let n = try? checkedInt(value, option: name, 1...Int.max), n > Self.maxMistFrames {
                    throw ServeError.bad("--frames: the server renders at most \(Self.maxMistFrames) mist frames for a still (got \(n)); a live view runs without end")
                }
                if name == "--scene" && !Self.scenes.contains(value) {
                    throw ServeError.bad("--scene: the server renders the built-in scenes \(Self.scenes.sorted().joined(separator: ", ")), got \(JSON.quotedForMessage(value))")
                }
                resolved += [name, use == .picture ? try picture(value, for: name) : value]
            }
        }
        if Self.pictureArgument.contains(workload) && positional == 0 {
            throw ServeError.bad("\(workload) needs a picture: upload one (POST /api/upload) and give its upload:ID")
        }
        self.workload = workload
        self.args = args
        self.resolvedArgs = resolved
        self.commandArgs = resolved + extra
        self.command = try Self.parseCommand(workload: workload, args: resolved + extra)
    }

    /// `args` parsed as `glint <workload>` parses them; a 400 saying what the parser says.
    static func parseCommand(workload: String, args: [String]) throws -> any WorkloadCommand {
        guard let type = Workloads.named(workload) else { throw ServeError.bad("unknown workload \(JSON.quotedForMessage(workload, limit: 40))") }
        let parsed: ParsableCommand
        do {
            parsed = try Self.parseLock.withLock { _ in try type.parse(args) }
        } catch {
            throw ServeError.bad("\(workload): " + usageMessage(for: error, type: type, help: nil))
        }
        guard let command = parsed as? any WorkloadCommand else { throw ServeError.bad("\(workload): not a workload") }
        return command
    }

    /// The most frames a mist still renders for a page.
    static let maxMistFrames = 600

    /// The command-line parser keeps the last refused value's message in one global: one
    /// parse at a time.
    static let parseLock = Locked(0)

    /// The --size the page gave (the last one wins, as on the command line), and the other
    /// arguments.
    private func splitSize() -> (size: ImageSize?, rest: [String]) { Self.splitSize(args) }

    /// `args`' --size (the last one that reads), and the arguments without any --size.
    static func splitSize(_ args: [String]) -> (size: ImageSize?, rest: [String]) {
        var size: ImageSize?
        var rest: [String] = []
        var i = 0
        while i < args.count {
            var text: String?
            if args[i] == "--size", i + 1 < args.count { text = args[i + 1]; i += 1 }
            else if args[i].hasPrefix("--size=") { text = String(args[i].dropFirst(7)) }
            if let text {
                if let s = try? parseSize(text, option: "--size") { size = ImageSize(width: s.0, height: s.1) }
            } else {
                rest.append(args[i])
            }
            i += 1
        }
        return (size, rest)
    }

    /// The same job at 1/`divisor` of its size (at least 1 pixel a side), for a first look or a
    /// pass on the way to the whole picture; nil for workloads without --size, and for pictures
    /// under 2·`divisor` pixels a side, whose pass would show nothing of them.
    /// `also`: options that replace the job's own (the last of an option wins).
    func preview(uploads: Uploads, defaultSize: ImageSize, divisor: Int = 4, also: [String] = []) throws -> ServeJob? {
        guard Self.allowed[workload]?["--size"] != nil else { return nil }
        let (given, rest) = splitSize()
        let size = given ?? defaultSize
        guard size.width >= 2 * divisor && size.height >= 2 * divisor else { return nil }
        let small = "\(max(1, size.width / divisor))x\(max(1, size.height / divisor))"
        return try ServeJob(workload: workload, args: rest + ["--size", small] + also, uploads: uploads)
    }

    /// The image size the job asks for (--size, or the workload's default), for the pixel limit.
    func requestedPixels() -> Int {
        let size = splitSize().size ?? (workload == "pulse" ? ImageSize(width: 640, height: 360) : ImageSize(width: 1200, height: 800))
        return size.width * size.height
    }
}

/// A command-line argument as a shell reads it back.
func shellQuoted(_ s: String) -> String {
    let plain = s.allSatisfy { $0.isLetter || $0.isNumber || "-_.,:=/+@%".contains($0) }
    return plain && !s.isEmpty ? s : "'" + s.replacing("'", with: "'\\''") + "'"
}

/// The pictures clients uploaded, in the server's temporary folder: `upload:ID` names one.
final class Uploads: Sendable {
    let folder: String
    /// Kept at most; the oldest goes first.
    let capacity: Int
    private let names = Locked<[String]>([])

    init(folder: String, capacity: Int = 64) {
        self.folder = folder
        self.capacity = capacity
    }

    /// The file of `upload:ID`, when ID is one of ours (hex only: no path can be formed).
    func path(forToken token: String) -> String? {
        guard token.hasPrefix("upload:") else { return nil }
        let id = String(token.dropFirst(7))
        guard id.count == 16, id.allSatisfy(\.isHexDigit), names.withLock({ $0.contains(id) }) else { return nil }
        return "\(folder)/\(id).png"
    }

    /// The file name a command line shows for `upload:ID`.
    static func fileName(forToken token: String) -> String? {
        guard token.hasPrefix("upload:") else { return nil }
        return token == "upload:last" ? "view.png" : "\(token.dropFirst(7)).png"
    }

    /// Checks and keeps a PNG: the header's size against the pixel limit before decoding, then
    /// the whole picture decoded as the command line reads its inputs.
    func add(_ bytes: [UInt8], maxPixels: Int) throws -> (token: String, width: Int, height: Int) {
        guard bytes.count >= 24, bytes.starts(with: PNG.signature) else {
            throw ServeError.bad("the upload is not a PNG file")
        }
        let w = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }, h = bytes[20..<24].reduce(0) { $0 << 8 | Int($1) }
        // A side of 0 is a broken PNG (400), not one over the limits.
        guard w >= 1, h >= 1 else { throw ServeError.bad("the uploaded picture is \(w)x\(h): a PNG has at least one pixel a side") }
        guard w <= ImageLimits.maxSide, h <= ImageLimits.maxSide, w * h <= maxPixels else {
            throw ServeError.tooLarge("the uploaded picture is \(w)x\(h): over the server's limit of \(maxPixels) pixels (--max-pixels)")
        }
        let image: Image8
        do { image = try PNG.decode(bytes, name: "the upload") } catch { throw ServeError.bad(error.message) }
        var id = ""
        for _ in 0..<2 { id += String(UInt64.random(in: .min ... .max) & 0xFFFF_FFFF, radix: 16).leftPadded(to: 8) }
        try FileIO.writeAtomically("\(folder)/\(id).png", bytes)
        let dropped: [String] = names.withLock { list in
            list.append(id)
            let over = max(0, list.count - capacity)
            let gone = Array(list.prefix(over))
            list.removeFirst(over)
            return gone
        }
        for old in dropped { unlink("\(folder)/\(old).png") }
        return ("upload:\(id)", image.width, image.height)
    }
}

extension String {
    func leftPadded(to n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
#endif
