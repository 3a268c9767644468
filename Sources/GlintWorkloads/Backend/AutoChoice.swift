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
/// faster of the Swift CPU path and the machine's OpenCL CPU device, as measured.
public enum AutoChoice {
    /// On a machine whose OpenCL devices are all CPUs that compile for AVX2, which path runs each
    /// kind faster, and why in a line (measured with `glint bench` on a 2-core AMD EPYC with AVX2
    /// and no AVX-512, PoCL 3.1: docs/PERFORMANCE.md). No kind runs on PoCL; a calibration
    /// (`glint devices --calibrate`) still decides plain fractals for a machine.
    public static let onCPUDevices: [AutoKind: (openCL: Bool, why: String)] = [
        .fractal: (false, "Swift path 1.1-1.6x faster in float, double and supersampled, even on the deep double view, and PoCL's start-up, 38-45 ms a command, comes on top"),
        .fractalSmooth: (false, "PoCL's kernels 1.5x faster, but a command pays PoCL's start-up (38-45 ms), more than they save at 1080p"),
        .fractalDeep: (false, "Swift path 1.8-2.5x faster (1e100 to 1e1000)"),
        .rtow: (false, "Swift path 1.09-1.13x faster"),
        .blur: (false, "a command blurs one image, and PoCL's start-up outweighs its kernels; repeated 1080p blurs are as fast or faster on the Swift path"),
        .mist: (false, "Swift path 1.5x faster"),
        .iso: (false, "Swift path 1.3-1.7x faster (PoCL adds the copies in and out to a slower kernel)"),
        .pulse: (false, "Swift path 4x faster (PoCL's fill and read-back cost more than its kernel)"),
    ]

    /// Where the OpenCL CPU device compiles for AVX-512 (16 float lanes natively, as PoCL reports
    /// it there), the kinds it runs faster than the Swift path (which is AVX2 code everywhere):
    /// none. Measured with `glint bench` on a 2-core AMD EPYC (Zen 4) with AVX-512, PoCL 3.1,
    /// medians: the Swift path 1.1-1.5x faster for every plain fractal case (1080p float 5.4
    /// against 8.2 ms, double 9.2 against 9.8 ms, without interior skipping 15.3 against 17.9 ms,
    /// burning ship 23.2 against 26.1 ms, julia 3x3 supersampled 60.0 against 64.8 ms, 4K float
    /// 21.6 against 28.9 ms), and faster still for every other kind but the blur, whose repeated
    /// runs PoCL does faster since the kernels' CPU forms while a `glint blur` command, one image,
    /// pays PoCL's start-up (`onCPUDevices`).
    public static let onAVX512Devices: Set<AutoKind> = []

    /// Whether `auto` runs `kind` on an OpenCL CPU device rather than the Swift path, for a device
    /// whose native float vector width is `vectorWidth` (nil: not known, the first table).
    /// A calibration (`AutoCalibration`) overrides this for plain fractals.
    public static func prefersOpenCLCPU(_ kind: AutoKind, vectorWidth: Int? = nil) -> Bool {
        if let vectorWidth, vectorWidth >= 16 { return onAVX512Devices.contains(kind) }
        return onCPUDevices[kind]?.openCL ?? false
    }

    /// Whether some device could make `auto` run `kind` on OpenCL (else no driver need be loaded
    /// for it on a machine known to have no GPU).
    static func mayPreferOpenCLCPU(_ kind: AutoKind) -> Bool {
        prefersOpenCLCPU(kind) || onAVX512Devices.contains(kind)
    }
}

extension FractalJob {
    /// The job's kind for `--device auto`.
    public var autoKind: AutoKind {
        if precision == .perturbation { return .fractalDeep }
        return smooth ? .fractalSmooth : .fractal
    }
}
