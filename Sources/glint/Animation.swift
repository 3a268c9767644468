import ArgumentParser
import GlintCore
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

    @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("Ramp a parameter over the animation: NAME=FROM:TO, repeatable (e.g. zoom=1:1e4, center=-0.75,0:-0.7435,0.1314, c=-0.8,0.156:-0.7,0.27). Zoom moves geometrically, the rest linearly.",
                               valueName: "name=from:to"))
    var ramp: [String] = []

    @Option(help: "Also encode the frames as a video (e.g. out.mp4) by piping them to ffmpeg.")
    var video: String?

    var isAnimation: Bool { frames != nil }

    func ramps(allowed: [String]) throws -> [Ramp] {
        var out: [Ramp] = []
        for text in ramp {
            let r: Ramp
            do { r = try Ramp(parsing: text) } catch { throw ValidationError(error.message) }
            guard allowed.contains(r.name) else {
                throw ValidationError("--ramp \(r.name): this workload ramps \(allowed.joined(separator: ", "))")
            }
            out.append(r)
        }
        return out
    }

    func check(allowed: [String]) throws {
        if let frames, !Limits.frames.contains(frames) { throw ValidationError("--frames must be between 1 and \(Limits.frames.upperBound), got \(frames)") }
        guard Limits.fps.contains(fps) else { throw ValidationError("--fps must be \(Limits.fps.text), got \(fps)") }
        if frames == nil && (!ramp.isEmpty || video != nil) { throw ValidationError("--ramp and --video need --frames N") }
        _ = try ramps(allowed: allowed)
        if let video { try checkWritable(video, option: "--video") }
    }
}

/// Writes frames as PNGs into a folder and, with --video, pipes them to ffmpeg as raw RGBA.
final class FrameSink {
    let folder: String
    private var encoder: VideoEncoder?

    init(folder: String, video: String?, width: Int, height: Int, fps: Double) throws {
        self.folder = folder
        if FileIO.exists(folder) && !FileIO.isDirectory(folder) {
            throw GlintError("-o \(folder) is a file; an animation needs a folder for its frames")
        }
        // Look for ffmpeg before creating anything, so a missing one leaves nothing behind.
        if video != nil && VideoEncoder.findFFmpeg() == nil {
            throw GlintError("--video \(video ?? ""): ffmpeg is not installed (on Debian: apt-get install ffmpeg); the PNG frames need no ffmpeg")
        }
        try FileIO.makeDirectories(folder)
        if let video { encoder = try VideoEncoder(path: video, width: width, height: height, fps: fps) }
    }

    func write(_ image: Image8, frame k: Int) throws {
        try PNG.write(image, to: folder + "/" + frameName(k), alpha: false)
        try encoder?.append(image)
    }

    func finish() throws { try encoder?.finish() }
}

/// ffmpeg reading raw RGBA frames on its standard input; writes to a temporary name and renames.
final class VideoEncoder {
    private let pid: pid_t
    private var fd: Int32
    private let path: String
    private let temporary: String

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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[0], 0)
        posix_spawn_file_actions_addclose(&actions, pipeFDs[1])
        var child: pid_t = 0
        let cArgs = args.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        let status = posix_spawn(&child, ffmpeg, &actions, nil, cArgs, environ)
        posix_spawn_file_actions_destroy(&actions)
        close(pipeFDs[0])
        guard status == 0 else {
            close(pipeFDs[1])
            throw GlintError("--video: cannot start ffmpeg (\(String(cString: strerror(status))))")
        }
        pid = child
        fd = pipeFDs[1]
    }

    func append(_ image: Image8) throws {
        try image.pixels.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw GlintError("--video: ffmpeg stopped reading frames (see its message above)") }
                done += n
            }
        }
    }

    func finish() throws {
        close(fd)
        fd = -1
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        guard status == 0 else {
            unlink(temporary)
            throw GlintError("--video \(path): ffmpeg failed (exit status \(status >> 8))")
        }
        guard rename(temporary, path) == 0 else { throw GlintError("--video: cannot rename the video to \(path)") }
    }

    deinit {
        if fd >= 0 {
            close(fd)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            unlink(temporary)
        }
    }
}
