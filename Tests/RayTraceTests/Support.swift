import GlintCore
import GlintWorkloads
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The first OpenCL device. Tests never skip OpenCL: with PoCL installed (as in CI) a missing
/// device is a failure, with the inventory's reason in the message.
func openCL() throws -> Backend {
    let inventory = DeviceInventory.scan()
    let device = try #require(inventory.devices.first, "no OpenCL device: \(inventory.problem ?? "?")")
    return .opencl(try ComputeContext.shared(for: device))
}

/// A small job of a built-in scene.
func smallJob(_ scene: String, _ w: Int = 48, _ h: Int = 32, spp: Int = 4, seed: UInt64 = 1,
              _ configure: (inout RTJob) -> Void = { _ in }) -> RTJob {
    var job = RTJob(scene: RTScene.builtin(scene, seed: seed)!)
    job.width = w
    job.height = h
    job.samplesPerPixel = spp
    job.seed = seed
    configure(&job)
    return job
}

/// A scene of the given spheres under a uniform sky, seen from +z by a pinhole camera.
func testScene(_ materials: [RTMaterial], _ spheres: [RTSphere], sky: RTSky = .uniform(SIMD3(1, 1, 1)),
               vfov: Double = 30) -> RTScene {
    var cam = RTCamera()
    cam.lookfrom = SIMD3(0, 0, 5)
    cam.lookat = SIMD3(0, 0, 0)
    cam.vfov = vfov
    cam.aperture = 0
    cam.focusDist = 5
    return RTScene(name: "test", materials: materials, spheres: spheres, sky: sky, camera: cam)
}

func render(_ job: RTJob, on backend: Backend, options: RTRenderer.Options = .init()) async throws -> RTResult {
    try await RTRenderer.render(job, on: backend, options: options)
}

/// docs/DESIGN.md's ray-tracer parity measures on 8-bit images.
struct ImageComparison: CustomStringConvertible {
    /// Mean absolute channel difference as a fraction of full scale (255).
    var meanAbsolute: Double
    /// Peak signal-to-noise ratio in dB (infinite for identical images).
    var psnr: Double
    /// Fraction of pixels with any channel different.
    var differingPixels: Double

    init(_ a: Image8, _ b: Image8) {
        precondition(a.width == b.width && a.height == b.height)
        var sum = 0.0, squares = 0.0, differing = 0
        let n = a.width * a.height
        for p in 0..<n {
            var any = false
            for c in 0..<3 {
                let d = Double(Int(a.pixels[p * 4 + c]) - Int(b.pixels[p * 4 + c]))
                sum += abs(d)
                squares += d * d
                if d != 0 { any = true }
            }
            if any { differing += 1 }
        }
        meanAbsolute = sum / Double(3 * n) / 255
        let mse = squares / Double(3 * n)
        psnr = mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
        differingPixels = Double(differing) / Double(n)
    }

    var description: String {
        "mean |diff| \(meanAbsolute * 100)% of full scale, PSNR \(psnr) dB, \(differingPixels * 100)% of pixels differ"
    }
}

/// Mean of channel `c` of a linear image over the pixels where `include(x, y)`.
func mean(_ image: ImageF, channel c: Int, where include: (Int, Int) -> Bool = { _, _ in true }) -> Double {
    var sum = 0.0, n = 0
    for y in 0..<image.height {
        for x in 0..<image.width where include(x, y) {
            sum += Double(image.pixels[(y * image.width + x) * 4 + c])
            n += 1
        }
    }
    return n == 0 ? .nan : sum / Double(n)
}
