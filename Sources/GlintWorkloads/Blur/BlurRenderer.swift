import GlintCL
import GlintCore

/// A blur on one OpenCL device for one plan: programs, kernels and the buffers between the
/// passes are made once; `encode` queues the passes from one device image to another.
public final class CLBlur: @unchecked Sendable {
    public let plan: BlurPlan
    let cc: ComputeContext
    private let first: Kernel
    /// nil where one kernel does both passes (the exact 8-bit CPU form).
    private let second: Kernel?
    private let rowMap: Buffer<Int32>
    private let colMap: Buffer<Int32>
    private let taps: Buffer<UInt32>?
    private let tapsF: Buffer<Float>?
    /// The image between the passes: 8-bit images UInt16 per value (exact: the horizontal sums;
    /// recursive: in 1/256), float images Float.
    private let mid16: Buffer<UInt16>?
    private let midF: Buffer<Float>?
    /// Exact 8-bit CPU form (`blur_exact_u8_v`, both passes in one kernel): each work-item's
    /// halves of its row's vertical sums, and a row of zero bytes (rows past a zero border).
    private let scratch: Buffer<UInt16>?
    private let zeros: Buffer<UInt8>?
    /// Exact, GPU form: the work-group shapes.
    private let tileW: Int, tileH: Int, rowTile: Int
    /// Values per vector (blur.cl's LANES; 1: the GPU forms); recursive: vectors per column
    /// work-item, the work-group size, the rings of one launch and the work-items each pass's
    /// launches take at a time.
    private let lanes: Int, chunks: Int, group: Int
    private let rings: Buffer<Float>?
    private let columnItemsPerLaunch: Int, rowItemsPerLaunch: Int

    /// Bytes the recursive kernels' rings may take on a device of `kind`: a pass whose rings need
    /// more runs as several launches, each over as many work-items as fit. CPU devices: 4 MiB
    /// (their buffers are the process's memory: a 4K 8-bit blur at sigma 40 would otherwise
    /// hold 24 MB of rings, over the memory bound of its bench case; PoCL's two threads need
    /// only a few work-items per launch); GPUs: 64 MiB (the rings of a 4K pass at sigma 100 in
    /// one launch).
    public static func ringBytesLimit(on kind: Device.Kind) -> Int { kind == .cpu ? 4 << 20 : 64 << 20 }

    /// `ringBytes`: the limit on the rings' memory (default: `ringBytesLimit`; tests lower it to
    /// split passes into launches);
    /// `shape`: the kernels' lanes and recursive column vectors per work-item in place of the
    /// device's (tests run every shape on one device; narrowed as the image needs).
    public init(plan: BlurPlan, on cc: ComputeContext, ringBytes: Int? = nil,
                shape: (lanes: Int, chunks: Int)? = nil) throws {
        self.plan = plan
        self.cc = cc
        let q = cc.queue
        let u8 = plan.format == .u8
        rowMap = try Buffer(queue: q, copying: plan.rowMap)
        colMap = try Buffer(queue: q, copying: plan.colMap)
        let pixels = plan.width * plan.height
        let preferred = shape ?? Self.preferredShape(on: cc)
        let exactLanes = plan.method == .exact ? Self.exactLanes(plan: plan, preferring: preferred.lanes) : 0
        // The exact 8-bit CPU form keeps its middle values in each work-item's scratch.
        let fused = u8 && exactLanes > 1
        mid16 = u8 && !fused ? try Buffer(context: cc.context, count: pixels * 4) : nil
        midF = u8 ? nil : try Buffer(context: cc.context, count: pixels * 4)
        if fused {
            let items = (plan.height + Self.exactBand - 1) / Self.exactBand
            scratch = try Buffer(context: cc.context, count: items * 4 * 2 * (plan.width + 2 * plan.radius))
            let z = try Buffer<UInt8>(context: cc.context, count: plan.width * 4)
            try z.zero(queue: q)
            zeros = z
        } else {
            scratch = nil; zeros = nil
        }
        if plan.method == .exact {
            let r = plan.radius
            lanes = exactLanes
            chunks = 0; rings = nil
            columnItemsPerLaunch = 0; rowItemsPerLaunch = 0
            if lanes > 1 {
                // CPU form: taps read straight from the image, LANES values at a time.
                tileW = 0; tileH = 0; rowTile = 0; group = 1
                let program = try cc.program("blur.cl", defines: ["PIX_U8=\(u8 ? 1 : 0)", "RADIUS=\(r)", "LANES=\(lanes)"])
                if fused {
                    first = try program.kernel("blur_exact_u8_v")
                    second = nil
                } else {
                    first = try program.kernel("blur_exact_rows_v")
                    second = try program.kernel("blur_exact_cols_v")
                }
            } else {
                // GPU form. Column tiles: as wide as local memory allows (48 KiB or more on GPUs).
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
                group = 0
                let program = try cc.program("blur.cl", defines: ["PIX_U8=\(u8 ? 1 : 0)", "RADIUS=\(r)",
                                                                 "TILE_W=\(tileW)", "TILE_H=\(tileH)"])
                // The row kernel is built with its own tile width.
                let rowProgram = try cc.program("blur.cl", defines: ["PIX_U8=\(u8 ? 1 : 0)", "RADIUS=\(r)",
                                                                    "TILE_W=\(rowTile)", "TILE_H=1"])
                first = try rowProgram.kernel("blur_exact_rows")
                second = try program.kernel("blur_exact_cols")
            }
            if u8 {
                taps = try Buffer(queue: q, copying: plan.fixedTaps.map { UInt32($0) })
                tapsF = nil
            } else {
                taps = nil
                tapsF = try Buffer(queue: q, copying: plan.floatTaps)
            }
        } else {
            tileW = 0; tileH = 0; rowTile = 0
            taps = nil; tapsF = nil
            let (lanes, chunks) = Self.recursiveShape(plan: plan, preferring: preferred)
            // An item's rings: rings 1-3, each a power of two.
            let slots = plan.boxWidths.dropFirst().reduce(0) { $0 + BoxPasses.Cascade.capacity($1) }
            // Work-groups of 64 for the GPU form on GPUs; the CPU forms' items are work enough.
            let group = cc.kind == .gpu && lanes == 1 ? 64 : 1
            (self.lanes, self.chunks, self.group) = (lanes, chunks, group)
            let program = try cc.program("blur.cl", defines: ["PIX_U8=\(u8 ? 1 : 0)", "RECURSIVE=1",
                                                             "LANES=\(lanes)", "CHUNKS=\(chunks)"])
            first = try program.kernel("blur_box_cols")
            second = try program.kernel("blur_box_rows")
            // Each launch's rings within `ringBytes`, but at least one work-group's, and on a CPU
            // device one work-item per compute unit (sigma in the thousands: megabytes an item).
            let columnRing = slots * lanes * chunks, rowRing = slots * lanes
            let limit = max((ringBytes ?? Self.ringBytesLimit(on: cc.kind)) / 4, 1)
            let fewest = cc.kind == .cpu && ringBytes == nil ? max(1, (try? cc.device.computeUnits) ?? 1) : group
            func perLaunch(_ items: Int, _ ring: Int) -> Int {
                min((items + group - 1) / group * group, max(fewest, limit / ring / group * group))
            }
            let items = Self.recursiveItems(plan: plan, lanes: lanes, chunks: chunks)
            columnItemsPerLaunch = perLaunch(items.columns, columnRing)
            rowItemsPerLaunch = perLaunch(items.rows, rowRing)
            rings = try Buffer(context: cc.context, count: max(columnItemsPerLaunch * columnRing, rowItemsPerLaunch * rowRing))
        }
    }

    /// The kernels' shape on this device, (LANES, vectors per recursive column work-item): the GPU
    /// forms on a GPU (1 x 1: a warp is the vector); on a CPU device 16 lanes, AVX2 included, as
    /// PoCL leaves a work-item's loop scalar and two registers a vector give it twice the
    /// independent work, and 4 vectors so that the column walk uses each cache line of an 8-bit
    /// row whole (figures: docs/PERFORMANCE.md#kernel-lanes-on-the-avx2-machine).
    /// `GLINT_KERNEL_LANES` (1, 4, 8 or 16) sets the lanes on any device (the Oclgrind tests run
    /// both forms on one device this way).
    static func preferredShape(on cc: ComputeContext) -> (lanes: Int, chunks: Int) {
        shape(lanes: ComputeContext.kernelLanesOverride ?? (cc.kind == .cpu ? 16 : 1))
    }

    /// The shape for `lanes` values per vector: the GPU forms with 1 (one value per column
    /// work-item), the CPU forms' four vectors of a row per column work-item otherwise.
    static func shape(lanes: Int) -> (lanes: Int, chunks: Int) { (lanes, lanes == 1 ? 1 : 4) }

    /// The exact kernels' lanes: `preferred`, halved until a vector fits in a row (1 stays 1).
    static func exactLanes(plan: BlurPlan, preferring preferred: Int) -> Int {
        var lanes = preferred
        while lanes > 4 && lanes > plan.width * 4 { lanes /= 2 }
        return lanes
    }

    /// Rows per work-item of the exact kernels' CPU form (whole rows; 4, 8 and 16 measured
    /// alike on PoCL at 1080p, 32 slower: 8 keeps 135 work-items for a 1080p image).
    static let exactBand = 8

    /// `preferred` (lanes 1, 4, 8 or 16, chunks 1, 2 or 4), narrowed until a work-item fits inside
    /// the image: lanes x chunks values at most a row's, lanes / 4 rows at most the image's.
    static func recursiveShape(plan: BlurPlan, preferring preferred: (lanes: Int, chunks: Int)) -> (lanes: Int, chunks: Int) {
        precondition([1, 4, 8, 16].contains(preferred.lanes) && [1, 2, 4].contains(preferred.chunks))
        let values = plan.width * 4
        var (lanes, chunks) = preferred
        while lanes > 4 && (lanes > values || lanes / 4 > plan.height) { lanes /= 2 }
        while chunks > 1 && lanes * chunks > values { chunks /= 2 }
        return (lanes, chunks)
    }

    /// Work-items of the recursive passes: column items (lanes x chunks values of a row each) and
    /// row items (one channel of a row, or lanes / 4 rows).
    static func recursiveItems(plan: BlurPlan, lanes: Int, chunks: Int) -> (columns: Int, rows: Int) {
        ((plan.width * 4 + lanes * chunks - 1) / (lanes * chunks),
         lanes == 1 ? plan.height * 4 : (plan.height + lanes / 4 - 1) / (lanes / 4))
    }

    /// Which form of the kernels runs, in words (`glint blur --verbose`).
    public var form: String {
        switch (plan.method, lanes) {
        case (.exact, 1): "exact, GPU form (local-memory tiles)"
        case (.exact, _) where second == nil: "exact, CPU form (\(lanes) 16-bit lanes per vector, both passes in one kernel)"
        case (.exact, _): "exact, CPU form (\(lanes) values per vector)"
        case (_, 1) where chunks == 1: "recursive, GPU form (one value per work-item)"
        default: "recursive, CPU form (\(lanes) value\(lanes == 1 ? "" : "s") per vector, \(chunks) per column work-item)"
        }
    }

    private func roundUp(_ n: Int, _ m: Int) -> Int { (n + m - 1) / m * m }

    /// Queues the blur of `src` into `dst` (both `width * height * 4` elements of the plan's
    /// format: UInt8 or Float buffers). Returns the events, for profiling.
    public func encode(src: any KernelArgument, dst: any KernelArgument) throws -> [Event] {
        let w = Int32(plan.width), h = Int32(plan.height)
        let q = cc.queue
        if plan.method == .exact {
            let t: any KernelArgument = taps ?? tapsF!
            if lanes > 1 {
                let bands = [(plan.height + Self.exactBand - 1) / Self.exactBand]
                let band = Int32(Self.exactBand)
                guard let second else {
                    try first.setArguments(src, dst, colMap, rowMap, t, scratch!, zeros!, w, h, band)
                    return [try q.enqueue(first, global: bands, local: [1])]
                }
                let mid: any KernelArgument = mid16 ?? midF!
                try first.setArguments(src, mid, colMap, t, w, h, band)
                let e1 = try q.enqueue(first, global: bands, local: [1])
                try second.setArguments(mid, dst, rowMap, t, w, h, band)
                let e2 = try q.enqueue(second, global: bands, local: [1])
                return [e1, e2]
            }
            let mid: any KernelArgument = mid16 ?? midF!
            try first.setArguments(src, mid, colMap, t, w, h)
            let e1 = try q.enqueue(first, global: [roundUp(plan.width, rowTile), plan.height], local: [rowTile, 1])
            guard let second else { preconditionFailure("the exact GPU form has two kernels") }
            try second.setArguments(mid, dst, rowMap, t, w, h)
            let e2 = try q.enqueue(second, global: [roundUp(plan.width, tileW), roundUp(plan.height, tileH)],
                                   local: [tileW, tileH])
            return [e1, e2]
        }
        let widths = SIMD4<Int32>(plan.boxWidths.map { Int32($0) })
        let masks = SIMD4<Int32>(plan.boxWidths.map { Int32(BoxPasses.Cascade.capacity($0) - 1) })
        let pad = Int32(plan.pad)
        let items = Self.recursiveItems(plan: plan, lanes: lanes, chunks: chunks)
        let mid: any KernelArgument = mid16 ?? midF!
        guard let second else { preconditionFailure("the recursive method has two kernels") }
        var events: [Event] = []
        for (kernel, from, to, map, scale, items, perLaunch) in [
            (first, src, mid, rowMap, plan.midScale, items.columns, columnItemsPerLaunch),
            (second, mid, dst, colMap, plan.outScale, items.rows, rowItemsPerLaunch),
        ] {
            for start in stride(from: 0, to: items, by: perLaunch) {
                try kernel.setArguments(from, to, rings!, map, w, h, pad, widths, masks, scale, Int32(start))
                events.append(try q.enqueue(kernel, global: [roundUp(min(perLaunch, items - start), group)], local: [group]))
            }
        }
        return events
    }
}

/// Blurs images on a backend: the one place that picks the CPU or OpenCL path for a blur.
public enum BlurRenderer {
    public static func blur(_ image: Image8, _ job: BlurJob, on backend: Backend) async throws -> BlurResult<Image8> {
        let (pixels, method, kernel, wall, form) = try await blur(image.pixels, width: image.width, height: image.height,
                                                                   format: .u8, job, on: backend)
        return BlurResult(image: Image8(width: image.width, height: image.height, pixels: pixels), method: method,
                          kernelSeconds: kernel, wallSeconds: wall, kernelForm: form)
    }

    public static func blur(_ image: ImageF, _ job: BlurJob, on backend: Backend) async throws -> BlurResult<ImageF> {
        let (pixels, method, kernel, wall, form) = try await blur(image.pixels, width: image.width, height: image.height,
                                                                   format: .f32, job, on: backend)
        return BlurResult(image: ImageF(width: image.width, height: image.height, pixels: pixels), method: method,
                          kernelSeconds: kernel, wallSeconds: wall, kernelForm: form)
    }

    /// Both formats' blur: RGBA values in, RGBA values out, on the Swift path or one device.
    static func blur<T: BitwiseCopyable & Numeric>(_ pixels: [T], width: Int, height: Int, format: PixelFormat,
                                                  _ job: BlurJob, on backend: Backend) async throws
        -> (pixels: [T], method: BlurMethod, kernelSeconds: Double, wallSeconds: Double, form: String?) {
        try job.validate()
        try ImageLimits.check(width: width, height: height)
        let plan = BlurPlan(job: job, format: format, width: width, height: height)
        let start = Clock.now()
        // Every element is written below (by the blur, or by the device's result read into it).
        var out = LargeArrays.uninitialized(T.self, count: pixels.count)
        var kernelSeconds = 0.0
        var form: String?
        switch backend {
        case .cpu:
            let blur = CPUBlur(plan: plan)
            try await withPointers(pixels, &out) { await blur.run(src: $0, dst: $1) }
        case .opencl(let cc):
            let blur = try CLBlur(plan: plan, on: cc)
            form = blur.form
            let src = try Buffer<T>(queue: cc.queue, copying: pixels)
            let dst = try Buffer<T>(context: cc.context, count: pixels.count)
            let events = try blur.encode(src: src, dst: dst)
            try out.withUnsafeMutableBufferPointer { (p) throws(CLError) in
                try dst.read(into: p, count: p.count, queue: cc.queue)
            }
            for e in events { kernelSeconds += Double(try e.durationNanoseconds()) * 1e-9 }
        }
        return (out, plan.method, kernelSeconds, Clock.now() - start, form)
    }

    /// Runs `body` with raw pointers to an input array's and an output array's own storage (both
    /// kept alive, neither copied nor changed otherwise until it returns): the blur reads the
    /// caller's pixels in place and writes the array it returns, with no copy either way.
    static func withPointers<T>(_ input: [T], _ output: inout [T],
                                _ body: (UnsafeRawPointer, UnsafeMutableRawPointer) async -> Void) async throws {
        precondition(!input.isEmpty && output.count == input.count)
        let src = input.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress!) }
        let dst = output.withUnsafeMutableBufferPointer { UnsafeMutableRawPointer($0.baseAddress!) }
        await body(src, dst)
        withExtendedLifetime(input) {}
    }
}

/// Repeated blurs of one size on one backend, reusing everything between calls (what a video
/// pipeline or a benchmark does): `load` an image, then `run` blurs it as often as asked and
/// `output` returns the last result. The Swift path blurs between two host buffers of its own.
/// An OpenCL device that works in the host's memory (a CPU device, `sharesHostMemory`) blurs
/// between two such buffers too, shared with it (`CL_MEM_USE_HOST_PTR`): nothing is copied. Any
/// other device (a GPU) gets the image written to it and the result read back on every run, as a
/// new frame would be; those copies are part of the wall time, the kernels' time is apart.
public final class BlurSession: @unchecked Sendable {
    public let plan: BlurPlan
    let backend: Backend
    /// Whether the device's kernels work in the session's host buffers (no copies).
    public let sharesHostMemory: Bool
    /// Set once in `init`; nil only in `deinit`, which releases the device's buffers before the
    /// host memory under them.
    private var engine: Engine!
    /// The session's input (the Swift path and a sharing device; nil where the device copies the
    /// caller's array: no second copy on the host) and output, in host memory.
    private let src: UnsafeMutableRawPointer?
    private let dst: UnsafeMutableRawPointer
    /// The loaded image, for a device that copies it at every run.
    private var input: Pixels?
    /// Whether an image is loaded, and whether the last run finished (its result is in `dst`).
    private var loaded = false, ran = false

    private enum Engine {
        case cpu(CPUBlur)
        case opencl(CLBlur, CommandQueue, src: Buffer<UInt8>, dst: Buffer<UInt8>)
    }

    private enum Pixels {
        case bytes([UInt8]), floats([Float])
        func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            switch self {
            case .bytes(let a): return try a.withUnsafeBytes(body)
            case .floats(let a): return try a.withUnsafeBytes(body)
            }
        }
    }

    /// `keepCopies`: copy in and out on every device, even one that works in host memory (to
    /// compare); else the device decides (`ComputeContext.sharesHostMemory`).
    public init(plan: BlurPlan, backend: Backend, keepCopies: Bool = false) throws {
        self.plan = plan
        self.backend = backend
        let bytes = plan.imageBytes
        switch backend {
        case .cpu:
            sharesHostMemory = false
            src = .allocate(byteCount: bytes, alignment: 64)
            dst = .allocate(byteCount: bytes, alignment: 64)
            engine = .cpu(CPUBlur(plan: plan))
        case .opencl(let cc):
            let shares = cc.sharesHostMemory && !keepCopies
            sharesHostMemory = shares
            let blur = try CLBlur(plan: plan, on: cc)
            if shares {
                let s = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: cc.hostAlignment)
                let d = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: cc.hostAlignment)
                src = s; dst = d
                // Every stored property is set from here on: if a buffer cannot be made, deinit
                // runs and frees the memory.
                engine = .opencl(blur, cc.queue, src: try Buffer(context: cc.context, sharing: s, count: bytes, access: .readOnly),
                                 dst: try Buffer(context: cc.context, sharing: d, count: bytes, access: .readWrite))
            } else {
                src = nil
                dst = .allocate(byteCount: bytes, alignment: 64)
                engine = .opencl(blur, cc.queue, src: try Buffer(context: cc.context, count: bytes),
                                 dst: try Buffer(context: cc.context, count: bytes))
            }
        }
    }

    deinit {
        // Commands a failed run left queued may still use the memory: they finish first, then
        // the device's buffers over it go, then the memory.
        if case .opencl(_, let q, _, _)? = engine { try? q.finish() }
        engine = nil
        src?.deallocate(); dst.deallocate()
    }

    /// Makes `pixels` the image every `run` blurs: 8-bit RGBA for an 8-bit plan.
    public func load(_ pixels: [UInt8]) throws {
        precondition(plan.format == .u8 && pixels.count * MemoryLayout<UInt8>.stride == plan.imageBytes)
        try load(.bytes(pixels))
    }

    /// Makes `pixels` the image every `run` blurs: float RGBA for a float plan.
    public func load(_ pixels: [Float]) throws {
        precondition(plan.format == .f32 && pixels.count * MemoryLayout<Float>.stride == plan.imageBytes)
        try load(.floats(pixels))
    }

    private func load(_ pixels: Pixels) throws {
        loaded = false
        switch engine! {
        case .cpu:
            pixels.withUnsafeBytes { src!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        case .opencl(_, let q, let s, _):
            if sharesHostMemory {
                // Written while mapped, so the device sees it whatever it caches.
                try s.withHostAccess(queue: q, forWriting: true) { mapped in
                    pixels.withUnsafeBytes { UnsafeMutableRawPointer(mapped.baseAddress!).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                }
            } else {
                input = pixels
            }
        }
        loaded = true
    }

    /// One blur of the loaded image: wall seconds (copies included) and the kernels' seconds
    /// (0 on the Swift path).
    public func run() async throws -> (wall: Double, kernel: Double) {
        precondition(loaded, "BlurSession.run before load")
        ran = false
        let start = Clock.now()
        var kernel = 0.0
        switch engine! {
        case .cpu(let blur):
            await blur.run(src: UnsafeRawPointer(src!), dst: dst)
        case .opencl(let blur, let q, let s, let d):
            if let input { try input.withUnsafeBytes { try s.write(bytes: $0, queue: q) } }
            let events = try blur.encode(src: s, dst: d)
            if sharesHostMemory {
                // The result is in the session's memory once mapped: nothing to copy.
                try d.withHostAccess(queue: q) { _ in }
            } else {
                try d.read(into: UnsafeMutableBufferPointer(start: dst.assumingMemoryBound(to: UInt8.self), count: d.count),
                           count: d.count, queue: q)
            }
            for e in events { kernel += Double(try e.durationNanoseconds()) * 1e-9 }
        }
        ran = true
        return (Clock.now() - start, kernel)
    }

    /// The last run's result, as `T` (UInt8 or Float, the plan's format).
    public func output<T: BitwiseCopyable>(_: T.Type = T.self) throws -> [T] {
        precondition(ran, "BlurSession.output before a run")
        precondition(MemoryLayout<T>.stride == (plan.format == .u8 ? 1 : 4))
        let count = plan.imageBytes / MemoryLayout<T>.stride
        let copy = { (p: UnsafeRawPointer) in Array(UnsafeBufferPointer(start: p.assumingMemoryBound(to: T.self), count: count)) }
        if sharesHostMemory, case .opencl(_, let q, _, let d)? = engine {
            return try d.withHostAccess(queue: q) { copy(UnsafeRawPointer($0.baseAddress!)) }
        }
        return copy(UnsafeRawPointer(dst))
    }

    /// Median wall and kernel seconds of `runs` blurs of `pixels` (UInt8 or Float, the plan's format).
    public func time<T: BitwiseCopyable>(_ pixels: [T], runs: Int) async throws -> (wall: Double, kernel: Double) {
        if let bytes = pixels as? [UInt8] { try load(bytes) } else if let floats = pixels as? [Float] { try load(floats) }
        else { preconditionFailure("BlurSession takes UInt8 or Float pixels") }
        var walls: [Double] = [], kernels: [Double] = []
        for _ in 0..<max(runs, 1) {
            let (wall, kernel) = try await run()
            walls.append(wall)
            kernels.append(kernel)
        }
        func median(_ v: [Double]) -> Double {
            let s = v.sorted()
            return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
        }
        return (median(walls), median(kernels))
    }
}
