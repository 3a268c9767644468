import GlintCL
import GlintCore

/// A blur on one OpenCL device for one plan: programs, kernels and the buffers between the
/// passes are made once; `encode` queues the passes from one device image to another.
public final class CLBlur: @unchecked Sendable {
    public let plan: BlurPlan
    let cc: ComputeContext
    private let first: Kernel
    private let second: Kernel
    private let rowMap: Buffer<Int32>
    private let colMap: Buffer<Int32>
    private let taps: Buffer<UInt32>?
    private let tapsF: Buffer<Float>?
    /// Exact 8-bit: ushort4 per pixel (as UInt16 x 4); exact float and recursive: float4.
    private let mid16: Buffer<UInt16>?
    private let midF: Buffer<Float>?
    private let tileW: Int, tileH: Int, rowTile: Int

    public init(plan: BlurPlan, on cc: ComputeContext) throws {
        self.plan = plan
        self.cc = cc
        let q = cc.queue
        let u8 = plan.format == .u8
        rowMap = try Buffer(queue: q, copying: plan.rowMap)
        colMap = try Buffer(queue: q, copying: plan.colMap)
        let pixels = plan.width * plan.height
        if plan.method == .exact {
            let r = plan.radius
            // Column tiles: as wide as local memory allows (1 MiB on PoCL, 48 KiB or more on GPUs).
            let local = Int((try? cc.device.localMemoryBytes) ?? 32768)
            let element = u8 ? 8 : 16
            var w = 16, h = 16
            while w > 1 && (h + 2 * r) * w * element > local / 2 { w /= 2 }
            while h > 1 && (h + 2 * r) * w * element > local / 2 { h /= 2 }
            // Row tiles: 64 pixels and the 2r around them, as 16-byte sums (uint4 or float4).
            var rw = 64
            while rw > 8 && (rw + 2 * r) * 16 > local / 2 { rw /= 2 }
            if (h + 2 * r) * w * element > local / 2 || (rw + 2 * r) * 16 > local / 2 {
                throw GlintError(field: "sigma", "\(plan.radius / (u8 ? 3 : 4)) needs an exact kernel larger than \(cc.deviceName)'s local memory holds; the recursive method has no such limit")
            }
            tileW = w
            tileH = h
            rowTile = rw
            let program = try cc.program("blur.cl", defines: ["PIX_U8=\(u8 ? 1 : 0)", "RADIUS=\(r)",
                                                             "TILE_W=\(tileW)", "TILE_H=\(tileH)"])
            // The row kernel is built with its own tile width.
            let rowProgram = try cc.program("blur.cl", defines: ["PIX_U8=\(u8 ? 1 : 0)", "RADIUS=\(r)",
                                                                "TILE_W=\(rowTile)", "TILE_H=1"])
            first = try rowProgram.kernel("blur_exact_rows")
            second = try program.kernel("blur_exact_cols")
            if u8 {
                taps = try Buffer(queue: q, copying: plan.fixedTaps.map { UInt32($0) })
                tapsF = nil
                mid16 = try Buffer(context: cc.context, count: pixels * 4)
                midF = nil
            } else {
                taps = nil
                tapsF = try Buffer(queue: q, copying: plan.floatTaps)
                mid16 = nil
                midF = try Buffer(context: cc.context, count: pixels * 4)
            }
        } else {
            tileW = 0; tileH = 0; rowTile = 0
            // Ring lengths rounded up, so that nearby sigmas share a program.
            let ring = (plan.boxWidths.max()! + 15) & ~15
            let program = try cc.program("blur.cl", defines: ["PIX_U8=\(u8 ? 1 : 0)", "RING=\(ring)"])
            first = try program.kernel("blur_box_cols")
            second = try program.kernel("blur_box_rows")
            taps = nil; tapsF = nil
            mid16 = u8 ? try Buffer(context: cc.context, count: pixels * 4) : nil
            midF = u8 ? nil : try Buffer(context: cc.context, count: pixels * 4)
        }
    }

    private func roundUp(_ n: Int, _ m: Int) -> Int { (n + m - 1) / m * m }

    /// Queues the blur of `src` into `dst` (both `width * height * 4` elements of the plan's
    /// format: UInt8 or Float buffers). Returns the events, for profiling.
    public func encode(src: any KernelArgument, dst: any KernelArgument) throws -> [Event] {
        let w = Int32(plan.width), h = Int32(plan.height)
        let q = cc.queue
        if plan.method == .exact {
            let mid: any KernelArgument = mid16 ?? midF!
            let t: any KernelArgument = taps ?? tapsF!
            try first.setArguments(src, mid, colMap, t, w, h)
            let e1 = try q.enqueue(first, global: [roundUp(plan.width, rowTile), plan.height], local: [rowTile, 1])
            try second.setArguments(mid, dst, rowMap, t, w, h)
            let e2 = try q.enqueue(second, global: [roundUp(plan.width, tileW), roundUp(plan.height, tileH)],
                                   local: [tileW, tileH])
            return [e1, e2]
        }
        let widths = SIMD4<Int32>(plan.boxWidths.map { Int32($0) })
        let pad = Int32(plan.pad)
        let mid: any KernelArgument = mid16 ?? midF!
        // Each work-item keeps four private rings of up to RING float4s; left to choose, PoCL
        // made one work-group of the whole line (1920 items) and its stack overflowed at large
        // sigma (a crash). Small groups, whole ones, the kernels skipping the items past the edge.
        let group = cc.kind == .gpu ? 64 : 8
        try first.setArguments(src, mid, rowMap, w, h, pad, widths, plan.midScale)
        let e1 = try q.enqueue(first, global: [roundUp(plan.width, group)], local: [group])
        try second.setArguments(mid, dst, colMap, w, h, pad, widths, plan.outScale)
        let e2 = try q.enqueue(second, global: [roundUp(plan.height, group)], local: [group])
        return [e1, e2]
    }
}

/// Blurs images on a backend: the one place that picks the CPU or OpenCL path for a blur.
public enum BlurRenderer {
    public static func blur(_ image: Image8, _ job: BlurJob, on backend: Backend) async throws -> BlurResult<Image8> {
        let (pixels, method, kernel, wall) = try await blur(image.pixels, width: image.width, height: image.height,
                                                             format: .u8, job, on: backend)
        return BlurResult(image: Image8(width: image.width, height: image.height, pixels: pixels), method: method,
                          kernelSeconds: kernel, wallSeconds: wall)
    }

    public static func blur(_ image: ImageF, _ job: BlurJob, on backend: Backend) async throws -> BlurResult<ImageF> {
        let (pixels, method, kernel, wall) = try await blur(image.pixels, width: image.width, height: image.height,
                                                             format: .f32, job, on: backend)
        return BlurResult(image: ImageF(width: image.width, height: image.height, pixels: pixels), method: method,
                          kernelSeconds: kernel, wallSeconds: wall)
    }

    /// Both formats' blur: RGBA values in, RGBA values out, on the Swift path or one device.
    static func blur<T: BitwiseCopyable & Numeric>(_ pixels: [T], width: Int, height: Int, format: PixelFormat,
                                                  _ job: BlurJob, on backend: Backend) async throws
        -> (pixels: [T], method: BlurMethod, kernelSeconds: Double, wallSeconds: Double) {
        try job.validate()
        try ImageLimits.check(width: width, height: height)
        let plan = BlurPlan(job: job, format: format, width: width, height: height)
        let start = Clock.now()
        var out = [T](repeating: 0, count: pixels.count)
        var kernelSeconds = 0.0
        switch backend {
        case .cpu:
            let blur = CPUBlur(plan: plan)
            try await withPointers(pixels, &out) { await blur.run(src: $0, dst: $1) }
        case .opencl(let cc):
            let blur = try CLBlur(plan: plan, on: cc)
            let src = try Buffer<T>(queue: cc.queue, copying: pixels)
            let dst = try Buffer<T>(context: cc.context, count: pixels.count)
            let events = try blur.encode(src: src, dst: dst)
            try out.withUnsafeMutableBufferPointer { (p) throws(CLError) in
                try dst.read(into: p, count: p.count, queue: cc.queue)
            }
            for e in events { kernelSeconds += Double(try e.durationNanoseconds()) * 1e-9 }
        }
        return (out, plan.method, kernelSeconds, Clock.now() - start)
    }

    /// Runs `body` with raw pointers to an input array and an output array that outlive it.
    static func withPointers<T>(_ input: [T], _ output: inout [T],
                                _ body: (UnsafeRawPointer, UnsafeMutableRawPointer) async -> Void) async throws {
        let count = input.count
        let src = UnsafeMutablePointer<T>.allocate(capacity: count)
        let dst = UnsafeMutablePointer<T>.allocate(capacity: count)
        defer { src.deallocate(); dst.deallocate() }
        input.withUnsafeBufferPointer { src.initialize(from: $0.baseAddress!, count: count) }
        await body(UnsafeRawPointer(src), UnsafeMutableRawPointer(dst))
        output.withUnsafeMutableBufferPointer { $0.baseAddress!.update(from: dst, count: count) }
    }
}

/// Repeated blurs of one size on one backend, reusing everything between calls (what a video
/// pipeline or a benchmark does): `time` blurs the same image `runs` times and reports the
/// median. The CPU path blurs in place between preallocated buffers; on OpenCL each run writes
/// the image to the device and reads the result back (wall time), and the kernel time is apart.
public final class BlurSession: @unchecked Sendable {
    public let plan: BlurPlan
    let backend: Backend
    let cpu: CPUBlur?
    let cl: CLBlur?
    let src: UnsafeMutableRawPointer, dst: UnsafeMutableRawPointer
    let clSrc: (any KernelArgument)?, clDst: (any KernelArgument)?

    public init(plan: BlurPlan, backend: Backend) throws {
        self.plan = plan
        self.backend = backend
        let n = plan.width * plan.height * 4
        src = .allocate(byteCount: plan.imageBytes, alignment: 64)
        dst = .allocate(byteCount: plan.imageBytes, alignment: 64)
        switch backend {
        case .cpu:
            cpu = CPUBlur(plan: plan); cl = nil; clSrc = nil; clDst = nil
        case .opencl(let cc):
            cpu = nil
            cl = try CLBlur(plan: plan, on: cc)
            if plan.format == .u8 {
                clSrc = try Buffer<UInt8>(context: cc.context, count: n); clDst = try Buffer<UInt8>(context: cc.context, count: n)
            } else {
                clSrc = try Buffer<Float>(context: cc.context, count: n); clDst = try Buffer<Float>(context: cc.context, count: n)
            }
        }
    }

    deinit { src.deallocate(); dst.deallocate() }

    /// Median wall and kernel seconds of `runs` blurs of `pixels` (UInt8 or Float, the plan's format).
    public func time<T: BitwiseCopyable>(_ pixels: [T], runs: Int) async throws -> (wall: Double, kernel: Double) {
        precondition(pixels.count == plan.width * plan.height * 4)
        pixels.withUnsafeBytes { src.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        var walls: [Double] = [], kernels: [Double] = []
        let bytes = pixels as? [UInt8], floats = pixels as? [Float]
        for _ in 0..<max(runs, 1) {
            let start = Clock.now()
            var kernel = 0.0
            if let cpu {
                await cpu.run(src: UnsafeRawPointer(src), dst: dst)
            } else if let cl, case .opencl(let cc) = backend {
                let q = cc.queue
                var events: [Event] = []
                if let s = clSrc as? Buffer<UInt8>, let d = clDst as? Buffer<UInt8> {
                    try s.write(bytes ?? [], queue: q)
                    events = try cl.encode(src: s, dst: d)
                    try d.read(into: UnsafeMutableBufferPointer(start: dst.assumingMemoryBound(to: UInt8.self), count: d.count), count: d.count, queue: q)
                } else if let s = clSrc as? Buffer<Float>, let d = clDst as? Buffer<Float> {
                    try s.write(floats ?? [], queue: q)
                    events = try cl.encode(src: s, dst: d)
                    try d.read(into: UnsafeMutableBufferPointer(start: dst.assumingMemoryBound(to: Float.self), count: d.count), count: d.count, queue: q)
                }
                for e in events { kernel += Double(try e.durationNanoseconds()) * 1e-9 }
            }
            walls.append(Clock.now() - start)
            kernels.append(kernel)
        }
        func median(_ v: [Double]) -> Double {
            let s = v.sorted()
            return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
        }
        return (median(walls), median(kernels))
    }
}
