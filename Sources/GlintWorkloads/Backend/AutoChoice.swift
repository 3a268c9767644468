import GlintCL

/// A kind of job as `--device auto` tells them apart: jobs of one kind run fastest on the same
/// kind of device.
public enum AutoKind: String, CaseIterable, Sendable {
    /// Escape counts in float or double, any formula, supersampled or not.
    case fractal
    /// Smooth colouring (a logarithm per escaping sample, bailout usually large).
    case fractalSmooth = "fractal-smooth"
    /// Deep zoom: perturbation against a reference orbit, with BLA.
    case fractalDeep = "fractal-deep"
    case rtow, blur, mist, iso, pulse

    /// The kind of every job of a workload other than fractal (whose kind depends on the job);
    /// nil for a name that is no kind (a new workload needs its own case and measurement).
    public init?(workload: String) {
        guard workload != "fractal", let kind = AutoKind(rawValue: workload) else { return nil }
        self = kind
    }
}

/// Where `--device auto` runs each kind of job: the first OpenCL GPU when there is one, else the
/// faster of the Swift CPU path and the machine's OpenCL CPU device, as measured
/// (docs/PERFORMANCE.md#auto-without-a-gpu; the reasons also in docs/BACKENDS.md).
public enum AutoChoice {
    /// The two paths on a machine without a GPU.
    public enum CPUPath: String, Sendable {
        case swift = "Swift path"
        case openCLCPU = "OpenCL CPU device"
    }

    /// Where `auto` runs `kind` on a machine without a GPU, and why in a line. The same whether
    /// the OpenCL CPU device compiles for AVX2 or AVX-512; a calibration (`AutoCalibration`,
    /// `glint devices --calibrate`) overrides it for plain fractals.
    public static func withoutGPU(_ kind: AutoKind) -> (path: CPUPath, why: String) {
        switch kind {
        case .fractal: (.swift, "the Swift escape loop is faster than PoCL's on AVX2 and AVX-512; PoCL adds its start-up")
        case .fractalSmooth: (.swift, "PoCL's kernels are faster, but a command pays PoCL's start-up, more than they save at 1080p")
        case .fractalDeep: (.swift, "PoCL compiles the perturbation loop scalar")
        case .rtow: (.swift, "the Swift tracer is faster than PoCL's kernel")
        case .blur: (.swift, "a command blurs one image, and PoCL's start-up outweighs its kernels")
        case .mist: (.swift, "the Swift blur and compose are faster than PoCL's kernels")
        case .iso: (.swift, "PoCL adds the copies in and out to a slower kernel")
        case .pulse: (.swift, "PoCL's fill and read-back of the frame cost more than its kernel")
        }
    }

    /// Whether `auto` runs `kind` on an OpenCL CPU device rather than the Swift path.
    public static func prefersOpenCLCPU(_ kind: AutoKind) -> Bool { withoutGPU(kind).path == .openCLCPU }
}

extension FractalJob {
    /// The job's kind for `--device auto`.
    public var autoKind: AutoKind {
        if precision == .perturbation { return .fractalDeep }
        return smooth ? .fractalSmooth : .fractal
    }
}
