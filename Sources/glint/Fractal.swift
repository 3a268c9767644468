import ArgumentParser
import GlintCore
import GlintWorkloads

struct Fractal: PassSource {
    static let abstract = "Render an escape-time fractal: mandelbrot, julia, burning-ship, sierpinski-julia or image-julia."

    static let discussion = """
        The view: at --zoom 1 the image height spans 2 units of the complex plane, the width \
        follows the aspect ratio, and pixel (px, py) samples its centre with row 0 at the top:
          re = cx + (px + 0.5 - W/2)*s,  im = cy - (py + 0.5 - H/2)*s,  s = 2/(zoom*H)
        Mandelbrot starts each orbit at z = c (as the tutorial does); Julia-type formulas start at \
        the pixel and add --c. Burning Ship takes abs() after adding c. Sierpinski Julia is \
        z^2 + 0.5*c/z^2. image-julia samples --texture at z each step (texture coordinates, v up, \
        nothing outside [0.01, 0.99]) and stops on alpha > 0.1; samples never stopped are grey (it/80).

        Deep zoom (mandelbrot, julia, burning-ship), to 1e1000 and far beyond: --center, --zoom \
        and --c take decimals of any length; past double precision each sample is iterated as a \
        small delta from a reference orbit of the centre computed in arbitrary precision (MPFR), \
        with rebasing and an exponent of its own while it is tiny; mandelbrot also skips \
        iterations by bilinear approximation (--precision, --no-bla). --location reads a Glint \
        PNG or a .kfr file. Zoom animations go to any depth: each frame's zoom and centre are \
        exact decimals, and mandelbrot frames at one centre share its reference orbit.

        Escape counts are identical on every backend; colours agree within 1 (8-bit), within \
        2 of 65535 with --bit-depth 16.

        Examples:
          glint fractal mandelbrot --size 1920x1080 -o m.png
          glint fractal mandelbrot --center -0.7435669,0.1314023 --zoom 2e4 --iterations 2000 --smooth --palette fire -o deep.png
          glint fractal mandelbrot --center -0.743643887037158704752191506114774,0.131825904205311970493132056385139 --zoom 1e25 --iterations 8000 --smooth -o deeper.png
          glint fractal julia --c -0.4,0.6 --ss 3 --palette rainbow --smooth -o j.png
          glint fractal image-julia --texture logo.png -o tex.png
          glint fractal mandelbrot --frames 120 --ramp zoom=1:1e4 --ramp center=-0.75,0:-0.7435669,0.1314023 --iterations 1500 -o zoom --video zoom.mp4
          glint fractal mandelbrot --frames 600 --ramp zoom=1:1e30 --center -0.743643887037158704752191506114774,0.131825904205311970493132056385139 --iterations 12000 -o dive
          glint fractal --location dive/frame_00300.png --size 3840x2160 -o frame300.png
          glint fractal julia --frames 60 --ramp c=-0.8,0.156:-0.7,0.27 -o julia-frames
          glint fractal --location deeper.png --size 3840x2160 -o poster.png
          glint fractal --location deeper.png --print-location > deeper.kfr
        """

    @Argument(help: ArgumentHelp("mandelbrot | julia | burning-ship | sierpinski-julia | image-julia (with --location: the file's, else mandelbrot)",
                                 valueName: "formula"),
              transform: choice("formula", FractalFormula.allCases, name: { $0.name }))
    var formulaArgument: FractalFormula?

    @Option(name: .shortAndLong, help: "Output PNG (default: <formula>.png).")
    var output: String?

    @Option(name: .customLong("size"), parsing: .unconditional,
            help: ArgumentHelp("Image size WxH (sides 1 to \(ImageLimits.maxSide)). (default: 1200x800)", valueName: "size"),
            transform: imageSize("--size"))
    var sizeOption: ImageSize?

    @Option(name: .customLong("center"), parsing: .unconditional,
            help: ArgumentHelp("View centre X,Y in the complex plane, each within +-1e9 (default: the formula's whole-set view).", valueName: "center"),
            transform: complexNumber("--center", Limits.planeCoordinate, example: "-0.75,0.1"))
    var centerOption: DeepComplex?

    @Option(name: .customLong("zoom"), parsing: .unconditional,
            help: ArgumentHelp("Zoom: at 1 the image height spans 2 units; any positive decimal, e.g. 2e4 or 1e100 (at least 1e-9). (default: 1)",
                               discussion: "Past double precision the render switches to perturbation (see --precision); --center then takes as many digits as the zoom needs.",
                               valueName: "zoom"),
            transform: zoomValue)
    var zoomOption: DeepNumber?

    @Option(name: .customLong("iterations"), parsing: .unconditional,
            help: ArgumentHelp("Iteration limit; points that never escape get this count (1 to \(FractalJob.maxIterationLimit)), or auto. (default: 128)",
                               discussion: autoIterationsHelp, valueName: "iterations"), transform: iterationsValue)
    var iterationsChoice: IterationsChoice?

    @Option(name: .customLong("power"), parsing: .unconditional,
            help: ArgumentHelp("Mandelbrot's power N: z^N + c (2 to \(FractalJob.maxPower)). (default: 2, or --location's)",
                               discussion: "The multibrots: N - 1 lobes around the centre. Every precision renders them, deep zoom (perturbation, with bilinear approximation) included.",
                               valueName: "n"),
            transform: wholeNumber("--power", 2...FractalJob.maxPower))
    var powerOption: Int?

    @Option(name: .customLong("color"),
            help: ArgumentHelp("Colouring: count (the palette at the escape count), de (grey by the distance estimate) or slope (the palette shaded by the slope). (default: count, or --location's)",
                               discussion: "de and slope carry the derivative dz/dc with z (mandelbrot, every power, and julia): de draws the boundary black, fading to white a few pixels out (distance d pixels: 1 - 1/(1 + d)); slope lights the set's surface as if it were a height field, from --light.",
                               valueName: "colouring"),
            transform: choice("--color", Colouring.allCases, name: { $0.rawValue }))
    var colorOption: Colouring?

    @Option(name: .customLong("light"), parsing: .unconditional,
            help: ArgumentHelp("Slope shading's light ANGLE,HEIGHT: its direction in degrees counter-clockwise from +re, and its height (0 to 100). (default: 45,1.5)",
                               valueName: "angle,height"),
            transform: numberPair("--light", .closed(-360, 360), example: "45,1.5"))
    var lightOption: NumberPair?

    @Option(name: .customLong("bailout"), parsing: .unconditional,
            help: ArgumentHelp("Escape radius R: a point has escaped when |z| > R (above 1, at most 1e9). (default: 2)", valueName: "bailout"),
            transform: number("--bailout", Limits.bailout))
    var bailoutOption: Double?

    @Option(name: .customLong("palette"),
            help: ArgumentHelp("Colour palette: tutorial (the tutorial's sin/cos colouring), grey, fire, ocean, rainbow. (default: tutorial)",
                               valueName: "palette"),
            transform: choice("--palette", Color.Palette.allCases, name: { $0.name }))
    var paletteOption: Color.Palette?

    @Flag(name: .customLong("smooth"), inversion: .prefixedNo,
          help: "Smooth (continuous) colouring instead of bands; a larger --bailout (e.g. 256) smooths better. (default: off, or --location's)")
    var smoothOption: Bool?

    @Option(name: .customLong("ss"), parsing: .unconditional,
            help: ArgumentHelp("Supersampling: N x N samples per pixel (1 to \(FractalJob.maxSupersampling)). (default: 1)", valueName: "ss"),
            transform: wholeNumber("--ss", 1...FractalJob.maxSupersampling))
    var supersamplingOption: Int?

    @Option(name: .customLong("precision"),
            help: ArgumentHelp("Pixel arithmetic: auto, float, double or perturbation. (default: auto)",
                               discussion: "auto takes the first that keeps neighbouring pixels apart at this zoom and centre: float, then double, then perturbation (every sample a small delta from a reference orbit of the centre computed in arbitrary precision with MPFR; mandelbrot at any depth, the delta carried with its own exponent while it is tiny and iterations skipped by bilinear approximation unless --no-bla; julia and burning-ship at any depth too, stepped one iteration at a time with an orbit of the critical point 0 to rebase onto, julia reading --c's digits at the orbit's precision). With --location, the precision the file records is kept while it still draws the view faithfully.",
                               valueName: "precision"),
            transform: choice("--precision", ["auto"] + Precision.allCases.map(\.rawValue), name: { $0 }))
    var precisionOption: String?

    @Option(name: .customLong("c"), parsing: .unconditional,
            help: ArgumentHelp("Julia constant RE,IM for julia, sierpinski-julia and image-julia (each within +-1e9). (default: -0.76,0.15)",
                               valueName: "c"),
            transform: complexNumber("--c", Limits.planeCoordinate, example: "-0.8,0.156"))
    var cOption: DeepComplex?

    @Option(help: ArgumentHelp("Start from the view recorded in FILE: a PNG glint wrote, or a Kalles Fraktaler .kfr location (its Re, Im, Zoom, Iterations). Options given on the command line override the file's.",
                               discussion: "Every PNG glint fractal writes records its view (formula, centre, c, zoom, iterations, bailout, palette, smooth, size, ss, precision) in a tEXt chunk.",
                               valueName: "file"))
    var location: String?

    @Flag(name: .customLong("print-location"),
          help: "Print the view (after --location and the options) as Kalles Fraktaler .kfr text (Re, Im, Zoom, Iterations) and exit without rendering.")
    var printLocation = false

    @Option(help: "Texture PNG for image-julia.")
    var texture: String?

    @Flag(name: .customLong("bla"), inversion: .prefixedNo,
          help: ArgumentHelp("Perturbation: skip iterations by bilinear approximation.",
                             discussion: "--no-bla iterates every step of every pixel: much slower at depth, for comparing the two. Escape counts can differ in a few pixels."))
    var bla = true

    @Flag(name: .customLong("no-skip"), help: "Iterate inside the main cardioid and period-2 bulb too (Mandelbrot; same pixels, slower).")
    var noSkip = false

    @Option(name: .customLong("zoom-to"),
            help: ArgumentHelp("Render instead the view that frames the minibrot nearest --center and --zoom, or the view centred on a Misiurewicz point near it at the same zoom (mandelbrot only, at its --power; as glint locate minibrot or misiurewicz finds them).",
                               valueName: "minibrot|misiurewicz"))
    var zoomTo: ZoomTarget?

    @Option(help: ArgumentHelp("Also write the raw escape counts at the pixel centres as a 16-bit binary PGM.",
                               discussion: "Maximum value 65535 whatever the limit; points that never escape hold the iteration limit; a count is the number of steps that stayed within the bailout, so points outside |z| <= R after the first step read 0. Counts above 65535 are clamped."))
    var counts: String?

    @Option(name: .customLong("exp-map"), parsing: .unconditional,
            help: ArgumentHelp("Render the zoom from 1 to --zoom at --center as an exponential-map strip of this many columns, for glint zoomvideo (mandelbrot, by perturbation; 8 to \(ExpMapLayout.maxColumns)).",
                               discussion: "Column x is the angle 2π(x + 0.5)/columns, row y the radius 4·2^(-(y + 0.5)/R) with R = columns·ln 2/(2π) rows an octave (square pixels in log-polar terms); the rows run 2^12 past 1/zoom. The PNG records the layout (a glint:expmap text chunk). A 1080p frame's rim needs about 6,900 columns for one strip pixel a frame pixel; 1024 or 2048 columns soften the outer frame a little. One PNG holds \(ImageLimits.maxSide) rows (1024 columns reach about 2^276, 256 columns 2^1150); a deeper strip is written as segments NAME-01.png, NAME-02.png, ... from -o NAME.png, consecutive ones sharing the 14 octaves one frame reads, which glint zoomvideo takes together. --color de and slope shade a strip too (distances in strip pixels).",
                               valueName: "columns"),
            transform: wholeNumber("--exp-map", 8...ExpMapLayout.maxColumns))
    var expMapColumns: Int?

    @Option(name: .customLong("segment-rows"), parsing: .unconditional,
            help: ArgumentHelp("With --exp-map, cut the strip into segments of this many rows (default: as many as one PNG holds).",
                               discussion: "Each segment is a strip PNG of its own (NAME-01.png, ...), smaller to hold and to move; it must be longer than the 14 octaves consecutive segments share (14·R + 3 rows)."),
            transform: wholeNumber("--segment-rows", 2...ImageLimits.maxSide))
    var segmentRows: Int?

    @Option(name: .customLong("de"),
            help: ArgumentHelp("Also write each pixel's distance estimate as a grey PFM, in pixels (mandelbrot and julia).",
                               discussion: "The mean over the pixel's escaping samples of |z| ln|z|^2 / |dz/dc|, in pixel spacings; 0 where no sample escapes. Raw data for colouring elsewhere; works with any --color.",
                               valueName: "file.pfm"))
    var distanceFile: String?

    @Option(name: .customLong("bit-depth"), parsing: .unconditional,
            help: ArgumentHelp("PNG bit depth: 8 or 16. (default: 8)",
                               discussion: "16 writes each pixel's colour before the 8-bit rounding as 16-bit linear light (the PNG says so: gAMA 1.0), decoded from the palette's sRGB values: the same picture with 257 times finer steps, which smooth colouring and supersampling fill. One image only: not with --frames or --then."),
            transform: bitDepthValue)
    var bitDepth = 8

    /// --iterations N (nil for auto or none given).
    var iterationsOption: Int? { if case .fixed(let n) = iterationsChoice { n } else { nil } }
    var autoIterations: Bool { iterationsChoice == .auto }

    @OptionGroup var animation: AnimationOptions
    @OptionGroup var sharding: ShardOptions
    @OptionGroup var limits: InputLimitOptions
    @OptionGroup var device: DeviceOptions
    @OptionGroup var out: OutputOptions
    @OptionGroup var png: PNGOptions

    static let rampable = ["zoom", "center", "c"]

    func validate() throws {
        // A --location that cannot be read is reported when the command runs (one line, exit 1),
        // before anything is rendered or written.
        if let location, (try? FractalLocation.load(location)) == nil { return }
        if formulaArgument == nil && location == nil {
            throw ValidationError("missing the formula: glint fractal \(FractalFormula.allCases.map(\.name).joined(separator: "|")) [options], or --location FILE (see 'glint fractal --help')")
        }
        if segmentRows != nil && expMapColumns == nil {
            throw ValidationError("--segment-rows cuts an exp-map strip: give --exp-map COLUMNS")
        }
        if expMapColumns != nil {
            if animation.isAnimation || shard != nil || !Chain.passes.isEmpty || counts != nil || distanceFile != nil
                || bitDepth == 16 || printLocation || zoomTo != nil || sizeOption != nil {
                throw ValidationError("--exp-map renders one strip, its size from the columns and the zoom: not with --size, --frames, --shard, --then, --counts, --de, --bit-depth 16, --zoom-to or --print-location")
            }
            if let p = precisionOption, p != "auto", p != Precision.perturbation.rawValue {
                throw ValidationError("--exp-map renders by perturbation (every row a zoom of its own): not with --precision \(p)")
            }
        }
        if printLocation && animation.isAnimation {
            throw ValidationError("--print-location prints one view; it does not go with --frames")
        }
        if printLocation && autoIterations {
            throw ValidationError("--iterations auto is found by rendering the view; --print-location renders nothing (give --iterations N)")
        }
        try animation.check(allowed: Self.rampable)
        let ramps = try animation.fractalRamps()
        if formula == .imageJulia && texture == nil && !printLocation {
            throw ValidationError("image-julia needs --texture FILE.png")
        }
        // The options together (the supersampled grid, the zoom's precision at the centre), at
        // each end of any ramp; the texture stands in (it is read when the work starts).
        var job = baseJob()
        if job.formula == .imageJulia { job.texture = Image8(width: 1, height: 1) }
        if let n = animation.frames, !ramps.isEmpty {
            for k in Set([0, n - 1]).sorted() {
                do { try ramps.job(job, frame: k, of: n, automaticPrecision: automaticPrecision).validate() } catch {
                    throw ValidationError("--ramp: frame \(k) of \(n): \(error.usage.message)")
                }
            }
        } else {
            do { try job.validate() } catch { throw error.usage }
        }
        // --print-location writes nothing: the outputs are not checked.
        if printLocation { return }
        if bitDepth == 16 && animation.isAnimation {
            throw ValidationError("--bit-depth 16 writes one 16-bit PNG; --frames writes 8-bit frames")
        }
        if bitDepth == 16 && !Chain.passes.isEmpty {
            throw ValidationError("--bit-depth 16 does not go with --then: the passes work on 8-bit images")
        }
        try sharding.checkPaths([output, counts])
        try sharding.check(height: size.height, frames: animation.frames, video: animation.video)
        if animation.isAnimation {
            if counts != nil { throw ValidationError("--counts writes one image's counts; it does not go with --frames") }
            try checkFrameFolder(outputFolder, option: "-o")
        } else {
            let file = outputFile
            guard hasSuffix(file, ["png"]) else { throw ValidationError("-o \(file): the output must be a .png file") }
            try checkWritable(file, option: "-o")
        }
        if let counts = countsFile {
            guard hasSuffix(counts, ["pgm"]) else { throw ValidationError("--counts \(counts): must be a .pgm file") }
            try checkWritable(counts, option: "--counts")
        }
        if let de = distanceFile {
            if animation.isAnimation || shard != nil || !Chain.passes.isEmpty {
                throw ValidationError("--de writes one whole image's distances: not with --frames, --shard or --then")
            }
            guard hasSuffix(de, ["pfm"]) else { throw ValidationError("--de \(de): must be a .pfm file") }
            try checkWritable(de, option: "--de")
        }
    }

    // MARK: The view: the command line's options over --location's, over the defaults

    /// The --location file's view: nil without --location, or when the file cannot be read
    /// (`loadLocation` says why).
    var fileView: FractalLocation? { location.flatMap { try? FractalLocation.load($0) } }

    /// Reads --location (once per run): a one-line error naming the file when it cannot.
    func loadLocation() throws(GlintError) {
        if let location { _ = try FractalLocation.load(location) }
    }

    var formula: FractalFormula { formulaArgument ?? fileView?.formula ?? .mandelbrot }
    var size: ImageSize { sizeOption ?? fileView?.size.map { ImageSize(width: $0.width, height: $0.height) } ?? ImageSize(width: 1200, height: 800) }
    /// Whether each job takes the precision it needs (--precision auto, or none given).
    var automaticPrecision: Bool { precisionOption == nil || precisionOption == "auto" }

    /// The options given over --location's view. --precision (auto too) replaces the file's.
    var view: FractalLocation {
        var v = FractalLocation()
        (v.formula, v.center, v.zoom, v.c) = (formulaArgument, centerOption, zoomOption, cOption)
        v.size = sizeOption.map { ($0.width, $0.height) }
        (v.iterations, v.bailout, v.palette) = (iterationsOption, bailoutOption, paletteOption)
        (v.smooth, v.supersampling) = (smoothOption, supersamplingOption)
        v.power = powerOption
        v.colouring = colorOption
        v.light = lightOption.map { ($0.x, $0.y) }
        v = v.over(fileView)
        if precisionOption != nil { v.precision = nil }
        return v
    }

    /// The job from the options, without the texture.
    func baseJob() -> FractalJob {
        var job = FractalJob(view: view, precision: precisionOption.flatMap(Precision.init(rawValue:)))
        job.skipInterior = !noSkip
        job.bla = bla
        return job
    }

    func makeJob() throws -> FractalJob {
        try loadLocation()
        var job = baseJob()
        if let texture {
            job.texture = try PNG.read(texture)
        }
        if let zoomTo { try zoom(to: zoomTo, &job) }
        if let columns = expMapColumns {
            // The strip: its size from the columns and the zoom, by perturbation at any depth.
            guard let log2Zoom = job.exactZoom.log2Magnitude, !job.exactZoom.isNegative else {
                throw GlintError(field: "zoom", "must be a positive number")
            }
            let layout = try ExpMapLayout.segments(columns: columns, zoomLog2: log2Zoom, segmentRows: segmentRows)[0]
            (job.expMap, job.width, job.height, job.precision) = (layout, layout.columns, layout.rows, .perturbation)
        }
        return job
    }

    /// The strip's segments for `job` (one: the whole strip), with the files they go to: -o
    /// itself for a whole strip, else NAME-01.png, NAME-02.png, ... beside it.
    func stripSegments(_ job: FractalJob) throws -> [(layout: ExpMapLayout, file: String)] {
        guard let columns = expMapColumns, let log2Zoom = job.exactZoom.log2Magnitude else { return [] }
        let layouts = try ExpMapLayout.segments(columns: columns, zoomLog2: log2Zoom, segmentRows: segmentRows)
        if layouts.count == 1 { return [(layouts[0], outputFile)] }
        let stem = String(outputFile.dropLast(4)), digits = max(2, String(layouts.count).count)
        return layouts.enumerated().map { k, layout in
            let number = String(k + 1)
            return (layout, stem + "-" + String(repeating: "0", count: digits - number.count) + number + ".png")
        }
    }

    /// -o, or a default; with --shard, {shard} in it becomes the shard's number.
    var outputFolder: String { shardPath(output ?? (shard == nil ? "\(formula.name)-frames" : "\(formula.name)-frames-shard-{shard}"), shard) }
    var outputFile: String { shardPath(output ?? (shard == nil ? "\(formula.name).png" : "\(formula.name)-shard-{shard}.png"), shard) }
    var countsFile: String? { counts.map { shardPath($0, shard) } }

    func run() async throws {
        try await reportingErrors(verbose: out.verbose) {
            png.apply()
            try loadLocation()
            if printLocation {
                print(FractalLocation(job: baseJob()).kfrText, terminator: "")
                return
            }
            let given = try makeJob()
            if let n = animation.frames {
                if !Chain.passes.isEmpty { throw GlintError("--then passes apply to one image; they do not go with --frames") }
                try await runAnimation(given, frames: n)
                return
            }
            try given.validate()
            let job = try await resolvingIterations(given)
            if expMapColumns != nil, case let segments = try stripSegments(job), segments.count > 1 {
                try await renderSegments(job, segments)
                return
            }
            if !Chain.passes.isEmpty {
                try await runChain(job)
                return
            }
            try await renderStill(job)
        }
    }
}

extension Fractal {
    static var workload: any Workload.Type { FractalWorkload.self }

    func comparisonConflict() -> String? {
        if output != nil || counts != nil { return "fractal: compare writes no render; drop -o/--counts (use --diff or --json)" }
        if sharding.shard != nil { return "fractal: compare runs the whole image; drop --shard" }
        if animation.isAnimation { return "fractal: compare runs one image; drop --frames" }
        if printLocation { return "fractal: compare renders; drop --print-location" }
        return nil
    }

    func comparisonTitle() throws -> String { "fractal \(formula.name) \(size)" + (bitDepth == 16 ? " 16-bit" : "") }

    func comparableJob() throws -> any ComparableJob {
        FractalComparison(job: try makeJob(), sixteenBit: bitDepth == 16, autoIterations: autoIterations)
    }
}

/// What --zoom-to finds and frames.
enum ZoomTarget: String, ExpressibleByArgument, CaseIterable {
    case minibrot
    case misiurewicz
}
