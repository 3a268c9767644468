import ArgumentParser
import GlintCore
import GlintWorkloads

struct Blur: PassCommand {
    static let abstract = "Gaussian blur of an 8-bit PNG or a float PFM (RGBA), exact or constant-time."

    static let discussion = """
        exact: the sampled Gaussian, separable, as OpenCV's cv2.GaussianBlur(img, (0,0), sigma) \
        computes it: kernel size round(sigma*6+1)|1 for 8-bit (round(sigma*8+1)|1 for float), \
        OpenCV's fixed-point arithmetic for 8-bit (results match cv2 within 1 level; see docs/BLUR-MIST.md). \
        Its cost grows with sigma.

        recursive: four box filters (running sums) per direction whose widths give the \
        Gaussian's variance: the same cost at any sigma. It is an approximation: against \
        exact, at most a few levels on hard edges and well under one level on average (docs/BLUR-MIST.md \
        gives the measured figures).

        auto (the default): exact up to sigma \(Format.short(BlurJob.autoRecursiveAbove)), recursive above.

        Borders: reflect101 (gfedcb|abcdefgh, OpenCV's default), clamp (aaa|abc), wrap, zero.
        The output has the input's kind: PNG in, PNG out (alpha kept if the input has any); PFM in, PFM out, \
        or with --bit-depth 16 a 16-bit PNG of the float result (linear light, gAMA 1.0, clamped to [0, 1]).

        Examples:
          glint blur photo.png -o soft.png --sigma 2
          glint blur photo.png -o mist.png --sigma 40 --method recursive
          glint blur hdr.pfm -o hdr-blur.pfm --sigma 8 --border clamp
          glint blur linear.pfm -o soft16.png --bit-depth 16 --sigma 3
          glint compare --a cpu --b opencl blur photo.png --sigma 10
        """

    @Argument(help: ArgumentHelp("The image to blur: .png (8-bit) or .pfm (float).", valueName: "input"))
    var input: String

    @Option(name: .shortAndLong, help: "Output file: .png for a PNG input, .pfm for a PFM input (.png with --bit-depth 16).")
    var output: String?

    @Option(name: .customLong("bit-depth"), parsing: .unconditional,
            help: ArgumentHelp("Bit depth of a PNG output: 8 or 16. (default: 8)",
                               discussion: "16 is for a .pfm input: the float blur written as a 16-bit linear-light PNG. An 8-bit PNG input blurs in 8-bit arithmetic, so it has no 16 bits to give."),
            transform: bitDepthValue)
    var bitDepth = 8

    @OptionGroup var pass: BlurStage

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Also time N more blurs (1 to \(Limits.repeatRuns.upperBound)) of the image with everything reused and print the median (for scripts/bench/bench-opencv.py).",
                               valueName: "N"),
            transform: wholeNumber("--repeat-runs", Limits.repeatRuns))
    var repeatRuns: Int?

    @OptionGroup var limits: InputLimitOptions
    @OptionGroup var sharding: ShardOptions
    @OptionGroup var device: DeviceOptions
    @OptionGroup var out: OutputOptions
    @OptionGroup var png: PNGOptions

    var isFloat: Bool { hasSuffix(input, ["pfm"]) }

    func validate() throws {
        guard hasSuffix(input, ["png", "pfm"]) else { throw ValidationError("\(input): the input must be a .png or .pfm file") }
        if let repeatRuns, !Limits.repeatRuns.contains(repeatRuns) {
            throw ValidationError("--repeat-runs must be between 1 and \(Limits.repeatRuns.upperBound), got \(repeatRuns)")
        }
        if bitDepth == 16 && !isFloat {
            throw ValidationError("--bit-depth 16 needs a .pfm input: an 8-bit PNG blurs in 8-bit arithmetic, so 16 bits would add no precision")
        }
        try sharding.checkPaths([output])
        if try sharding.resolved() != nil && repeatRuns != nil {
            throw ValidationError("--repeat-runs times whole blurs; it does not go with --shard")
        }
        if let output = outputFile {
            if bitDepth == 16 {
                guard hasSuffix(output, ["png"]) else { throw ValidationError("-o \(output): --bit-depth 16 writes a .png output") }
            } else {
                let want = isFloat ? "pfm" : "png"
                guard hasSuffix(output, [want]) else {
                    throw ValidationError("-o \(output): a .\(want) input gives a .\(want) output" + (isFloat ? " (or a 16-bit .png with --bit-depth 16)" : ""))
                }
            }
            try checkWritable(output, option: "-o")
        }
    }

    /// -o, {shard} replaced by the shard's number.
    var outputFile: String? { output.map { shardPath($0, shard) } }

    var job: BlurJob { pass.job }
    var sigma: Double { pass.sigma }
    var border: String { pass.border.rawValue }

    func run() async throws {
        try await reportingErrors(verbose: out.verbose) {
            png.apply()
            guard let output = outputFile else { throw ValidationError("give the output file with -o (e.g. -o blurred.png)") }
            // One image, then the process ends: it and its result may take huge pages (fewer page faults).
            LargeArrays.hugePages = true
            let picture: Picture = isFloat ? .float(try PFM.read(input)) : .bytes(try PNG.read(input))
            let size = picture.size
            // With --shard: this shard's band of rows as a tile for glint merge. Every row of a
            // blur depends on the rows around it (and, by the recursive method's running sums, on
            // every row above), so a shard blurs the whole picture and keeps its band.
            var tile: StillShard?
            if let shard {
                tile = try StillShard(shard, command: "glint blur", width: size.0, height: size.1) { id in
                    id.add("job", job)
                    id.add("bitDepth", fields: bitDepth)
                    switch picture {
                    case .float(let image): id.add("float", image)
                    case .bytes(let image): id.add("bytes", image)
                    }
                }
                if try tile?.claim([output], skipExisting: sharding.skipExisting, quiet: out.quiet) == false { return }
            }
            let format: PixelFormat = isFloat ? .f32 : .u8
            let backend = try device.backend(for: .blur, work: BlurPlan.autoWork(job, format: format, width: size.0, height: size.1),
                                             variant: BlurPlan.autoVariant(job, format: format))
            let wall: Double, kernels: Double, method: BlurMethod, sizeText: String, form: String?
            var timing: (wall: Double, kernel: Double)?
            var sharedMemory = false
            switch picture {
            case .float(let image):
                let r = try await BlurRenderer.blur(image, job, on: backend)
                if let tile {
                    let band = r.image.rows(tile.rows)
                    if bitDepth == 16 {
                        let png = try tile.png16(linear: band, device: backend)
                        try tile.place([output]) { try FileIO.writeAtomically(output, png) }
                    } else {
                        let outputs = OutputSet()
                        try tile.stage(PFM.encode(band), format: .pfm, to: output, device: backend, in: outputs)
                        try tile.place([output]) { try outputs.commit() }
                    }
                } else if bitDepth == 16 {
                    // PFM data is linear light, which is what a 16-bit PNG holds.
                    try FileIO.writeAtomically(output, PNG.encode16(linear: r.image, alpha: false))
                } else {
                    try PFM.write(r.image, to: output)
                }
                (wall, kernels, method, sizeText, form) = (r.wallSeconds, r.kernelSeconds, r.method, "\(image.width)x\(image.height)", r.kernelForm)
                if let repeatRuns {
                    let session = try BlurSession(plan: BlurPlan(job: job, format: .f32, width: image.width, height: image.height), backend: backend)
                    timing = try await session.time(image.pixels, runs: repeatRuns)
                    sharedMemory = session.sharesHostMemory
                }
            case .bytes(let image):
                let r = try await BlurRenderer.blur(image, job, on: backend)
                let alpha = stride(from: 3, to: image.pixels.count, by: 4).contains { image.pixels[$0] != 255 }
                if let tile {
                    let png = try tile.png(r.image.rows(tile.rows), alpha: alpha, device: backend)
                    try tile.place([output]) { try FileIO.writeAtomically(output, png) }
                } else {
                    try PNG.write(r.image, to: output, alpha: alpha)
                }
                (wall, kernels, method, sizeText, form) = (r.wallSeconds, r.kernelSeconds, r.method, "\(image.width)x\(image.height)", r.kernelForm)
                if let repeatRuns {
                    let session = try BlurSession(plan: BlurPlan(job: job, format: .u8, width: image.width, height: image.height), backend: backend)
                    timing = try await session.time(image.pixels, runs: repeatRuns)
                    sharedMemory = session.sharesHostMemory
                }
            }
            if !out.quiet {
                var summary = RunSummary(wrote: output)
                summary.size(sizeText, shard: tile)
                for part in ["sigma \(Format.short(sigma))", method.rawValue, border, backend.label, "\(fmt(wall * 1000, 2)) ms"] { summary.add(part) }
                summary.kernels(kernels, on: backend, places: 2)
                print(summary.line)
                if out.verbose, let form { print("blur kernels: \(form)") }
                if let timing, let repeatRuns {
                    var t = "repeated: median \(fmt(timing.wall * 1000, 3)) ms over \(repeatRuns) run\(repeatRuns == 1 ? "" : "s")"
                    if backend.isOpenCL {
                        t += ", kernels \(fmt(timing.kernel * 1000, 3)) ms"
                        t += sharedMemory ? ", no copies (the device works in host memory)" : ", writing the image and reading it back included"
                    }
                    print(t)
                }
            }
        }
    }
}

extension Blur {
    /// The input as read: a PFM's floats or a PNG's bytes.
    enum Picture {
        case float(ImageF)
        case bytes(Image8)

        var size: (Int, Int) {
            switch self {
            case .float(let image): (image.width, image.height)
            case .bytes(let image): (image.width, image.height)
            }
        }
    }

    static var workload: any Workload.Type { BlurWorkload.self }

    static func pass(_ options: [String]) throws -> any ChainPass {
        BlurPass(job: try Chain.parse(options, as: BlurStage.self, pass: workload.name).job)
    }

    func comparisonConflict() -> String? {
        if output != nil { return "blur: compare writes no image; drop -o (use --diff or --json)" }
        if bitDepth != 8 { return "blur: compare writes no image; drop --bit-depth" }
        if sharding.shard != nil { return "blur: compare runs the whole image; drop --shard" }
        return nil
    }

    func comparisonTitle() throws -> String { "blur \(input) sigma \(Format.short(sigma)) \(job.resolvedMethod.rawValue) \(border)" }

    func comparableJob() throws -> any ComparableJob {
        isFloat ? BlurComparison.float(job, try PFM.read(input)) : .eightBit(job, try PNG.read(input))
    }
}
