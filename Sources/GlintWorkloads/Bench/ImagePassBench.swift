import GlintCore

/// Benchmark cases of the isometric transform (MP/s of canvas) and the pulse (frames/s, fill
/// plus read-back).
enum IsoPulseBench {
    /// A deterministic test picture: gradients, rings and a hard edge, opaque.
    static func testPicture(width: Int, height: Int) -> Image8 {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let dx = Double(x - width / 2), dy = Double(y - height / 2)
                let ring = UInt8(truncatingIfNeeded: Int((dx * dx + dy * dy).squareRoot()) * 4)
                pixels[i] = UInt8(x * 255 / max(1, width - 1))
                pixels[i + 1] = ring
                pixels[i + 2] = x > width / 3 ? UInt8(y * 255 / max(1, height - 1)) : 40
            }
        }
        return Image8(width: width, height: height, pixels: pixels)
    }

    static func validateImages(_ candidate: BenchOutput, _ reference: BenchOutput) throws -> BenchValidation {
        guard let a = candidate.image, let b = reference.image else { throw GlintError("validation needs images from both runs") }
        let d = try ImageCompare.compare(a, b)
        let passed = Tolerance.oneLevel.passes(d)
        let summary = "max \(Format.short(d.overall.maxAbs)) level\(d.overall.maxAbs == 1 ? "" : "s"), "
            + "PSNR " + (d.overall.psnr.isFinite ? Format.fixed(d.overall.psnr, 1) + " dB" : "inf")
        return BenchValidation(passed: passed, summary: summary, metrics: d.json)
    }

    static func isoCases(_ kind: BenchSuiteKind) -> [BenchCase] {
        let sizes: [(Int, Int)] = kind == .quick ? [(160, 120)] : kind == .standard ? [(3840, 2160)] : [(1920, 1080), (3840, 2160)]
        return sizes.flatMap { size in
            [("iso-square", 0.0), ("iso-rounded", 48.0)].map { name, radius in
                isoCase(name: name, width: size.0, height: size.1, radius: kind == .quick ? radius / 4 : radius)
            }
        }
    }

    static func isoCase(name: String, width: Int, height: Int, radius: Double) -> BenchCase {
        let picture = testPicture(width: width, height: height)
        var job = IsoJob(source: picture)
        job.depth = 20
        job.cornerRadius = radius
        let frozen = job
        let (cw, ch) = job.canvasSize
        return BenchCase(
            workload: "iso", name: name, width: width, height: height,
            parameters: .object([("depth", .number(20)), ("corner_radius", .number(radius)), ("ss", .int(4)),
                                 ("canvas", .array([.int(Int64(cw)), .int(Int64(ch))]))]),
            unit: .megaPixels, tolerance: "8-bit channels within 1 level",
            run: { backend, detailed in
                let r = try await IsoRenderer.render(frozen, on: backend)
                return BenchRun(wallSeconds: r.wallSeconds, kernelSeconds: r.kernelSeconds, work: Double(cw * ch),
                                output: detailed ? BenchOutput(image: r.image) : nil)
            },
            validate: validateImages)
    }

    static func pulseCases(_ kind: BenchSuiteKind) -> [BenchCase] {
        let (w, h) = kind == .quick ? (160, 120) : (1920, 1080)
        var job = PulseJob()
        job.width = w
        job.height = h
        job.frames = 1
        let frozen = job
        // A frame in the middle of an oscillation: the colour is not a corner case.
        let frame = 37
        return [BenchCase(
            workload: "pulse", name: "pulse-frame", width: w, height: h,
            parameters: .object([("frame", .int(Int64(frame))), ("hue", .number(job.hue)),
                                 ("purity_center", .number(job.purityCenter)), ("purity_range", .number(job.purityRange))]),
            unit: .frames, tolerance: "8-bit channels within 1 level",
            run: { backend, detailed in
                let start = Clock.now()
                let r = try PulseRenderer.render(frozen, frame: frame, on: backend)
                return BenchRun(wallSeconds: Clock.now() - start, kernelSeconds: r.kernelSeconds, work: 1,
                                output: detailed ? BenchOutput(image: r.image) : nil)
            },
            validate: validateImages)]
    }
}
