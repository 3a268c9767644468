import ArgumentParser
import Dispatch
import GlintCore
import GlintWorkloads
#if canImport(Glibc)
import Glibc
#endif

/// --frames/--fps/--ramp/--video, shared by the workloads that animate.
struct AnimationOptions: ParsableArguments {
    @Option(parsing: .unconditional,
            help: ArgumentHelp("Render an animation of N frames (1 to \(Limits.frames.upperBound)) instead of one image; -o then names a folder for frame_00000.png, ...",
                               valueName: "n"),
            transform: wholeNumber("--frames", Limits.frames))
    var frames: Int?

    @Option(parsing: .unconditional, help: "Frames per second of the animation (for --video; \(Limits.fps.text)). (default: 30)",
            transform: number("--fps", Limits.fps))
    var fps = 30.0

    @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("Ramp a parameter over the animation: NAME=FROM:TO, repeatable (e.g. zoom=1:1e300, center=-0.75,0:-0.7435,0.1314, c=-0.8,0.156:-0.7,0.27). Zoom moves geometrically, to any depth, the rest linearly; a fractal frame's zoom and centre are exact decimals (recorded in its PNG), and mandelbrot frames at one centre share one reference orbit.",
                               valueName: "name=from:to"))
    var ramp: [String] = []

    @Option(help: "Also encode the frames as a video (e.g. out.mp4) by piping them to ffmpeg.")
    var video: String?

    var isAnimation: Bool { frames != nil }

    /// The ramps split into names and the texts of their ends (a workload that needs more than
    /// Doubles reads the texts itself); an unknown name is refused.
    func rampTexts(allowed: [String]) throws -> [RampText] {
        var out: [RampText] = []
        for text in ramp {
            let r: RampText
            do { r = try RampText(parsing: text) } catch { throw ValidationError(error.message) }
            guard allowed.contains(r.name) else {
                throw ValidationError("--ramp \(r.name): this workload ramps \(allowed.joined(separator: ", "))")
            }
            out.append(r)
        }
        return out
    }

    /// The ramps with their ends read as Doubles.
    func ramps(allowed: [String]) throws -> [Ramp] {
        var out: [Ramp] = []
        for split in try rampTexts(allowed: allowed) {
            do throws(GlintError) { out.append(try Ramp(split)) } catch { throw ValidationError(error.message) }
        }
        return out
    }

    func check(allowed: [String]) throws {
        if let frames, !Limits.frames.contains(frames) { throw ValidationError("--frames must be between 1 and \(Limits.frames.upperBound), got \(frames)") }
        guard Limits.fps.contains(fps) else { throw ValidationError("--fps must be \(Limits.fps.text), got \(fps)") }
        if frames == nil && (!ramp.isEmpty || video != nil) { throw ValidationError("--ramp and --video need --frames N") }
        _ = try rampTexts(allowed: allowed)
        if let video { try checkWritable(video, option: "--video") }
    }
}

extension AnimationOptions {
    /// The --ramp values of `glint fractal`: zoom and centre as exact decimals of any length, c as
    /// Doubles; a bad one is a one-line usage error.
    func fractalRamps() throws -> FractalRamps {
        var out = FractalRamps()
        for r in try rampTexts(allowed: Fractal.rampable) {
            let given = "\(r.name)=\(JSON.printable(r.ends, limit: 80))"
            func decimal(_ text: String) throws -> DeepNumber {
                do throws(GlintError) { return try DeepNumber(parsing: text, field: "--ramp \(r.name)") } catch {
                    throw ValidationError(error.message)
                }
            }
            switch r.name {
            case "zoom":
                guard r.from.count == 1 else { throw ValidationError("--ramp zoom=FROM:TO takes two numbers (e.g. zoom=1:1e300), got \(given)") }
                let ends = try [r.from[0], r.to[0]].map { text in
                    let z = try decimal(text)
                    guard !z.isNegative, !z.isZero, let l = z.log10Magnitude, l >= -9 else {
                        throw ValidationError("--ramp zoom values must be positive numbers of at least 1e-9 (any depth), got \(given)")
                    }
                    return z
                }
                out.zoom = (ends[0], ends[1])
            case "center":
                guard r.from.count == 2 else {
                    throw ValidationError("--ramp center=FROM:TO needs pairs X,Y (e.g. center=-0.75,0:-0.74,0.13), got \(given)")
                }
                let values = try (r.from + r.to).map { text in
                    let v = try decimal(text)
                    guard Limits.planeCoordinate.contains(v.nearestDouble) else {
                        throw ValidationError("--ramp center values must be \(Limits.planeCoordinate.text), got \(given)")
                    }
                    return v
                }
                out.center = (DeepComplex(re: values[0], im: values[1]), DeepComplex(re: values[2], im: values[3]))
            default:
                guard r.from.count == 2 else {
                    throw ValidationError("--ramp \(r.name)=FROM:TO needs pairs X,Y (e.g. \(r.name)=-0.8,0.156:-0.7,0.27), got \(given)")
                }
                let ramp: Ramp
                do throws(GlintError) { ramp = try Ramp(r) } catch { throw ValidationError(error.message) }
                try checkRamp(ramp, Limits.planeCoordinate)
                out.c = ramp
            }
        }
        return out
    }
}

/// An animation's output folder, checked before any work: an existing one must be a writable
/// folder (its frames are replaced); a missing one is created when the frames are written.
func checkFrameFolder(_ folder: String, option: String) throws {
    guard FileIO.exists(folder) else { return }
    guard FileIO.isDirectory(folder) else { throw ValidationError("\(option) \(folder) is a file; an animation needs a folder for its frames") }
    guard access(folder, W_OK) == 0 else { throw ValidationError("\(option) \(folder): the folder is not writable") }
}

/// Writes frames as PNGs and, with --video, pipes them to ffmpeg as raw RGBA. The frames go to
/// a hidden staging folder inside the output folder (`StagedFolder`) and the video to a
/// temporary name; `finish` moves them all into place once every frame and the video are
/// complete. A failure or a Ctrl-C before then (the sink is discarded, explicitly or when it is
/// released) leaves the frames already in the folder untouched and removes what was staged,
/// and the folder too when this run created it and it is still empty.
///
/// Frames are encoded in the background while the caller renders the next ones (`FramePipeline`):
/// the PNGs of several frames at once, each frame's bytes exactly as a one-at-a-time encoding
/// gives them; the video gets the raw frames in order as they are handed over, no PNG first.
final class FrameSink {
    let folder: String
    private let staged: StagedFolder
    private var encoder: VideoEncoder?
    private let pipeline: FramePipeline

    init(folder: String, video: String?, width: Int, height: Int, fps: Double) throws {
        self.folder = folder
        if FileIO.exists(folder) && !FileIO.isDirectory(folder) {
            throw GlintError("-o \(folder) is a file; an animation needs a folder for its frames")
        }
        // Look for ffmpeg before creating anything, so a missing one leaves nothing behind.
        if video != nil && VideoEncoder.findFFmpeg() == nil {
            throw GlintError("--video \(video ?? ""): ffmpeg is not installed (on Debian: apt-get install ffmpeg); the PNG frames need no ffmpeg")
        }
        staged = try StagedFolder(folder)
        pipeline = FramePipeline(frameBytes: width * height * 4)
        if let video {
            do { encoder = try VideoEncoder(path: video, width: width, height: height, fps: fps) } catch {
                staged.discard()
                throw error
            }
        }
        SequenceInterrupt.install()
    }

    /// Hands frame k over: the video gets it now, its PNG (with `text` as tEXt chunks: a fractal
    /// frame's view record) is encoded and staged in the background. Throws the first error of
    /// an earlier frame's encoding.
    func write(_ image: Image8, frame k: Int, text: [PNG.TextEntry] = []) throws {
        try SequenceInterrupt.check(folder)
        try encoder?.append(image)
        let staged = staged, name = frameName(k)
        try pipeline.submit(bytes: image.pixels.count) {
            try staged.write(name, PNG.encode(image, alpha: false, text: text))
        }
    }

    /// Stages frame k's PNG as it is (a merge copies frames); with a video, decoded for ffmpeg.
    func copy(_ png: [UInt8], frame k: Int) throws {
        try SequenceInterrupt.check(folder)
        let name = frameName(k)
        try staged.write(name, png)
        if let encoder { try encoder.append(PNG.decode(png, name: staged.destination(name))) }
    }

    /// Stages another file (a shard folder's record): written after the frames, it moves into
    /// place after them.
    func writeFile(_ name: String, _ bytes: [UInt8]) throws {
        try pipeline.drain()
        try staged.write(name, bytes)
    }

    /// Waits for the frames still being encoded and for the video, then moves the video and
    /// every frame into place.
    func finish() throws {
        do {
            try pipeline.drain()
            try SequenceInterrupt.check(folder)
            try encoder?.finish()
            try encoder?.commit()
            try staged.commit()
        } catch {
            discard()
            throw error
        }
    }

    /// Drops the staged frames and the unfinished video (after the encodings under way end).
    func discard() {
        pipeline.cancel()
        encoder?.discard()
        staged.discard()
    }

    deinit { discard() }
}

/// The background encoding of an animation's frames: each submitted job (a frame's PNG encoding
/// and staging) runs on the global queue while the caller renders on, at most `limit` at once
/// (as many as there are cores, fewer where the frames are large: `memoryBytes` of frames in
/// all, but at least 2). `submit` waits while the limit is reached, so frames in memory stay
/// within max(2 frames, 256 MB) beside the one being rendered. The first job that fails stops
/// the rest; its error comes out of the next `submit` or `drain`.
final class FramePipeline: @unchecked Sendable {
    /// The memory the frames waiting for or in their encoding may take together.
    static let memoryBytes = 256 << 20
    let limit: Int
    private let slots: DispatchSemaphore
    private let group = DispatchGroup()
    private let failure = Locked<(any Error)?>(nil)
    private let cancelled = Locked(false)

    init(frameBytes: Int) {
        limit = Self.limit(frameBytes: frameBytes, cores: CPUFeatures.workerCount)
        slots = DispatchSemaphore(value: limit)
    }

    /// Jobs at once for frames of `frameBytes`: one per core, within `memoryBytes`, at least 2.
    static func limit(frameBytes: Int, cores: Int) -> Int {
        max(2, min(max(cores, 1), memoryBytes / max(frameBytes, 1)))
    }

    /// Runs `job` in the background once fewer than `limit` jobs are under way.
    func submit(bytes: Int, _ job: @escaping @Sendable () throws -> Void) throws {
        if let error = failure.withLock({ $0 }) { throw error }
        slots.wait()
        if let error = failure.withLock({ $0 }) { slots.signal(); throw error }
        DispatchQueue.global().async(group: group) { [self] in
            defer { slots.signal() }
            guard !cancelled.withLock({ $0 }), failure.withLock({ $0 }) == nil else { return }
            do { try job() } catch { failure.withLock { if $0 == nil { $0 = error } } }
        }
    }

    /// Waits for every job; throws the first failure.
    func drain() throws {
        group.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Lets no job that has not started run, and waits for those under way.
    func cancel() {
        cancelled.withLock { $0 = true }
        group.wait()
    }
}

/// Ctrl-C while a sequence is written: the first stops it before the next frame is written (the
/// staged frames are removed and the folder is left as it was, exit status 130); a second quits
/// at once (`Interrupt`).
enum SequenceInterrupt {
    static func install() { Interrupt.install() }

    /// After a Ctrl-C: says so on stderr and throws exit status 130.
    static func check(_ folder: String) throws {
        guard Interrupt.requested else { return }
        printError("interrupted: no frames written; \(folder)/ is as it was")
        throw ExitCode(130)
    }
}

/// ffmpeg reading raw RGBA frames on its standard input; writes to a temporary name and renames.
final class VideoEncoder {
    private let pid: pid_t
    private var fd: Int32
    private let path: String
    private let temporary: String
    private var finished = false
    private var committed = false

    static func findFFmpeg() -> String? {
        for dir in (FileIO.environment("PATH") ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(dir)/ffmpeg"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    init(path: String, width: Int, height: Int, fps: Double) throws {
        guard let ffmpeg = Self.findFFmpeg() else {
            throw GlintError("--video \(path): ffmpeg is not installed (on Debian: apt-get install ffmpeg); the PNG frames need no ffmpeg")
        }
        self.path = path
        let ext = path.split(separator: ".").last.map(String.init) ?? "mp4"
        temporary = path + ".tmp-\(getpid())." + ext
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw GlintError("--video: cannot create a pipe to ffmpeg") }
        let args = [ffmpeg, "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgba",
                    "-s", "\(width)x\(height)", "-r", String(fps), "-i", "-",
                    "-pix_fmt", "yuv420p", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", temporary]
        let child: pid_t
        do {
            child = try Subprocess.spawn(args, stdin: pipeFDs[0], closeInChild: [pipeFDs[1]])
        } catch {
            close(pipeFDs[0])
            close(pipeFDs[1])
            throw GlintError("--video: cannot start ffmpeg (\(error.reason))")
        }
        close(pipeFDs[0])
        pid = child
        fd = pipeFDs[1]
    }

    func append(_ image: Image8) throws {
        guard FileIO.writeAll(fd, image.pixels) else { throw GlintError("--video: ffmpeg stopped reading frames (see its message above)") }
    }

    /// Closes ffmpeg's input and waits for it; the video is complete under its temporary name.
    func finish() throws {
        close(fd)
        fd = -1
        let ending = Subprocess.wait(pid)
        guard ending.succeeded else {
            unlink(temporary)
            throw GlintError("--video \(path): ffmpeg failed (\(ending.text))")
        }
        finished = true
    }

    /// Renames the finished video into place.
    func commit() throws {
        guard finished, !committed else { return }
        guard rename(temporary, path) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(temporary)
            throw GlintError("--video: cannot rename the video to \(path): \(why)")
        }
        committed = true
    }

    /// Stops ffmpeg if it still runs and removes the temporary video.
    func discard() {
        if fd >= 0 {
            close(fd)
            fd = -1
            _ = Subprocess.wait(pid)
        }
        if !committed { unlink(temporary) }
        committed = true
    }

    deinit { discard() }
}
