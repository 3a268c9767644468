import GlintCore

/// The isometric transform with extrusion. Benchmark cases: MP/s of canvas.
public enum IsoWorkload: Workload {
    public static let name = "iso"
    public static let parity = "within 1 level"

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

    public static func benchCases(_ kind: BenchSuiteKind) -> [BenchCase] {
        if kind == .device { return [deviceSized(step: 0)] }
        let sizes: [(Int, Int)] = kind == .quick ? [(160, 120)] : kind == .standard ? [(3840, 2160)] : [(1920, 1080), (3840, 2160)]
        return sizes.flatMap { size in
            [("iso-square", 0.0), ("iso-rounded", 48.0)].map { name, radius in
                isoCase(name: name, width: size.0, height: size.1, radius: kind == .quick ? radius / 4 : radius)
            }
        }
    }

    /// The device-sized ladder of the square view: 1080p, 4K, 8K sources.
    static func deviceSized(step: Int) -> BenchCase {
        let sizes = [(1920, 1080), (3840, 2160), (7680, 4320)]
        var c = isoCase(name: "iso-square", width: sizes[step].0, height: sizes[step].1, radius: 0)
        if step + 1 < sizes.count { c.larger = { deviceSized(step: step + 1) } }
        c.unsupported = { backend in backend.isOpenCL ? nil : "device-sized cases measure OpenCL devices" }
        return c
    }

    static func isoCase(name: String, width: Int, height: Int, radius: Double) -> BenchCase {
        // The source is made when the case runs and released after it (BenchScope).
        var job = IsoJob(sourceWidth: width, sourceHeight: height)
        job.depth = 20
        job.cornerRadius = radius
        let (cw, ch) = job.canvasSize
        let frozen = BenchInput { [job] in job.reapplied(to: testPicture(width: width, height: height), width: width, height: height) }
        var c = BenchCase(
            workload: IsoWorkload.name, name: name, width: width, height: height,
            parameters: .object([("depth", .number(20)), ("corner_radius", .number(radius)), ("ss", .int(4)),
                                 ("canvas", .array([.int(Int64(cw)), .int(Int64(ch))]))]),
            unit: .megaPixels, imageBytes: (width * height + cw * ch) * 4, tolerance: "8-bit channels within 1 level",
            run: { backend, detailed in
                let r = try await IsoRenderer.render(frozen.get, on: backend)
                return BenchRun(wallSeconds: r.wallSeconds, kernelSeconds: r.kernelSeconds, work: Double(cw * ch),
                                output: detailed ? BenchOutput(image: r.image) : nil)
            },
            validate: { try BenchValidation.images($0, $1) },
            peakWork: BenchPeakWork(.bytes(perRun: Double((width * height + cw * ch) * 4)),
                                    counted: "the source image read once and the view written once (RGBA8)"))
        c.autoWork = job.calibrationWork
        return c
    }
}

/// Compared within one level.
extension IsoJob: ComparableJob {
    public var autoKind: AutoKind { .iso }

    public func comparisonRun(on backend: Backend, detailed: Bool) async throws -> ComparisonRun {
        ComparisonRun(try await IsoRenderer.render(self, on: backend))
    }

    public var comparisonTolerance: Tolerance { .oneLevel }
}
