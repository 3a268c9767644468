import GlintCore

/// The escape-time fractals. Benchmark cases: float, double, smooth and supersampled renders.
/// Throughput is Giter/s: the escape-count sum over the median wall time. With cardioid/bulb
/// skipping the skipped points' iterations count as done (the picture is the same); the
/// no-skip case iterates every one.
public enum FractalWorkload: Workload {
    public static let name = "fractal"
    public static let parity = "escape counts identical, colours within 1 level (2 of 65535 at 16 bits)"

    struct Spec {
        var name: String
        let formula: FractalFormula
        var precision = Precision.float
        var iterations = 256
        var smooth = false
        var palette = Color.Palette.tutorial
        var bailout = 2.0
        var supersampling = 1
        var skip = true
        var center: (Double, Double)? = nil
        var zoom = 1.0
        /// A deep view: centre and zoom as decimal text (perturbation).
        var exactCenter: (re: String, im: String)? = nil
        var exactZoom: String? = nil
        var bla = true
        var colouring = Colouring.count
        /// An exp-map strip of this many columns instead of a view (the size from the zoom).
        var stripColumns: Int? = nil
    }

    /// Perturbation at zoom `zoom` into `point` (DeepLocations), with BLA or step by step
    /// (effective iterations: every step a sample takes counts, skipped or not).
    static func deep(_ label: String, _ point: DeepLocations.Point, _ zoom: String, iterations: Int, bla: Bool = true) -> Spec {
        Spec(name: "mandelbrot-deep-\(zoom)\(label)\(bla ? "" : "-nobla")", formula: .mandelbrot, precision: .perturbation,
             iterations: iterations, smooth: true, bailout: 2, exactCenter: point, exactZoom: zoom, bla: bla)
    }

    /// The deep cases: medians of about 33,200 iterations at 1e100 and 25,900 at 1e300 (the
    /// M(30,1) points by the cusp), step-by-step perturbation (`-nobla`) on smaller images of the
    /// same views for the BLA's speed-up in effective iterations per second, and 1e1000 at M(4,1)
    /// (counts about 8,110).
    static func deepCases(scale: Int) -> [BenchCase] {
        let (w, h) = (160 * scale, 120 * scale), (sw, sh) = (20 * scale, 15 * scale)
        return [make(deep("", DeepLocations.elephant30, "1e100", iterations: 50000), w, h),
                make(deep("", DeepLocations.elephant30, "1e100", iterations: 50000, bla: false), sw, sh),
                make(deep("", DeepLocations.elephant30b, "1e300", iterations: 50000), w, h),
                make(deep("", DeepLocations.elephant30b, "1e300", iterations: 50000, bla: false), sw, sh),
                make(deep("", DeepLocations.misiurewicz41, "1e1000", iterations: 10000), w, h),
                make(deepDistance, w, h),
                make(strip(columns: 16 * scale), 0, 0)]
    }

    /// An exp-map strip from zoom 1 to 1e300 at M(4,1) (`--exp-map`): rows from zoom 1 down to
    /// deltas in the tiny phase, every row a zoom of its own.
    static func strip(columns: Int) -> Spec {
        var s = deep("", DeepLocations.misiurewicz41, "1e300", iterations: 5000)
        (s.name, s.stripColumns) = ("mandelbrot-expmap-1e300", columns)
        return s
    }

    /// The 1e1000 case with the derivative carried (distance-estimate colouring).
    static var deepDistance: Spec {
        var s = deep("", DeepLocations.misiurewicz41, "1e1000", iterations: 10000)
        (s.name, s.colouring) = ("mandelbrot-deep-1e1000-de", .de)
        return s
    }

    public static func benchCases(_ kind: BenchSuiteKind) -> [BenchCase] {
        let standard: [Spec] = [
            Spec(name: "mandelbrot-float", formula: .mandelbrot),
            Spec(name: "mandelbrot-double", formula: .mandelbrot, precision: .double),
            Spec(name: "mandelbrot-smooth", formula: .mandelbrot, smooth: true, palette: .fire, bailout: 256),
            Spec(name: "julia-ss3", formula: .julia, supersampling: 3),
            Spec(name: "mandelbrot-de", formula: .mandelbrot, colouring: .de),
        ]
        switch kind {
        case .quick:
            return standard.map { make($0, 320, 240) } + [make(deep("", DeepLocations.elephant30, "1e100", iterations: 50000), 80, 60)]
        case .standard:
            return standard.map { make($0, 1920, 1080) }
                + deepCases(scale: 3)
        case .full:
            let heavy: [Spec] = [
                Spec(name: "mandelbrot-float-noskip", formula: .mandelbrot, skip: false),
                Spec(name: "burning-ship-float", formula: .burningShip),
                Spec(name: "mandelbrot-deep-double", formula: .mandelbrot, precision: .double, iterations: 2000,
                     smooth: true, palette: .ocean, bailout: 256, center: (-0.7435669, 0.1314023), zoom: 2e4),
            ]
            return (standard + heavy).map { make($0, 1920, 1080) } + standard.map { make($0, 3840, 2160) }
                + deepCases(scale: 4)
        case .device:
            return [deviceSized(Spec(name: "mandelbrot-float-noskip", formula: .mandelbrot, iterations: 1024, skip: false), step: 0)]
        }
    }

    /// The device-sized ladder: 1080p, 4K, 8K, then 8K with 4, 16 and 64 times the iterations.
    static func deviceSized(_ spec: Spec, step: Int) -> BenchCase {
        let sizes = [(1920, 1080), (3840, 2160), (7680, 4320)]
        var s = spec
        let (w, h) = sizes[min(step, sizes.count - 1)]
        if step >= sizes.count { s.iterations = spec.iterations << (2 * (step - sizes.count + 1)) }
        var c = make(s, w, h)
        if step < sizes.count + 2 { c.larger = { deviceSized(spec, step: step + 1) } }
        c.unsupported = { backend in backend.isOpenCL ? nil : "device-sized cases measure OpenCL devices" }
        return c
    }

    /// A float escape iteration's flops: x², y², xy (3 multiplies), x² − y² + cx and 2xy + cy
    /// (2 each), |z|² (1).
    static let flopsPerIteration = 8.0

    static func make(_ s: Spec, _ width: Int, _ height: Int) -> BenchCase {
        var job = FractalJob(formula: s.formula)
        job.width = width
        job.height = height
        job.maxIterations = s.iterations
        job.precision = s.precision
        job.smooth = s.smooth
        job.palette = s.palette
        job.bailout = s.bailout
        job.supersampling = s.supersampling
        job.skipInterior = s.skip
        if let c = s.center { (job.centerRe, job.centerIm) = c }
        job.zoom = s.zoom
        // DeepLocations' points and the deep zooms are plain decimals.
        if let c = s.exactCenter { job.exactCenter = DeepComplex(re: try! DeepNumber(parsing: c.re), im: try! DeepNumber(parsing: c.im)) }
        job.bla = s.bla
        job.colouring = s.colouring
        if let z = s.exactZoom { job.exactZoom = try! DeepNumber(parsing: z) }
        var (width, height) = (width, height)
        if let columns = s.stripColumns, let log2Zoom = job.exactZoom.log2Magnitude {
            let layout = try! ExpMapLayout(columns: columns, zoomLog2: log2Zoom)
            (job.expMap, job.width, job.height) = (layout, layout.columns, layout.rows)
            (width, height) = (layout.columns, layout.rows)
        }
        let frozen = job
        let parameters = JSON.object([
            ("formula", .string(s.formula.name)), ("precision", .string(s.precision.rawValue)),
            ("iterations", .int(Int64(s.iterations))), ("bailout", .number(s.bailout)),
            ("smooth", .bool(s.smooth)), ("palette", .string(s.palette.name)),
            ("supersampling", .int(Int64(s.supersampling))), ("skip_interior", .bool(s.skip)),
            ("center", .array([.number(job.centerRe), .number(job.centerIm)])),
            ("zoom", s.exactZoom.map { .string($0) } ?? .number(s.zoom)),
            ("center_digits", .int(Int64(s.exactCenter?.re.count ?? 0))),
            ("bla", .bool(s.bla)), ("color", .string(s.colouring.rawValue)),
        ])
        var c = BenchCase(
            workload: name, name: s.name, width: width, height: height, parameters: parameters,
            unit: .gigaIterations, autoKind: frozen.autoKind, autoDouble: frozen.precision == .double,
            // The image and the escape counts, the samples' counts and magnitudes (a strip of at
            // most FractalRenderer.stripSamples on OpenCL), and at depth the reference orbit (16
            // bytes an iteration) and the BLA table (under 30 bytes an iteration, BLATableTests).
            imageBytes: width * height * 8 + min(width * height * s.supersampling * s.supersampling, FractalRenderer.stripSamples) * 8
                + (s.precision == .perturbation ? s.iterations * 46 : 0),
            tolerance: "escape counts identical; colours within 1 level",
            unsupported: { backend in
                if s.precision != .float, case .opencl(let cc) = backend, !cc.supportsFP64 {
                    return "\(cc.deviceName) has no fp64"
                }
                return nil
            },
            run: { backend, detailed in
                forgetOrbit(frozen)
                let outputs = FractalRenderer.Outputs(counts: detailed, iterations: detailed)
                let r = try await FractalRenderer.render(frozen, on: backend, outputs: outputs)
                return BenchRun(wallSeconds: r.wallSeconds, kernelSeconds: r.kernelSeconds,
                                work: r.iterations.map { Double($0) },
                                output: detailed ? BenchOutput(image: r.image, counts: r.counts) : nil)
            },
            validate: { candidate, reference in
                try validateFractal(candidate, reference)
            },
            // Only where every counted iteration runs: interior skipping counts skipped points'
            // iterations as done, which no kernel time covers.
            peakWork: s.precision == .float && !s.skip
                ? BenchPeakWork(.flops(perWork: flopsPerIteration),
                                counted: "8 flops per escape iteration (x², y², xy; x² − y² + cx and 2xy + cy, 2 each; |z|²)")
                : nil)
        c.autoWork = frozen.calibrationWork
        return c
    }

    /// Drops `job`'s reference orbit from OrbitCache.shared, so that a timed perturbation render
    /// computes it, as a render in a fresh process does (a run after the first would otherwise
    /// find it cached).
    static func forgetOrbit(_ job: FractalJob) {
        guard job.precision == .perturbation else { return }
        let view = job.deepView()
        OrbitCache.shared.remove(.mandelbrot(centerRe: view.centerRe, centerIm: view.centerIm, zoom: view.zoom,
                                             bailout: view.bailout, power: job.power))
    }

    static func validateFractal(_ candidate: BenchOutput, _ reference: BenchOutput) throws -> BenchValidation {
        guard let a = candidate.counts, let b = reference.counts, let ia = candidate.image, let ib = reference.image else {
            throw GlintError("fractal validation needs counts and images from both runs")
        }
        let countsDiffering = zip(a, b).reduce(0) { $0 + ($1.0 == $1.1 ? 0 : 1) } + abs(a.count - b.count)
        let difference = try ImageCompare.compare(ia, ib)
        let colours = Tolerance.oneLevel.passes(difference)
        let summary = (countsDiffering == 0 ? "counts identical" : "\(countsDiffering) counts differ")
            + "; colours max \(Format.short(difference.overall.maxAbs)) level"
            + (difference.overall.maxAbs == 1 ? "" : "s")
            + ", PSNR " + (difference.overall.psnr.isFinite ? Format.fixed(difference.overall.psnr, 1) + " dB" : "inf")
        var metrics = difference.json
        if case .object(var fields) = metrics {
            fields.insert(("counts_differing", .int(Int64(countsDiffering))), at: 0)
            metrics = .object(fields)
        }
        return BenchValidation(passed: countsDiffering == 0 && colours, summary: summary, metrics: metrics)
    }
}

/// A fractal job as `glint compare` runs it: escape counts identical, colours within a level;
/// with `sixteenBit`, what a 16-bit PNG would hold (the linear colour rounded to 16 bits, as a
/// fraction of full scale) is compared instead of the 8-bit image.
public struct FractalComparison: ComparableJob {
    public var autoKind: AutoKind { job.autoKind }
    public var autoDouble: Bool { job.precision == .double }

    public var job: FractalJob
    public var sixteenBit: Bool
    /// `--iterations auto`: each run first finds the job's limit (AutoIterations) on its backend,
    /// in its time.
    public var autoIterations: Bool

    public init(job: FractalJob, sixteenBit: Bool, autoIterations: Bool = false) {
        (self.job, self.sixteenBit, self.autoIterations) = (job, sixteenBit, autoIterations)
    }

    public func comparisonRun(on backend: Backend, detailed: Bool) async throws -> ComparisonRun {
        // Each timed run computes its own reference orbit (the first backend does not pay for both).
        FractalWorkload.forgetOrbit(job)
        let start = Clock.now()
        var job = self.job
        if autoIterations { job.maxIterations = try await AutoIterations.choose(for: job, on: backend).iterations }
        let probeSeconds = Clock.now() - start
        let r = try await FractalRenderer.render(job, on: backend, outputs: .init(counts: detailed, colour: sixteenBit))
        let sixteen = r.colour.map { c in
            ImageF(width: c.width, height: c.height, pixels: c.srgbToLinear().to16Bit().map { Float($0) / 65535 })
        }
        return ComparisonRun(image: r.image, floatImage: sixteen, counts: r.counts, wallSeconds: probeSeconds + r.wallSeconds,
                             kernelSeconds: r.kernelSeconds, chosenIterations: autoIterations ? job.maxIterations : nil)
    }

    /// 8-bit colours within 1 level; 16-bit ones within 2 of 65535 (the palettes' sin, cos and
    /// log differ by a few ulps between glibc and a device).
    public var comparisonTolerance: Tolerance { sixteenBit ? Tolerance([.maxAbs(2.0 / 65535)]) : .oneLevel }
}
