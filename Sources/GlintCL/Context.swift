import COpenCL
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// An OpenCL context over one device. Released when the last reference goes.
public final class Context: @unchecked Sendable {
    public let handle: cl_context
    public let device: Device
    /// Serialises the calls of every object made in this context when the driver needs it.
    let gate: CallGate

    public init(device: Device) throws(CLError) {
        self.device = device
        let gate = CallGate.needed(for: device) ? CallGate.exclusive : CallGate.free
        self.gate = gate
        var properties: [cl_context_properties] = [
            cl_context_properties(CL_CONTEXT_PLATFORM),
            cl_context_properties(Int(bitPattern: UnsafeRawPointer(device.platform.id))),
            0,
        ]
        var deviceID: cl_device_id? = device.id
        handle = try create("clCreateContext") { status in
            gate.pass { clCreateContext(&properties, 1, &deviceID, nil, nil, status) }
        }
    }

    deinit { gate.pass { _ = clReleaseContext(handle) } }
}

/// An in-order command queue with profiling enabled, so every kernel launch can be timed.
/// OpenCL queues are thread-safe; Glint still funnels one job's commands through one thread, and
/// several jobs may share a queue from several threads (a library user rendering from several
/// tasks at once). For drivers whose runtime is not thread-safe (`CallGate`), every command and
/// wait goes through one process-wide lock.
public final class CommandQueue: @unchecked Sendable {
    public let handle: cl_command_queue
    public let context: Context
    /// Serialises this queue's calls when the driver needs it (`CallGate.needed(for:)`).
    let gate: CallGate
    /// `CL_DEVICE_LOCAL_MEM_SIZE` of the queue's device.
    public let deviceLocalMemoryBytes: UInt64
    /// Whether large copies between host and device go through pinned staging buffers
    /// (`PinnedStaging`): on a device with memory of its own, unless `GLINT_STAGING=0`;
    /// `GLINT_STAGING=1` uses them on any device (the tests run them on PoCL and Oclgrind).
    public let usesStaging: Bool
    private let staging = Locked<PinnedStaging?>(nil)
    private let transfers = Locked<UInt64>(0)

    /// `staging` overrides `usesStaging`'s choice (nil: the device and `GLINT_STAGING` decide).
    public init(context: Context, staging: Bool? = nil) throws(CLError) {
        self.context = context
        let gate = context.gate
        self.gate = gate
        deviceLocalMemoryBytes = try context.device.localMemoryBytes
        let unified = (try? context.device.hostUnifiedMemory) ?? false
        usesStaging = staging ?? Self.stagingAllowed(getenv("GLINT_STAGING").map { String(cString: $0) }, unifiedMemory: unified)
        handle = try create("clCreateCommandQueue") { status in
            gate.pass {
                clCreateCommandQueue(context.handle, context.device.id,
                                     cl_command_queue_properties(CL_QUEUE_PROFILING_ENABLE), status)
            }
        }
    }

    deinit {
        staging.withLock { $0 = nil }
        gate.pass { _ = clReleaseCommandQueue(handle) }
    }

    /// Whether a copy of `bytes` goes through the pinned staging ring (when it is free).
    public func stages(bytes: Int) -> Bool { usesStaging && bytes >= PinnedStaging.minimumBytes }

    /// `GLINT_STAGING`'s value decides: `0` never, `1` always; else where the device has memory
    /// of its own.
    static func stagingAllowed(_ value: String?, unifiedMemory: Bool) -> Bool {
        switch value {
        case "0": false
        case "1": true
        default: !unifiedMemory
        }
    }

    /// The device's time in copies between host and device on this queue so far (profiling
    /// events), in nanoseconds: what a benchmark reports as copy time.
    public var transferNanoseconds: UInt64 { transfers.withLock { $0 } }
    func addTransfer(_ nanoseconds: UInt64) { transfers.withLock { $0 &+= nanoseconds } }

    /// A finished command's duration (`profiledNanoseconds`), the event released.
    func profiledAndReleased(_ event: cl_event?) -> UInt64 {
        guard let event else { return 0 }
        defer { gate.pass { _ = clReleaseEvent(event) } }
        return profiledNanoseconds(event, gate: gate)
    }

    /// Runs `body` with the pinned staging ring when this queue uses one, the copy is large enough
    /// and no other copy holds the ring; nil (and `body` not run) otherwise.
    func staged<R>(bytes: Int, _ body: (PinnedStaging) throws(CLError) -> R) throws(CLError) -> R? {
        guard stages(bytes: bytes) else { return nil }
        let ring = try staging.withLock { (s) throws(CLError) -> PinnedStaging in
            if let s { return s }
            let made = try PinnedStaging(queue: self)
            s = made
            return made
        }
        guard ring.acquire() else { return nil }
        defer { ring.release() }
        return try body(ring)
    }

    /// Whether this queue's calls are serialised process-wide (see `CallGate`).
    public var isSerialized: Bool { gate.isExclusive }

    /// Blocks until every queued command has finished.
    public func finish() throws(CLError) {
        try check("clFinish", gate.pass { clFinish(handle) })
    }

    /// Sends every queued command to the device without waiting for it.
    public func flush() throws(CLError) {
        try check("clFlush", gate.pass { clFlush(handle) })
    }

    /// Enqueues `kernel` over a 1-, 2- or 3-dimensional range. `local` nil lets the driver choose
    /// (its choice always divides the global size). An explicit `local` must divide `global` in
    /// every dimension (GPUs such as NVIDIA's have no non-uniform work-groups, and PoCL's
    /// acceptance of them would hide the mistake), stay within the kernel's work-group size on
    /// the device, and the kernel's local memory within the device's: each is checked here, so
    /// a launch a GPU would refuse fails on every device, with the numbers.
    @discardableResult
    public func enqueue(_ kernel: Kernel, global: [Int], local: [Int]? = nil,
                        waitingFor: [Event] = []) throws(CLError) -> Event {
        precondition((1...3).contains(global.count) && (local == nil || local!.count == global.count))
        if let local { try checkLaunch(kernel, global: global, local: local) }
        var event: cl_event?
        let waits: [cl_event?] = waitingFor.map { $0.handle }
        let status: cl_int = gate.pass { global.withUnsafeBufferPointer { g in
            waits.withUnsafeBufferPointer { w in
                if let local {
                    return local.withUnsafeBufferPointer { l in
                        clEnqueueNDRangeKernel(handle, kernel.handle, cl_uint(global.count), nil, g.baseAddress,
                                               l.baseAddress, cl_uint(w.count), w.count > 0 ? w.baseAddress : nil, &event)
                    }
                }
                return clEnqueueNDRangeKernel(handle, kernel.handle, cl_uint(global.count), nil, g.baseAddress,
                                              nil, cl_uint(w.count), w.count > 0 ? w.baseAddress : nil, &event)
            }
        } }
        try check("clEnqueueNDRangeKernel", status, detail: "kernel \(kernel.name), global \(global), local \(local.map { "\($0)" } ?? "auto")")
        return Event(handle: event!, gate: gate)
    }
}

extension CommandQueue {
    /// The GPU launch rules for an explicit work-group (see `enqueue`).
    func checkLaunch(_ kernel: Kernel, global: [Int], local: [Int]) throws(CLError) {
        let routine = "clEnqueueNDRangeKernel"
        for (g, l) in zip(global, local) where l <= 0 || g % l != 0 {
            throw CLError(routine, .invalidWorkGroupSize,
                          detail: "kernel \(kernel.name): global size \(global) is not a whole number of work-groups \(local)")
        }
        let limits = try kernel.launchLimits()
        let items = local.reduce(1, *)
        if items > limits.workGroupSize {
            throw CLError(routine, .invalidWorkGroupSize,
                          detail: "kernel \(kernel.name): work-group \(local) has \(items) items; the device allows \(limits.workGroupSize) for this kernel")
        }
        if limits.localMemoryBytes > deviceLocalMemoryBytes {
            throw CLError(routine, .outOfResources,
                          detail: "kernel \(kernel.name) needs \(limits.localMemoryBytes) bytes of local memory; the device has \(deviceLocalMemoryBytes)")
        }
    }
}

/// A command's completion event, with its profiling times.
public final class Event: @unchecked Sendable {
    public let handle: cl_event
    private let gate: CallGate
    init(handle: cl_event, gate: CallGate) {
        self.handle = handle
        self.gate = gate
    }
    deinit { gate.pass { _ = clReleaseEvent(handle) } }

    public func wait() throws(CLError) {
        var e: cl_event? = handle
        try check("clWaitForEvents", gate.pass { clWaitForEvents(1, &e) })
    }

    private func time(_ param: Int32) throws(CLError) -> UInt64 {
        try infoValue("clGetEventProfilingInfo", cl_ulong.self) { size, value, returned in
            gate.pass { clGetEventProfilingInfo(handle, cl_profiling_info(param), size, value, returned) }
        }
    }

    /// Device time from the command's start to its end, in nanoseconds (waits for it first).
    public func durationNanoseconds() throws(CLError) -> UInt64 {
        try wait()
        let start = try time(CL_PROFILING_COMMAND_START)
        let end = try time(CL_PROFILING_COMMAND_END)
        return end >= start ? end - start : 0
    }
}

/// Serialises OpenCL calls for drivers whose runtime is not thread-safe.
///
/// OpenCL 1.2 (section A.2) makes every API call except `clSetKernelArg` on one kernel
/// thread-safe. Oclgrind 21.10 is not: it runs queued commands on whichever thread waits for
/// them (`clFinish`, `clWaitForEvents`, a blocking read), and two threads waiting at once start two
/// kernel invocations in its one simulator, which aborts the process (`Context.cpp:221: Assertion
/// 'm_kernelInvocation == NULL' failed`); two programs built at once crash inside its LLVM
/// (whose option parsing is process-global). For such drivers every call on a context's objects
/// (builds, kernels and their arguments, buffers, enqueues, waits, event queries, releases) goes
/// through one process-wide lock; other drivers pass freely.
public final class CallGate: Sendable {
    /// The process-wide lock for every driver that needs one.
    static let exclusive = CallGate(exclusive: true)
    static let free = CallGate(exclusive: false)

    let isExclusive: Bool
    private let lock = Locked<Void>(())

    private init(exclusive: Bool) { isExclusive = exclusive }

    /// Whether `device`'s driver needs its calls serialised: Oclgrind's (by platform name).
    public static func needed(for device: Device) -> Bool {
        ((try? device.platform.name) ?? "").contains("Oclgrind")
    }

    /// Runs OpenCL calls, alone in the process when the gate is exclusive. Not re-entrant: `call`
    /// must not pass the same gate again.
    @inline(__always)
    func pass<R, E: Error>(_ call: () throws(E) -> R) throws(E) -> R {
        guard isExclusive else { return try call() }
        return try lock.withLock { (_) throws(E) -> R in try call() }
    }
}
