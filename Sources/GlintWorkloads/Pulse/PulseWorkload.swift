import GlintCore

/// The pulse: a 60 Hz oscillator driving a colour's purity through HSV. Benchmark case: frames/s,
/// fill plus read-back.
public enum PulseWorkload: Workload {
    public static let name = "pulse"
    public static let parity = "the last frame within 1 level"

    public static func benchCases(_ kind: BenchSuiteKind) -> [BenchCase] {
        // One colour fill: nothing a device-sized case would show.
        if kind == .device { return [] }
        let (w, h) = kind == .quick ? (160, 120) : (1920, 1080)
        var job = PulseJob()
        job.width = w
        job.height = h
        job.frames = 1
        let frozen = job
        // A frame in the middle of an oscillation: the colour is not a corner case.
        let frame = 37
        return [BenchCase(
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
            validate: { try BenchValidation.images($0, $1) })]
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
