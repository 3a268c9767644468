import GlintCore

/// The pulse: a 60 Hz oscillator driving a colour's purity through HSV. Benchmark case: frames/s,
/// fill plus read-back.
public enum PulseWorkload: Workload {
    public static let name = "pulse"
    public static let parity = "the last frame within 1 level"

    public static func benchCases(_ kind: BenchSuiteKind) -> [BenchCase] {
        // One colour fill: nothing a device-sized case would show.
        if kind == .device { return [] }
        return kind == .quick ? [frameCase(width: 160, height: 120)] : [frameCase(width: 1920, height: 1080)]
    }

    /// One frame at `width` x `height`.
    static func frameCase(width w: Int, height h: Int) -> BenchCase {
        var job = PulseJob()
        job.width = w
        job.height = h
        job.frames = 1
        let frozen = job
        // A frame in the middle of an oscillation: the colour is not a corner case.
        let frame = 37
        var c = BenchCase(
            workload: name, name: "pulse-frame", width: w, height: h,
            parameters: .object([("frame", .int(Int64(frame))), ("hue", .number(job.hue)),
                                 ("purity_center", .number(job.purityCenter)), ("purity_range", .number(job.purityRange))]),
            unit: .frames, tolerance: "8-bit channels within 1 level",
            run: { backend, detailed in
                let start = Clock.now()
                let r = try PulseRenderer.render(frozen, frame: frame, on: backend)
                return BenchRun(wallSeconds: Clock.now() - start, kernelSeconds: r.kernelSeconds, work: 1,
                                output: detailed ? BenchOutput(image: r.image) : nil)
            },
            validate: { try BenchValidation.images($0, $1) })
        c.autoWork = Double(w * h)
        return c
    }
}

/// Compared on the sequence's last frame, within one level.
extension PulseJob: ComparableJob {
    public var autoKind: AutoKind { .pulse }

    public func comparisonRun(on backend: Backend, detailed: Bool) async throws -> ComparisonRun {
        let start = Clock.now()
        let r = try PulseRenderer.render(self, frame: frames - 1, on: backend)
        return ComparisonRun(image: r.image, wallSeconds: Clock.now() - start, kernelSeconds: r.kernelSeconds)
    }

    public var comparisonTolerance: Tolerance { .oneLevel }
}
