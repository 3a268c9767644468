import GlintCL
import GlintCore

/// A device's peak single-precision FMA rate and global-memory copy bandwidth, measured with
/// Kernels/peak.cl in the manner of clpeak: the work grows until one launch takes `launchSeconds`
/// (or reaches its cap), a warm-up launch, then repetitions that fill `measureSeconds`, timed by
/// the queue's profiling events; the rate is that of the median launch. `glint bench` reports
/// what fraction of these rates its kernels reach.
public struct DevicePeak: Sendable {
    /// Flops per second: 2 per FMA lane (`peak_fma`: 16 chains of `fmaWidth` lanes per
    /// work-item, `fmaRounds` rounds).
    public let flops: Double
    /// Bytes per second a copy moves through global memory, the read and the written bytes
    /// together (`peak_copy`: float4 in, float4 out).
    public let bytesPerSecond: Double
    /// The measured sizes: work-items and rounds of the FMA kernel, bytes of each copy buffer.
    public let fmaItems: Int
    public let fmaRounds: Int
    /// Float lanes per FMA: the device's native float vector width (1 on GPUs).
    public let fmaWidth: Int
    public let copyBytes: Int
    /// What Glint's own copies between host memory (an ordinary array) and a device buffer of
    /// `copyBytes` reach, bytes per second, wall clock: through pinned staging where the queue
    /// uses it (`CommandQueue.usesStaging`), the median of 5 after a warm-up each way.
    public let hostToDevice: Double
    public let deviceToHost: Double
    /// Timed launches of each kernel (after the warm-up).
    public let fmaLaunches: Int
    public let copyLaunches: Int

    /// FMA chains per work-item in `peak_fma` (PEAK_CHAINS).
    static let chains = 16
    /// The launch time the sizes grow to.
    public static let launchSeconds = 0.010
    /// The timed launches of each kernel fill about this much (5 to 200 launches).
    public static let measureSeconds = 0.2
    /// The copy buffers' cap: 256 MiB each, larger than any device's last-level cache, so the
    /// rate is the memory's.
    public static let copyCapBytes = 256 << 20
    /// The FMA kernel's cap on work-items and rounds.
    static let fmaItemsFirst = 1 << 12
    static let fmaRoundsFirst = 1 << 12
    static let fmaItemsCap = 1 << 22
    static let fmaRoundsCap = 1 << 16

    /// Measures `cc`'s device (a few tenths of a second on a GPU or PoCL; seconds on Oclgrind,
    /// where the first, smallest launches already take longer than `launchSeconds`).
    public static func measure(on cc: ComputeContext) throws -> DevicePeak {
        let width = [16, 8, 4].first { $0 <= cc.nativeFloatVectorWidth } ?? 1
        let program = try cc.program("peak.cl", defines: ["PEAK_WIDTH=\(width)"])

        // FMA: items grow to `fmaItemsFirst` (enough for a CPU's cores and vectors), then rounds to
        // `fmaRoundsFirst` (a long loop: a CPU device starts few items), then items to fill a GPU.
        let fma = try program.kernel("peak_fma")
        var items = 256, rounds = 64
        var out = try Buffer<Float>(context: cc.context, count: items * width, access: .writeOnly)
        func launchFMA() throws -> Double {
            try fma.setArguments(out, Float(0.9999), Float(1e-4), Int32(rounds))
            return try seconds(cc.launch(fma, items: [items]))
        }
        var t = try launchFMA()
        while t < launchSeconds {
            let grow = max(2, min(16, Int((launchSeconds / max(t, 1e-7)).rounded(.down))))
            if items < fmaItemsFirst {
                items = min(fmaItemsFirst, items * grow)
                out = try Buffer<Float>(context: cc.context, count: items * width, access: .writeOnly)
            } else if rounds < fmaRoundsFirst {
                rounds = min(fmaRoundsFirst, rounds * grow)
            } else if items < fmaItemsCap {
                items = min(fmaItemsCap, items * grow)
                out = try Buffer<Float>(context: cc.context, count: items * width, access: .writeOnly)
            } else if rounds < fmaRoundsCap {
                rounds = min(fmaRoundsCap, rounds * grow)
            } else { break }
            t = try launchFMA()
        }
        let fmaTimes = try repeated(first: t, launch: launchFMA)
        let flops = Double(items) * Double(rounds) * Double(chains * width) * 2 / (try timed(fmaTimes, "peak_fma"))
        out = try Buffer<Float>(context: cc.context, count: 1, access: .writeOnly)

        // Copy: the buffers grow to the launch time or the cap (and the device's largest buffer).
        let copy = try program.kernel("peak_copy")
        let maxAlloc = Int(min(UInt64(Int.max), (try? cc.device.maxAllocationBytes) ?? UInt64(copyCapBytes)))
        let cap = max(1 << 16, min(copyCapBytes, maxAlloc) / 16 * 16)
        var bytes = min(1 << 16, cap)
        var source = try Buffer<SIMD4<Float>>(context: cc.context, count: bytes / 16, access: .readOnly)
        var target = try Buffer<SIMD4<Float>>(context: cc.context, count: bytes / 16, access: .writeOnly)
        func launchCopy() throws -> Double {
            try copy.setArguments(source, target, Int32(bytes / 16))
            return try seconds(cc.launch(copy, items: [bytes / 16]))
        }
        func resize() throws {
            source = try Buffer<SIMD4<Float>>(context: cc.context, count: bytes / 16, access: .readOnly)
            target = try Buffer<SIMD4<Float>>(context: cc.context, count: bytes / 16, access: .writeOnly)
            try source.zero(queue: cc.queue)
        }
        try source.zero(queue: cc.queue)
        t = try launchCopy()
        while t < launchSeconds && bytes < cap {
            let grow = max(2, min(16, Int((launchSeconds / max(t, 1e-7)).rounded(.down))))
            bytes = min(cap, bytes * grow) / 16 * 16
            try resize()
            t = try launchCopy()   // first touch of new buffers: not timed below
            t = try launchCopy()
        }
        let copyTimes = try repeated(first: t, launch: launchCopy)
        let rate = Double(2 * bytes) / (try timed(copyTimes, "peak_copy"))
        // The copy kernel's buffers go before the host copies make theirs (on a CPU device all
        // of them are host memory).
        source = try Buffer<SIMD4<Float>>(context: cc.context, count: 1, access: .readOnly)
        target = try Buffer<SIMD4<Float>>(context: cc.context, count: 1, access: .writeOnly)

        // Host copies: the source's bytes to the device and back into an array, timed whole.
        var host = [UInt8](repeating: 1, count: bytes)
        let device = try Buffer<UInt8>(context: cc.context, count: bytes)
        var up: [Double] = [], down: [Double] = []
        for k in 0..<6 {
            let t0 = Clock.now()
            try device.write(host, queue: cc.queue)
            let t1 = Clock.now()
            try host.withUnsafeMutableBufferPointer { try device.read(into: $0, count: bytes, queue: cc.queue) }
            let t2 = Clock.now()
            if k > 0 { up.append(t1 - t0); down.append(t2 - t1) }
        }
        return DevicePeak(flops: flops, bytesPerSecond: rate, fmaItems: items, fmaRounds: rounds, fmaWidth: width, copyBytes: bytes,
                          hostToDevice: Double(bytes) / max(BenchStats(up).median, 1e-9),
                          deviceToHost: Double(bytes) / max(BenchStats(down).median, 1e-9),
                          fmaLaunches: fmaTimes.count, copyLaunches: copyTimes.count)
    }

    /// The timed launches: as many as fill `measureSeconds` at `first`'s time, 5 to 200.
    static func repeated(first: Double, launch: () throws -> Double) throws -> [Double] {
        let count = min(200, max(5, Int((measureSeconds / max(first, 1e-7)).rounded(.up))))
        return try (0..<count).map { _ in try launch() }
    }

    /// The median of a kernel's launch times; an error where the driver's profiling gave none.
    static func timed(_ times: [Double], _ kernel: String) throws -> Double {
        let m = BenchStats(times).median
        guard m > 0 else { throw GlintError("\(kernel): the device's profiling events report no time; its peak cannot be measured") }
        return m
    }

    static func seconds(_ event: Event) throws(CLError) -> Double { Double(try event.durationNanoseconds()) * 1e-9 }

    public var json: JSON {
        .object([
            ("fma_flops_per_second", .number(flops)), ("copy_bytes_per_second", .number(bytesPerSecond)),
            ("fma_items", .int(Int64(fmaItems))), ("fma_rounds", .int(Int64(fmaRounds))), ("fma_width", .int(Int64(fmaWidth))),
            ("fma_launches", .int(Int64(fmaLaunches))),
            ("copy_buffer_bytes", .int(Int64(copyBytes))), ("copy_launches", .int(Int64(copyLaunches))),
            ("host_to_device_bytes_per_second", .number(hostToDevice)),
            ("device_to_host_bytes_per_second", .number(deviceToHost)),
        ])
    }
}
