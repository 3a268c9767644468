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

    @Option(parsing: .unconditional, help: "Extrusion depth in output pixels.")
    var depth = 20.0

    @Option(name: .customLong("corner-radius"), parsing: .unconditional, help: "Corner radius in input pixels (0: square corners).")
    var cornerRadius = 0.0

    @Option(name: .customLong("ss"), help: "Anti-aliasing: N x N samples per output pixel (1 to 8).")
    var supersampling = 4

    @OptionGroup var device: DeviceOptions
    @OptionGroup var out: OutputOptions

    var outputPath: String {
        if let output { return output }
        let base = hasSuffix(input, ["png"]) ? String(input.dropLast(4)) : input
        return base + "-iso.png"
    }

    func validate() throws {
        guard depth.isFinite && depth >= 0 && depth <= 4096 else { throw ValidationError("--depth must be in [0, 4096] (got \(depth))") }
        guard cornerRadius.isFinite && cornerRadius >= 0 else { throw ValidationError("--corner-radius must be 0 or more (got \(cornerRadius))") }
        guard (1...8).contains(supersampling) else { throw ValidationError("--ss must be 1 to 8 (got \(supersampling))") }
        guard hasSuffix(outputPath, ["png"]) else { throw ValidationError("-o \(outputPath): the output must be a .png file") }
        try checkWritable(outputPath, option: "-o")
    }

    func makeJob() throws -> IsoJob {
        var job = IsoJob(source: try PNG.read(input))
        job.depth = depth
        job.cornerRadius = cornerRadius
        job.supersampling = supersampling
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
