import COpenCL
import Dispatch
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// Pinned host memory through which a queue's large copies between host and device go, on a
/// device with memory of its own (a GPU).
///
/// A driver copies from pageable memory through pinned buffers of its own, one piece after the
/// other on one thread, several times slower than from pinned memory (docs/GPU.md). Here a copy
/// runs in `chunkBytes` pieces through `slots` pinned buffers (`CL_MEM_ALLOC_HOST_PTR`, mapped
/// once for the life of the queue): the device's DMA of one piece overlaps the host's copy of
/// the next, and that host copy runs on every core. The bytes that arrive are the same either
/// way. The buffers are made on the first large copy and kept for every later copy of every job
/// on the queue; one copy uses them at a time (another that comes meanwhile copies directly).
final class PinnedStaging: @unchecked Sendable {
    /// The pieces a copy is cut into, and how many are in flight at once (4 × 8 MiB pinned).
    static let chunkBytes = 8 << 20
    static let slots = 4
    /// Copies smaller than this go directly: one piece gains nothing from the ring.
    static let minimumBytes = 1 << 20

    /// The queue's handle and gate, not the queue: the queue owns this and drops it first.
    private let handle: cl_command_queue
    private let gate: CallGate
    private let buffers: [cl_mem]
    private let pointers: [UnsafeMutableRawPointer]
    private let busy = Locked(false)

    init(queue: CommandQueue) throws(CLError) {
        handle = queue.handle
        gate = queue.gate
        let context = queue.context
        var buffers: [cl_mem] = [], pointers: [UnsafeMutableRawPointer] = []
        do throws(CLError) {
            for _ in 0..<Self.slots {
                let flags = cl_mem_flags(CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE)
                let buffer = try create("clCreateBuffer") { status in
                    context.gate.pass { clCreateBuffer(context.handle, flags, Self.chunkBytes, nil, status) }
                }
                buffers.append(buffer)
                var status: cl_int = CL_SUCCESS
                let mapped = queue.gate.pass {
                    clEnqueueMapBuffer(queue.handle, buffer, cl_bool(CL_TRUE), cl_map_flags(CL_MAP_READ | CL_MAP_WRITE),
                                       0, Self.chunkBytes, 0, nil, nil, &status)
                }
                try check("clEnqueueMapBuffer", status, detail: "pinned staging buffer")
                guard let mapped else { throw CLError("clEnqueueMapBuffer", .invalidValue, detail: "returned a null pointer") }
                pointers.append(mapped)
            }
        } catch {
            for (b, p) in zip(buffers, pointers) { queue.gate.pass { _ = clEnqueueUnmapMemObject(queue.handle, b, p, 0, nil, nil) } }
            queue.gate.pass { _ = clFinish(queue.handle) }
            for b in buffers { context.gate.pass { _ = clReleaseMemObject(b) } }
            throw error
        }
        self.buffers = buffers
        self.pointers = pointers
    }

    deinit {
        for (b, p) in zip(buffers, pointers) { gate.pass { _ = clEnqueueUnmapMemObject(handle, b, p, 0, nil, nil) } }
        gate.pass { _ = clFinish(handle) }
        for b in buffers { gate.pass { _ = clReleaseMemObject(b) } }
    }

    private func flush() throws(CLError) { try check("clFlush", gate.pass { clFlush(handle) }) }

    /// Takes the ring for one copy; false when another copy has it.
    func acquire() -> Bool { busy.withLock { b in if b { return false }; b = true; return true } }
    func release() { busy.withLock { $0 = false } }

    /// Reads `bytes` from `buffer` at `offset` into `destination`; returns the device's copy time
    /// (the profiling events of the pieces). Blocking: the bytes are there on return.
    func read(_ buffer: cl_mem, offset: Int, bytes: Int, into destination: UnsafeMutableRawPointer) throws(CLError) -> UInt64 {
        do { return try readPieces(buffer, offset: offset, bytes: bytes, into: destination) } catch {
            settle()
            throw error
        }
    }

    /// Writes `bytes` from `source` into `buffer` at `offset`; returns the device's copy time.
    /// Blocking: every piece has reached the device on return.
    func write(_ buffer: cl_mem, offset: Int, bytes: Int, from source: UnsafeRawPointer) throws(CLError) -> UInt64 {
        do { return try writePieces(buffer, offset: offset, bytes: bytes, from: source) } catch {
            settle()
            throw error
        }
    }

    /// After a failed copy: waits for the pieces still in flight, so that the next copy cannot
    /// refill a slot the device is still reading or writing.
    private func settle() { gate.pass { _ = clFinish(handle) } }

    /// Piece i of a copy of `bytes`: its offset and length.
    private static func piece(_ i: Int, of bytes: Int) -> (start: Int, length: Int) {
        let start = i * chunkBytes
        return (start, min(chunkBytes, bytes - start))
    }

    private func readPieces(_ buffer: cl_mem, offset: Int, bytes: Int, into destination: UnsafeMutableRawPointer) throws(CLError) -> UInt64 {
        let pieces = (bytes + Self.chunkBytes - 1) / Self.chunkBytes
        var events = [cl_event?](repeating: nil, count: pieces)
        var nanoseconds: UInt64 = 0
        defer { for e in events { if let e { gate.pass { _ = clReleaseEvent(e) } } } }
        func enqueue(_ i: Int) throws(CLError) {
            let (start, length) = Self.piece(i, of: bytes)
            events[i] = try enqueuePiece("clEnqueueReadBuffer", detail: "into pinned staging") {
                clEnqueueReadBuffer(handle, buffer, cl_bool(CL_FALSE), offset + start, length, pointers[i % Self.slots], 0, nil, &$0)
            }
        }
        for i in 0 ..< min(pieces, Self.slots) { try enqueue(i) }
        try flush()
        for i in 0..<pieces {
            nanoseconds += try Self.wait(events[i], gate: gate)
            let (start, length) = Self.piece(i, of: bytes)
            Self.parallelCopy(to: destination + start, from: pointers[i % Self.slots], bytes: length)
            // The slot is free again: the piece after the ones in flight goes into it.
            if i + Self.slots < pieces {
                try enqueue(i + Self.slots)
                try flush()
            }
        }
        return nanoseconds
    }

    /// Enqueues one piece's copy through the gate (`call` fills in the copy's event) and hands
    /// the event back.
    private func enqueuePiece(_ routine: StaticString, detail: String, _ call: (inout cl_event?) -> cl_int) throws(CLError) -> cl_event? {
        var event: cl_event?
        try check(routine, gate.pass { call(&event) }, detail: detail)
        return event
    }

    private func writePieces(_ buffer: cl_mem, offset: Int, bytes: Int, from source: UnsafeRawPointer) throws(CLError) -> UInt64 {
        let pieces = (bytes + Self.chunkBytes - 1) / Self.chunkBytes
        var events = [cl_event?](repeating: nil, count: pieces)
        var nanoseconds: UInt64 = 0
        defer { for e in events { if let e { gate.pass { _ = clReleaseEvent(e) } } } }
        for i in 0..<pieces {
            // The slot's previous piece must have left before it is filled again.
            if i >= Self.slots { nanoseconds += try Self.wait(events[i - Self.slots], gate: gate) }
            let (start, length) = Self.piece(i, of: bytes)
            Self.parallelCopy(to: pointers[i % Self.slots], from: source + start, bytes: length)
            events[i] = try enqueuePiece("clEnqueueWriteBuffer", detail: "from pinned staging") {
                clEnqueueWriteBuffer(handle, buffer, cl_bool(CL_FALSE), offset + start, length, pointers[i % Self.slots], 0, nil, &$0)
            }
            try flush()
        }
        for i in max(0, pieces - Self.slots) ..< pieces { nanoseconds += try Self.wait(events[i], gate: gate) }
        return nanoseconds
    }

    /// Waits for `event` and returns its duration from the profiling counters.
    static func wait(_ event: cl_event?, gate: CallGate) throws(CLError) -> UInt64 {
        guard let event else { return 0 }
        var e: cl_event? = event
        try check("clWaitForEvents", gate.pass { clWaitForEvents(1, &e) })
        return profiledNanoseconds(event, gate: gate)
    }

    /// The host's side of a piece: one memcpy per core over the piece's 1 MiB parts.
    static func parallelCopy(to destination: UnsafeMutableRawPointer, from source: UnsafeRawPointer, bytes: Int) {
        let part = 1 << 20
        let parts = (bytes + part - 1) / part
        if parts <= 1 || CPUFeatures.workerCount <= 1 {
            memcpy(destination, source, bytes)
            return
        }
        let d = SendableRaw(destination), s = SendableRaw(UnsafeMutableRawPointer(mutating: source))
        DispatchQueue.concurrentPerform(iterations: parts) { k in
            let start = k * part
            memcpy(d.pointer + start, s.pointer + start, min(part, bytes - start))
        }
    }

    private struct SendableRaw: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
        init(_ pointer: UnsafeMutableRawPointer) { self.pointer = pointer }
    }
}

/// End minus start of a finished command's profiling counters, 0 where the driver has none.
func profiledNanoseconds(_ event: cl_event, gate: CallGate) -> UInt64 {
    var start: cl_ulong = 0, end: cl_ulong = 0
    let a = gate.pass { clGetEventProfilingInfo(event, cl_profiling_info(CL_PROFILING_COMMAND_START), 8, &start, nil) }
    let b = gate.pass { clGetEventProfilingInfo(event, cl_profiling_info(CL_PROFILING_COMMAND_END), 8, &end, nil) }
    return a == CL_SUCCESS && b == CL_SUCCESS && end >= start ? end - start : 0
}
