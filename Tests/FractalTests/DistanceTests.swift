import GlintCore
import GlintTestSupport
import GlintWorkloads
import Testing

/// Distance-estimate and slope colouring (`--color de|slope`, `--de`): the derivative carried
/// on every path, the Swift path against OpenCL, and the estimate against known distances.
@Suite struct DistanceTests {
    /// A job of `formula` at 48x32 with the derivative's colouring.
    static func job(_ formula: FractalFormula, _ colouring: Colouring, _ precision: Precision) -> FractalJob {
        var j = FractalJob(formula: formula)
        (j.width, j.height, j.colouring, j.precision, j.maxIterations) = (48, 32, colouring, precision, 300)
        return j
    }

    /// Deep views: M(4,1) at 1e300 (double deltas) and 1e1000 (the tiny phase), Julia's at 1e40.
    static func deep(_ zoom: String, _ iterations: Int) throws -> FractalJob {
        var j = job(.mandelbrot, .de, .perturbation)
        j.exactCenter = DeepComplex(re: try DeepNumber(parsing: DeepLocations.misiurewicz41.re),
                                    im: try DeepNumber(parsing: DeepLocations.misiurewicz41.im))
        j.exactZoom = try DeepNumber(parsing: zoom)
        j.maxIterations = iterations
        return j
    }

    /// Every path the derivative is carried on: plain float and double (the CPU forms' vectors and,
    /// with supersampling, the per-sample colour pass), powers, Julia, and perturbation with and
    /// without BLA and in the tiny phase. Counts and distances are identical on both paths (the
    /// derivative's arithmetic is written out alike, the distance taken on the host from the
    /// same bits); colours agree within a level (the device's log and sqrt).
    static func cases() throws -> [(String, FractalJob)] {
        var list: [(String, FractalJob)] = []
        for c in [Colouring.de, .slope] {
            list.append(("mandelbrot float \(c)", job(.mandelbrot, c, .float)))
            list.append(("julia double \(c)", job(.julia, c, .double)))
        }
        var ss = job(.mandelbrot, .slope, .double)
        (ss.supersampling, ss.smooth, ss.lightAngle, ss.lightHeight) = (3, true, 120, 0.5)
        list.append(("mandelbrot ss3 slope", ss))
        var power = job(.mandelbrot, .de, .double)
        (power.power, power.centerRe, power.centerIm, power.zoom) = (5, 0, 0, 0.8)
        list.append(("power 5 de", power))
        list.append(("deep 1e300", try deep("1e300", 3000)))
        var noBLA = try deep("1e300", 3000)
        noBLA.bla = false
        list.append(("deep 1e300 without BLA", noBLA))
        var tiny = try deep("1e1000", 9000)
        tiny.colouring = .slope
        list.append(("deep 1e1000 slope", tiny))
        // Julia's repelling fixed point β = (1 + sqrt(1 − 4c))/2 lies on its Julia set.
        var julia = job(.julia, .de, .perturbation)
        let (wr, wi) = (1 - 4 * julia.cRe, -4 * julia.cIm)
        let m = (wr * wr + wi * wi).squareRoot()
        let (sr, si) = (((m + wr) / 2).squareRoot(), (wi < 0 ? -1.0 : 1.0) * ((m - wr) / 2).squareRoot())
        (julia.centerRe, julia.centerIm, julia.zoom, julia.maxIterations) = ((1 + sr) / 2, si / 2, 1e12, 600)
        list.append(("julia perturbed at 1e12", julia))
        return list
    }

    @Test func swiftPathAndOpenCLAgree() async throws {
        let cl = try openCL()
        for (name, j) in try Self.cases() {
            let outputs = FractalRenderer.Outputs(counts: j.supersampling == 1, distance: true)
            let a = try await FractalRenderer.render(j, on: .cpu, outputs: outputs)
            let b = try await FractalRenderer.render(j, on: cl, outputs: outputs)
            #expect(a.counts == b.counts, "\(name): counts differ")
            let da = try #require(a.distance), db = try #require(b.distance)
            #expect(da == db, "\(name): distances differ")
            #expect(da.contains { $0 > 0 } && Set(da).count > 20, "\(name): the view has distances")
            let worst = zip(a.image.pixels, b.image.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(worst <= 1, "\(name): colours within a level (got \(worst))")
        }
    }

    /// The estimate DE = |z|·ln|z|² / |dz/dc| bounds the true distance d to the Mandelbrot set:
    /// d <= DE <= 4d (Koebe's quarter theorem, with the estimate converged: a large bailout).
    /// Left of the tip −2 on the real axis the nearest point of the set is −2 (the set lies in
    /// |c| <= 2).
    @Test(arguments: ["cpu", "opencl"])
    func estimateBoundsTheDistance(_ device: String) async throws {
        let backend = try backend(device)
        for (c, d) in [(-2.01, 0.01), (-2.1, 0.1), (-2.5, 0.5), (-3.0, 1.0)] {
            var j = FractalJob(formula: .mandelbrot)
            // One pixel at c with a spacing of 1: the estimate in pixels is in the plane's units.
            (j.width, j.height, j.centerRe, j.centerIm, j.zoom, j.precision) = (1, 1, c, 0, 2, .double)
            (j.maxIterations, j.bailout) = (100_000, 1e6)
            let r = try await FractalRenderer.render(j, on: backend, outputs: .init(distance: true))
            let de = Double(try #require(r.distance?.first))
            #expect(de >= d * 0.999 && de <= 4 * d, "c = \(c): DE \(de) against the distance \(d)")
        }
    }

    /// The slope's shade is (n·L + h)/(1 + h): a light high above leaves the palette's colours,
    /// and turning the light changes the picture.
    @Test func slopeLight() async throws {
        var count = Self.job(.mandelbrot, .count, .double)
        count.smooth = true
        var high = count
        (high.colouring, high.lightHeight) = (.slope, 100)
        let a = try await FractalRenderer.render(count, on: .cpu)
        let b = try await FractalRenderer.render(high, on: .cpu)
        let worst = zip(a.image.pixels, b.image.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst <= 6, "a light at height 100 shades by at most 2%: \(worst)")
        var turned = high
        (turned.lightHeight, turned.lightAngle) = (0.5, 225)
        var lit = turned
        lit.lightAngle = 45
        let c = try await FractalRenderer.render(turned, on: .cpu)
        let d = try await FractalRenderer.render(lit, on: .cpu)
        #expect(c.image.pixels != d.image.pixels)
    }

    @Test func refusals() throws {
        var j = Self.job(.burningShip, .de, .double)
        #expect { try j.validate() } throws: { ($0 as? GlintError)?.message.contains("mandelbrot and julia") == true }
        j = Self.job(.mandelbrot, .slope, .double)
        j.lightHeight = -1
        #expect { try j.validate() } throws: { ($0 as? GlintError)?.message.contains("height") == true }
    }
}
