import COpenCL
import GlintCore

/// A device buffer of `count` elements of `T`.
public final class Buffer<T: BitwiseCopyable>: KernelArgument, @unchecked Sendable {
    public let handle: cl_mem
    public let count: Int
    public let context: Context

    /// Allocates an uninitialised buffer.
    public init(context: Context, count: Int, access: Access = .readWrite) throws(CLError) {
        guard count > 0 else { throw CLError("clCreateBuffer", .invalidBufferSize, detail: "buffer of 0 elements") }
        self.count = count
        self.context = context
        let bytes = count * MemoryLayout<T>.stride
        handle = try create("clCreateBuffer") { status in
            context.gate.pass { clCreateBuffer(context.handle, access.flags, bytes, nil, status) }
        }
    }

    /// Allocates a buffer holding a copy of `values`.
    public convenience init(queue: CommandQueue, copying values: [T], access: Access = .readOnly) throws(CLError) {
        try self.init(context: queue.context, count: values.count, access: access)
        try write(values, queue: queue)
    }

    /// A buffer over `count` elements of host memory the caller owns (`CL_MEM_USE_HOST_PTR`). On
    /// a device that works in the host's memory (a CPU device) its kernels read and write that
    /// memory itself: nothing is copied in or out. The memory must stay allocated for the
    /// buffer's life and be aligned to the device's `baseAddressAlignment` (kernels may use
    /// whole-vector accesses); the host reads what kernels wrote, or writes new input, only
    /// inside `withHostAccess`.
    public init(context: Context, sharing memory: UnsafeMutableRawPointer, count: Int, access: Access) throws(CLError) {
        guard count > 0 else { throw CLError("clCreateBuffer", .invalidBufferSize, detail: "buffer of 0 elements") }
        let alignment = (try? context.device.baseAddressAlignment) ?? 128
        guard Int(bitPattern: memory) % max(alignment, 1) == 0 else {
            throw CLError("clCreateBuffer", .invalidHostPtr, detail: "host memory not aligned to the device's \(alignment) bytes")
        }
        self.count = count
        self.context = context
        let bytes = count * MemoryLayout<T>.stride
        let flags = access.flags | cl_mem_flags(CL_MEM_USE_HOST_PTR)
        handle = try create("clCreateBuffer") { status in
            context.gate.pass { clCreateBuffer(context.handle, flags, bytes, memory, status) }
        }
    }

    deinit { context.gate.pass { _ = clReleaseMemObject(handle) } }

    /// Maps the whole buffer into the host's address space (blocking: every command queued before
    /// has finished), runs `body` on its elements, then unmaps it and waits for the unmapping.
    /// For a buffer over host memory (`init(context:sharing:count:access:)`) the elements are
    /// that memory: on a device that works in it, no copy is made either way. `forWriting`
    /// maps for writing as well, so what `body` stores reaches the device.
    public func withHostAccess<R>(queue: CommandQueue, forWriting: Bool = false,
                                  _ body: (UnsafeMutableBufferPointer<T>) -> R) throws(CLError) -> R {
        let flags = cl_map_flags(forWriting ? CL_MAP_READ | CL_MAP_WRITE : CL_MAP_READ)
        var status: cl_int = CL_SUCCESS
        let mapped = queue.gate.pass {
            clEnqueueMapBuffer(queue.handle, handle, cl_bool(CL_TRUE), flags, 0, byteCount, 0, nil, nil, &status)
        }
        try check("clEnqueueMapBuffer", status)
        guard let mapped else { throw CLError("clEnqueueMapBuffer", .invalidValue, detail: "returned a null pointer") }
        let result = body(UnsafeMutableBufferPointer(start: mapped.assumingMemoryBound(to: T.self), count: count))
        try check("clEnqueueUnmapMemObject", queue.gate.pass { clEnqueueUnmapMemObject(queue.handle, handle, mapped, 0, nil, nil) })
        try queue.finish()
        return result
    }

    public enum Access: Sendable {
        case readOnly, writeOnly, readWrite
        var flags: cl_mem_flags {
            switch self {
            case .readOnly: cl_mem_flags(CL_MEM_READ_ONLY)
            case .writeOnly: cl_mem_flags(CL_MEM_WRITE_ONLY)
            case .readWrite: cl_mem_flags(CL_MEM_READ_WRITE)
            }
        }
    }

    public var byteCount: Int { count * MemoryLayout<T>.stride }

    /// Blocking write of `values` (at most `count` elements) from offset 0.
    public func write(_ values: [T], queue: CommandQueue) throws(CLError) {
        precondition(values.count <= count)
        let done: Result<Void, CLError> = values.withUnsafeBytes { raw in
            Result { () throws(CLError) in try write(bytes: raw, queue: queue) }
        }
        try done.get()
    }

    /// Blocking write of `bytes` (at most the buffer's bytes) from offset 0.
    public func write(bytes: UnsafeRawBufferPointer, queue: CommandQueue) throws(CLError) {
        precondition(bytes.count <= byteCount)
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if let ns = try queue.staged(bytes: bytes.count, { (ring) throws(CLError) in
            try ring.write(handle, offset: 0, bytes: bytes.count, from: source)
        }) {
            queue.addTransfer(ns)
            return
        }
        var event: cl_event?
        let status = queue.gate.pass {
            clEnqueueWriteBuffer(queue.handle, handle, cl_bool(CL_TRUE), 0, bytes.count, source, 0, nil, &event)
        }
        try check("clEnqueueWriteBuffer", status)
        queue.addTransfer(queue.profiledAndReleased(event))
    }

    /// Enqueues filling the whole buffer with zero bytes on the device (no host array); the
    /// queue is in order, so later commands see zeros.
    public func zero(queue: CommandQueue) throws(CLError) {
        var pattern: UInt8 = 0
        let status = queue.gate.pass { clEnqueueFillBuffer(queue.handle, handle, &pattern, 1, 0, byteCount, 0, nil, nil) }
        try check("clEnqueueFillBuffer", status)
    }

    /// Blocking read of the whole buffer.
    public func read(queue: CommandQueue) throws(CLError) -> [T] {
        try [T](unsafeUninitializedCapacity: count) { (out, initialised) throws(CLError) in
            if let base = out.baseAddress {
                LargeArrays.adviseHugePages(UnsafeMutableRawPointer(base), bytes: byteCount)
                // A staged copy's host side runs on every core, which fault the pages in faster
                // as they copy than one thread maps them first; a driver's own copy is faster into
                // pages mapped beforehand (docs/PERFORMANCE.md#reading-into-fresh-pages).
                if !queue.stages(bytes: byteCount) { LargeArrays.prefault(UnsafeMutableRawPointer(base), bytes: byteCount) }
            }
            if let base = out.baseAddress { try readBytes(byteCount, into: UnsafeMutableRawPointer(base), queue: queue) }
            initialised = count
        }
    }

    /// Blocking read of the first `count` elements into `destination`.
    public func read(into destination: UnsafeMutableBufferPointer<T>, count n: Int, queue: CommandQueue) throws(CLError) {
        precondition(n <= count && n <= destination.count)
        guard let base = destination.baseAddress, n > 0 else { return }
        if !queue.stages(bytes: n * MemoryLayout<T>.stride) {
            LargeArrays.prefault(UnsafeMutableRawPointer(base), bytes: n * MemoryLayout<T>.stride)
        }
        try readBytes(n * MemoryLayout<T>.stride, into: UnsafeMutableRawPointer(base), queue: queue)
    }

    /// Blocking read of the first `bytes` bytes: through the queue's pinned staging where it has
    /// one, else directly; the device's copy time goes to the queue's transfer count.
    func readBytes(_ bytes: Int, into destination: UnsafeMutableRawPointer, queue: CommandQueue) throws(CLError) {
        if let ns = try queue.staged(bytes: bytes, { (ring) throws(CLError) in
            try ring.read(handle, offset: 0, bytes: bytes, into: destination)
        }) {
            queue.addTransfer(ns)
            return
        }
        var event: cl_event?
        let status = queue.gate.pass {
            clEnqueueReadBuffer(queue.handle, handle, cl_bool(CL_TRUE), 0, bytes, destination, 0, nil, &event)
        }
        try check("clEnqueueReadBuffer", status)
        queue.addTransfer(queue.profiledAndReleased(event))
    }

    /// Enqueues a device-side copy of `n` elements from this buffer (at `sourceOffset`) into
    /// `destination` (at `destinationOffset`); no host round trip. The queue is in order, so
    /// later commands see the copy.
    public func copy(to destination: Buffer<T>, sourceOffset: Int = 0, destinationOffset: Int = 0, count n: Int,
                     queue: CommandQueue) throws(CLError) {
        precondition(sourceOffset + n <= count && destinationOffset + n <= destination.count)
        let stride = MemoryLayout<T>.stride
        let status = queue.gate.pass {
            clEnqueueCopyBuffer(queue.handle, handle, destination.handle, sourceOffset * stride,
                                destinationOffset * stride, n * stride, 0, nil, nil)
        }
        try check("clEnqueueCopyBuffer", status)
    }

    public func setArgument(_ kernel: cl_kernel, index: cl_uint) -> cl_int {
        var mem: cl_mem? = handle
        return clSetKernelArg(kernel, index, MemoryLayout<cl_mem>.size, &mem)
    }
}
