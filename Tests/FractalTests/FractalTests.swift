import GlintCore
import GlintTestSupport
import GlintWorkloads
import Testing

func render(_ job: FractalJob, on backend: Backend) async throws -> FractalResult {
    try await FractalRenderer.render(job, on: backend, outputs: .init(counts: true, iterations: true))
}

func job(_ formula: FractalFormula, _ w: Int = 64, _ h: Int = 48, _ configure: (inout FractalJob) -> Void = { _ in }) -> FractalJob {
    var j = FractalJob(formula: formula)
    j.width = w
    j.height = h
    configure(&j)
    return j
}

/// A 32x32 texture: an opaque disc with coloured quadrants on a transparent field.
func testTexture() -> Image8 {
    var pixels = [UInt8](repeating: 0, count: 32 * 32 * 4)
    for y in 0..<32 {
        for x in 0..<32 {
            let dx = x - 16, dy = y - 16
            guard dx * dx + dy * dy < 144 else { continue }
            let i = (y * 32 + x) * 4
            pixels[i] = x < 16 ? 220 : 30
            pixels[i + 1] = y < 16 ? 200 : 60
            pixels[i + 2] = 120
            pixels[i + 3] = 255
        }
    }
    return Image8(width: 32, height: 32, pixels: pixels)
}

/// The parity contract (docs/DESIGN.md): escape counts identical; 8-bit colours within 1.
@Suite struct FractalParityTests {
    static let formulas: [FractalFormula] = [.mandelbrot, .julia, .burningShip, .sierpinskiJulia]

    @Test(arguments: formulas, [Precision.float, .double])
    func countsAreIdenticalAndColoursWithinOne(_ formula: FractalFormula, _ precision: Precision) async throws {
        // A zoomed view near the boundary as well as the whole set: both exercise long orbits.
        for (zoom, dx) in [(1.0, 0.0), (7.0, 0.31)] {
            let j = job(formula) {
                $0.precision = precision
                $0.zoom = zoom
                $0.centerRe += dx
                $0.maxIterations = 200
            }
            let cpu = try await render(j, on: .cpu)
            let cl = try await render(j, on: try openCL())
            #expect(cpu.counts == cl.counts, "\(formula.name) \(precision) zoom \(zoom): escape counts differ")
            #expect(cpu.iterations == cl.iterations)
            #expect(try maxDifference(cpu.image, cl.image) <= 1)
        }
    }

    /// GPUs run one sample per work-item (LANES=1), CPUs a vector: run the GPU shape on PoCL too.
    @Test(arguments: formulas, [Precision.float, .double])
    func theGPUShapedKernelAgrees(_ formula: FractalFormula, _ precision: Precision) async throws {
        for smooth in [false, true] {
            let j = job(formula, 40, 30) { $0.precision = precision; $0.maxIterations = 150; $0.smooth = smooth; $0.bailout = 16 }
            let cpu = try await render(j, on: .cpu)
            let scalar = try await FractalRenderer.render(j, on: try openCL(), outputs: .init(counts: true, iterations: true, lanes: 1))
            #expect(cpu.counts == scalar.counts, "\(formula.name) \(precision) smooth \(smooth)")
            #expect(try maxDifference(cpu.image, scalar.image) <= 1)
        }
    }

    @Test(arguments: Color.Palette.allCases)
    func smoothSupersampledColoursAgreeWithinOne(_ palette: Color.Palette) async throws {
        for (smooth, ss) in [(true, 1), (true, 3), (false, 2)] {
            let j = job(.mandelbrot, 48, 32) {
                $0.palette = palette
                $0.smooth = smooth
                $0.supersampling = ss
                $0.bailout = smooth ? 64 : 2
                $0.maxIterations = 100
            }
            let cpu = try await render(j, on: .cpu)
            let cl = try await render(j, on: try openCL())
            #expect(cpu.counts == cl.counts)
            #expect(try maxDifference(cpu.image, cl.image) <= 1, "\(palette.name) smooth \(smooth) ss \(ss)")
        }
    }

    @Test(arguments: [Precision.float, .double])
    func imageJuliaAgrees(_ precision: Precision) async throws {
        let j = job(.imageJulia) {
            $0.texture = testTexture()
            $0.precision = precision
            $0.centerRe = 0.5
            $0.centerIm = 0.5
            $0.zoom = 1.5
        }
        let cpu = try await render(j, on: .cpu)
        let cl = try await render(j, on: try openCL())
        #expect(cpu.counts == cl.counts)
        #expect(try maxDifference(cpu.image, cl.image) <= 1)
        // Some samples must have been stopped by the texture, some not: else the test proves little.
        let colours = Set(stride(from: 0, to: cpu.image.pixels.count, by: 4).map { cpu.image.pixels[$0] })
        #expect(colours.contains(220) || colours.contains(30), "no texel reached the image")
    }
}

/// Facts that hold whatever the backend.
@Suite struct FractalFactTests {
    /// A 1x1 render samples exactly the centre.
    func count(at re: Double, _ im: Double, _ formula: FractalFormula = .mandelbrot, c: (Double, Double) = (-0.76, 0.15),
               iterations: Int = 500, skip: Bool = false, on backend: Backend) async throws -> UInt32 {
        let j = job(formula, 1, 1) {
            $0.centerRe = re
            $0.centerIm = im
            $0.maxIterations = iterations
            $0.skipInterior = skip
            ($0.cRe, $0.cIm) = c
        }
        return try #require(try await render(j, on: backend).counts?.first)
    }

    @Test func knownPointsAreInsideOrOutside() async throws {
        for backend in [Backend.cpu, try openCL()] {
            // Inside: the centre of the main cardioid, of the period-2 bulb, a point of the period-3 bulb, the tip c = -2.
            for (re, im) in [(0.0, 0.0), (-1.0, 0.0), (-0.1226, 0.7449), (-2.0, 0.0), (0.25, 0.0)] {
                #expect(try await count(at: re, im, on: backend) == 500, "\(re),\(im) should be inside")
            }
            // Outside: z = c, c^2 + c, ... leaves |z| <= 2 at once for c = 1 (c^2 + c = 2, then 6).
            #expect(try await count(at: 1, 0, on: backend) == 1)
            #expect(try await count(at: 2.5, 0, on: backend) == 0)
            #expect(try await count(at: 0.3, 0, on: backend) < 500)
            #expect(try await count(at: -0.75, 0.1, on: backend) < 500)
        }
    }

    @Test func mandelbrotAreaByPixelCountingIsNear1_5066() async throws {
        // The set lies in [-2, 0.4715] x [-1.1226, 1.1226]; count interior pixels of a finer grid.
        let j = job(.mandelbrot, 1000, 900) {
            $0.centerRe = -0.76
            $0.centerIm = 0
            $0.zoom = 2.0 / 2.4  // the height spans 2.4 units
            $0.maxIterations = 4000
        }
        let counts = try #require(try await render(j, on: try openCL()).counts)
        let inside = counts.filter { $0 == 4000 }.count
        let pixelSide = 2.4 / 900.0
        let area = Double(inside) * pixelSide * pixelSide
        #expect(abs(area - 1.5066) / 1.5066 < 0.015, "area \(area)")
    }

    @Test func mandelbrotIsSymmetricAboutTheRealAxis() async throws {
        for backend in [Backend.cpu, try openCL()] {
            for precision in [Precision.float, .double] {
                let j = job(.mandelbrot, 60, 40) { $0.precision = precision; $0.maxIterations = 300 }
                let counts = try #require(try await render(j, on: backend).counts)
                for y in 0..<20 {
                    for x in 0..<60 {
                        #expect(counts[y * 60 + x] == counts[(39 - y) * 60 + x])
                    }
                }
            }
        }
    }

    @Test func juliaAtZeroIsTheUnitDisk() async throws {
        for backend in [Backend.cpu, try openCL()] {
            let j = job(.julia, 80, 80) { $0.cRe = 0; $0.cIm = 0; $0.zoom = 0.8; $0.maxIterations = 64 }
            let counts = try #require(try await render(j, on: backend).counts)
            let s = 2.0 / (0.8 * 80)
            var checked = 0
            for y in 0..<80 {
                for x in 0..<80 {
                    let re = (Double(x) + 0.5 - 40) * s, im = -(Double(y) + 0.5 - 40) * s
                    let r = (re * re + im * im).squareRoot()
                    guard abs(r - 1) > 1e-3 else { continue }
                    #expect((counts[y * 80 + x] == 64) == (r < 1), "pixel \(x),\(y) at |z| = \(r)")
                    checked += 1
                }
            }
            #expect(checked > 6000)
        }
    }

    /// Cardioid and bulb skipping changes speed, never a count, on both backends and precisions,
    /// including long orbits right at the cardioid's cusp and the bulbs' joint.
    @Test func interiorSkippingChangesNoCount() async throws {
        for backend in [Backend.cpu, try openCL()] {
            for precision in [Precision.float, .double] {
                for (re, im, zoom, iterations) in [(-0.75, 0.0, 1.0, 256), (0.25, 0.0, 40.0, 3000), (-0.75, 0.0, 60.0, 3000),
                                                   (-0.1, 0.65, 12.0, 2000)] {
                    var j = job(.mandelbrot, 48, 32) {
                        $0.centerRe = re; $0.centerIm = im; $0.zoom = zoom
                        $0.maxIterations = iterations; $0.precision = precision
                    }
                    j.skipInterior = true
                    let skipped = try await render(j, on: backend)
                    j.skipInterior = false
                    let full = try await render(j, on: backend)
                    #expect(skipped.counts == full.counts, "\(backend.label) \(precision) at \(re),\(im) x\(zoom)")
                    #expect(skipped.image == full.image)
                }
            }
        }
    }

    @Test func aRenderIsAPureFunctionOfItsJob() async throws {
        let j = job(.sierpinskiJulia) { $0.smooth = true; $0.palette = .ocean; $0.supersampling = 2 }
        for backend in [Backend.cpu, try openCL()] {
            let a = try await render(j, on: backend)
            let b = try await render(j, on: backend)
            #expect(a.image == b.image && a.counts == b.counts)
        }
    }

    @Test func badJobsAreRefusedWithOneLine() {
        var j = job(.mandelbrot)
        j.zoom = 0
        #expect(throws: GlintError.self) { try j.validate() }
        j = job(.mandelbrot); j.maxIterations = 0
        #expect(throws: GlintError.self) { try j.validate() }
        j = job(.mandelbrot); j.bailout = 1
        #expect(throws: GlintError.self) { try j.validate() }
        j = job(.imageJulia)
        #expect(throws: GlintError.self) { try j.validate() }
        j = job(.mandelbrot); j.zoom = 1e300
        #expect(throws: GlintError.self) { try j.validate() }
        j = job(.mandelbrot); j.zoom = 1e9
        #expect(throws: GlintError.self) { try j.validate() }  // float cannot resolve it
        j.precision = .double
        #expect(throws: Never.self) { try j.validate() }
    }
}
