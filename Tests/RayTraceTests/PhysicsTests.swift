import GlintCore
import GlintTestSupport
@testable import GlintWorkloads
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Facts of light transport that hold whatever the implementation: expected values come from
/// physics (or from independent Double arithmetic here), not from either path.
@Suite struct RTPhysicsTests {
    static let backends: [String] = ["cpu", "opencl"]

    /// White furnace: a diffuse sphere of albedo 1 under a uniform white sky is invisible (every
    /// path escapes with weight 1); with albedo 0.5 its disc reads 0.5 (one bounce off a convex
    /// body, then the sky).
    @Test(arguments: backends)
    func whiteFurnace(_ name: String) async throws {
        for albedo in [1.0, 0.5] {
            var job = RTJob(scene: testScene([.lambertian(albedo: SIMD3(repeating: albedo))],
                                             [RTSphere(center: SIMD3(0, 0, 0), radius: 1, material: 0)]))
            job.width = 24; job.height = 24; job.samplesPerPixel = 4
            let image = try await render(job, on: try backend(name)).linear
            for c in 0..<3 {
                let centre = Double(image[12, 12][c]), corner = Double(image[0, 0][c])
                #expect(abs(centre - albedo) < 1e-4, "albedo \(albedo): centre \(centre)")
                #expect(abs(corner - 1) < 1e-6, "the sky: \(corner)")
            }
            if albedo == 1 {
                let worst = image.pixels.enumerated().filter { $0.offset % 4 != 3 }.map { abs(Double($0.element) - 1) }.max() ?? 1
                #expect(worst < 1e-4, "furnace: the sphere shows (off by \(worst))")
            }
        }
    }

    /// Clear glass (attenuation 1) under a uniform sky neither adds nor removes light: a solid
    /// sphere and SwiftRTOW's hollow shell render as the sky. The app's (1, 1, 1.1) adds blue.
    @Test(arguments: backends)
    func glassConservesEnergy(_ name: String) async throws {
        let spheres = [RTSphere(center: SIMD3(-0.9, 0, 0), radius: 0.8, material: 0),
                       RTSphere(center: SIMD3(0.9, 0, 0), radius: 0.8, material: 0),
                       RTSphere(center: SIMD3(0.9, 0, 0), radius: -0.6, material: 0)]
        var job = RTJob(scene: testScene([.glass(1.5)], spheres))
        job.width = 32; job.height = 16; job.samplesPerPixel = 8
        let image = try await render(job, on: try backend(name)).linear
        for c in 0..<3 {
            // Paths cut at the depth limit would read 0; with 50 rays there are (next to) none.
            #expect(abs(mean(image, channel: c) - 1) < 0.002, "channel \(c): \(mean(image, channel: c))")
        }
        job.scene.useAppGlass()
        let tinted = try await render(job, on: try backend(name)).linear
        let inside = { (x: Int, y: Int) in y >= 6 && y < 10 && ((x >= 8 && x < 13) || (x >= 19 && x < 24)) }
        #expect(mean(tinted, channel: 2, where: inside) > 1.1, "the app's glass should add blue")
        #expect(abs(mean(tinted, channel: 0, where: inside) - 1) < 0.002)
    }

    /// A perfect mirror (metal, fuzz 0, albedo 1) shows the sky gradient reflected: each pixel
    /// equals the sky in the reflected direction of its centre ray, computed here in Double.
    @Test(arguments: backends)
    func mirrorReflectsTheSkyGradient(_ name: String) async throws {
        let scene = testScene([.metal(albedo: SIMD3(1, 1, 1), fuzz: 0)],
                              [RTSphere(center: SIMD3(0, 0, 0), radius: 1, material: 0)], sky: .book, vfov: 28)
        var job = RTJob(scene: scene)
        job.width = 40; job.height = 40; job.samplesPerPixel = 8
        let image = try await render(job, on: try backend(name)).linear
        let f = scene.camera.frame(aspect: 1)
        var checked = 0
        for y in 0..<40 {
            for x in 0..<40 {
                // The centre ray, in Double, with the book's camera.
                let s = (Double(x) + 0.5) / 40, t = (Double(39 - y) + 0.5) / 40
                var d = f.corner + f.horizontal * s + f.vertical * t - f.origin
                d = d / (d * d).sum().squareRoot()
                let o = f.origin
                let b = (o * d).sum(), c = (o * o).sum() - 1
                let disc = b * b - c
                guard disc > 0.3 else { continue }  // well inside the silhouette
                let hit = o + d * (-b - disc.squareRoot())
                let n = hit  // unit sphere at the origin
                let r = d - n * (2 * (d * n).sum())
                let k = 0.5 * (r.y / (r * r).sum().squareRoot() + 1)
                let expected = SIMD3<Double>(1, 1, 1) * (1 - k) + SIMD3(0.5, 0.7, 1.0) * k
                for ch in 0..<3 {
                    let got = Double(image[x, y][ch])
                    #expect(abs(got - expected[ch]) < 0.02, "pixel \(x),\(y) channel \(ch): \(got) vs \(expected[ch])")
                }
                checked += 1
            }
        }
        #expect(checked > 300, "too few pixels on the mirror: \(checked)")
    }

    /// Monte Carlo error falls like 1/sqrt(spp): RMS error against a 1024-spp render of another
    /// seed halves for every 4x the samples (within 1.6x...2.5x).
    @Test func errorFallsLikeOneOverSqrtSPP() async throws {
        let cl = try openCL()
        let reference = try await render(smallJob("ch10", 32, 20, spp: 1024, seed: 1000), on: cl).linear
        var errors: [Double] = []
        for spp in [4, 16, 64] {
            var total = 0.0
            // Average the squared error over three seeds for a steadier estimate.
            for seed in 1...3 as ClosedRange<UInt64> {
                let image = try await render(smallJob("ch10", 32, 20, spp: spp, seed: seed), on: cl).linear
                for i in 0..<image.pixels.count where i % 4 != 3 {
                    let d = Double(image.pixels[i] - reference.pixels[i])
                    total += d * d
                }
            }
            errors.append((total / Double(3 * 32 * 20 * 3)).squareRoot())
        }
        print("rtow RMS error at 4, 16, 64 spp: \(errors)")
        for i in 0..<2 {
            let ratio = errors[i] / errors[i + 1]
            #expect(ratio > 1.6 && ratio < 2.5, "error ratio for 4x samples: \(ratio) (\(errors))")
        }
    }

    /// The twin's polynomial sin/cos and Newton cube root are accurate (they replace libm so that
    /// both paths compute the same bits).
    @Test func sinCosAndCubeRootAreAccurate() {
        var worst = 0.0
        for i in 0...4096 {
            let u = Float(i) / 4096
            let sc = RTTrace.sinCosTurns(u)
            let a = 2 * Double.pi * Double(u)
            worst = max(worst, abs(Double(sc.s) - sin(a)), abs(Double(sc.c) - cos(a)))
        }
        #expect(worst < 1e-6, "sin/cos error \(worst)")
        var cbrtWorst = 0.0
        for i in 0..<4096 {
            let x = Float(i) / 4096
            cbrtWorst = max(cbrtWorst, abs(Double(RTTrace.cbrt(x)) - libmCbrt(Double(x))))
        }
        #expect(cbrtWorst < 1e-6, "cbrt error \(cbrtWorst)")
    }
}

func libmCbrt(_ x: Double) -> Double { Glibc.cbrt(x) }
