import ArgumentParser
import GlintCore
import GlintWorkloads

struct Iso: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "iso",
        abstract: "Turn an image isometric: rotate 45 degrees, halve the height, and extrude its two front sides.",
        discussion: """
            The image is rotated 45 degrees about its centre, then its height is scaled by 0.5 about \
            the centre, on a transparent canvas sized to fit. The two front sides are extruded \
            --depth pixels straight down, carrying the edge colours: the front-left side (the \
            image's bottom edge) 0.05 darker, the front-right side (its right edge) 0.1 darker. \
            --corner-radius rounds the corners, the extrusion following them with its shade turning \
            smoothly from one side's to the other's. Edges are anti-aliased (--ss N x N samples a \
            pixel). Output: RGBA PNG, straight alpha.

            Examples:
              glint iso photo.png -o photo-iso.png
              glint iso card.png -o card-iso.png --depth 30 --corner-radius 24
            """)

    @Argument(help: "Input PNG.")
    var input: String

    @Option(name: .shortAndLong, help: "Output PNG (default: <input>-iso.png).")
    var output: String?

    @OptionGroup var pass: IsoStage

    @OptionGroup var limits: InputLimitOptions
    @OptionGroup var device: DeviceOptions
    @OptionGroup var out: OutputOptions

    var outputPath: String {
        if let output { return output }
        let base = hasSuffix(input, ["png"]) ? String(input.dropLast(4)) : input
        return base + "-iso.png"
    }

    func validate() throws {
        guard hasSuffix(outputPath, ["png"]) else { throw ValidationError("-o \(outputPath): the output must be a .png file") }
        try checkWritable(outputPath, option: "-o")
        // The corner radius against the input's size, from its header (an unreadable input is
        // reported when the work starts, as a failure rather than a usage error).
        if let (w, h) = try? pngSize(input) {
            var job = IsoJob(sourceWidth: w, sourceHeight: h)
            job.depth = pass.depth
            job.cornerRadius = pass.cornerRadius
            job.supersampling = pass.supersampling
            do { try job.validate() } catch { throw ValidationError(error.message) }
        }
    }

    func makeJob() throws -> IsoJob {
        var job = IsoJob(source: try PNG.read(input))
        job.depth = pass.depth
        job.cornerRadius = pass.cornerRadius
        job.supersampling = pass.supersampling
        try job.validate()
        return job
    }

    func run() async throws {
        try await reportingErrors(verbose: out.verbose) {
            let job = try makeJob()
            let backend = try device.backend()
            let bar = ProgressBar("iso", quiet: out.quiet)
            let result = try await IsoRenderer.render(job, on: backend, progress: { bar.update($0) })
            bar.finish()
            try PNG.write(result.image, to: outputPath, alpha: true)
            if !out.quiet {
                var line = "wrote \(outputPath) (\(result.image.width)x\(result.image.height), \(backend.label), \(fmt(result.wallSeconds * 1000, 1)) ms"
                if backend.isOpenCL { line += ", kernels \(fmt(result.kernelSeconds * 1000, 1)) ms" }
                print(line + ")")
            }
        }
    }
}
