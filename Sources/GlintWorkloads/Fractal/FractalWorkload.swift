import GlintCore

/// The escape-time fractals. Benchmark cases: float, double, smooth and supersampled renders.
/// Throughput is Giter/s: the escape-count sum over the median wall time. With cardioid/bulb
/// skipping the skipped points' iterations count as done (the picture is the same); the
/// no-skip case iterates every one.
public enum FractalWorkload: Workload {
    public static let name = "fractal"
    public static let parity = "escape counts identical, colours within 1 level (2 of 65535 at 16 bits)"

    struct Spec {
        let name: String
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
    }

    /// The Misiurewicz point M(4,1) to 345 digits (pre-periodic: every zoom into it shows
    /// filaments with a spread of counts), for the deep-zoom cases.
    static let misiurewicz = (
        re: "-0.101096363845622161025785445738622565463805442826253483876931177660780840740470584274821" +
            "219810516779033404531908556741193971546144260911882355703907680301615758418143435454482306" +
            "810666402941937826741189160781952644899539699533446682339312669900981755715042520653886699" +
            "186134433396160061056277538514425960956070356822164327995613303692671476037780",
        im: "0.9562865108091415007710960577299774358098333365105291700343143215005246590657167325269784" +
            "107873398072043444724926469284366752406567465722656200815719741551313831228054884443810571" +
            "677870203738395055477279309548311953190385170024877917670113105649462054553485859930615004" +
            "42739744776204598008597391597760386427667074404225333535432356685940471232746")

    /// Perturbation at zoom `zoom` into the Misiurewicz point: escape counts about 800 at 1e100
    /// and 2400 at 1e290 (effective iterations: every step a sample takes counts).
    static func deep(_ zoom: String, iterations: Int) -> Spec {
        Spec(name: "mandelbrot-perturbation-\(zoom)", formula: .mandelbrot, precision: .perturbation, iterations: iterations,
             smooth: true, bailout: 2, exactCenter: misiurewicz, exactZoom: zoom)
    }

    public static func benchCases(_ kind: BenchSuiteKind) -> [BenchCase] {
        let standard: [Spec] = [
            Spec(name: "mandelbrot-float", formula: .mandelbrot),
            Spec(name: "mandelbrot-double", formula: .mandelbrot, precision: .double),
            Spec(name: "mandelbrot-smooth", formula: .mandelbrot, smooth: true, palette: .fire, bailout: 256),
            Spec(name: "julia-ss3", formula: .julia, supersampling: 3),
        ]
        switch kind {
        case .quick:
            return standard.map { make($0, 320, 240) } + [make(deep("1e100", iterations: 5000), 160, 120)]
        case .standard:
            return standard.map { make($0, 1920, 1080) }
                + [make(deep("1e100", iterations: 5000), 480, 320), make(deep("1e290", iterations: 8000), 480, 320)]
        case .full:
            let heavy: [Spec] = [
                Spec(name: "mandelbrot-float-noskip", formula: .mandelbrot, skip: false),
                Spec(name: "burning-ship-float", formula: .burningShip),
                Spec(name: "mandelbrot-deep-double", formula: .mandelbrot, precision: .double, iterations: 2000,
                     smooth: true, palette: .ocean, bailout: 256, center: (-0.7435669, 0.1314023), zoom: 2e4),
            ]
            return (standard + heavy).map { make($0, 1920, 1080) } + standard.map { make($0, 3840, 2160) }
                + [make(deep("1e100", iterations: 5000), 960, 640), make(deep("1e290", iterations: 8000), 960, 640)]
        }
    }

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
        job.exactCenter = s.exactCenter
        if let z = s.exactZoom {
            job.exactZoom = z
            job.zoom = Double(z) ?? .infinity
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
        ])
        return BenchCase(
            workload: name, name: s.name, width: width, height: height, parameters: parameters,
            unit: .gigaIterations, tolerance: "escape counts identical; colours within 1 level",
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
            })
    }

    /// Drops `job`'s reference orbit from OrbitCache.shared, so that a timed perturbation render
    /// computes it, as a render in a fresh process does (a run after the first would otherwise
    /// find it cached).
    static func forgetOrbit(_ job: FractalJob) {
        guard job.precision == .perturbation, let view = try? job.deepView() else { return }
        OrbitCache.shared.remove(.mandelbrot(centerRe: view.centerRe, centerIm: view.centerIm, zoom: view.zoom,
                                             bailout: view.bailout))
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
    public var job: FractalJob
    public var sixteenBit: Bool

    public init(job: FractalJob, sixteenBit: Bool) {
        self.job = job
        self.sixteenBit = sixteenBit
    }

    public func comparisonRun(on backend: Backend, detailed: Bool) async throws -> ComparisonRun {
        // Each timed run computes its own reference orbit (the first backend does not pay for both).
        FractalWorkload.forgetOrbit(job)
        let r = try await FractalRenderer.render(job, on: backend, outputs: .init(counts: detailed, colour: sixteenBit))
        let sixteen = r.colour.map { c in
            ImageF(width: c.width, height: c.height, pixels: c.srgbToLinear().to16Bit().map { Float($0) / 65535 })
        }
        return ComparisonRun(image: r.image, floatImage: sixteen, counts: r.counts, wallSeconds: r.wallSeconds, kernelSeconds: r.kernelSeconds)
    }

    /// 8-bit colours within 1 level; 16-bit ones within 2 of 65535 (the palettes' sin, cos and
    /// log differ by a few ulps between glibc and a device).
    public var comparisonTolerance: Tolerance { sixteenBit ? Tolerance([.maxAbs(2.0 / 65535)]) : .oneLevel }
}
