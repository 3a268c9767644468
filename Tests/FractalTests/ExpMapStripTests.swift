import GlintCore
import GlintTestSupport
import GlintWorkloads
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Exponential-map strips (`glint fractal --exp-map`): the layout, and the Swift path against
/// OpenCL (the strip's per-row powers of two through both perturbation phases).
@Suite struct ExpMapStripTests {
    @Test func layout() throws {
        let l = try ExpMapLayout(columns: 1024, zoomLog2: 100)
        #expect(abs(l.rowsPerOctave - 1024 * M_LN2 / (2 * Double.pi)) < 1e-12)
        #expect(l.rows == Int((l.rowsPerOctave * (2 + 12 + 100)).rounded(.up)))
        let t = l.tables()
        #expect(t.columns.count == 2048 && t.rowMantissa.count == l.rows && t.rowExponent.count == l.rows)
        // Row y's radius is 4 · 2^(−(y + 0.5)/R): mantissa in [1, 2), an octave every R rows.
        for y in [0, 1, 500, l.rows - 1] {
            let r = log2(t.rowMantissa[y]) + Double(t.rowExponent[y])
            #expect(abs(r - (2 - (Double(y) + 0.5) / l.rowsPerOctave)) < 1e-9)
            #expect(t.rowMantissa[y] >= 1 && t.rowMantissa[y] < 2)
        }
        // Column x's angle is 2π(x + 0.5)/columns.
        #expect(abs(atan2(t.columns[1], t.columns[0]) - Double.pi / 1024) < 1e-12)
        #expect(throws: GlintError.self) { try ExpMapLayout(columns: 1024, zoomLog2: 3322) }   // 1e1000: too many rows
        #expect(throws: GlintError.self) { try ExpMapLayout(columns: 4, zoomLog2: 10) }
        _ = try ExpMapLayout(columns: 64, zoomLog2: 3322)   // 1e1000 fits in 64 columns
    }

    /// A strip to 1e8 and one to 1e300 (rows from zoom 1 to deltas far below a Double's range in
    /// the tiny phase): counts identical on both paths, with and without BLA.
    @Test(arguments: ["1e8", "1e300"])
    func swiftPathAndOpenCLAgree(_ zoom: String) async throws {
        let cl = try openCL()
        var job = FractalJob(formula: .mandelbrot)
        job.exactCenter = DeepComplex(re: try DeepNumber(parsing: DeepLocations.misiurewicz41.re),
                                      im: try DeepNumber(parsing: DeepLocations.misiurewicz41.im))
        job.exactZoom = try DeepNumber(parsing: zoom)
        let layout = try ExpMapLayout(columns: zoom == "1e8" ? 64 : 16, zoomLog2: try #require(job.exactZoom.log2Magnitude))
        (job.expMap, job.width, job.height, job.precision) = (layout, layout.columns, layout.rows, .perturbation)
        job.maxIterations = zoom == "1e8" ? 1500 : 4000
        job.smooth = true
        for bla in [true, false] {
            job.bla = bla
            let a = try await FractalRenderer.render(job, on: .cpu, outputs: .init(counts: true))
            let b = try await FractalRenderer.render(job, on: cl, outputs: .init(counts: true))
            let counts = try #require(a.counts)
            #expect(counts == b.counts, "\(zoom), bla \(bla): counts differ")
            #expect(Set(counts).count > 50, "\(zoom): the strip has structure")
            let d = zip(a.image.pixels, b.image.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(d <= 1, "\(zoom): colours within a level (got \(d))")
        }
    }

    @Test func refusals() throws {
        var job = FractalJob(formula: .julia)
        let layout = try ExpMapLayout(columns: 64, zoomLog2: 20)
        (job.expMap, job.width, job.height, job.precision) = (layout, layout.columns, layout.rows, .perturbation)
        #expect { try job.validate() } throws: { ($0 as? GlintError)?.message.contains("mandelbrot") == true }
        job.formula = .mandelbrot
        job.height += 1
        #expect { try job.validate() } throws: { ($0 as? GlintError)?.message.contains("strip is") == true }
    }
}
