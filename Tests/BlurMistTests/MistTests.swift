import CGlintTypes
import GlintCore
import GlintTestSupport
@testable import GlintWorkloads
import Testing

func render(_ job: MistJob, _ image: Image8, on backend: Backend) async throws -> [Image8] {
    let r = try MistRenderer(job: job, width: image.width, height: image.height, backend: backend)
    var frames: [Image8] = []
    for f in 0..<job.frames { frames.append(try await r.renderNext(camera: f == 0 ? image : nil)) }
    return frames
}

func busyJob(frames: Int = 12, seed: UInt64 = 3) -> MistJob {
    var job = MistJob()
    job.frames = frames
    job.sigma = 3
    job.drops = 25
    job.seed = seed
    job.gravity = SIMD2(0.3, 1)
    job.wipes = [MistWipe(start: 2, points: [SIMD2(0.1, 0.5), SIMD2(0.4, 0.6), SIMD2(0.8, 0.4)], radius: 0.08)]
    return job
}

@Suite struct MistTests {
    /// Whole frames match between the Swift path and OpenCL (8-bit within 1 level), with drops that
    /// vary, merge and leave trails, and a wipe.
    @Test(arguments: [false, true])
    func framesMatchBetweenCPUAndOpenCL(_ classic: Bool) async throws {
        var job = busyJob()
        job.classic = classic
        let image = TestPicture.make(width: 64, height: 40)
        let cpu = try await render(job, image, on: .cpu)
        let cl = try await render(job, image, on: try openCL())
        for (f, (a, b)) in zip(cpu, cl).enumerated() { #expect(try maxDifference(a, b) <= 1, "frame \(f)") }
    }

    /// The Swift path's compose (tiles that shapes touch: eight pixels a step against each shape,
    /// then the refracting drops' pixels eight at a time) gives the kernel's very weights and
    /// frames, on a window busy with drops, droplets and a wipe, where the device divides and
    /// takes square roots correctly rounded (as PoCL does; the build asks for it). The camera
    /// moves on some frames (each band composed as soon as its blur is done) and holds still on
    /// the others (the compose alone); sigma 3 blurs by the exact method, sigma 8 by the
    /// recursive one, whose middle image a width that is a multiple of 4 writes past the caches.
    @Test(arguments: [(3.0, 163), (8.0, 164)])
    func weightsAndFramesEqualTheKernels(_ c: (Double, Int)) async throws {
        var job = busyJob(frames: 8)
        job.drops = 300
        job.sigma = c.0
        let image = TestPicture.make(width: c.1, height: 97)
        let moved = TestPicture.make(width: c.1, height: 97, seed: 5, shift: 3)
        let cl = try openCL()
        guard case .opencl(let cc) = cl, (try? cc.device.correctlyRoundedDivideSqrt) == true else {
            Issue.record("the OpenCL device does not round divisions correctly")
            return
        }
        let a = try MistRenderer(job: job, width: image.width, height: image.height, backend: .cpu)
        let b = try MistRenderer(job: job, width: image.width, height: image.height, backend: cl)
        for f in 0..<job.frames {
            let camera = f == 0 ? image : f % 3 == 0 ? moved : nil
            let x = try await a.renderNext(camera: camera)
            let y = try await b.renderNext(camera: camera)
            let (wa, wb) = (try a.weights(), try b.weights())
            #expect(x.pixels.count == y.pixels.count && wa.count == wb.count)
            let pixels = zip(x.pixels, y.pixels).count { $0 != $1 }
            let weights = zip(wa, wb).count { $0 != $1 }
            #expect(pixels == 0 && weights == 0, "frame \(f): \(pixels) bytes and \(weights) weights differ")
        }
    }

    /// The compose kernel's forms and widths (mist.cl: 1 the GPU form, 4, 8 and 16 pixels per
    /// vector the CPU form; a device uses one, so this runs them all on this one) give the Swift
    /// path's frames and weights exactly, on a window busy with drops, on a width whose tiles end
    /// short of a whole vector.
    @Test(arguments: [1, 4, 8, 16])
    func everyComposeFormEqualsTheSwiftPath(_ lanes: Int) async throws {
        var job = busyJob(frames: 5)
        job.drops = 300
        job.sigma = 6
        let image = TestPicture.make(width: 150, height: 61)
        let cl = try openCL()
        guard case .opencl(let cc) = cl, (try? cc.device.correctlyRoundedDivideSqrt) == true else {
            Issue.record("the OpenCL device does not round divisions correctly")
            return
        }
        let a = try MistRenderer(job: job, width: image.width, height: image.height, backend: .cpu)
        let b = try MistRenderer(job: job, width: image.width, height: image.height, backend: cl, kernelLanes: lanes)
        for f in 0..<job.frames {
            let x = try await a.renderNext(camera: f == 0 ? image : nil)
            let y = try await b.renderNext(camera: f == 0 ? image : nil)
            let pixels = zip(x.pixels, y.pixels).count { $0 != $1 }
            let weights = zip(try a.weights(), try b.weights()).count { $0 != $1 }
            #expect(pixels == 0 && weights == 0, "\(lanes) lanes, frame \(f): \(pixels) bytes and \(weights) weights differ")
        }
    }

    /// The Swift path tests a group of pixels only against the shapes whose pixel boxes
    /// (`MistTiles.bounds`) meet it, so no pixel outside a shape's box may be inside the shape by
    /// the compose's own test (glint_mist_shapes8, at the pixel centres the compose uses): drops
    /// from tiny to large, wipe segments short and far longer than the window, shapes partly off
    /// the window, on narrow, wide and very wide windows; every pixel of the window within four
    /// of a box's sides, outside it.
    @Test func noPixelOutsideAShapesBoxIsInsideIt() {
        var rng = SplitMix64(seed: 11)
        func uniform(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * Double(rng.next() >> 11) / Double(1 << 53) }
        var tested = 0, inside = 0
        for (w, h) in [(37, 29), (640, 360), (1920, 1080), (32768, 40)] {
            let invWidth = 1 / Float(w), aspect = Double(h) / Double(w)
            for n in 0..<120 {
                let ax = uniform(-0.1, 1.1), ay = uniform(-0.1, aspect + 0.1)
                let radius = Float(rng.pick([1e-5, 1e-4, 1e-3, 0.01, 0.05]) * uniform(0.5, 1))
                // A third are wipe segments: most short, some far longer than the window.
                let reach = n % 3 != 0 ? 0.0 : (n % 2 == 0 ? 0.3 : 10.0)
                let bx = ax + uniform(-reach, reach), by = ay + uniform(-reach, reach)
                let shapes = [GlintMistShape(ax: Float(ax), ay: Float(ay), bx: Float(bx), by: Float(by), radius: radius,
                                             refract: n % 3 == 0 ? 0 : 1, shade: 0, pad0: 0)]
                let box = MistTiles(shapes: shapes, width: w, height: h).bounds[0]
                let (x0, x1, y0, y1) = (Int(box[0]), Int(box[1]), Int(box[2]), Int(box[3]))
                let list: [Int32] = [0]
                for y in max(0, y0 - 4) ... min(h - 1, y1 + 4) where y0 - 4 <= y1 + 4 {
                    let py = (Float(y) + 0.5) * invWidth
                    for x in max(0, x0 - 4) ... min(w - 1, x1 + 4) where x < x0 || x > x1 || y < y0 || y > y1 {
                        let px = SIMD8<Float>(repeating: (Float(x) + 0.5) * invWidth)
                        var weights = [Float](repeating: 0.5, count: 8)
                        var lens = [Int32](repeating: -1, count: 8), d2 = [Float](repeating: 0, count: 8)
                        let found = glint_mist_shapes8(px, py, shapes, list, 0, 1, &weights, 0, &lens, &d2)
                        tested += 1
                        if found != 0 || weights[0] != 0.5 { inside += 1 }
                    }
                }
            }
        }
        #expect(tested > 10_000)
        #expect(inside == 0, "\(inside) of \(tested) pixels outside their shape's box are inside it")
    }

    /// A tile's span that ends short of eight pixels touches only its own pixels and weights:
    /// the group's test and lens work on eight lanes, and the lanes past the span (the next
    /// tile, the next row, or past the image) must be neither drawn nor written back.
    @Test func shortShapeSpanTouchesOnlyItsPixels() {
        let (w, h) = (16, 2)
        let sharp = [UInt8](repeating: 10, count: w * h * 4), blurred = [UInt8](repeating: 200, count: w * h * 4)
        var weight = [Float](repeating: 0.5, count: w * h)
        var out = [UInt8](repeating: 0xAB, count: w * h * 4)
        // One drop over the whole window, no rim shade: its lens shows the uniform sharp image.
        let shapes = [GlintMistShape(ax: 0.5, ay: 0.06, bx: 0.5, by: 0.06, radius: 2, refract: 1, shade: 0, pad0: 0)]
        var p = GlintMistParams()
        p.inv_width = 1 / Float(w); p.fog_step = 0.01; p.refraction = 3; p.bend = 0.9
        p.width = Int32(w); p.height = Int32(h)
        let list: [Int32] = [0], bounds = MistTiles(shapes: shapes, width: w, height: h).bounds
        for (x0, y) in [(5, 0), (13, 1)] {   // mid-row, and the image's last three pixels
            list.withUnsafeBufferPointer { l in
                MistCPU.shapeSpan(x0, 3, y, sharp: sharp, blurred: blurred, weight: &weight, out: &out,
                                  shapes: shapes, list: l, range: 0..<1, bounds: bounds, p: p)
            }
        }
        let span = Set([5, 6, 7, w + 13, w + 14, w + 15])
        for i in 0 ..< w * h {
            let px = Array(out[4 * i ..< 4 * i + 4])
            #expect(weight[i] == (span.contains(i) ? 0 : 0.5), "weight \(i)")
            #expect(px == (span.contains(i) ? [10, 10, 10, 10] : [0xAB, 0xAB, 0xAB, 0xAB]), "pixel \(i)")
        }
    }

    /// A rewound renderer plays the same sequence again, byte for byte, on both backends: drops,
    /// fog and camera start afresh (the bench times runs this way).
    @Test func rewindReplaysTheSequence() async throws {
        let job = busyJob(frames: 6)
        let image = TestPicture.make(width: 48, height: 32)
        for backend in [Backend.cpu, try openCL()] {
            let r = try MistRenderer(job: job, width: 48, height: 32, backend: backend)
            var first: [Image8] = []
            for f in 0..<6 { first.append(try await r.renderNext(camera: f == 0 ? image : nil)) }
            try r.rewind()
            #expect(r.kernelSeconds == 0)
            await #expect(throws: GlintError.self) { try await r.renderNext(camera: nil) }  // needs a camera again
            try r.rewind()
            for f in 0..<6 {
                let again = try await r.renderNext(camera: f == 0 ? image : nil)
                #expect(again == first[f], "\(backend.label), frame \(f)")
            }
        }
    }

    /// A moving camera (a new image each frame) also matches, the blur running every frame.
    @Test func movingCameraMatches() async throws {
        var job = busyJob(frames: 4)
        job.sigma = 7
        let pictures = [TestPicture.make(width: 50, height: 30), TestPicture.make(width: 50, height: 30, shift: 5)]
        let a = try MistRenderer(job: job, width: 50, height: 30, backend: .cpu)
        let b = try MistRenderer(job: job, width: 50, height: 30, backend: try openCL())
        for f in 0..<4 {
            let x = try await a.renderNext(camera: pictures[f % 2]), y = try await b.renderNext(camera: pictures[f % 2])
            #expect(try maxDifference(x, y) <= 1)
        }
    }

    /// With no drops and no wipes the window fogs over completely in 100 frames (0.01 a frame).
    @Test func withoutDropsTheMistConvergesToTheBlurredImage() async throws {
        var job = MistJob()
        job.frames = 100
        job.drops = 0
        job.sigma = 4
        let image = TestPicture.make(width: 24, height: 16)
        let r = try MistRenderer(job: job, width: 24, height: 16, backend: .cpu)
        var last = image
        for f in 0..<100 { last = try await r.renderNext(camera: f == 0 ? image : nil) }
        let blurred = try await BlurRenderer.blur(image, BlurJob(sigma: 4), on: .cpu).image
        #expect(try maxDifference(last, blurred) <= 1)
        // 100 float steps of 0.01 reach 1 to within float rounding (0.9999993).
        #expect(try r.weights().allSatisfy { $0 > 0.99999 })
        // Halfway, the window is half fogged: neither sharp nor blurred.
        let half = try MistRenderer(job: job, width: 24, height: 16, backend: .cpu)
        for f in 0..<50 { last = try await half.renderNext(camera: f == 0 ? image : nil) }
        #expect(try half.weights().allSatisfy { abs($0 - 0.5) < 1e-4 })
    }

    /// Under a drop the weight is 0 (the drop has cleared the mist there).
    @Test(arguments: [true, false])
    func underADropTheWeightIsZero(_ classic: Bool) async throws {
        var job = busyJob(frames: 5)
        job.classic = classic
        job.wipes = []
        let (w, h) = (80, 60)
        let r = try MistRenderer(job: job, width: w, height: h, backend: .cpu)
        for f in 0..<5 { _ = try await r.renderNext(camera: f == 0 ? TestPicture.make(width: w, height: h) : nil) }
        let weights = try r.weights()
        var checked = 0
        for d in r.simulation.drops {
            let x = Int(d.x * Double(w)), y = Int(d.y * Double(w))
            guard x >= 0 && x < w && y >= 0 && y < h else { continue }
            let cx = (Double(x) + 0.5) / Double(w), cy = (Double(y) + 0.5) / Double(w)
            guard ((cx - d.x) * (cx - d.x) + (cy - d.y) * (cy - d.y)).squareRoot() < d.radius * 0.99 else { continue }
            #expect(weights[y * w + x] == 0)
            checked += 1
        }
        #expect(checked > 5)
        // Far from every drop the mist has built up for 5 frames.
        #expect(weights.contains { abs($0 - 0.05) < 1e-6 })
    }

    /// A wipe clears its path.
    @Test func aWipeClearsItsPath() async throws {
        var job = MistJob()
        job.frames = 4
        job.drops = 0
        job.wipes = [MistWipe(start: 3, points: [SIMD2(0.5, 0.5)], radius: 0.1)]
        let r = try MistRenderer(job: job, width: 40, height: 40, backend: .cpu)
        for f in 0..<4 { _ = try await r.renderNext(camera: f == 0 ? TestPicture.make(width: 40, height: 40) : nil) }
        let weights = try r.weights()
        #expect(weights[20 * 40 + 20] == 0 && weights[0] > 0)
    }

    /// The same seed gives the same frames; another seed other frames.
    @Test func theSameSeedGivesTheSameFrames() async throws {
        let image = TestPicture.make(width: 48, height: 32)
        let a = try await render(busyJob(frames: 6), image, on: .cpu)
        let b = try await render(busyJob(frames: 6), image, on: .cpu)
        let c = try await render(busyJob(frames: 6, seed: 4), image, on: .cpu)
        #expect(a == b)
        #expect(a.last != c.last)
        // The rain alone is a pure function of the job.
        var s1 = MistSimulation(job: busyJob(), width: 100, height: 60), s2 = s1
        for f in 0..<50 { #expect(s1.advance(frame: f).count == s2.advance(frame: f).count) }
        #expect(s1.drops == s2.drops && s1.droplets == s2.droplets)
    }

    @Test func dropsMergeAndLeaveTrailsUnlessClassic() {
        var job = busyJob()
        job.drops = 60
        job.wipes = []
        var rain = MistSimulation(job: job, width: 100, height: 100)
        var classic = job
        classic.classic = true
        var seed = MistSimulation(job: classic, width: 100, height: 100)
        for f in 0..<120 { _ = rain.advance(frame: f); _ = seed.advance(frame: f) }
        #expect(!rain.droplets.isEmpty)
        #expect(Set(rain.drops.map(\.radius)).count > 10)
        #expect(rain.drops.contains { $0.radius > MistSimulation.baseRadius * 1.7 })  // grown by merging or gathering
        #expect(seed.droplets.isEmpty && seed.drops.allSatisfy { $0.radius == MistSimulation.baseRadius })
    }

    @Test func wipesJSONIsReadAndMalformedFilesAreRefused() throws {
        let wipes = try MistJob.parseWipes(#"[{"start": 4, "radius": 0.1, "points": [[0.1, 0.2], [0.3, 0.4]]}, {"start": 0, "points": [[0.5, 0.5]]}]"#, name: "w.json")
        #expect(wipes == [MistWipe(start: 4, points: [SIMD2(0.1, 0.2), SIMD2(0.3, 0.4)], radius: 0.1),
                          MistWipe(start: 0, points: [SIMD2(0.5, 0.5)], radius: 0.05)])
        for bad in ["", "{", #"{"start": 1}"#, "[1]", #"[{"points": [[0, 0]]}]"#, #"[{"start": -1, "points": [[0, 0]]}]"#,
                    #"[{"start": 1.5, "points": [[0, 0]]}]"#, #"[{"start": 0, "points": []}]"#,
                    #"[{"start": 0, "points": [[0]]}]"#, #"[{"start": 0, "radius": 0, "points": [[0, 0]]}]"#] {
            #expect(throws: GlintError.self, "\(bad)") { try MistJob.parseWipes(bad, name: "w.json") }
        }
        #expect(try MistJob.parseGravity("0,1\n# tilt\n\n0.5, 1\n", name: "g") == [SIMD2(0, 1), SIMD2(0.5, 1)])
        #expect(throws: GlintError.self) { try MistJob.parseGravity("0;1", name: "g") }
    }

    @Test func badJobsAreRefused() {
        for change in [{ (j: inout MistJob) in j.frames = 0 }, { $0.sigma = 0 }, { $0.sigma = -3 }, { $0.drops = -1 },
                       { $0.fps = 0 }, { $0.gravity = SIMD2(.nan, 1) }] as [(inout MistJob) -> Void] {
            var job = MistJob()
            change(&job)
            #expect(throws: GlintError.self) { try job.validate() }
        }
        #expect(throws: GlintError.self) { try MistRenderer(job: MistJob(), width: 0, height: 10, backend: .cpu) }
        #expect(throws: GlintError.self) { try MistRenderer(job: MistJob(), width: 100_000, height: 100_000, backend: .cpu) }
    }
}
