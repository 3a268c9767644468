import CGlintTypes
import GlintCore
import GlintTestSupport
import GlintWorkloads
import Testing

/// Four flat quadrants (distinct colours), opaque.
private func quadrants(_ w: Int, _ h: Int) -> Image8 {
    var image = Image8(width: w, height: h)
    for y in 0..<h {
        for x in 0..<w {
            let left = x < w / 2, top = y < h / 2
            image[x, y] = left ? (top ? SIMD4(200, 40, 40, 255) : SIMD4(40, 200, 40, 255))
                               : (top ? SIMD4(40, 40, 200, 255) : SIMD4(200, 200, 40, 255))
        }
    }
    return image
}

/// Gradients and fine rings, opaque: a point sample and a box average of it differ.
private func rings(_ w: Int, _ h: Int) -> Image8 {
    var image = Image8(width: w, height: h)
    for y in 0..<h {
        for x in 0..<w {
            let dx = Double(x - w / 2), dy = Double(y - h / 2)
            image[x, y] = SIMD4(UInt8(x * 255 / (w - 1)), UInt8(truncatingIfNeeded: Int((dx * dx + dy * dy).squareRoot() * 9)),
                                UInt8(y * 255 / (h - 1)), 255)
        }
    }
    return image
}

@Suite struct IsometricTests {
    @Test(arguments: [(0.0, 20.0), (12.0, 20.0), (0.0, 0.0), (30.0, 7.5)])
    func cpuAndOpenCLAgree(radius: Double, depth: Double) async throws {
        var job = IsoJob(source: quadrants(96, 64))
        job.cornerRadius = radius
        job.depth = depth
        let a = try await IsoRenderer.render(job, on: .cpu).image
        let b = try await IsoRenderer.render(job, on: try openCL()).image
        #expect(a.width == b.width && a.height == b.height)
        #expect(try maxDifference(a, b) <= 1, "docs/DESIGN.md: 8-bit channels within 1")
    }

    @Test func cornersLandWhereTheIsometricMatrixPutsThem() async throws {
        let (w, h) = (80, 60)
        var job = IsoJob(source: quadrants(w, h))
        job.depth = 0
        let p = job.params
        let image = try await IsoRenderer.render(job, on: .cpu).image
        // A point just inside each source corner, mapped by rotate-45-then-halve-y about the centre.
        let inset: Float = 3
        let checks: [(Float, Float, SIMD4<UInt8>)] = [
            (inset, inset, SIMD4(200, 40, 40, 255)),                                   // top-left: the top corner
            (Float(w) - inset, inset, SIMD4(40, 40, 200, 255)),                        // top-right: the right corner
            (inset, Float(h) - inset, SIMD4(40, 200, 40, 255)),                        // bottom-left: the left corner
            (Float(w) - inset, Float(h) - inset, SIMD4(200, 200, 40, 255)),            // bottom-right: the bottom corner
        ]
        for (x, y, colour) in checks {
            let q = Isometric.canvasPoint(p, x: x, y: y)
            #expect(image[Int(q.x), Int(q.y)] == colour, "source (\(x), \(y)) -> canvas \(q)")
        }
        // The matrix itself: the source's corners are the diamond's top, right, bottom and left.
        let k = Isometric.k
        let top = Isometric.canvasPoint(p, x: 0, y: 0), bottom = Isometric.canvasPoint(p, x: Float(w), y: Float(h))
        let left = Isometric.canvasPoint(p, x: 0, y: Float(h)), right = Isometric.canvasPoint(p, x: Float(w), y: 0)
        #expect(abs(bottom.y - top.y - k * Float(w + h) / 2) < 1e-3)
        #expect(abs(right.x - left.x - k * Float(w + h)) < 1e-3)
        #expect(abs(top.x - (p.origin_x + k * Float(h - w) / 2)) < 1e-3)
        // Outside the diamond the canvas is transparent.
        #expect(image[0, 0].w == 0 && image[image.width - 1, image.height - 1].w == 0)
    }

    @Test(arguments: [10.0, 25.0])
    func theExtrusionIsDepthPixelsTallWithTheSeedsShades(depth: Double) async throws {
        var source = Image8(width: 64, height: 64)
        for i in stride(from: 0, to: source.pixels.count, by: 4) { source.pixels.replaceSubrange(i..<i + 4, with: [160, 120, 80, 255]) }
        var job = IsoJob(source: source)
        job.depth = depth
        let p = job.params
        let image = try await IsoRenderer.render(job, on: .cpu).image
        // Straight below the diamond's bottom corner, opaque pixels run on for `depth` rows.
        let corner = Isometric.canvasPoint(p, x: 64, y: 64)
        let column = Int(corner.x)
        var lowest = 0
        for y in 0..<image.height where image[column, y].w > 127 { lowest = y }
        let height = Double(lowest) + 0.5 - Double(corner.y)
        #expect(abs(height - depth) <= 1, "extrusion \(height) px, want \(depth)")
        // Front-left side (below the bottom edge): 0.05 darker; front-right: 0.1 darker.
        let leftEdge = Isometric.canvasPoint(p, x: 20, y: 64), rightEdge = Isometric.canvasPoint(p, x: 64, y: 20)
        let leftSide = image[Int(leftEdge.x), Int(leftEdge.y + Float(depth) / 2)]
        let rightSide = image[Int(rightEdge.x), Int(rightEdge.y + Float(depth) / 2)]
        // These pixels lie inside the side faces, so each is one sample of the flat colour, whose
        // float rounding decides 120/255 - 0.1 = 94.5 levels either way: within one level.
        let left = SIMD4<Int>(Int(Color.to8Bit(160.0 / 255 - 0.05)), Int(Color.to8Bit(120.0 / 255 - 0.05)), Int(Color.to8Bit(80.0 / 255 - 0.05)), 255)
        let right = SIMD4<Int>(Int(Color.to8Bit(160.0 / 255 - 0.1)), Int(Color.to8Bit(120.0 / 255 - 0.1)), Int(Color.to8Bit(80.0 / 255 - 0.1)), 255)
        #expect(Isometric.kind(p, Int32(leftEdge.x), Int32(leftEdge.y + Float(depth) / 2)) == .side)
        #expect(Isometric.kind(p, Int32(rightEdge.x), Int32(rightEdge.y + Float(depth) / 2)) == .side)
        #expect((0..<4).allSatisfy { abs(Int(leftSide[$0]) - left[$0]) <= 1 }, "\(leftSide)")
        #expect((0..<4).allSatisfy { abs(Int(rightSide[$0]) - right[$0]) <= 1 }, "\(rightSide)")
    }

    @Test func roundedCornersCutTheCornersAndTheExtrusionFollowsThem() async throws {
        var job = IsoJob(source: quadrants(64, 64))
        job.depth = 12
        let square = try await IsoRenderer.render(job, on: .cpu).image
        job.cornerRadius = 16
        let rounded = try await IsoRenderer.render(job, on: .cpu).image
        let p = job.params
        // The source's very corner is opaque when square and empty when rounded.
        for (x, y) in [(Float(4), Float(4)), (60, 4), (4, 60)] {
            let q = Isometric.canvasPoint(p, x: x, y: y)
            #expect(square[Int(q.x), Int(q.y)].w == 255 && rounded[Int(q.x), Int(q.y)].w == 0, "corner (\(x), \(y))")
        }
        // The bottom corner's extrusion follows the arc, whose lowest point is R k (1 - k) = 3.3 px
        // above the square corner: 10 rows below that corner the square one is still opaque
        // (depth 12) and the rounded one already clear.
        let corner = Isometric.canvasPoint(p, x: 64, y: 64)
        let below = Int(corner.y) + 10
        #expect(square[Int(corner.x), below].w == 255)
        #expect(rounded[Int(corner.x), below].w == 0)
        #expect(rounded[Int(corner.x), below - 4].w == 255, "the rounded side is extruded too")
    }

    /// docs/DESIGN.md, Isometric sampling: a pixel wholly on the top face or on one flat side face
    /// is one sample at its centre (the --ss 1 render's pixel), one wholly outside is transparent,
    /// and every other pixel is the ss x ss average; the OpenCL kernel makes the same decisions.
    @Test(arguments: [(0.0, 20.0), (0.0, 0.0), (9.0, 20.0), (9.0, 0.0), (0.5, 6.5), (25.0, 3.0)])
    func onlyPixelsThatAnEdgeMayCrossAreSupersampled(radius: Double, depth: Double) async throws {
        let source = rings(97, 61)     // odd sizes
        var job = IsoJob(source: source)
        job.cornerRadius = radius
        job.depth = depth
        let p = job.params
        let image = try await IsoRenderer.render(job, on: .cpu).image
        job.supersampling = 1
        let single = try await IsoRenderer.render(job, on: .cpu).image
        var counts: [Isometric.PixelKind: Int] = [:]
        var supersampledDiffers = 0
        source.pixels.withUnsafeBufferPointer { texels in
            let src = texels.baseAddress!
            for py in 0..<image.height {
                for px in 0..<image.width {
                    let kind = Isometric.kind(p, Int32(px), Int32(py))
                    counts[kind, default: 0] += 1
                    let averaged = Isometric.supersampled(src, p, Int32(px), Int32(py))
                    switch kind {
                    case .top, .side:
                        #expect(image[px, py] == single[px, py], "(\(px), \(py)) \(kind)")
                        if averaged != single[px, py] { supersampledDiffers += 1 }
                    case .clear:
                        #expect(image[px, py] == .zero && averaged == .zero, "(\(px), \(py)) clear")
                    case .edge:
                        #expect(image[px, py] == averaged, "(\(px), \(py)) edge")
                    }
                }
            }
        }
        #expect(counts[.top, default: 0] > 1000 && counts[.edge, default: 0] > 100 && counts[.clear, default: 0] > 1000, "\(counts)")
        #expect((counts[.side, default: 0] > 0) == (depth > 0), "\(counts)")
        // The rings make the point sample differ from the box average somewhere: the test sees both.
        #expect(supersampledDiffers > 0)
        // Same decisions and samples on OpenCL: bit-identical.
        job.supersampling = 4
        let cl = try await IsoRenderer.render(job, on: try openCL()).image
        #expect(try maxDifference(image, cl) == 0)
    }

    @Test func mostOfALargeCanvasIsSingleSampledOrClear() {
        var job = IsoJob(sourceWidth: 1920, sourceHeight: 1080)
        job.depth = 20
        for radius in [0.0, 48.0] {
            job.cornerRadius = radius
            let p = job.params
            var edge = 0
            for py in 0..<p.out_height {
                for px in 0..<p.out_width where Isometric.kind(p, px, py) == .edge { edge += 1 }
            }
            let share = Double(edge) / Double(p.out_width * p.out_height)
            print("iso \(p.out_width)x\(p.out_height) radius \(radius): \(edge) pixels (\(share * 100) %) supersampled")
            #expect(share < 0.02)
        }
    }

    @Test func badJobsAreRefused() {
        var job = IsoJob(source: quadrants(10, 10))
        job.cornerRadius = 6
        #expect(throws: GlintError.self) { try job.validate() }
        job.cornerRadius = 0
        job.depth = -1
        #expect(throws: GlintError.self) { try job.validate() }
        job.depth = .nan
        #expect(throws: GlintError.self) { try job.validate() }
    }

    @Test func theParamsLayoutIsWhatTheHeaderSays() {
        typealias P = GlintIsoParams
        #expect(MemoryLayout<P>.size == 48)
        #expect(MemoryLayout<P>.offset(of: \P.origin_x) == 16 && MemoryLayout<P>.offset(of: \P.depth_src) == 32)
        #expect(MemoryLayout<P>.offset(of: \P.ss) == 40)
    }
}
