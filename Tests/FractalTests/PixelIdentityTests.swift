// A shard's job is the PixelIdentity of the typed job: every field that decides pixels changes
// it, and nothing else does (a farm's shards must agree however their command lines spell a job).

import GlintCore
import GlintWorkloads
import Testing

@Suite struct PixelIdentityTests {
    func identity(_ value: some PixelIdentifiable) -> String {
        var id = PixelIdentity("test")
        id.add("job", value)
        return id.hex
    }

    /// Each change must give another identity than `base` and than every other change.
    func expectDistinct<T: PixelIdentifiable>(_ base: T, _ changes: [(String, (inout T) -> Void)]) {
        var seen = [identity(base): "base"]
        for (name, change) in changes {
            var v = base
            change(&v)
            let h = identity(v)
            #expect(seen[h] == nil, "\(name) gives the identity of \(seen[h] ?? "")")
            seen[h] = name
        }
    }

    func deep(_ text: String) -> DeepNumber { try! DeepNumber(parsing: text) }

    @Test("a fractal job: every setting that decides pixels or the view record")
    func fractal() {
        var base = FractalJob(formula: .julia)
        base.exactCenter = DeepComplex(re: deep("-0.743643887037158704752191506114774"), im: deep("0.1318"))
        base.exactZoom = deep("1e30")
        let texture = Image8(width: 2, height: 1, pixels: [1, 2, 3, 4, 5, 6, 7, 8])
        expectDistinct(base, [
            ("formula", { $0.formula = .burningShip }),
            ("width", { $0.width += 1 }),
            ("height", { $0.height += 1 }),
            // The 35th digit: beyond any Double, still another view at depth.
            ("centre digit", { $0.exactCenter.re = self.deep("-0.743643887037158704752191506114775") }),
            ("centre im", { $0.exactCenter.im = self.deep("0.1319") }),
            ("zoom", { $0.exactZoom = self.deep("1.0000000000000000000001e30") }),
            ("c", { $0.cRe = 0.3 }),
            ("iterations", { $0.maxIterations += 1 }),
            ("bailout", { $0.bailout = 4 }),
            ("palette", { $0.palette = .fire }),
            ("smooth", { $0.smooth = true }),
            ("ss", { $0.supersampling = 2 }),
            ("precision", { $0.precision = .double }),
            ("bla", { $0.bla = false }),
            ("texture", { $0.texture = texture }),
            ("texture pixel", { var t = texture; t.pixels[7] = 9; $0.texture = t }),
            // The record keeps the digits as typed: another file, if not other pixels.
            ("zoom spelling", { $0.exactZoom = self.deep("1E30") }),
        ])
        // Speed alone: the same identity.
        var same = base
        same.skipInterior.toggle()
        #expect(identity(same) == identity(base))
    }

    @Test("ramps, blur, iso, pulse and mist jobs")
    func others() {
        var ramps = FractalRamps()
        ramps.zoom = (deep("1"), deep("1e10"))
        expectDistinct(ramps, [
            ("zoom end", { $0.zoom = (self.deep("1"), self.deep("1e11")) }),
            ("centre", { $0.center = (DeepComplex(re: 0, im: 0), DeepComplex(re: 0.1, im: 0)) }),
            ("c", { $0.c = Ramp(name: "c", from: [0, 0], to: [0.1, 0]) }),
        ])
        expectDistinct(BlurJob(sigma: 2, method: .exact), [
            ("sigma", { $0.sigma = 2.5 }),
            ("method", { $0.method = .recursive }),
            ("border", { $0.border = .clamp }),
        ])
        // auto is the method it stands for.
        #expect(identity(BlurJob(sigma: 2, method: .auto)) == identity(BlurJob(sigma: 2, method: .exact)))
        #expect(identity(BlurJob(sigma: 9, method: .auto)) == identity(BlurJob(sigma: 9, method: .recursive)))

        let source = Image8(width: 2, height: 2, pixels: Array(0 ..< 16))
        expectDistinct(IsoJob(source: source), [
            ("pixel", { var s = source; s.pixels[0] = 99; $0 = $0.reapplied(to: s, width: 2, height: 2) }),
            ("depth", { $0.depth += 1 }),
            ("corner", { $0.cornerRadius = 0.5 }),
            ("ss", { $0.supersampling = 2 }),
        ])
        expectDistinct(PulseJob(), [
            ("width", { $0.width += 1 }),
            ("frames", { $0.frames += 1 }),
            ("fps", { $0.fps = 30 }),
            ("hue", { $0.hue = 0.5 }),
            ("purity centre", { $0.purityCenter = 0.6 }),
            ("purity range", { $0.purityRange = 0.6 }),
            ("hue ramp", { $0.hueRamp = (0, 1) }),
        ])
        let mist: [(String, (inout MistJob) -> Void)] = [
            ("frames", { $0.frames += 1 }),
            ("fps", { $0.fps = 30 }),
            ("sigma", { $0.sigma = 20 }),
            ("drops", { $0.drops += 1 }),
            ("gravity", { $0.gravity = SIMD2<Double>(1, 0) }),
            ("gravity file", { $0.gravityPerFrame = [SIMD2<Double>(0, 1), SIMD2<Double>(1, 0)] }),
            ("wipe", { $0.wipes = [MistWipe(start: 0, points: [SIMD2<Double>(0.5, 0.5)])] }),
            ("seed", { $0.seed = 1 }),
            ("classic", { $0.classic = true }),
        ]
        expectDistinct(MistJob(), mist)
    }

    @Test("a ray-traced job: scene, materials, sky, camera and settings")
    func rtow() {
        let base = RTJob(scene: RTScene.builtin("ch8", seed: 0)!)
        let grey = SIMD3<Double>(0.5, 0.5, 0.5), black = SIMD3<Double>(0, 0, 0)
        let changes: [(String, (inout RTJob) -> Void)] = [
            ("sphere", { $0.scene.spheres[0].radius += 0.001 }),
            ("material", { $0.scene.materials[0] = .metal(albedo: grey, fuzz: 0.1) }),
            ("sky", { $0.scene.sky = .uniform(black) }),
            ("camera", { $0.camera.vfov = 30 }),
            ("aperture", { $0.camera.aperture = 0 }),
            ("size", { $0.width += 1 }),
            ("spp", { $0.samplesPerPixel += 1 }),
            ("depth", { $0.maxDepth += 1 }),
            ("seed", { $0.seed = 7 }),
            ("t_min", { $0.tMin = 1e-4 }),
        ]
        expectDistinct(base, changes)
        var renamed = base
        renamed.scene.name = "other"
        #expect(identity(renamed) == identity(base))
    }
}
