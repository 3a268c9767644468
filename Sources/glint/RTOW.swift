import ArgumentParser
import GlintCore
import GlintWorkloads
#if canImport(Glibc)
import Glibc
#endif

struct RTOW: PassSource {
    static let abstract = "Ray Tracing in One Weekend: spheres of diffuse, metal and glass under the book's sky."

    static let discussion = """
        Scenes are SwiftRTOW's (all seen through the book cover's camera): ch8 (a diffuse \
        sphere), ch10 (diffuse, metal and a hollow glass sphere; the app's start scene) and \
        cover (chapter 13, the book cover: its small spheres are drawn from the counter-based \
        RNG under --seed, so one seed is always one scene), or a JSON scene file (docs/RTOW.md, \
        "Scene files"). Glass does not tint: SwiftRTOW attenuates glass by (1, 1, 1.1), which \
        adds energy; --app-glass reproduces that.

        The camera is the book's thin lens: --lookfrom, --lookat, --vup, --vfov, \
        --aperture (lens diameter; 0 is a pinhole) and --focus-dist. The app's gestures \
        are parameters, applied in this order after them (angles in degrees):
          --orbit LON,LAT   move around the look-at point; latitude within +-89.999
          --distance F      eye = lookat + F*(eye - lookat), F clamped to 0.314...2.718
                            per gesture; repeat the option for more gestures
          --turn YAW,PITCH  turn on the spot (positive: left, up)
          --roll DEG        roll about the viewing direction, within +-63
        LON and YAW turn counter-clockwise seen from above (about --vup).

        Rendering is progressive: passes of a few samples per pixel add to per-pixel sums in \
        sample order, so a render stopped and resumed (--checkpoint, --resume) equals an \
        uninterrupted one bit for bit on the same backend. The PNG is gamma 2 like the book's; \
        --bit-depth 16 makes it a 16-bit PNG of the linear sums instead (linear light, gAMA 1.0, \
        clamped to [0, 1]) and --pfm writes the linear float image. With --checkpoint, Ctrl-C stops after the current \
        pass and saves the checkpoint (a second Ctrl-C quits at once).

        Examples:
          glint rtow --scene cover --spp 100 -o cover.png
          glint rtow --scene ch10 --size 600x400 --orbit 30,10 --aperture 0
          glint rtow --scene cover --distance 0.6 --turn 5,0 --roll 10 --vfov 30
          glint rtow --scene cover --spp 500 --checkpoint c.ckpt --partial 10
          glint rtow --scene cover --spp 1000 --resume c.ckpt --checkpoint c.ckpt
          glint rtow --scene my.json --pfm linear.pfm --device cpu
        """

    @Option(help: ArgumentHelp("ch8 | ch10 | cover | FILE.json (default: ch10)", valueName: "scene"), transform: SceneChoice.init(parsing:))
    var scene = SceneChoice.builtin("ch10")

    @Option(name: .shortAndLong, help: "Output PNG (gamma 2, 8-bit RGB; with --bit-depth 16, 16-bit linear RGB). (default: rtow.png; with --shard, rtow-shard-{shard}.png)")
    var output: String?

    @Option(name: .customLong("bit-depth"), parsing: .unconditional,
            help: ArgumentHelp("PNG bit depth: 8 or 16. (default: 8)",
                               discussion: "8 is the book's output: gamma 2, truncated to 8 bits. 16 writes the mean of the linear sums per pixel as 16-bit linear light (gAMA 1.0; values above 1 clip), rounded to the nearest of 65536 levels. One image only: not with --frames or --then."),
            transform: bitDepthValue)
    var bitDepth = 8

    @Option(help: "Also write the linear float image (mean radiance per pixel) as a PFM file.")
    var pfm: String?

    @Option(parsing: .unconditional, help: "Image size WxH (sides 1 to \(ImageLimits.maxSide)). (default: 1200x800)", transform: imageSize("--size"))
    var size = ImageSize(width: 1200, height: 800)

    @Option(parsing: .unconditional, help: "Samples per pixel (1 to \(RTJob.maxSamplesPerPixel)). (default: 50)",
            transform: wholeNumber("--spp", 1...RTJob.maxSamplesPerPixel))
    var spp = 50

    @Option(parsing: .unconditional, help: "Rays per sample at most (bounces + 1); the book's max_depth (1 to \(RTJob.depthLimit)). (default: 50)",
            transform: wholeNumber("--depth", 1...RTJob.depthLimit))
    var depth = 50

    @Option(parsing: .unconditional, help: "RNG seed: the cover scene's spheres and every sample's random numbers (0 to 2^64-1). (default: 0)",
            transform: seedNumber("--seed"))
    var seed: UInt64 = 0

    @Option(parsing: .unconditional, help: "Eye position X,Y,Z, each within +-1e9 (default: the scene's camera, for built-ins 13,2,3).",
            transform: numbers("--lookfrom", count: 3, Limits.cameraCoordinate, example: "13,2,3"))
    var lookfrom: String?

    @Option(parsing: .unconditional, help: "Point looked at X,Y,Z (built-ins: 0,0,0).",
            transform: numbers("--lookat", count: 3, Limits.cameraCoordinate, example: "0,0,0"))
    var lookat: String?

    @Option(parsing: .unconditional, help: "Up direction X,Y,Z (built-ins: 0,1,0).",
            transform: numbers("--vup", count: 3, Limits.cameraCoordinate, example: "0,1,0"))
    var vup: String?

    @Option(parsing: .unconditional, help: "Vertical field of view, degrees, strictly between 0 and 180 (built-ins: 20).",
            transform: number("--vfov", Limits.vfov))
    var vfov: Double?

    @Option(parsing: .unconditional, help: "Lens diameter; 0 is a pinhole (built-ins: 0.1).",
            transform: number("--aperture", Limits.aperture))
    var aperture: Double?

    @Option(name: .customLong("focus-dist"), parsing: .unconditional, help: "Distance to the plane in focus, above 0 (built-ins: 10).",
            transform: number("--focus-dist", Limits.focusDistance))
    var focusDist: Double?

    @Option(parsing: .unconditional, help: "Move the viewer around the look-at point: LON,LAT degrees (each within +-1e6).",
            transform: numberPair("--orbit", Limits.angle, example: "30,10"))
    var orbit: NumberPair?

    @Option(parsing: .unconditionalSingleValue, help: "Scale the viewer's distance to the look-at point (a factor above 0, clamped to 0.314...2.718 per step; repeatable).",
            transform: number("--distance", Limits.distanceFactor))
    var distance: [Double] = []

    @Option(parsing: .unconditional, help: "Turn the camera on the spot: YAW,PITCH degrees (each within +-1e6).",
            transform: numberPair("--turn", Limits.angle, example: "5,0"))
    var turn: NumberPair?

    @Option(parsing: .unconditional, help: "Roll about the viewing direction, degrees (-63...63).",
            transform: number("--roll", Limits.roll))
    var roll: Double?

    @Flag(name: .customLong("app-glass"), help: "Attenuate glass by (1, 1, 1.1) as SwiftRTOW does (default: (1, 1, 1)).")
    var appGlass = false

    @Option(parsing: .unconditional, help: "Write the current image to -o (and --pfm) every SECONDS while rendering (0.1 to 86400).",
            transform: number("--partial", Limits.partialSeconds))
    var partial: Double?

    @Option(help: "Save the accumulated samples to FILE (atomically) every --partial seconds (default 30) and at the end.")
    var checkpoint: String?

    @Option(help: "Continue the render saved in FILE (made by --checkpoint with the same scene and options).")
    var resume: String?

    @OptionGroup var animation: AnimationOptions
    @OptionGroup var sharding: ShardOptions
    @OptionGroup var device: DeviceOptions
    @OptionGroup var out: OutputOptions
    @OptionGroup var png: PNGOptions

    static let rampable = ["orbit"]

    func validate() throws {
        try animation.check(allowed: Self.rampable)
        for r in try animation.ramps(allowed: Self.rampable) {
            guard r.from.count == 2 else {
                throw ValidationError("--ramp orbit=LON,LAT:LON,LAT needs two pairs of degrees (e.g. orbit=0,0:360,0), got orbit=\(rampText(r))")
            }
            try checkRamp(r, Limits.angle)
        }
        if bitDepth == 16 && animation.isAnimation {
            throw ValidationError("--bit-depth 16 writes one 16-bit PNG; --frames writes 8-bit frames")
        }
        if bitDepth == 16 && !Chain.passes.isEmpty {
            throw ValidationError("--bit-depth 16 does not go with --then: the passes work on 8-bit images")
        }
        if animation.isAnimation && (checkpoint != nil || resume != nil || partial != nil || pfm != nil) {
            throw ValidationError("--frames renders a sequence; --checkpoint, --resume, --partial and --pfm are for one image")
        }
        // Each value was range-checked while parsing; here the camera they make together (for a
        // built-in scene: a scene file's camera is known once the file is read), at each end of
        // any orbit ramp.
        if case .builtin = scene {
            var orbits: [(Double, Double)?] = [nil]
            if let n = animation.frames, let r = try animation.ramps(allowed: Self.rampable).first {
                orbits = [0, n - 1].map { k in let v = r.value(frame: k, of: n); return (v[0], v[1]) }
            }
            for o in orbits {
                do { try makeJob(orbitOverride: o).validate() } catch let e as GlintError { throw e.usage }
            }
        }
        try sharding.checkPaths([output, pfm, checkpoint, resume])
        try sharding.check(height: size.height, frames: animation.frames, video: animation.video)
        if animation.isAnimation {
            try checkFrameFolder(frameFolder, option: "-o")
        } else {
            let output = outputFile
            guard hasSuffix(output, ["png"]) else { throw ValidationError("-o \(output): the output must be a .png file") }
            try checkWritable(output, option: "-o")
        }
        if let pfm = pfmFile {
            guard hasSuffix(pfm, ["pfm"]) else { throw ValidationError("--pfm \(pfm): must be a .pfm file") }
            try checkWritable(pfm, option: "--pfm")
        }
        if let checkpoint = checkpointFile { try checkWritable(checkpoint, option: "--checkpoint") }
    }

    /// The job; `orbitOverride` (an animation's ramped orbit) replaces --orbit.
    func makeJob(orbitOverride: (Double, Double)? = nil) throws -> RTJob {
        var s: RTScene
        switch scene {
        case .builtin(let name): s = RTScene.builtin(name, seed: seed) ?? RTScene.cover(seed: seed)
        case .file(let path): s = try RTScene.load(path)
        }
        if appGlass { s.useAppGlass() }
        var job = RTJob(scene: s)
        (job.width, job.height) = (size.width, size.height)
        job.samplesPerPixel = spp
        job.maxDepth = depth
        job.seed = seed
        job.camera = try camera(from: s.camera, orbitOverride: orbitOverride)
        return job
    }

    /// The camera options and gestures applied to `base` (the scene's own camera).
    func camera(from base: RTCamera, orbitOverride: (Double, Double)? = nil) throws -> RTCamera {
        var cam = base
        if let lookfrom { cam.lookfrom = try parseTriple(lookfrom, name: "--lookfrom") }
        if let lookat { cam.lookat = try parseTriple(lookat, name: "--lookat") }
        if let vup { cam.vup = try parseTriple(vup, name: "--vup") }
        if let vfov { cam.vfov = vfov }
        if let aperture { cam.aperture = aperture }
        if let focusDist { cam.focusDist = focusDist }
        // The gestures need a valid camera to act on.
        try cam.validate()
        if let (lon, lat) = orbitOverride ?? orbit.map({ ($0.x, $0.y) }) {
            cam.orbit(longitude: lon, latitude: lat)
        }
        for f in distance { cam.scaleDistance(f) }
        if let turn { cam.turn(yaw: turn.x, pitch: turn.y) }
        if let roll { cam.roll(roll) }
        return cam
    }

    /// Stages the PNG of `acc` (`image`: its gamma-2 bytes when already made) and the PFM of its
    /// mean radiance; with `tile`, as a shard's tiles.
    /// `complete` false: a snapshot or a stopped render, recorded so in a shard's tiles.
    static func stageImages(_ acc: RTAccumulation, image: Image8?, sixteen: Bool, output: String, pfm: String?,
                            tile: StillShard?, device: Backend, complete: Bool, in outputs: OutputSet) throws {
        if let tile {
            try outputs.stage(output, sixteen ? tile.png16(linear: acc.linearImage(), device: device, complete: complete)
                                              : tile.png(image ?? acc.gammaImage(), alpha: false, device: device, complete: complete))
            if let pfm { try tile.stage(PFM.encode(acc.linearImage()), format: .pfm, to: pfm, device: device, complete: complete, in: outputs) }
            return
        }
        try outputs.stage(output, sixteen ? png(acc, sixteen: true) : PNG.encode(image ?? acc.gammaImage(), alpha: false))
        if let pfm { try outputs.stage(pfm, PFM.encode(acc.linearImage())) }
    }

    /// The PNG of `acc`: the book's gamma-2 bytes, or (`sixteen`) 16-bit linear light from the sums.
    static func png(_ acc: RTAccumulation, sixteen: Bool) throws(GlintError) -> [UInt8] {
        sixteen ? try PNG.encode16(linear: acc.linearImage(), alpha: false) : try PNG.encode(acc.gammaImage(), alpha: false)
    }

    /// The output paths, {shard} replaced by the shard's number.
    var outputFile: String { shardPath(output ?? (shard == nil ? "rtow.png" : "rtow-shard-{shard}.png"), shard) }
    var pfmFile: String? { pfm.map { shardPath($0, shard) } }
    var checkpointFile: String? { checkpoint.map { shardPath($0, shard) } }
    var resumeFile: String? { resume.map { shardPath($0, shard) } }

    /// An animation's folder: -o, or for -o NAME.png, NAME-frames.
    var frameFolder: String {
        let output = outputFile
        return output.lowercased().hasSuffix(".png") ? String(output.dropLast(4)) + "-frames" : output
    }

    /// An animation: frame k renders with the ramped orbit; frames go to the -o folder.
    func runAnimation(frames n: Int) async throws {
        let ramps = try animation.ramps(allowed: Self.rampable)
        func orbit(_ k: Int) -> (Double, Double)? {
            ramps.first.map { r in let v = r.value(frame: k, of: n); return (v[0], v[1]) }
        }
        let first = try makeJob(orbitOverride: orbit(0))
        try first.validate()
        // The scene is built once: a frame differs from the first only in its camera.
        func job(_ k: Int) throws -> RTJob {
            var j = first
            j.camera = try camera(from: first.scene.camera, orbitOverride: orbit(k))
            try j.validate()
            return j
        }
        let folder = frameFolder
        // Frame 0's job, then each later frame's camera: all that a ramp moves.
        let part = try shard.map {
            try FrameShard($0, command: "glint rtow", frames: n, fps: animation.fps) { id in
                id.add("job", first)
                for k in 1 ..< n { id.add("camera", try camera(from: first.scene.camera, orbitOverride: orbit(k))) }
            }
        }
        if try part?.claim(folder, skipExisting: sharding.skipExisting, quiet: out.quiet) == false { return }
        let backend = try device.backend(for: .rtow, work: Double(first.width * first.height * first.samplesPerPixel), repeats: part?.frames.count ?? n)
        let sink = try FrameSink(folder: folder, video: animation.video, width: first.width, height: first.height, fps: animation.fps)
        let bar = ProgressBar("rtow", quiet: out.quiet)
        let start = Clock.now()
        let frames = part?.frames ?? 0 ..< n
        for k in frames {
            let done = Double(k - frames.lowerBound)
            let result = try await RTRenderer.render(try job(k), on: backend, progress: { p in bar.update((done + p.fraction) / Double(frames.count)) })
            try sink.write(result.image, frame: k)
        }
        try sink.finish(part, device: backend, width: first.width, height: first.height, fps: animation.fps)
        bar.finish()
        if !out.quiet {
            let wall = Clock.now() - start
            var summary = RunSummary(frames: n, shard: part, to: folder)
            for part in ["\(first.width)x\(first.height)", first.scene.name, backend.label, "\(fmt(wall, 2)) s"] { summary.add(part) }
            if let video = animation.video { summary.extend("; video \(video)") }
            print(summary.line)
        }
    }

    /// The render, then each `--then` pass; on OpenCL the image goes from the sums to the last
    /// pass in device buffers and is read back once.
    func runChain(_ job: RTJob) async throws {
        let backend = try device.backend(for: .rtow, work: Double(job.width * job.height * job.samplesPerPixel))
        let start = Clock.now()
        let (image, _) = try await Chain.run(width: job.width, height: job.height, on: backend,
                                             host: { try await RTRenderer.render(job, on: .cpu).image },
                                             device: { try RTRenderer.renderOnDevice(job, on: $0) })
        let output = outputFile
        try PNG.write(image, to: output, alpha: true)
        if !out.quiet {
            var summary = RunSummary(wrote: output)
            for part in ["\(image.width)x\(image.height)", "\(job.scene.name) then \(Chain.summary)", backend.label,
                         "\(fmt((Clock.now() - start) * 1000, 1)) ms"] { summary.add(part) }
            if backend.isOpenCL { summary.add("one read-back") }
            print(summary.line)
        }
    }

    func run() async throws {
        try await reportingErrors(verbose: out.verbose) {
            png.apply()
            if let n = animation.frames {
                if !Chain.passes.isEmpty { throw GlintError("--then passes apply to one image; they do not go with --frames") }
                try await runAnimation(frames: n)
                return
            }
            let job = try makeJob()
            try job.validate()
            if !Chain.passes.isEmpty {
                if checkpoint != nil || resume != nil || partial != nil || pfm != nil {
                    throw GlintError("--then passes take the finished image; drop --checkpoint, --resume, --partial and --pfm")
                }
                try await runChain(job)
                return
            }
            let output = outputFile, pfm = pfmFile, checkpoint = checkpointFile, verbose = out.verbose
            // With --shard: this shard's band of rows, written as tiles for glint merge (the
            // checkpoint holds the band's sums).
            let tile = try shard.map {
                try StillShard($0, command: "glint rtow", width: job.width, height: job.height) { id in
                    id.add("job", job)
                    id.add("bitDepth", fields: bitDepth)
                }
            }
            let tiles = [output] + (pfm.map { [$0] } ?? [])
            if try tile?.claim(tiles, skipExisting: sharding.skipExisting, quiet: out.quiet) == false { return }
            let resumed = try resumeFile.map { try RTAccumulation.read($0) }
            // The samples left to render: this shard's rows, less those a checkpoint holds.
            let samples = max(1, job.samplesPerPixel - (resumed?.samplesPerPixel ?? 0))
            let backend = try device.backend(for: .rtow, work: Double(job.width * (tile?.rows.count ?? job.height) * samples))
            let bar = ProgressBar("rtow", quiet: out.quiet)
            let sixteen = bitDepth == 16
            let device = backend
            var options = RTRenderer.Options(resume: resumed)
            options.rows = tile?.rows
            options.snapshotInterval = partial ?? (checkpoint != nil ? 30 : nil)
            let writesPartials = partial != nil
            // Each snapshot's files (partial PNG and PFM, checkpoint) are replaced together or
            // not at all, as are the final ones.
            options.snapshot = { acc in
                let outputs = OutputSet()
                if writesPartials {
                    try Self.stageImages(acc, image: nil, sixteen: sixteen, output: output, pfm: pfm, tile: tile, device: device, complete: false, in: outputs)
                }
                if let checkpoint { try outputs.stage(checkpoint, acc.encode()) }
                if let tile { try tile.place(tiles) { try outputs.commit() } } else { try outputs.commit() }
                if let checkpoint, verbose { bar.note("checkpoint \(checkpoint): \(acc.samplesPerPixel) samples per pixel") }
            }
            if checkpoint != nil {
                Interrupt.install()
                options.shouldStop = { Interrupt.requested }
            }
            let result = try await RTRenderer.render(job, on: backend, options: options, progress: { p in
                bar.update(p.fraction, detail: "\(p.samplesPerPixel)/\(p.targetSamplesPerPixel) spp  \(fmt(p.samplesPerSecond / 1e6, 2)) M samples/s")
            })
            bar.finish()
            let outputs = OutputSet()
            try Self.stageImages(result.accumulation, image: result.image, sixteen: sixteen, output: output, pfm: pfm, tile: tile,
                                 device: device, complete: !result.stoppedEarly, in: outputs)
            if let checkpoint { try outputs.stage(checkpoint, result.accumulation.encode()) }
            if let tile { try tile.place(tiles) { try outputs.commit() } } else { try outputs.commit() }
            if result.stoppedEarly {
                printError("interrupted at \(result.samplesPerPixel) of \(job.samplesPerPixel) samples per pixel: wrote \(output) and \(checkpoint ?? "?"); continue with --resume \(checkpoint ?? "?")")
                throw ExitCode(130)
            }
            if !out.quiet {
                var summary = RunSummary(wrote: output)
                summary.size("\(job.width)x\(job.height)", shard: tile)
                for part in [job.scene.name, backend.label, "\(result.samplesPerPixel) spp" + (resumed.map { " (\($0.samplesPerPixel) resumed)" } ?? ""),
                             "\(fmt(result.wallSeconds * 1000, 1)) ms"] { summary.add(part) }
                summary.kernels(result.kernelSeconds, on: backend)
                summary.add("\(fmt(result.samplesPerSecond / 1e6, 2)) M samples/s")
                print(summary.line)
                if verbose {
                    print("spheres \(job.scene.spheres.count), materials \(job.scene.materials.count), depth \(job.maxDepth), seed \(job.seed)")
                }
            }
        }
    }
}

/// `X,Y,Z`, e.g. 13,2,3.
func parseTriple(_ text: String, name: String) throws -> SIMD3<Double> {
    let parts = text.split(separator: ",", omittingEmptySubsequences: false)
    guard parts.count == 3, let x = Double(parts[0].trimmingCharacters()), let y = Double(parts[1].trimmingCharacters()),
          let z = Double(parts[2].trimmingCharacters()), x.isFinite, y.isFinite, z.isFinite else {
        throw ValidationError("\(name) '\(text)' is not three finite numbers X,Y,Z (e.g. 13,2,3)")
    }
    return SIMD3(x, y, z)
}

/// `--scene`: a built-in scene by name, or a JSON scene file.
enum SceneChoice: Sendable, CustomStringConvertible {
    case builtin(String)
    case file(String)

    init(parsing text: String) throws {
        if RTScene.builtin(text, seed: 0) != nil {
            self = .builtin(text.lowercased())
        } else if hasSuffix(text, ["json"]) {
            self = .file(text)
        } else {
            throw optionValueError("unknown scene '\(JSON.printable(text, limit: 40))': use \(RTScene.builtinNames.joined(separator: ", ")) or a FILE.json")
        }
    }

    var description: String {
        switch self {
        case .builtin(let name), .file(let name): name
        }
    }
}

extension RTOW {
    static var workload: any Workload.Type { RTWorkload.self }

    func comparisonConflict() -> String? {
        if pfm != nil || checkpoint != nil || resume != nil || partial != nil {
            return "rtow: compare renders in memory; drop --pfm, --checkpoint, --resume and --partial"
        }
        if bitDepth != 8 { return "rtow: compare writes no render; drop --bit-depth" }
        if sharding.shard != nil { return "rtow: compare runs the whole image; drop --shard" }
        if animation.isAnimation { return "rtow: compare runs one image; drop --frames" }
        return nil
    }

    func comparisonTitle() throws -> String { "rtow \(scene) \(size) spp \(spp)" }

    func comparableJob() throws -> any ComparableJob { try makeJob() }
}
