import GlintCL
import GlintCore
import GlintKernels
#if canImport(Glibc)
import Glibc
#endif

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
    /// The device's native float and double vector widths (`Device.nativeFloatVectorWidth`).
    public let nativeFloatVectorWidth: Int
    public let nativeDoubleVectorWidth: Int
    /// Options every build gets for this device.
    public let baseOptions: String
    /// Whether jobs that keep their images between runs (a blur session, the blur benchmark)
    /// let the kernels work in host memory (`Buffer(context:sharing:count:access:)`) instead of
    /// copying images to the device and back: on a CPU device that says it works in the host's
    /// memory, unless `GLINT_ZERO_COPY=0`. A GPU keeps its own memory, and copies.
    public let sharesHostMemory: Bool
    /// The alignment host memory needs to be shared with the device (`Device.baseAddressAlignment`,
    /// at least 64 bytes).
    public let hostAlignment: Int

    private let programs = Locked<[String: Program]>([:])
    private let stats = Locked<BuildStats>(BuildStats(cacheNotes: DeviceInventory.scan().note.map { [$0] } ?? []))

    /// What building programs has cost this process so far.
    public struct BuildStats: Sendable {
        public var compiled = 0
        public var fromDiskCache = 0
        public var seconds = 0.0
        /// What went wrong with the disk cache, once per distinct message (for --verbose).
        public var cacheNotes: [String] = []
        /// The build log of each program whose build the compiler said anything about (warnings
        /// on a successful build), headed by the file and options (for --verbose).
        public var buildLogs: [String] = []
    }
    public var buildStats: BuildStats { stats.withLock { $0 } }

    private init(device: Device) throws(CLError) {
        self.device = device
        context = try Context(device: device)
        queue = try CommandQueue(context: context)
        deviceName = try device.name
        kind = try device.kind
        supportsFP64 = try device.supportsFP64
        nativeFloatVectorWidth = (try? device.nativeFloatVectorWidth) ?? 1
        nativeDoubleVectorWidth = (try? device.nativeDoubleVectorWidth) ?? 1
        let unified = (try? device.hostUnifiedMemory) ?? false
        sharesHostMemory = kind == .cpu && unified && Self.zeroCopyAllowed(getenv("GLINT_ZERO_COPY").map { String(cString: $0) })
        hostAlignment = max(64, (try? device.baseAddressAlignment) ?? 128)
        // The float rules (docs/DESIGN.md): no fast-math; division rounded correctly where the
        // device can, so the kernels and their Swift twins divide alike.
        // OpenCL C 1.2 is what the kernels are written in, and all NVIDIA's devices report (a
        // platform's 3.0 is not the device compiler's); a 1.1 compiler takes no -cl-std.
        var options: [String] = []
        if let version = Self.openCLCVersion(try device.openCLCVersion), version >= (1, 2) {
            options.append("-cl-std=CL1.2")
        }
        if (try? device.correctlyRoundedDivideSqrt) == true { options.append("-cl-fp32-correctly-rounded-divide-sqrt") }
        baseOptions = options.joined(separator: " ")
    }

    /// `GLINT_KERNEL_LANES` when it is 1, 4, 8 or 16: the lanes of the blur, mist and fractal
    /// kernels on any device in place of the device's (1 runs the GPU forms on a CPU device, 4 to
    /// 16 the CPU forms on a GPU: the Oclgrind tests check both forms this way); else nil.
    public static var kernelLanesOverride: Int? {
        guard let v = getenv("GLINT_KERNEL_LANES"), let n = Int(String(cString: v)), [1, 4, 8, 16].contains(n) else { return nil }
        return n
    }

    /// `GLINT_ZERO_COPY`'s value: `0` keeps the copies (to compare); unset or anything else lets a
    /// CPU device work in host memory.
    static func zeroCopyAllowed(_ value: String?) -> Bool { value != "0" }

    /// `text` without leading and trailing whitespace (drivers pad an empty log with newlines or a NUL).
    static func trimmed(_ text: String) -> String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace || $0 == "\0" }
        guard let first = text.firstIndex(where: { !isSpace($0) }),
              let last = text.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(text[first...last])
    }

    /// (major, minor) of a `CL_DEVICE_OPENCL_C_VERSION` string ("OpenCL C 1.2 ..."), or nil.
    static func openCLCVersion(_ text: String) -> (Int, Int)? {
        let prefix = "OpenCL C "
        guard text.hasPrefix(prefix) else { return nil }
        let number = text.dropFirst(prefix.count).prefix { $0.isNumber || $0 == "." }
        let parts = number.split(separator: ".").compactMap { Int($0) }
        return parts.count >= 2 ? (parts[0], parts[1]) : nil
    }

    /// The work-group a launch of `items` uses here (nil: the driver's choice), by the GPU launch
    /// rules: on a GPU an explicit group, `gpuGroup` or 64 items (1-D) or 16 x 8 (2-D), because
    /// drivers choose poorly for sizes with few divisors and NVIDIA's have no partial groups;
    /// elsewhere the driver's choice, which the OpenCL API makes divide the global size.
    public func workGroup(forDimensions dimensions: Int, gpuGroup: [Int]? = nil) -> [Int]? {
        guard kind == .gpu else { return nil }
        if let gpuGroup { return gpuGroup }
        return dimensions == 1 ? [64] : [16, 8]
    }

    /// Launches `kernel` over `items` work-items on this context's queue by the launch rules
    /// (`workGroup`): the global size is rounded up to whole groups, so every kernel launched
    /// here skips the items past `items` in each dimension.
    @discardableResult
    public func launch(_ kernel: Kernel, items: [Int], gpuGroup: [Int]? = nil,
                       waitingFor: [Event] = []) throws(CLError) -> Event {
        guard let local = workGroup(forDimensions: items.count, gpuGroup: gpuGroup) else {
            return try queue.enqueue(kernel, global: items, waitingFor: waitingFor)
        }
        let global = zip(items, local).map { (n, l) in (n + l - 1) / l * l }
        return try queue.enqueue(kernel, global: global, local: local, waitingFor: waitingFor)
    }

    private static let registry = Locked<[Device: ComputeContext]>([:])

    /// Every context this process has opened (one per device), by device name.
    public static var opened: [ComputeContext] {
        registry.withLock { Array($0.values) }.sorted { $0.deviceName < $1.deviceName }
    }

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
        let (program, origin, note) = try ProgramCache.program(source: source, options: options, context: context)
        let elapsed = Clock.now() - start
        let log = Self.trimmed(program.buildLog)
        stats.withLock {
            if origin == .compiled { $0.compiled += 1 } else { $0.fromDiskCache += 1 }
            $0.seconds += elapsed
            if let note, !$0.cacheNotes.contains(note) { $0.cacheNotes.append(note) }
            if !log.isEmpty { $0.buildLogs.append("build log of \(file) (options: \(options.isEmpty ? "none" : options)):\n\(log)") }
        }
        programs.withLock { $0[memoryKey] = program }
        return program
    }
}
