import ArgumentParser
import GlintCore
import GlintWorkloads
#if canImport(Glibc)
import Glibc
#endif

/// `glint zoomvideo`: the frames of a zoom video assembled from an exponential-map strip
/// (`ExpMapStrip`), each one a resampling of the strip at its zoom.
struct ZoomVideo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zoomvideo",
        abstract: "Assemble the frames of a zoom video from an exponential-map strip (glint fractal --exp-map).",
        discussion: """
            A strip is a log-polar picture of a whole zoom: its columns go once round the centre \
            (counter-clockwise from +re), its rows go inwards, every R rows halving the radius \
            (R = columns x ln2 / 2pi, so its pixels are square). Any frame between the strip's \
            first and last zoom is the strip bent back into a disc, so a video of thousands of \
            frames costs one strip render and a quick resampling per frame. The strip's PNG \
            records its geometry and zooms (a glint:expmap text chunk); the zoom runs from its \
            first to its last zoom at constant speed (equal steps in log zoom).

            Resolution: a frame's rim, D pixels from its centre (D = half its diagonal), is \
            2pi x D pixels round; one strip column per frame pixel there needs 2pi x D columns \
            (about 6,900 for 1920x1080, 13,800 for 3840x2160). With W columns the picture is \
            sharp within W / 2pi pixels of the centre (163 for 1024) and softened by 2pi x D / W \
            at the rim (6.8 for 1024 columns at 1080p). Radially it is the same: at R rows an \
            octave a frame wants 0.69 x D rows an octave (763 at 1080p), which square pixels give \
            exactly when the columns suffice.

            Depth: one PNG holds at most \(ImageLimits.maxSide) rows, so glint fractal cuts a \
            strip that needs more (1024 columns past about 1e83, 1920 past 1e42) into segments, \
            strip-01.png, strip-02.png, ..., consecutive ones sharing the 14 octaves one frame \
            reads. Give them all (strip-*.png, in any order): each frame is assembled from the \
            segment that holds it, and one segment is decoded at a time.

            Frames are written as DIR/frame_00000.png, ... (-o), encoded as a video by ffmpeg \
            (--video), or both; nothing is written unless every frame is.

            Examples:
              glint fractal mandelbrot --center X,Y --zoom 1e60 --exp-map 1024 \\
                  --iterations 20000 -o strip.png
              glint zoomvideo strip.png --size 1920x1080 --seconds 60 --video zoom.mp4
              glint zoomvideo strip.png --size 640x360 --frames 240 -o frames
              glint zoomvideo strip-*.png --size 1920x1080 --seconds 90 --video deep.mp4
            """)

    @Argument(help: ArgumentHelp("The strip: a PNG from glint fractal --exp-map, or all the segments of one.", valueName: "strip.png"))
    var strips: [String]

    @Option(parsing: .unconditional, help: "Frame size WxH (sides 1 to \(ImageLimits.maxSide)).", transform: imageSize("--size"))
    var size: ImageSize

    @Option(parsing: .unconditional, help: "Frames per second (\(Limits.fps.text)). (default: 30)", transform: number("--fps", Limits.fps))
    var fps = 30.0

    @Option(parsing: .unconditional, help: "Length of the video in seconds (\(ZoomVideo.secondsRange.text)): round(fps x seconds) frames, at least 2.",
            transform: number("--seconds", ZoomVideo.secondsRange))
    var seconds: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Number of frames (2 to \(Limits.frames.upperBound)), instead of --seconds.", valueName: "n"),
            transform: wholeNumber("--frames", 2...Limits.frames.upperBound))
    var frames: Int?

    @Option(name: .shortAndLong, help: ArgumentHelp("Folder for the frames (frame_00000.png, ...), created if missing.", valueName: "folder"))
    var output: String?

    @Option(help: ArgumentHelp("Encode the frames as a video (e.g. zoom.mp4) by piping them to ffmpeg.", valueName: "file"))
    var video: String?

    @OptionGroup var limits: InputLimitOptions
    @OptionGroup var out: OutputOptions
    @OptionGroup var png: PNGOptions

    static let secondsRange = NumberRange.above(0, atMost: 1e6)

    /// The frame count: --frames, or round(fps x seconds).
    func frameCount() throws -> Int {
        if let frames { return frames }
        guard let seconds else { throw ValidationError("give the video's length: --seconds S or --frames N") }
        let n = (fps * seconds).rounded()
        guard n >= 2, n <= Double(Limits.frames.upperBound) else {
            throw ValidationError("--seconds \(numberText(seconds)) at --fps \(numberText(fps)) is \(numberText(n)) frames; a zoom video has 2 to \(Limits.frames.upperBound)")
        }
        return Int(n)
    }

    func validate() throws {
        if frames != nil && seconds != nil { throw ValidationError("give --seconds or --frames, not both") }
        _ = try frameCount()
        guard output != nil || video != nil else {
            throw ValidationError("say where the frames go: -o FOLDER for PNG frames, --video FILE.mp4, or both")
        }
        if let output { try checkFrameFolder(output, option: "-o") }
        if let video {
            try checkWritable(video, option: "--video")
            for strip in strips where FileIO.exists(strip) && canonical(video) == canonical(strip) {
                throw ValidationError("--video \(video) is the strip \(strip) itself: give the video another name")
            }
        }
    }

    private func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    func run() async throws {
        try await reportingErrors(verbose: out.verbose) {
            png.apply()
            let n = try frameCount()
            let sequence = try ExpMapSequence(paths: strips)
            let (w, h) = (size.width, size.height)
            if out.verbose { print(resolutionNote(sequence.first, width: w, height: h)) }
            let sink = try ZoomOutput(folder: output, video: video, width: w, height: h, fps: fps)
            let bar = ProgressBar("zoomvideo", quiet: out.quiet)
            let start = Clock.now()
            // Frames zoom in, so each segment is decoded once, when its first frame comes.
            var loaded = 0
            var frames = await ExpMapFrames(strip: try sequence.load(0), width: w, height: h)
            for k in 0..<n {
                let zoomLog2 = sequence.zoomLog2(frame: k, of: n)
                let part = sequence.part(zoomLog2: zoomLog2)
                if part != loaded {
                    frames = frames.reading(try sequence.load(part))
                    loaded = part
                }
                let image = await frames.frame(zoomLog2: zoomLog2)
                try sink.write(image, frame: k)
                bar.update(Double(k + 1) / Double(n))
            }
            try sink.finish()
            bar.finish()
            if !out.quiet {
                let wall = Clock.now() - start
                var summary = output.map { RunSummary(frames: n, shard: nil, to: $0) } ?? RunSummary(wrote: video ?? "")
                if output == nil { summary.add("\(n) frames") }
                let (r, parts) = (sequence.first, sequence.parts.count)
                let stripText = parts == 1 ? "strip \(r.columns)x\(r.rows)" : "strip of \(r.columns) columns in \(parts) segments"
                for part in ["\(w)x\(h)", stripText,
                             "zoom \(JSON.printable(r.zoomStart.text, limit: 24)) to \(JSON.printable(sequence.last.zoomEnd.text, limit: 24))",
                             "\(fmt(wall * 1000, 1)) ms", "\(fmt(Double(n) / wall, 1)) frames/s"] { summary.add(part) }
                if let video, output != nil { summary.extend("; video \(video)") }
                print(summary.line)
            }
        }
    }

    /// How sharp the frames can be from this strip (--verbose).
    func resolutionNote(_ record: ExpMapStrip.Record, width: Int, height: Int) -> String {
        let d = (Double(width * width + height * height)).squareRoot() / 2
        let wanted = 2 * Double.pi * d
        let columns = Double(record.columns)
        let sharp = columns / (2 * Double.pi)
        if columns >= wanted {
            return "strip: \(record.columns) columns, at least one a frame pixel to the rim (\(Int(wanted.rounded(.up))) needed)"
        }
        return "strip: \(record.columns) columns, sharp within \(Int(sharp)) pixels of the centre; the rim (\(Int(d)) pixels out) is \(fmt(wanted / columns, 1))x softer (\(Int(wanted.rounded(.up))) columns would be sharp to it)"
    }
}

/// Where zoomvideo's frames go: PNGs in a folder (with the video, if asked: `FrameSink`), or the
/// video alone, moved into place only once every frame is in it.
private enum ZoomOutput {
    case frames(FrameSink)
    case video(VideoEncoder)

    init(folder: String?, video: String?, width: Int, height: Int, fps: Double) throws {
        if let folder {
            self = .frames(try FrameSink(folder: folder, video: video, width: width, height: height, fps: fps))
        } else {
            self = .video(try VideoEncoder(path: video ?? "", width: width, height: height, fps: fps))
            Interrupt.install()
        }
    }

    func write(_ image: Image8, frame k: Int) throws {
        switch self {
        case .frames(let sink):
            try sink.write(image, frame: k)
        case .video(let encoder):
            if Interrupt.requested {
                printError("interrupted: no video written")
                throw ExitCode(130)
            }
            try encoder.append(image)
        }
    }

    func finish() throws {
        switch self {
        case .frames(let sink):
            try sink.finish()
        case .video(let encoder):
            try encoder.finish()
            try encoder.commit()
        }
    }
}
