import GlintCL
import GlintCore

/// What the user asked for with `--device` or `GLINT_DEVICE`.
public enum DeviceChoice: Equatable, Sendable, CustomStringConvertible {
    /// The first GPU, else the faster CPU path for the kind of job (`AutoChoice`): an OpenCL CPU
    /// device or the Swift path.
    case auto
    /// The Swift-concurrency CPU path.
    case cpu
    /// The first OpenCL device, GPUs first.
    case opencl
    /// OpenCL device N as `glint devices` numbers them.
    case openclIndex(Int)
    /// The first OpenCL GPU; an error when there is none.
    case gpu

    public static let environmentVariable = "GLINT_DEVICE"
    public static let syntax = "auto, cpu, opencl, opencl:N or gpu"

    public init(parsing text: String) throws(GlintError) {
        let t = text.lowercased()
        switch t {
        case "auto": self = .auto
        case "cpu", "swift": self = .cpu
        case "opencl", "cl": self = .opencl
        case "gpu": self = .gpu
        default:
            if t.hasPrefix("opencl:"), let n = Int(t.dropFirst("opencl:".count)), n >= 0 {
                self = .openclIndex(n)
            } else {
                throw GlintError("unknown device '\(text)': use \(Self.syntax) (glint devices lists them)")
            }
        }
    }

    public var description: String {
        switch self {
        case .auto: "auto"
        case .cpu: "cpu"
        case .opencl: "opencl"
        case .openclIndex(let n): "opencl:\(n)"
        case .gpu: "gpu"
        }
    }

    /// The choice from the command line, else from `GLINT_DEVICE`, else `auto`.
    public static func from(option: String?) throws(GlintError) -> DeviceChoice {
        if let option { return try DeviceChoice(parsing: option) }
        if let env = FileIO.environment(environmentVariable), !env.isEmpty {
            do { return try DeviceChoice(parsing: env) } catch {
                throw GlintError("\(environmentVariable)=\(env): \(error.message)")
            }
        }
        return .auto
    }
}

/// Where a job runs: the Swift CPU path or one OpenCL device's shared context.
public enum Backend: Sendable {
    case cpu
    case opencl(ComputeContext)

    /// A short label: `cpu (Swift, 2 threads)` or `opencl:0 NVIDIA H200`.
    public var label: String {
        switch self {
        case .cpu: "cpu (Swift, \(CPUParallel.workerCount) threads)"
        case .opencl(let cc): "opencl (\(cc.deviceName))"
        }
    }

    public var isOpenCL: Bool { if case .opencl = self { true } else { false } }

    /// What building OpenCL programs has cost this backend so far (nothing on the Swift path).
    public var buildStats: ComputeContext.BuildStats {
        if case .opencl(let cc) = self { cc.buildStats } else { ComputeContext.BuildStats() }
    }
}

/// The OpenCL devices this machine has, or why there are none.
public struct DeviceInventory: Sendable {
    public let devices: [Device]
    /// Set when OpenCL is unusable: says why and what to install.
    public let problem: String?
    /// Set when discovery changed the drivers' environment (`DriverSetup`): for --verbose.
    public var note: String? = nil

    public static let installHint =
        "install an OpenCL driver: on Debian `apt-get install pocl-opencl-icd` (CPU) or your GPU vendor's OpenCL ICD, and check /etc/OpenCL/vendors"

    /// The inventory, discovered once per process. The ICD loader's first calls are not safe to
    /// race (concurrent first use crashed inside the loader), and a Swift global initialiser runs once.
    public static func scan() -> DeviceInventory { discovered }

    /// Whether this process has scanned (or is scanning) its OpenCL devices.
    public static var hasScanned: Bool { scanStarted.withLock { $0 } }
    private static let scanStarted = Locked(false)

    private static let discovered: DeviceInventory = {
        scanStarted.withLock { $0 = true }
        // The fingerprint is read before the scan and before DriverSetup changes the environment.
        let fingerprint = NoGPUMemo.fingerprint
        let inventory = discover()
        NoGPUMemo.update(after: inventory, fingerprint: fingerprint)
        return inventory
    }()

    private static func discover() -> DeviceInventory {
        let cacheNote = DriverSetup.preparePoCLCache()
        do {
            let platforms = try Platform.all()
            if platforms.isEmpty {
                return DeviceInventory(devices: [], problem: "no OpenCL platform found (the ICD loader found no driver): \(installHint)")
            }
            let devices = try Device.all()
            if devices.isEmpty {
                // A driver that cannot write its cache reports no devices: name that, not the driver.
                if let cacheNote, cacheNote.contains("neither") {
                    return DeviceInventory(devices: [], problem: "OpenCL platforms exist but report no devices: \(cacheNote)")
                }
                if let cacheProblem = DriverSetup.userCacheProblem() {
                    return DeviceInventory(devices: [], problem: "OpenCL platforms exist but report no devices: \(cacheProblem)")
                }
                return DeviceInventory(devices: [], problem: "OpenCL platforms exist but report no devices: \(installHint)")
            }
            return DeviceInventory(devices: devices, problem: nil, note: cacheNote)
        } catch {
            return DeviceInventory(devices: [], problem: "OpenCL is unusable (\(error.routine): \(error.status.name)): \(installHint)")
        }
    }
}

extension Backend {
    /// Whether `auto` would weigh this plain fractal's estimated work against OpenCL's start-up:
    /// a calibration here whose OpenCL rate for the precision is the higher, no GPU (as the memo
    /// says) and no OpenCL loaded yet. Otherwise no estimate is worth its render.
    public static func autoWantsEstimate(_ choice: DeviceChoice, for kind: AutoKind, double: Bool) -> Bool {
        guard choice == .auto, kind == .fractal, let calibration = AutoCalibration.current,
              calibration.prefersOpenCL(double: double, iterations: nil, openCLLoaded: true) else { return false }
        return !DeviceInventory.hasScanned && NoGPUMemo.holds()
    }

    /// The one place that turns a device choice into a backend; `kind` is the job's, which
    /// decides `auto` on machines without a GPU.
    public static func resolve(_ choice: DeviceChoice, for kind: AutoKind, estimate: AutoEstimate? = nil) throws -> Backend {
        if choice == .cpu { return .cpu }
        // auto for a plain fractal, calibrated here, in a process that has not loaded OpenCL on a
        // machine known to have no GPU: the Swift path, with no driver loaded, where OpenCL's rate
        // is not the higher (its start-up only adds) or its start-up and render take longer.
        // (With the work unknown, prefersOpenCL compares the rates; with it, start-up and render,
        // which a lower OpenCL rate never wins.)
        let calibration = kind == .fractal ? AutoCalibration.current : nil
        let job = estimate ?? AutoEstimate(double: false, iterations: nil)
        if choice == .auto, let calibration, !DeviceInventory.hasScanned, NoGPUMemo.holds(),
           !calibration.prefersOpenCL(double: job.double, iterations: job.iterations, openCLLoaded: false) {
            AutoDecision.record(calibration.explain(job, openCLLoaded: false, chose: "the Swift path"))
            return .cpu
        }
        // auto for a kind the Swift path runs, on a machine known to have no GPU: no driver loaded.
        // (Not once this process has scanned: then the scan's answer is at hand, and it wins; nor
        // where a calibration decides, below.)
        if choice == .auto && calibration == nil && !DeviceInventory.hasScanned && NoGPUMemo.answersAuto(for: kind) {
            return .cpu
        }
        let inventory = DeviceInventory.scan()
        let kinds = inventory.devices.map { (try? $0.kind) ?? .other }
        func open(_ device: Device) throws -> Backend {
            if (try? device.version)?.contains("PoCL") == true, let problem = DriverSetup.cacheWriteProblem() {
                throw GlintError(problem)
            }
            let backend = Backend.opencl(try ComputeContext.shared(for: device))
            DriverAbort.arm(device: (try? device.name) ?? "?")
            return backend
        }
        switch choice {
        case .cpu:
            return .cpu
        case .auto:
            if let i = kinds.firstIndex(of: .gpu) {
                // With this machine's GPU calibration: the Swift path where the GPU would finish later.
                let gpu = inventory.devices[i]
                // (Double-precision fractals keep the GPU: the calibration measures float.)
                if let c = GPUCalibration.current, c.device == (try? gpu.name), c.entry(kind, variant: job.variant) != nil, !job.double {
                    let isOpen = job.startUpPaid || ComputeContext.opened.contains { $0.device == gpu }
                    AutoDecision.record(c.explain(kind, variant: job.variant, work: job.work, repeats: job.repeats, gpuOpen: isOpen))
                    if !c.prefersGPU(kind, variant: job.variant, work: job.work, repeats: job.repeats, gpuOpen: isOpen) { return .cpu }
                }
                return try open(gpu)
            }
            guard let i = kinds.firstIndex(of: .cpu) else { return .cpu }
            if let calibration {
                let loaded = ComputeContext.opened.contains { $0.device == inventory.devices[i] }
                let openCL = calibration.prefersOpenCL(double: job.double, iterations: job.iterations, openCLLoaded: loaded)
                AutoDecision.record(calibration.explain(job, openCLLoaded: loaded, chose: openCL ? "the OpenCL CPU device" : "the Swift path"))
                return openCL ? try open(inventory.devices[i]) : .cpu
            }
            return AutoChoice.prefersOpenCLCPU(kind) ? try open(inventory.devices[i]) : .cpu
        case .gpu:
            guard let i = kinds.firstIndex(of: .gpu) else {
                let have = inventory.devices.isEmpty ? "no OpenCL device at all" : "OpenCL devices, but none of type GPU"
                throw GlintError(field: "device", "gpu: no OpenCL GPU found (this machine has \(have)); glint devices lists what there is")
            }
            return try open(inventory.devices[i])
        case .opencl:
            if let problem = inventory.problem { throw GlintError(field: "device", "opencl: \(problem)") }
            let i = kinds.firstIndex(of: .gpu) ?? 0
            return try open(inventory.devices[i])
        case .openclIndex(let n):
            if let problem = inventory.problem { throw GlintError(field: "device", "opencl:\(n): \(problem)") }
            guard n < inventory.devices.count else {
                throw GlintError(field: "device", "opencl:\(n): this machine has \(inventory.devices.count == 1 ? "one OpenCL device, opencl:0" : "\(inventory.devices.count) OpenCL devices, opencl:0 to opencl:\(inventory.devices.count - 1)") (see glint devices)")
            }
            return try open(inventory.devices[n])
        }
    }
}
