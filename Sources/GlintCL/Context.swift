import COpenCL

/// An OpenCL context over one device. Released when the last reference goes.
public final class Context: @unchecked Sendable {
    public let handle: cl_context
    public let device: Device

    public init(device: Device) throws(CLError) {
        self.device = device
        var properties: [cl_context_properties] = [
            cl_context_properties(CL_CONTEXT_PLATFORM),
            cl_context_properties(Int(bitPattern: UnsafeRawPointer(device.platform.id))),
            0,
        ]
        var deviceID: cl_device_id? = device.id
        handle = try create("clCreateContext") { status in
            clCreateContext(&properties, 1, &deviceID, nil, nil, status)
        }
    }

    deinit { clReleaseContext(handle) }
}

/// An in-order command queue with profiling enabled, so every kernel launch can be timed.
/// OpenCL queues are thread-safe; Glint still funnels one job's commands through one thread.
public final class CommandQueue: @unchecked Sendable {
    public let handle: cl_command_queue
    public let context: Context

    public init(context: Context) throws(CLError) {
        self.context = context
        handle = try create("clCreateCommandQueue") { status in
            clCreateCommandQueue(context.handle, context.device.id,
                                 cl_command_queue_properties(CL_QUEUE_PROFILING_ENABLE), status)
        }
    }

    deinit { clReleaseCommandQueue(handle) }

    /// Blocks until every queued command has finished.
    public func finish() throws(CLError) {
        try check("clFinish", clFinish(handle))
    }

    /// Sends every queued command to the device without waiting for it.
    public func flush() throws(CLError) {
        try check("clFlush", clFlush(handle))
    }

    /// Enqueues `kernel` over a 1-, 2- or 3-dimensional range. `local` nil lets the driver choose.
    @discardableResult
    public func enqueue(_ kernel: Kernel, global: [Int], local: [Int]? = nil,
                        waitingFor: [Event] = []) throws(CLError) -> Event {
        precondition((1...3).contains(global.count) && (local == nil || local!.count == global.count))
        var event: cl_event?
        let waits: [cl_event?] = waitingFor.map { $0.handle }
        let status: cl_int = global.withUnsafeBufferPointer { g in
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
        }
        try check("clEnqueueNDRangeKernel", status, detail: "kernel \(kernel.name), global \(global), local \(local.map { "\($0)" } ?? "auto")")
        return Event(handle: event!)
    }
}

/// A command's completion event, with its profiling times.
public final class Event: @unchecked Sendable {
    public let handle: cl_event
    init(handle: cl_event) { self.handle = handle }
    deinit { clReleaseEvent(handle) }

    public func wait() throws(CLError) {
        var e: cl_event? = handle
        try check("clWaitForEvents", clWaitForEvents(1, &e))
    }

    private func time(_ param: Int32) throws(CLError) -> UInt64 {
        try infoValue("clGetEventProfilingInfo", cl_ulong.self) {
            clGetEventProfilingInfo(handle, cl_profiling_info(param), $0, $1, $2)
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
