import GlintCL
import GlintCore
import GlintKernels
import Synchronization

/// One device's OpenCL context and in-order profiling queue, shared by every workload in the
/// process, with its built programs cached in memory (and on disk through `ProgramCache`).
public final class ComputeContext: @unchecked Sendable {
    public let device: Device
    public let context: Context
    public let queue: CommandQueue
    /// Facts read once: name, kind, fp64.
    public let deviceName: String
    public let kind: Device.Kind
    public let supportsFP64: Bool
    /// Options every build gets for this device.
    public let baseOptions: String

    private let programs = Mutex<[String: Program]>([:])
    private let stats = Mutex<BuildStats>(BuildStats())

    /// What building programs has cost this process so far.
    public struct BuildStats: Sendable {
        public var compiled = 0
        public var fromDiskCache = 0
        public var seconds = 0.0
    }
    public var buildStats: BuildStats { stats.withLock { $0 } }

    private init(device: Device) throws(CLError) {
        self.device = device
        context = try Context(device: device)
        queue = try CommandQueue(context: context)
        deviceName = try device.name
        kind = try device.kind
        supportsFP64 = try device.supportsFP64
        // The float rules (DESIGN.md): no fast-math; division rounded correctly where the
        // device can, so the kernels and their Swift twins divide alike.
        var options = ["-cl-std=CL1.2"]
        if (try? device.correctlyRoundedDivideSqrt) == true { options.append("-cl-fp32-correctly-rounded-divide-sqrt") }
        baseOptions = options.joined(separator: " ")
    }

    private static let registry = Mutex<[Device: ComputeContext]>([:])

    /// The process-wide context for `device`, created on first use.
    public static func shared(for device: Device) throws(CLError) -> ComputeContext {
        try registry.withLock { (contexts) throws(CLError) -> ComputeContext in
            if let existing = contexts[device] { return existing }
            let created = try ComputeContext(device: device)
            contexts[device] = created
            return created
        }
    }

    /// The program built from Kernels/`file` with `defines` (`-D` options), built once per process.
    public func program(_ file: String, defines: [String] = []) throws -> Program {
        let options = ([baseOptions] + defines.map { "-D\($0)" }).joined(separator: " ")
        // Sources do not change within a process: the file and options identify the program, and
        // the source is read and inlined only on a miss.
        let memoryKey = file + "\u{0}" + options
        if let cached = programs.withLock({ $0[memoryKey] }) { return cached }
        let source = try KernelLibrary.source(file)
        let start = Clock.now()
        let (program, origin) = try ProgramCache.program(source: source, options: options, context: context)
        let elapsed = Clock.now() - start
        stats.withLock {
            if origin == .compiled { $0.compiled += 1 } else { $0.fromDiskCache += 1 }
            $0.seconds += elapsed
        }
        programs.withLock { $0[memoryKey] = program }
        return program
    }
}
