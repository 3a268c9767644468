import ArgumentParser
import GlintCore
import GlintWorkloads

struct Iso: PassCommand {
    static let abstract = "Turn an image isometric: rotate 45 degrees, halve the height, and extrude its two front sides."

    static let discussion = """
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
        """

    @Argument(help: "Input PNG.")
    var input: String

    @Option(name: .shortAndLong, help: "Output PNG (default: <input>-iso.png).")
    var output: String?

    @OptionGroup var pass: IsoStage

    @OptionGroup var limits: InputLimitOptions
    @OptionGroup var sharding: ShardOptions
    @OptionGroup var device: DeviceOptions
    @OptionGroup var out: OutputOptions
    @OptionGroup var png: PNGOptions

    /// -o, or <input>-iso.png (with --shard <input>-iso-shard-{shard}.png); {shard} becomes the shard's number.
    var outputPath: String {
        if let output { return shardPath(output, shard) }
        let base = hasSuffix(input, ["png"]) ? String(input.dropLast(4)) : input
        return shardPath(base + (shard == nil ? "-iso.png" : "-iso-shard-{shard}.png"), shard)
    }

    func validate() throws {
        _ = try sharding.resolved()
        try sharding.checkPaths([output])
        guard hasSuffix(outputPath, ["png"]) else { throw ValidationError("-o \(outputPath): the output must be a .png file") }
        try checkWritable(outputPath, option: "-o")
        // The corner radius against the input's size, from its header (an unreadable input is
        // reported when the work starts, as a failure rather than a usage error).
        if let (w, h) = try? pngSize(input) {
            do { try pass.settings.reapplied(to: nil, width: w, height: h).validate() } catch { throw error.usage }
        }
    }

    func makeJob() throws -> IsoJob {
        let image = try PNG.read(input)
        let job = pass.settings.reapplied(to: image, width: image.width, height: image.height)
        try job.validate()
        return job
    }

    func run() async throws {
        try await reportingErrors(verbose: out.verbose) {
            png.apply()
            let job = try makeJob()
            let (w, h) = job.canvasSize
            // With --shard: this shard's band of the canvas's rows, as a tile for glint merge.
            let tile = try shard.map { try StillShard($0, command: "glint iso", width: w, height: h) { $0.add("job", job) } }
            if try tile?.claim([outputPath], skipExisting: sharding.skipExisting, quiet: out.quiet) == false { return }
            let backend = try device.backend(for: .iso, work: job.calibrationWork * (tile.map { Double($0.rows.count) / Double(h) } ?? 1))
            let bar = ProgressBar("iso", quiet: out.quiet)
            // One image, then the process ends: its canvas may take huge pages (fewer page faults).
            LargeArrays.hugePages = true
            let result = try await IsoRenderer.render(job, on: backend, rows: tile?.rows, progress: { bar.update($0) })
            bar.finish()
            if let tile {
                let png = try tile.png(result.image, alpha: true, device: backend)
                try tile.place([outputPath]) { try FileIO.writeAtomically(outputPath, png) }
            } else {
                try PNG.write(result.image, to: outputPath, alpha: true)
            }
            if !out.quiet {
                var summary = RunSummary(wrote: outputPath)
                summary.size("\(w)x\(h)", shard: tile)
                summary.add(backend.label)
                summary.add("\(fmt(result.wallSeconds * 1000, 1)) ms")
                summary.kernels(result.kernelSeconds, on: backend)
                print(summary.line)
            }
        }
    }
}

extension Iso {
    static var workload: any Workload.Type { IsoWorkload.self }

    static func pass(_ options: [String]) throws -> any ChainPass {
        let stage = try Chain.parse(options, as: IsoStage.self, pass: workload.name)
        return IsoPass(stage.settings)
    }

    func comparisonConflict() -> String? {
        if sharding.shard != nil { return "iso: compare runs the whole canvas; drop --shard" }
        return output != nil ? "iso: compare writes no render; drop -o (use --diff or --json)" : nil
    }

    func comparisonTitle() throws -> String { "iso \(input)" }

    func comparableJob() throws -> any ComparableJob { try makeJob() }
}
