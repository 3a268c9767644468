import GlintCore
import GlintTestSupport
import GlintWorkloads
import Testing

/// Mandelbrot's z^n + c (`--power n`): the Swift path and OpenCL give the same escape counts at
/// every power, on every precision, with and without BLA and in the tiny phase (1e1000).
@Suite struct PowerParityTests {
    @Test(arguments: [Precision.float, .double, .perturbation])
    func swiftAndOpenCLAgree(_ precision: Precision) async throws {
        let cl = try openCL()
        for n in 3...FractalJob.maxPower {
            var job = FractalJob(formula: .mandelbrot)
            (job.width, job.height, job.power, job.precision, job.smooth) = (40, 24, n, precision, true)
            var zooms = [""]
            if precision == .perturbation {
                let point = DeepLocations.multibrotMisiurewicz[n - 3]
                job.exactCenter = DeepComplex(re: try DeepNumber(parsing: point.re), im: try DeepNumber(parsing: point.im))
                zooms = ["1e40", "1e1000"]
            } else {
                (job.centerRe, job.centerIm, job.zoom, job.maxIterations) = (0, 0, 0.8, 200)
            }
            for zoom in zooms {
                if !zoom.isEmpty {
                    job.exactZoom = try DeepNumber(parsing: zoom)
                    job.maxIterations = zoom == "1e40" ? 1500 : 6000
                }
                for bla in precision == .perturbation ? [true, false] : [true] {
                    job.bla = bla
                    let what = "power \(n), \(precision.rawValue) \(zoom), bla \(bla)"
                    let a = try await FractalRenderer.render(job, on: .cpu, outputs: .init(counts: true))
                    let b = try await FractalRenderer.render(job, on: cl, outputs: .init(counts: true))
                    let counts = try #require(a.counts)
                    #expect(counts == b.counts, "\(what): counts differ")
                    #expect(Set(counts).count >= 5, "\(what): the view has structure")
                    let d = zip(a.image.pixels, b.image.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
                    #expect(d <= 1, "\(what): colours within 1 level (got \(d))")
                }
            }
        }
    }
}
