import GlintCore
import GlintWorkloads
import Testing
#if canImport(Glibc)
import Glibc
#endif

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
