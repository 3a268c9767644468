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
    /// kind faster, with the measurement that decided it (`glint bench --full`, medians: a 2-core
    /// AMD EPYC with AVX2 and no AVX-512, PoCL 3.1, unless the row says otherwise). PoCL once won
    /// the plain escape-time loops here (2.4x in float at 1080p); the same Swift code has become
    /// 1.9-3.9x faster since. The plain-fractal row is measured since with AVX2 code on both paths
    /// on a Zen 4 (`POCL_LLVM_CPU_NAME=haswell` and `GLINT_KERNEL_LANES=8`, the 8 float lanes PoCL
    /// takes on an AVX2 processor; the Swift path is AVX2 code everywhere) and estimated for the
    /// AVX2 machine from its last run (README, Benchmarks). No kind runs on PoCL now: a calibration
    /// (`glint devices --calibrate`) still decides plain fractals for a machine.
    public static let onCPUDevices: [AutoKind: (openCL: Bool, why: String)] = [
        .fractal: (false, "Swift path ahead: with AVX2 code on both paths on a Zen 4 (PoCL for haswell, 8 float lanes) 1.6-1.8x in float (1080p: 5.4 against 8.5 ms), 1.1-1.25x supersampled, 1.15x in double at 1080p, PoCL 10-16% ahead only in double at 4K and deep; on the AVX2 machine, its PoCL times against this Swift path's scaled by one build's ratio between the two machines, 1.3-1.4x in float and 1.2-1.3x in double; PoCL's start-up, 38-45 ms a command, comes on top"),
        .fractalSmooth: (false, "Swift path 1.36x faster (1080p: 73.1 against 99.6 ms); since the colour pass's CPU form PoCL renders in 0.53-0.61 of the Swift path's time (Zen 4, AVX-512 code), 0.60-0.68 with AVX2 code on both paths (1080p: 23.0 against 34.0 ms), but a command pays PoCL's start-up (38-45 ms), more than the gain at 1080p; at 4K PoCL would finish 8-13% sooner"),
        .fractalDeep: (false, "Swift path 1.9-2.5x faster (1e100 to 1e1000, 640x480)"),
        .rtow: (false, "Swift path 1.07-1.09x faster (cover, 400x225 and 1200x800)"),
        .blur: (false, "a command blurs one image, and PoCL's start-up outweighs its kernels (a whole 1080p glint blur: 68 ms on the Swift path, 108 on PoCL); repeated blurs since the kernels' CPU forms: the recursive and float ones in 0.77-0.97 of the Swift path's time on PoCL, the exact 8-bit ones in 1.03-1.09 (Zen 4, AVX-512 and AVX2 code)"),
        .mist: (false, "Swift path 1.2-1.4x faster (1080p and 4K, sigma 40, Zen 4; 1.9x before the kernels' CPU forms)"),
        .iso: (false, "Swift path 1.5-1.6x faster since it renders into the array it returns (Zen 4: 1080p source 8.8 against 14.0 ms, 4K 43.0 against 63.1 ms; PoCL's kernel alone 1.3x the Swift path's whole render, plus the copies in and out)"),
        .pulse: (false, "Swift path 1.7x faster (1080p frame; PoCL's fill and read-back cost more than the kernel)"),
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
