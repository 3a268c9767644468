import ArgumentParser
import GlintCore
import GlintWorkloads
#if canImport(Glibc)
import Glibc
#endif

struct Mist: WorkloadCommand {
    static let abstract = "A misty window: the camera seen through fogged glass, with raindrops and finger wipes; PNG frames out."

    static let discussion = """
        Each frame: the camera image is blurred (--sigma); a weight per pixel grows by 0.01 a \
        frame (at 60 fps) up to 1 and drops to 0 under a raindrop or a wipe; drops slide along \
        gravity with a little randomness and come back at the opposite edge; the frame shows, \
        inside a drop, the sharp image through the drop's lens, elsewhere mix(sharp, blurred, weight).

        --input is one image (a still camera: blurred once) or a folder of PNG frames, played \
        in name order as the camera (looping if --frames is longer). All frames must have one size.

        --input - is a live camera: raw RGBA frames on standard input (8 bits a channel, rows top \
        to bottom, exactly W*H*4 bytes a frame, back to back) of the size --size WxH gives, as \
        ffmpeg writes them with -pix_fmt rgba -f rawvideo. Each frame read is the sharp camera \
        image of the next mist frame. Each PNG is written into -o as soon as it is rendered \
        (under a temporary name, then renamed: a viewer following the folder sees only whole \
        frames). The run ends when the input ends between two frames, or after --frames N \
        (then it stops reading). Input that ends inside a frame, or holds no frame at all, is an \
        error (exit status 1) naming the frame and the bytes it got; the frames written before \
        it stay, each a complete file. -o must hold no frames yet (a new or empty folder), so a \
        live sequence is never mixed with an earlier one. Without --frames a live run stops after \
        an hour of frames at --fps, and any live run stops, keeping its frames, when the disk \
        under -o gets down to \(Mist.liveDiskReserve >> 20) MiB free. Ctrl-C stops within a frame's \
        time, even while the input is idle (exit status 130), keeping the frames written. A pipe \
        cannot be replayed: --shard and compare need a file or a folder.

        Drops vary in size and rim shading, merge when they touch and leave trails of small \
        droplets; --classic gives the seed's drops instead (all radius 0.01 of the width, no \
        merging, no trails).

        Positions are fractions of the image: gravity X,Y points down the window as (0,1) \
        (--gravity-file: one X,Y per line, line N for frame N, the last holding on). Wipes \
        (--wipes FILE.json) are a JSON array of strokes:
          [{"start": 10, "radius": 0.05, "points": [[0.1, 0.5], [0.2, 0.5], [0.3, 0.55]]}]
        A stroke touches its first point at frame `start` and moves one point per frame, \
        clearing the mist within `radius` (a fraction of the width; default 0.05) of its path.

        The same --seed gives the same frames on every device.

        Examples:
          glint mist --input window.png -o frames --frames 120
          glint mist --input camera/ -o frames --frames 300 --gravity 0.3,1 --drops 80 --seed 7
          glint mist --input window.png -o frames --frames 90 --wipes wipes.json --classic
          ffmpeg -f v4l2 -i /dev/video0 -vf scale=640:360 -pix_fmt rgba -f rawvideo - | glint mist --input - --size 640x360 -o live
          glint compare --a cpu --b opencl mist --input window.png --frames 30
        """

    @Option(help: ArgumentHelp("A PNG image (still camera), a folder of PNG frames, or - for raw RGBA frames on standard input (a live camera; give --size).",
                               valueName: "image|folder|-"))
    var input: String

    @Option(name: .customLong("size"), parsing: .unconditional,
            help: ArgumentHelp("With --input -: the size WxH of the raw frames (sides 1 to \(ImageLimits.maxSide), within --max-pixels).", valueName: "size"),
            transform: imageSize("--size"))
    var size: ImageSize?

    @Option(name: .shortAndLong, help: ArgumentHelp("Folder for frame_00000.png, frame_00001.png, ... (created if missing).", valueName: "folder"))
    var output: String?

    @Option(parsing: .unconditional, help: "Number of frames to render (1 to \(MistJob.maxFrames)); with --input -, stop after N frames (default: at the end of the input, at most an hour of frames at --fps).",
            transform: wholeNumber("--frames", 1...MistJob.maxFrames))
    var frames: Int?

    /// Whether the camera is raw frames on standard input.
    var isLive: Bool { input == "-" }
    /// The frames to render: --frames, else (live input, until it ends) an hour of frames.
    var frameCount: Int { frames ?? min(MistJob.maxFrames, Int((fps * 3600).rounded(.up))) }

    /// Free space a live run leaves on the disk under -o: it stops before going below it.
    static let liveDiskReserve: UInt64 = 256 << 20

    @Option(parsing: .unconditional, help: "Frames per second: motion and re-fogging per frame scale by 60/fps (\(Limits.mistFps.text)). (default: 60)",
            transform: number("--fps", Limits.mistFps))
    var fps = 60.0

    @Option(parsing: .unconditional, help: "Blur of the mist, in pixels (above 0, at most \(Format.short(BlurJob.maxSigma))). (default: 40)",
            transform: number("--sigma", Limits.sigma))
    var sigma = 40.0

    @Option(help: "Blur method: exact, recursive or auto. (default: auto)", transform: choice("--method", BlurMethod.allCases, name: { $0.rawValue }))
    var method = BlurMethod.auto

    @Option(parsing: .unconditional, help: "Number of raindrops (0 to \(MistJob.maxDrops)). (default: 50)",
            transform: wholeNumber("--drops", 0...MistJob.maxDrops))
    var drops = 50

    @Option(parsing: .unconditional, help: "Gravity X,Y in image directions (y down; only the direction counts), each within +-1e6.",
            transform: numberPair("--gravity", Limits.gravity, example: "0.3,1"))
    var gravity: NumberPair?

    @Option(name: .customLong("gravity-file"), help: "Per-frame gravity: one X,Y per line.")
    var gravityFile: String?

    @Option(help: "Finger wipes: a JSON file (see above).")
    var wipes: String?

    @Option(parsing: .unconditional, help: "Seed of the rain's random numbers (0 to 2^64-1). (default: 0)", transform: seedNumber("--seed"))
    var seed: UInt64 = 0

    @Flag(help: "The seed's drops: one size, no merging, no trails.")
    var classic = false

    @Flag(help: "Start misted over (every blur weight at 1, as once the fog has built up, 100 frames at 60 fps); by default the window starts clear.")
    var fogged = false

    @OptionGroup var limits: InputLimitOptions
    @OptionGroup var sharding: ShardOptions
    @OptionGroup var device: DeviceOptions
    @OptionGroup var out: OutputOptions
    @OptionGroup var png: PNGOptions

    /// -o, {shard} replaced by the shard's number.
    var outputFolder: String? { output.map { shardPath($0, shard) } }

    func validate() throws {
        if gravity != nil && gravityFile != nil { throw ValidationError("give --gravity or --gravity-file, not both") }
        if isLive {
            guard let size else {
                throw ValidationError("--input - reads raw RGBA frames from standard input: give their size with --size WxH (e.g. --size 640x360)")
            }
            if sharding.shard != nil {
                throw ValidationError("--shard with --input -: a shard replays the camera from frame 0 and a pipe cannot be replayed; save the frames to a folder and give --input FOLDER")
            }
            // The frame size against --max-pixels ($GLINT_MAX_PIXELS), before any frame exists.
            do {
                try limits.validate()
                try ImageLimits.checkInput(width: size.width, height: size.height)
            } catch let e as GlintError { throw ValidationError("--size \(size): \(e.message)") }
        } else {
            if size != nil { throw ValidationError("--size goes with --input - (raw frames on standard input); a PNG input has its own size") }
            if frames == nil { throw ValidationError("give the number of frames with --frames N (e.g. --frames 120)") }
        }
        try sharding.checkPaths([output])
        if let shard = try sharding.resolved() {
            do { _ = try shard.frames(of: frameCount) } catch { throw ValidationError(error.message) }
        }
        if let output = outputFolder {
            if FileIO.exists(output) && !FileIO.isDirectory(output) { throw ValidationError("-o \(output) is a file; give a folder") }
        }
        do { try options.validate() } catch { throw error.usage }
    }

    /// The job from the options alone (no files read).
    var options: MistJob {
        var job = MistJob()
        job.frames = frameCount
        job.fps = fps
        job.sigma = sigma
        job.method = method
        job.drops = drops
        job.seed = seed
        job.classic = classic
        job.fogged = fogged
        if let gravity { job.gravity = SIMD2(gravity.x, gravity.y) }
        return job
    }

    func makeJob() throws -> MistJob {
        var job = options
        if let gravityFile { job.gravityPerFrame = try MistJob.parseGravity(try FileIO.readText(gravityFile), name: gravityFile) }
        if let wipes { job.wipes = try MistJob.parseWipes(try FileIO.readText(wipes), name: wipes) }
        try job.validate()
        return job
    }

    /// The camera: one image, or the PNG files of a folder in name order (sizes checked up front).
    struct Camera: Sendable {
        var still: Image8?
        var files: [String] = []
        var width = 0, height = 0

        init(_ path: String) throws {
            if FileIO.isDirectory(path) {
                files = try listPNGs(path)
                guard !files.isEmpty else { throw GlintError("--input \(path): the folder holds no .png frames") }
                for f in files {
                    let (w, h) = try pngSize(f)
                    if width == 0 { (width, height) = (w, h) }
                    guard w == width && h == height else {
                        throw GlintError("--input \(path): \(f) is \(w)x\(h), the first frame \(width)x\(height); all frames must have one size")
                    }
                }
            } else {
                let image = try PNG.read(path)
                still = image
                (width, height) = (image.width, image.height)
            }
        }

        /// Frame f's camera image, or nil when it has not changed (a still camera after frame 0).
        func image(_ f: Int) throws -> Image8? {
            if let still { return f == 0 ? still : nil }
            if files.count == 1 && f > 0 { return nil }
            return try PNG.read(files[f % files.count])
        }
    }

    func run() async throws {
        try await reportingErrors(verbose: out.verbose) {
            png.apply()
            guard let output = outputFolder else { throw ValidationError("give the output folder with -o (e.g. -o frames)") }
            if isLive, let size { return try await runLive(output: output, size: size) }
            let frames = frameCount
            // With --shard: this shard's run of frames. A frame's fog and drops depend on every
            // frame before it, so the shard replays the sequence from frame 0 and writes its own.
            let job = try makeJob()
            let part = try shard.map {
                try FrameShard($0, command: "glint mist", frames: frames, fps: fps) { id in
                    id.add("job", job)
                    try id.addContents("camera", of: input)
                }
            }
            if try part?.claim(output, skipExisting: sharding.skipExisting, quiet: out.quiet) == false { return }
            let written = part?.frames ?? 0 ..< frames
            let camera = try Camera(input)
            if FileIO.isDirectory(output) && access(output, W_OK) != 0 { throw ValidationError("-o \(output): the folder is not writable") }
            let backend = try device.backend(for: .mist, work: Double(camera.width * camera.height), repeats: written.upperBound)
            let renderer = try MistRenderer(job: job, width: camera.width, height: camera.height, backend: backend)
            // The frames go to a staging folder inside -o and move into place only once all
            // are written: a failure (a damaged camera frame, a full disk) or a Ctrl-C leaves
            // the frames already there untouched.
            let staged = try StagedFolder(output)
            SequenceInterrupt.install()
            let bar = ProgressBar("mist", quiet: out.quiet)
            let start = Clock.now()
            var renderSeconds = 0.0
            // The frames' PNGs are encoded in the background, several at once, while the next
            // frames render (FramePipeline, as for --frames).
            let pipeline = FramePipeline(frameBytes: camera.width * camera.height * 4)
            do {
                for f in 0 ..< written.upperBound {
                    let image = try camera.image(f)
                    let t0 = Clock.now()
                    let frame = try await renderer.renderNext(camera: image)
                    renderSeconds += Clock.now() - t0
                    try SequenceInterrupt.check(output)
                    bar.update(Double(f + 1) / Double(written.upperBound))
                    guard written.contains(f) else { continue }
                    let name = frameName(f)
                    try pipeline.submit(bytes: frame.pixels.count) { try staged.write(name, PNG.encode(frame, alpha: false)) }
                }
                try pipeline.drain()
                if let part {
                    try staged.write(FrameShard.manifestName, part.manifest(device: backend, width: camera.width, height: camera.height, fps: fps))
                }
                try SequenceInterrupt.check(output)
                try staged.commit()
            } catch {
                // No write may still run when the staging folder goes.
                pipeline.cancel()
                bar.finish()
                staged.discard()
                throw error
            }
            bar.finish()
            if !out.quiet {
                let what = part.map { "shard \($0.shard): frames \(written.lowerBound)-\(written.upperBound - 1) of \(frames) (\(written.lowerBound) replayed)" }
                    ?? "\(frames) frame\(frames == 1 ? "" : "s")"
                var summary = RunSummary(wrote: "\(what) to \(output)/")
                for part in ["\(camera.width)x\(camera.height)", "sigma \(Format.short(sigma)) \(renderer.blurMethod.rawValue)", backend.label,
                             "\(fmt(Double(written.upperBound) / max(renderSeconds, 1e-9), 1)) frames/s rendered",
                             "\(fmt(Clock.now() - start, 2)) s in all"] { summary.add(part) }
                summary.kernels(renderer.kernelSeconds, on: backend)
                print(summary.line)
            }
        }
    }

    /// A live camera: raw RGBA frames on standard input, each the sharp camera image of the next
    /// frame. Each frame's PNG is written into `output` as soon as it is rendered (to a temporary
    /// name, then renamed: a program following the folder sees only whole frames), while the next
    /// frame is read and rendered. The input ending between frames ends the run; inside a frame,
    /// it is an error, and the frames already written stay.
    func runLive(output: String, size: ImageSize) async throws {
        let job = try makeJob()
        let reader = try RawFrameReader(fd: 0, width: size.width, height: size.height, name: "standard input")
        if isatty(0) != 0 {
            throw GlintError("--input -: standard input is a terminal; pipe raw RGBA frames into it (e.g. ffmpeg ... -pix_fmt rgba -f rawvideo - | glint mist --input - --size \(size) ...)")
        }
        if FileIO.isDirectory(output) && access(output, W_OK) != 0 { throw ValidationError("-o \(output): the folder is not writable") }
        // Live frames are renamed into place one by one, so a folder holding another sequence
        // would end up with frames of both.
        if FileIO.isDirectory(output), let old = try FileIO.folderEntries(output).filter(isFrameName).sorted().first {
            throw ValidationError("-o \(output) already holds frames (\(old), ...): a live run writes into a new or empty folder; remove them or give another -o")
        }
        // A live run's length is unknown: one frame's work, start-up counted once.
        let backend = try device.backend(for: .mist, work: Double(size.width * size.height))
        let renderer = try MistRenderer(job: job, width: size.width, height: size.height, backend: backend)
        Interrupt.install()
        let status = ProgressBar("mist", quiet: out.quiet)
        let limit = frameCount
        let start = Clock.now()
        var renderSeconds = 0.0
        var written = 0
        var pending: Task<Void, Error>?
        /// What the frames written so far are, for messages.
        func writtenText() -> String {
            switch written {
            case 0: return "no frames written"
            case 1: return "\(frameName(0)) is in \(output)/"
            default: return "\(frameName(0)) to \(frameName(written - 1)) are in \(output)/"
            }
        }
        do {
            reading: while written < limit && !Interrupt.requested {
                let image: Image8
                if let free = FileIO.freeBytes(output), free < Self.liveDiskReserve + UInt64(reader.frameBytes) {
                    try await pending?.value
                    throw GlintError("-o \(output): the disk has \(free >> 20) MiB free, under the \(Self.liveDiskReserve >> 20) MiB a live run leaves: stopped at frame \(written); \(writtenText())")
                }
                switch try reader.next(stop: { Interrupt.requested }) {
                case .frame(let frame): image = frame
                case .end: break reading
                case .truncated(let received):
                    // A producer stopped by the same Ctrl-C may stop inside a frame.
                    if Interrupt.requested { break reading }
                    try await pending?.value
                    throw GlintError("--input -: standard input ended inside frame \(written) (counting from 0): \(received) of \(reader.frameBytes) bytes (\(size) raw RGBA); \(writtenText())")
                }
                let t0 = Clock.now()
                let frame = try await renderer.renderNext(camera: image)
                renderSeconds += Clock.now() - t0
                // The previous frame's PNG was written while this one was read and rendered.
                try await pending?.value
                if written == 0 { try FileIO.makeDirectories(output) }
                let path = joinPath(output, frameName(written))
                pending = Task { try FileIO.writeAtomically(path, PNG.encode(frame, alpha: false)) }
                written += 1
                let elapsed = Clock.now() - start
                status.show("mist: frame \(written)\(frames.map { " of \($0)" } ?? "") from standard input, \(fmt(Double(written) / max(elapsed, 1e-9), 1)) frames/s")
            }
            try await pending?.value
            if written == 0 && !Interrupt.requested {
                throw GlintError("--input -: standard input held no frames (\(size) raw RGBA, \(reader.frameBytes) bytes a frame)")
            }
        } catch {
            _ = try? await pending?.value
            status.finish()
            throw error
        }
        status.finish()
        if Interrupt.requested {
            printError("interrupted: stopped after \(written) frame\(written == 1 ? "" : "s"); \(writtenText())")
            throw ExitCode(130)
        }
        if !out.quiet {
            let elapsed = Clock.now() - start
            var summary = RunSummary(wrote: "\(written) frame\(written == 1 ? "" : "s") to \(output)/")
            for part in ["\(size) from standard input", "sigma \(Format.short(sigma)) \(renderer.blurMethod.rawValue)", backend.label,
                         "\(fmt(Double(written) / max(renderSeconds, 1e-9), 1)) frames/s rendered",
                         "\(fmt(Double(written) / max(elapsed, 1e-9), 1)) frames/s in all", "\(fmt(elapsed, 2)) s"] { summary.add(part) }
            summary.kernels(renderer.kernelSeconds, on: backend)
            print(summary.line)
        }
    }
}

/// The .png files of a folder, sorted by name, as paths.
func listPNGs(_ dir: String) throws -> [String] {
    try FileIO.folderEntries(dir).filter { hasSuffix($0, ["png"]) && !$0.hasPrefix(".") }
        .map { joinPath(dir, $0) }
}

/// Width and height from a PNG's header, checked against the input limit (no pixels decoded).
func pngSize(_ path: String) throws -> (Int, Int) {
    let size = try PNG.size(path)
    return (size.width, size.height)
}

extension Mist {
    static var workload: any Workload.Type { MistWorkload.self }

    func comparisonConflict() -> String? {
        if sharding.shard != nil { return "mist: compare runs the whole sequence; drop --shard" }
        if isLive { return "mist: compare runs the sequence on each device and a pipe cannot be replayed; give --input a file or a folder" }
        return output != nil ? "mist: compare writes no frames; drop -o (the last frame is compared; use --diff or --json)" : nil
    }

    func comparisonTitle() throws -> String { "mist \(input) \(frameCount) frames, last frame" }

    func comparableJob() throws -> any ComparableJob {
        let camera = try Camera(input)
        return MistComparison(job: try makeJob(), width: camera.width, height: camera.height, camera: { try camera.image($0) })
    }
}
