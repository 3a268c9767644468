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

    /// Segments: rows of the whole strip, computed from their index in it; consecutive ones share
    /// the 14 octaves (and a row each side) one frame reads, so the zooms they serve join up.
    @Test func segmentLayout() throws {
        let whole = try ExpMapLayout(columns: 64, zoomLog2: 100)
        let parts = try ExpMapLayout.segments(columns: 64, zoomLog2: 100, segmentRows: 200)
        #expect(parts.count > 3 && parts.allSatisfy { $0.wholeRows == whole.rows && $0.rows <= 200 })
        #expect(parts[0].firstRow == 0 && parts.last!.firstRow + parts.last!.rows == whole.rows && parts.last!.isLast)
        let all = whole.tables()
        for p in parts {
            let t = p.tables()
            #expect(t.rowMantissa == Array(all.rowMantissa[p.firstRow ..< p.firstRow + p.rows]))
            #expect(t.rowExponent == Array(all.rowExponent[p.firstRow ..< p.firstRow + p.rows]))
            #expect(t.columns == all.columns)
        }
        for (a, b) in zip(parts, parts.dropFirst()) {
            #expect(a.firstRow + a.rows - b.firstRow == ExpMapLayout.overlapRows(columns: 64))
            #expect(b.zoomStartLog2 <= a.zoomEndLog2(zoomLog2: 100))
            // The zooms a segment serves leave it the 14 octaves a frame reads.
            let served = a.zoomEndLog2(zoomLog2: 100) - a.zoomStartLog2
            let margins = a.firstRow == 0 ? 1.0 : 2.0   // the first segment's top is the whole strip's
            #expect(abs((Double(a.rows) / a.rowsPerOctave - 14 - served) - margins / a.rowsPerOctave) < 1e-9)
        }
        #expect(parts.last!.zoomEndLog2(zoomLog2: 100) == 100)
        // One image's worth by default: 1e1000 at 1024 columns takes 13 (377,000 rows), a shallow zoom one.
        let deep = try ExpMapLayout.segments(columns: 1024, zoomLog2: 3322)
        #expect(deep.count == 13 && deep.dropLast().allSatisfy { $0.rows == 32768 }, "\(deep.count)")
        #expect(try ExpMapLayout.segments(columns: 1024, zoomLog2: 100) == [try ExpMapLayout(columns: 1024, zoomLog2: 100)])
        #expect(throws: GlintError.self) { try ExpMapLayout.segments(columns: 64, zoomLog2: 100, segmentRows: 100) }
        // The decimals a segment records for its zooms read back to their log2.
        for l in [0.5, 33.2, 3321.9, 33219.3] {
            #expect(abs(try #require(DeepNumber(power2: l).log2Magnitude) - l) < 1e-9 * max(1, l))
        }
    }

    /// A strip cut into segments renders the whole strip's rows, byte for byte, on both paths.
    @Test func segmentsAreTheWholeStripsRows() async throws {
        let cl = try openCL()
        var job = FractalJob(formula: .mandelbrot)
        job.exactCenter = DeepComplex(re: try DeepNumber(parsing: DeepLocations.misiurewicz41.re),
                                      im: try DeepNumber(parsing: DeepLocations.misiurewicz41.im))
        job.exactZoom = try DeepNumber(parsing: "1e20")
        (job.precision, job.maxIterations, job.bla, job.smooth) = (.perturbation, 1500, false, true)
        let zoomLog2 = try #require(job.exactZoom.log2Magnitude)
        let whole = try ExpMapLayout(columns: 32, zoomLog2: zoomLog2)
        var w = job
        (w.expMap, w.width, w.height) = (whole, 32, whole.rows)
        let all = try await FractalRenderer.render(w, on: .cpu).image.pixels
        let parts = try ExpMapLayout.segments(columns: 32, zoomLog2: zoomLog2, segmentRows: 90)
        #expect(parts.count >= 4)
        for (k, p) in parts.enumerated() {
            var s = job
            (s.expMap, s.width, s.height) = (p, 32, p.rows)
            let image = try await FractalRenderer.render(s, on: k % 2 == 0 ? .cpu : cl).image.pixels
            #expect(image == Array(all[p.firstRow * 32 * 4 ..< (p.firstRow + p.rows) * 32 * 4]), "segment \(k)")
        }
    }

    /// Distance and slope colouring on a strip: each row's derivative in its own pixels (its
    /// radius times 2π/columns), identical on both paths; and the estimate, taken back to the
    /// plane, bounds the distance to the set around −2 (d <= DE <= 4d near the set, within 1 of
    /// it as in DistanceTests: d is at least |c| − 2, the set lying in |c| <= 2, and at most r,
    /// −2 being in it).
    @Test func distancesOnAStrip() async throws {
        let cl = try openCL()
        var job = FractalJob(formula: .mandelbrot)
        (job.exactCenter, job.exactZoom) = (DeepComplex(re: -2, im: 0), try DeepNumber(parsing: "1e6"))
        (job.precision, job.maxIterations, job.bailout, job.colouring) = (.perturbation, 100_000, 1e6, .de)
        let layout = try ExpMapLayout(columns: 64, zoomLog2: try #require(job.exactZoom.log2Magnitude))
        (job.expMap, job.width, job.height) = (layout, 64, layout.rows)
        let a = try await FractalRenderer.render(job, on: .cpu, outputs: .init(counts: true, distance: true))
        let b = try await FractalRenderer.render(job, on: cl, outputs: .init(counts: true, distance: true))
        #expect(a.counts == b.counts && a.distance == b.distance)
        let worst = zip(a.image.pixels, b.image.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst <= 1, "colours within a level (got \(worst))")
        let de = try #require(a.distance), t = layout.tables()
        var checked = 0
        for y in stride(from: 0, to: layout.rows, by: 7) {
            let r = t.rowMantissa[y] * exp2(Double(t.rowExponent[y]))
            for x in 0..<64 where t.columns[2 * x] < -0.9 && r <= 1 {
                let (cr, ci) = (-2 + r * t.columns[2 * x], r * t.columns[2 * x + 1])
                let estimate = Double(de[y * 64 + x]) * r * 2 * Double.pi / 64
                let below = (cr * cr + ci * ci).squareRoot() - 2
                #expect(estimate >= below * 0.999 && estimate <= 4 * r, "row \(y), column \(x): DE \(estimate), distance in [\(below), \(r)]")
                checked += 1
            }
        }
        #expect(checked > 100)
        var slope = job
        slope.colouring = .slope
        let c = try await FractalRenderer.render(slope, on: .cpu)
        let d = try await FractalRenderer.render(slope, on: cl)
        #expect(zip(c.image.pixels, d.image.pixels).allSatisfy { abs(Int($0) - Int($1)) <= 1 })
        #expect(c.image.pixels != a.image.pixels)
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
