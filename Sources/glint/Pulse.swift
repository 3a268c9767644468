import ArgumentParser
import GlintCore
import GlintWorkloads

struct Pulse: WorkloadCommand {
    static let abstract = "Render the pulse: a 60 Hz oscillator driving a colour's purity through HSV, as a PNG frame sequence."

    static let discussion = """
        The oscillator starts at 0.5 going up and moves by 0.01 per tick (60 ticks a second), \
        turning round at 1 and 0. Its position sweeps the purity over --purity-range around \
        --purity-center; a purity at or below 0.5 sets the saturation, above 0.5 the value (the \
        other stays 0.5), each folded as 2x below 0.5 and 2(1 - x) above; Foley's HSV to RGB \
        gives the colour. At 60 fps frame k shows the colour after k + 1 ticks; at other rates, \
        the ticks due by time k / fps, plus one.

        Frames are written as DIR/frame_00000.png, frame_00001.png, ...

        Examples:
          glint pulse -o pulse --frames 240
          glint pulse -o teal --frames 120 --hue 0.5 --purity-center 0.6 --purity-range 0.4 --size 1920x1080
        """

    @Option(name: .shortAndLong, help: "Output folder for the frames, created if missing (default: pulse).")
    var output: String?

    /// -o (default pulse, with --shard pulse-shard-{shard}); {shard} becomes the shard's number.
    var folder: String { shardPath(output ?? (shard == nil ? "pulse" : "pulse-shard-{shard}"), shard) }

    @Option(parsing: .unconditional, help: "Number of frames (1 to \(PulseJob.maxFrames)). (default: 120)",
            transform: wholeNumber("--frames", 1...PulseJob.maxFrames))
    var frames = 120

    @Option(parsing: .unconditional, help: "Frames per second of the sequence (\(Limits.fps.text); the oscillator ticks at 60 Hz whatever this is). (default: 60)",
            transform: number("--fps", Limits.fps))
    var fps = 60.0

    @Option(parsing: .unconditional, help: "Hue in [0, 1] (0 red, 1/3 green, 2/3 blue). (default: 0)", transform: number("--hue", Limits.unit))
    var hue = 0.0

    @Option(name: .customLong("purity-center"), parsing: .unconditional, help: "Purity at the oscillator's middle, in [0, 1]. (default: 0.5)",
            transform: number("--purity-center", Limits.unit))
    var purityCenter = 0.5

    @Option(name: .customLong("purity-range"), parsing: .unconditional, help: "Purity swept over one oscillation, in [0, 1]. (default: 0.7)",
            transform: number("--purity-range", Limits.unit))
    var purityRange = 0.7

    @Option(parsing: .unconditional, help: "Frame size WxH (sides 1 to \(ImageLimits.maxSide)). (default: 640x360)", transform: imageSize("--size"))
    var size = ImageSize(width: 640, height: 360)

    @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("Ramp the hue over the sequence: hue=FROM:TO (e.g. hue=0:1 walks the colour wheel once).",
                               valueName: "hue=from:to"))
    var ramp: [String] = []

    @Option(help: "Also encode the frames as a video (e.g. pulse.mp4) by piping them to ffmpeg.")
    var video: String?

    @OptionGroup var sharding: ShardOptions
    @OptionGroup var device: DeviceOptions
    @OptionGroup var out: OutputOptions
    @OptionGroup var png: PNGOptions

    func makeJob() throws -> PulseJob {
        var job = PulseJob()
        (job.width, job.height) = (size.width, size.height)
        job.frames = frames
        job.fps = fps
        job.hue = hue
        job.purityCenter = purityCenter
        job.purityRange = purityRange
        for text in ramp {
            let r: Ramp
            do { r = try Ramp(parsing: text) } catch { throw ValidationError(error.message) }
            guard r.name == "hue", r.from.count == 1, Limits.unit.contains(r.from[0]), Limits.unit.contains(r.to[0]) else {
                throw ValidationError("--ramp values must be hue=FROM:TO, each between 0 and 1 (pulse ramps the hue only), got \(text)")
            }
            job.hueRamp = (r.from[0], r.to[0])
        }
        do { try job.validate() } catch { throw error.usage }
        return job
    }

    func validate() throws {
        let job = try makeJob()
        try sharding.checkPaths([output])
        if let shard = try sharding.resolved() {
            if video != nil { throw ValidationError("--video with --shard: each shard writes its frames; encode the video with glint merge --video") }
            do { _ = try shard.frames(of: job.frames) } catch { throw ValidationError(error.message) }
        }
        if let video { try checkWritable(video, option: "--video") }
        if FileIO.exists(folder) && !FileIO.isDirectory(folder) {
            throw ValidationError("-o \(folder) is a file; give a folder for the frames")
        }
    }

    func run() async throws {
        try await reportingErrors(verbose: out.verbose) {
            png.apply()
            let job = try makeJob()
            let output = folder
            let part = try shard.map { try FrameShard($0, command: "glint pulse", frames: job.frames, fps: job.fps) { $0.add("job", job) } }
            if try part?.claim(output, skipExisting: sharding.skipExisting, quiet: out.quiet) == false { return }
            let frames = part?.frames ?? 0 ..< job.frames
            let backend = try device.backend(for: .pulse, work: Double(job.width * job.height), repeats: frames.count)
            let sink = try FrameSink(folder: output, video: video, width: job.width, height: job.height, fps: job.fps)
            let bar = ProgressBar("pulse", quiet: out.quiet)
            let start = Clock.now()
            var kernel = 0.0
            try PulseRenderer.renderSequence(job, on: backend, frames: frames) { k, image, seconds in
                kernel += seconds
                try sink.write(image, frame: k)
                bar.update(Double(k + 1 - frames.lowerBound) / Double(frames.count))
            }
            try sink.finish(part, device: backend, width: job.width, height: job.height, fps: job.fps)
            bar.finish()
            if !out.quiet {
                let wall = Clock.now() - start
                var summary = RunSummary(frames: job.frames, shard: part, to: output)
                summary.add("\(job.width)x\(job.height)")
                summary.add(backend.label)
                summary.add("\(fmt(wall * 1000, 1)) ms")
                summary.kernels(kernel, on: backend, places: 2)
                print(summary.line)
            }
        }
    }
}

extension Pulse {
    static var workload: any Workload.Type { PulseWorkload.self }

    func comparisonConflict() -> String? {
        if sharding.shard != nil { return "pulse: compare runs the whole sequence; drop --shard" }
        return output != nil ? "pulse: compare writes no frames; drop -o (use --diff or --json)" : nil
    }

    func comparisonTitle() throws -> String { "pulse \(size), frame \(frames - 1)" }

    /// The sequence's last frame is compared.
    func comparableJob() throws -> any ComparableJob { try makeJob() }
}

/// `frame_00042.png`: five digits, more when the count needs them.
/// Whether a file name is a frame's, as `frameName` writes them.
func isFrameName(_ name: String) -> Bool {
    guard name.hasPrefix("frame_"), name.hasSuffix(".png") else { return false }
    let digits = name.dropFirst(6).dropLast(4)
    return digits.count >= 5 && digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber)
}

func frameName(_ k: Int) -> String {
    var digits = String(k)
    while digits.count < 5 { digits = "0" + digits }
    return "frame_\(digits).png"
}
