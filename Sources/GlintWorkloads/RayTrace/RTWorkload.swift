import GlintCore

/// Ray Tracing in One Weekend. Benchmark cases: the book cover at depth 50 (Msamples/s = pixel samples
/// per second on the median wall time), validated against the Swift path statistically
/// (docs/DESIGN.md: mean absolute difference < 0.5% of full scale, PSNR >= 40 dB, differing pixels
/// reported), since the two paths' transcendental functions differ in the last bits and a
/// path that turns on such a bit diverges.
public enum RTWorkload: Workload {
    public static let name = "rtow"
    public static let parity = "mean difference below 0.5% of full scale and PSNR at least 40 dB"

    public static func benchCases(_ kind: BenchSuiteKind) -> [BenchCase] {
        switch kind {
        case .quick: return [make("cover", 160, 90, spp: 2)]
        case .standard: return [make("cover", 400, 225, spp: 16), make("cover", 1200, 800, spp: 8)]
        case .full: return [make("ch8", 400, 225, spp: 16), make("ch10", 400, 225, spp: 16),
                            make("cover", 400, 225, spp: 32), make("cover", 1200, 800, spp: 16)]
        case .device: return [deviceSized(spp: 16)]
        }
    }

    /// The device-sized ladder: the cover at 1200x800, 16 samples a pixel, 4 times more each step
    /// up to 1024. No peak applies: a path's work is a mix of intersection tests, scattering and
    /// random numbers that no flop count describes fairly.
    static func deviceSized(spp: Int) -> BenchCase {
        var c = make("cover", 1200, 800, spp: spp)
        if spp < 1024 { c.larger = { deviceSized(spp: spp * 4) } }
        c.unsupported = { backend in backend.isOpenCL ? nil : "device-sized cases measure OpenCL devices" }
        return c
    }

    static func make(_ sceneName: String, _ width: Int, _ height: Int, spp: Int) -> BenchCase {
        let scene = RTScene.builtin(sceneName, seed: 0) ?? RTScene.cover(seed: 0)
        var job = RTJob(scene: scene)
        job.width = width
        job.height = height
        job.samplesPerPixel = spp
        job.maxDepth = 50
        let frozen = job
        var c = BenchCase(
            workload: name, name: "\(sceneName)-spp\(spp)", width: width, height: height,
            parameters: .object([("scene", .string(sceneName)), ("spp", .int(Int64(spp))), ("depth", .int(50)), ("seed", .int(0))]),
            unit: .megaSamples, imageBytes: width * height * (4 + 16),  // the image and its float sums
            tolerance: "mean absolute difference < 0.5% of full scale, PSNR >= 40 dB",
            run: { backend, detailed in
                let r = try await RTRenderer.render(frozen, on: backend)
                return BenchRun(wallSeconds: r.wallSeconds, kernelSeconds: r.kernelSeconds, work: Double(r.samples),
                                output: detailed ? BenchOutput(image: r.image) : nil)
            },
            validate: { candidate, reference in
                guard let a = candidate.image, let b = reference.image else { throw GlintError("rtow validation needs both images") }
                let d = try ImageCompare.compare(a, b)
                let passed = Tolerance.statistical.passes(d)
                let summary = "mean \(Format.fixed(d.overall.meanAbs / 255 * 100, 3))% of full scale, PSNR "
                    + (d.overall.psnr.isFinite ? Format.fixed(d.overall.psnr, 1) + " dB" : "inf")
                    + ", \(Format.fixed(d.overall.shareOver * 100, 2))% of pixels differ by more than 1 level"
                return BenchValidation(passed: passed, summary: summary, metrics: d.json)
            })
        c.autoWork = Double(width * height * spp)
        return c
    }
}

/// Compared statistically (docs/DESIGN.md): the two paths' transcendental functions differ in
/// the last bits, and a path that turns on such a bit diverges.
extension RTJob: ComparableJob {
    public var autoKind: AutoKind { .rtow }

    public func comparisonRun(on backend: Backend, detailed: Bool) async throws -> ComparisonRun {
        ComparisonRun(try await RTRenderer.render(self, on: backend))
    }

    public var comparisonTolerance: Tolerance { .statistical }
}
