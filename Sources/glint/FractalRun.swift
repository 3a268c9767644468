import GlintCore
import GlintWorkloads

/// The ways glint fractal renders: one image, an animation, a chain of passes; and the steps
/// before them that search (--zoom-to, --iterations auto).
extension Fractal {
    /// --zoom-to: the view that frames the minibrot, or is centred on the Misiurewicz point, near
    /// the job's view (as glint locate finds them), with the iterations the locator suggests (100
    /// per step of a minibrot's period; a Misiurewicz point's from its multiplier) unless
    /// --iterations (or the location) sets them.
    func zoom(to target: ZoomTarget, _ job: inout FractalJob) throws {
        if let why = locateRefusal(job.formula) {
            throw GlintError("--zoom-to \(target.rawValue) renders mandelbrot only (any --power): \(why)")
        }
        let (re, im) = (job.exactCenter.re, job.exactCenter.im)
        let found: (center: DeepComplex, zoom: DeepNumber, iterations: Int, summary: String)
        switch target {
        case .minibrot:
            let m = try MinibrotLocator.locate(centerRe: re, centerIm: im, zoom: job.exactZoom, power: job.power)
            found = (DeepComplex(re: m.centerRe, im: m.centerIm), m.zoom, 100 * m.period,
                     "period \(m.period), size \(m.sizeMantissa)e\(m.sizeExponent10)")
        case .misiurewicz:
            let m = try MisiurewiczLocator.locate(centerRe: re, centerIm: im, zoom: job.exactZoom, power: job.power)
            found = (DeepComplex(re: m.re, im: m.im), m.zoom, m.iterations,
                     "preperiod \(m.preperiod), period \(m.period), multiplier \(m.multiplierText)")
        }
        job.exactCenter = found.center
        job.exactZoom = found.zoom
        if iterationsChoice == nil && fileView?.iterations == nil {
            job.maxIterations = max(job.maxIterations, min(FractalJob.maxIterationLimit, found.iterations))
        }
        if automaticPrecision { job.precision = Precision.automatic(for: job) }
        if !out.quiet {
            let iterations = autoIterations ? "iterations auto" : "\(job.maxIterations) iterations"
            writeStderr("zoom-to \(target.rawValue): \(found.summary), zoom \(found.zoom.plainText), \(iterations)\n")
        }
    }

    /// With --iterations auto, `job` with the limit its view needs (AutoIterations), probed on
    /// `backend` (an animation's) or the device --device picks for the probe, and said on stderr
    /// unless -q (above an animation's `bar`); else `job`.
    func resolvingIterations(_ job: FractalJob, frame: Int? = nil, on backend: Backend? = nil, bar: ProgressBar? = nil) async throws -> FractalJob {
        guard autoIterations else { return job }
        let probing = if let backend { backend } else { try await device.backend(forFractal: AutoIterations.probe(job)) }
        let choice = try await AutoIterations.choose(for: job, on: probing)
        if !out.quiet {
            let line = "iterations auto\(frame.map { " (frame \($0))" } ?? ""): \(choice.summary)"
            if let bar { bar.note(line) } else { writeStderr(line + "\n") }
        }
        var j = job
        j.maxIterations = choice.iterations
        return j
    }

    func runAnimation(_ job: FractalJob, frames n: Int) async throws {
        let ramps = try animation.fractalRamps()
        let part = try shard.map {
            try FrameShard($0, command: "glint fractal", frames: n, fps: animation.fps) { id in
                id.add("job", job)
                id.add("ramps", ramps)
                id.add("automatic", fields: automaticPrecision, autoIterations)
            }
        }
        if try part?.claim(outputFolder, skipExisting: sharding.skipExisting, quiet: out.quiet) == false { return }
        func frameJob(_ k: Int) -> FractalJob { ramps.job(job, frame: k, of: n, automaticPrecision: automaticPrecision) }
        for k in [0, n - 1] { try frameJob(k).validate() }
        // The deeper end of the ramp decides `auto` (a deep frame anywhere makes it a deep job).
        let ends = [0, n - 1].map { frameJob($0).autoKind }
        let backend: Backend
        if ends.contains(.fractalDeep) {
            backend = try device.backend(for: .fractalDeep)
        } else {
            // The frames' work as the middle frame's times their number (a calibrated auto weighs
            // it against OpenCL's start-up), in the frames' precision.
            let count = (part?.frames ?? 0 ..< n).count
            backend = try await device.backend(forFractal: frameJob(n / 2), frames: count)
        }
        let sink = try FrameSink(folder: outputFolder, video: animation.video, width: job.width, height: job.height, fps: animation.fps)
        let bar = ProgressBar("fractal", quiet: out.quiet)
        let start = Clock.now()
        let orbitsBefore = OrbitCache.shared.computed
        var kernels = 0.0
        let frames = part?.frames ?? 0 ..< n
        for k in frames {
            let frame = try await resolvingIterations(frameJob(k), frame: k, on: backend, bar: bar)
            let result = try await FractalRenderer.render(frame, on: backend)
            kernels += result.kernelSeconds
            // Each frame records its view, as a single render does: --location renders it again.
            try sink.write(result.image, frame: k, text: [FractalLocation(job: frame).textEntry])
            bar.update(Double(k + 1 - frames.lowerBound) / Double(frames.count))
        }
        try sink.finish(part, device: backend, width: job.width, height: job.height, fps: animation.fps)
        bar.finish()
        if !out.quiet {
            let wall = Clock.now() - start
            var summary = RunSummary(frames: n, shard: part, to: outputFolder)
            for part in ["\(job.width)x\(job.height)", job.formula.name, backend.label, "\(fmt(wall * 1000, 1)) ms",
                         "\(fmt(Double(frames.count) / wall, 1)) frames/s"] { summary.add(part) }
            // Perturbation frames at one centre and precision share one reference orbit.
            let orbits = OrbitCache.shared.computed - orbitsBefore
            summary.kernels(kernels, on: backend)
            if orbits > 0 { summary.add("\(orbits) reference orbit\(orbits == 1 ? "" : "s")") }
            if let video = animation.video { summary.extend("; video \(video)") }
            print(summary.line)
        }
    }

    /// The render, then each `--then` pass on the same backend: on OpenCL the image stays in
    /// device buffers from the fractal kernel to the last pass and is read back once.
    func runChain(_ job: FractalJob) async throws {
        let backend = try await device.backend(forFractal: job)
        let file = outputFile
        let start = Clock.now()
        let (image, kernels) = try await Chain.run(width: job.width, height: job.height, on: backend,
                                                   host: { try await FractalRenderer.render(job, on: .cpu).image },
                                                   device: { try FractalRenderer.renderOnDevice(job, on: $0) })
        try PNG.write(image, to: file, alpha: true, text: [FractalLocation(job: job).textEntry])
        if !out.quiet {
            var summary = RunSummary(wrote: file)
            for part in ["\(image.width)x\(image.height)", "\(job.formula.name) then \(Chain.summary)", backend.label,
                         "\(fmt((Clock.now() - start) * 1000, 1)) ms"] { summary.add(part) }
            summary.kernels(kernels, on: backend, suffix: ", one read-back")
            print(summary.line)
        }
    }

    /// An exp-map strip too deep for one PNG: its segments one after the other on one backend,
    /// written together or not at all.
    func renderSegments(_ job: FractalJob, _ segments: [(layout: ExpMapLayout, file: String)]) async throws {
        for (_, file) in segments { try checkWritable(file, option: "-o") }
        let backend = try await device.backend(forFractal: job)
        let bar = ProgressBar("fractal", quiet: out.quiet)
        let start = Clock.now()
        let outputs = OutputSet()
        let total = Double(segments.reduce(0) { $0 + $1.layout.rows })
        var done = 0, kernels = 0.0
        for (layout, file) in segments {
            var part = job
            (part.expMap, part.height) = (layout, layout.rows)
            let before = Double(done)
            let result = try await FractalRenderer.render(part, on: backend, progress: { bar.update((before + $0 * Double(layout.rows)) / total) })
            kernels += result.kernelSeconds
            try outputs.stage(file, PNG.encode(result.image, alpha: false, text: [ExpMapRecord.entry(job: part, layout: layout)]))
            done += layout.rows
        }
        try outputs.commit()
        bar.finish()
        if !out.quiet {
            let how = job.bla ? "perturbation" : "perturbation without BLA"
            var summary = RunSummary(wrote: "\(segments[0].file) to \(segments[segments.count - 1].file)")
            for part in ["\(segments.count) segments of \(job.width) columns, \(segments[0].layout.wholeRows) rows in all",
                         "\(job.formula.name), \(how)", backend.label, "\(fmt((Clock.now() - start) * 1000, 1)) ms"] { summary.add(part) }
            summary.kernels(kernels, on: backend)
            print(summary.line)
        }
    }

    /// One image (or with --shard its band), with its counts where asked: written together or not at all.
    func renderStill(_ job: FractalJob) async throws {
        let file = outputFile, countsFile = self.countsFile
        // With --shard: this shard's band of rows, written as tiles for glint merge.
        let tile = try shard.map {
            try StillShard($0, command: "glint fractal", width: job.width, height: job.height) { id in
                id.add("job", job)
                id.add("bitDepth", fields: bitDepth)
            }
        }
        if try tile?.claim([file] + (countsFile.map { [$0] } ?? []), skipExisting: sharding.skipExisting, quiet: out.quiet) == false { return }
        let backend = try await device.backend(forFractal: job, share: tile.map { Double($0.rows.count) / Double(job.height) } ?? 1)
        let bar = ProgressBar("fractal", quiet: out.quiet)
        // One image, then the process ends: its frame may take huge pages (fewer page faults).
        LargeArrays.hugePages = true
        let result = try await FractalRenderer.render(job, on: backend,
                                                      outputs: .init(counts: counts != nil, colour: bitDepth == 16, rows: tile?.rows,
                                                                     distance: distanceFile != nil),
                                                      progress: { bar.update($0) })
        bar.finish()
        // The image and the counts are replaced together or not at all.
        let outputs = OutputSet()
        // Each PNG records its view (a tEXt chunk, read back by --location); a strip its layout.
        let view = [job.expMap.map { ExpMapRecord.entry(job: job, layout: $0) } ?? FractalLocation(job: job).textEntry]
        if bitDepth == 16, let colour = result.colour {
            // The 16-bit PNG holds linear light: the palette's sRGB values decoded.
            if let tile {
                try outputs.stage(file, tile.png16(linear: colour.srgbToLinear(), text: view, device: backend))
            } else {
                try outputs.stage(file, PNG.encode16(linear: colour.srgbToLinear(), alpha: false, text: view))
            }
        } else if let tile {
            try outputs.stage(file, tile.png(result.image, alpha: false, text: view, device: backend))
        } else {
            try outputs.stage(file, PNG.encode(result.image, alpha: false, text: view))
        }
        if let countsFile, let values = result.counts {
            let pgm = PGM.encode16(width: job.width, height: result.image.height,
                                   values: values.map { UInt16(min($0, 65535)) }, maxValue: 65535)
            if let tile { try tile.stage(pgm, format: .pgm16, to: countsFile, device: backend, in: outputs) } else {
                try outputs.stage(countsFile, pgm)
            }
        }
        if let distanceFile, let values = result.distance {
            try outputs.stage(distanceFile, PFM.encodeGrey(width: job.width, height: result.image.height, values: values))
        }
        if let tile { try tile.place([file] + (countsFile.map { [$0] } ?? [])) { try outputs.commit() } } else { try outputs.commit() }
        if !out.quiet {
            let how = job.precision == .perturbation ? (job.bla ? ", perturbation" : ", perturbation without BLA") : ""
            var summary = RunSummary(wrote: file)
            summary.size("\(job.width)x\(job.height)", shard: tile)
            for part in [job.formula.name + how, backend.label, "\(fmt(result.wallSeconds * 1000, 1)) ms"] { summary.add(part) }
            summary.kernels(result.kernelSeconds, on: backend)
            print(summary.line)
        }
    }
}

extension FractalLocation {
    /// Locations already read, by path: a file is read once per run (the options are checked,
    /// then the job is built), and both see the same view.
    private static let cache = Locked<[String: Result<FractalLocation, GlintError>]>([:])

    /// The location in `path` (`FractalLocation(contentsOf:)`), read once per run. Errors are one
    /// line naming the file (`--location FILE: ...`).
    static func load(_ path: String) throws(GlintError) -> FractalLocation {
        if let known = cache.withLock({ $0[path] }) { return try known.get() }
        let result: Result<FractalLocation, GlintError>
        do throws(GlintError) { result = .success(try FractalLocation(contentsOf: path)) } catch {
            result = .failure(GlintError("--location \(path): \(error.message)"))
        }
        cache.withLock { $0[path] = result }
        return try result.get()
    }
}

/// Why the locators (glint locate, --zoom-to, /api/locate) do not search `formula`'s views, in a
/// line; nil for mandelbrot at every power, the one they search.
func locateRefusal(_ formula: FractalFormula) -> String? {
    switch formula {
    case .mandelbrot:
        nil
    case .julia, .sierpinskiJulia, .imageJulia:
        "\(formula.name)'s c is fixed, so its picture has no minibrots or Misiurewicz points of its own (they are points of Mandelbrot's c plane)"
    case .burningShip:
        "burning-ship takes |re| and |im| at each step, so it is not holomorphic and the complex Newton's method the search rests on does not apply"
    }
}
