import CGlintTypes
import GlintCL
import GlintCore

/// Renders a misty-window sequence frame by frame. Everything is made once: the blur (programs,
/// kernels, the buffers between its passes), the images and the weights. On OpenCL the images
/// stay on the device from pass to pass; per frame only the new camera image (when the camera
/// moves), the shapes (a few kilobytes) and the finished frame cross the bus.
public final class MistRenderer: @unchecked Sendable {
    public let job: MistJob
    public let width: Int
    public let height: Int
    public let backend: Backend
    public private(set) var simulation: MistSimulation
    /// OpenCL kernel time of the frames so far (0 on the CPU path).
    public private(set) var kernelSeconds = 0.0
    public private(set) var blurMethod: BlurMethod
    private var nextFrame = 0
    private var hasCamera = false
    private let engine: Engine

    private enum Engine {
        case cpu(CPUState)
        case opencl(CLState)
    }

    final class CPUState: @unchecked Sendable {
        let blur: CPUBlur
        /// The camera image in use: the caller's pixels, kept (not copied) until the camera moves.
        var sharp: [UInt8] = []
        let blurred: UnsafeMutablePointer<UInt8>
        let weight: UnsafeMutablePointer<Float>
        init(plan: BlurPlan, pixels: Int, weight start: Float) {
            // A frame's memory traffic is several times the caches': the blur's middle image is
            // written past them (CPUBlur.streaming).
            blur = CPUBlur(plan: plan, streaming: true)
            blurred = .allocate(capacity: pixels * 4)
            weight = .allocate(capacity: pixels)
            weight.initialize(repeating: start, count: pixels)
        }
        deinit { blurred.deallocate(); weight.deallocate() }
    }

    final class CLState: @unchecked Sendable {
        let cc: ComputeContext
        let blur: CLBlur
        let compose: Kernel
        /// Pixels per vector of the compose kernel: 1 its GPU form (a work-item per pixel), 4 to 16
        /// its CPU form (a work-item per row), as the blur's kernels (`CLBlur.preferredShape`).
        let lanes: Int
        let sharp, blurred, out: Buffer<UInt8>
        let weight: Buffer<Float>
        let tileStart: Buffer<Int32>
        var shapes: Buffer<GlintMistShape>
        var tileList: Buffer<Int32>
        init(cc: ComputeContext, plan: BlurPlan, pixels: Int, tiles: Int, drops: Int, lanes: Int?, weight start: Float) throws {
            self.cc = cc
            blur = try CLBlur(plan: plan, on: cc, shape: lanes.map(CLBlur.shape(lanes:)))
            self.lanes = lanes ?? CLBlur.preferredShape(on: cc).lanes
            compose = self.lanes == 1 ? try cc.program("mist.cl").kernel("mist_compose")
                                      : try cc.program("mist.cl", defines: ["LANES=\(self.lanes)"]).kernel("mist_compose_v")
            sharp = try Buffer(context: cc.context, count: pixels * 4)
            blurred = try Buffer(context: cc.context, count: pixels * 4)
            out = try Buffer(context: cc.context, count: pixels * 4, access: .writeOnly)
            weight = try Buffer(queue: cc.queue, copying: [Float](repeating: start, count: pixels), access: .readWrite)
            tileStart = try Buffer(context: cc.context, count: tiles + 1)
            // Room for a busy window; grown (rarely) when a frame needs more.
            shapes = try Buffer(context: cc.context, count: max(64, 8 * drops + 64))
            tileList = try Buffer(context: cc.context, count: max(256, 32 * drops + 256))
        }
    }

    /// `kernelLanes`: the OpenCL kernels' lanes (1, 4, 8 or 16; `CLBlur`'s and the compose's) in
    /// place of the device's (tests run every form on one device).
    public init(job: MistJob, width: Int, height: Int, backend: Backend, kernelLanes: Int? = nil) throws {
        try job.validate()
        try ImageLimits.check(width: width, height: height)
        self.job = job
        self.width = width
        self.height = height
        self.backend = backend
        simulation = MistSimulation(job: job, width: width, height: height)
        let plan = BlurPlan(job: BlurJob(sigma: job.sigma, method: job.method), format: .u8, width: width, height: height)
        blurMethod = plan.method
        let tiles = ((width + MistTiles.size - 1) / MistTiles.size) * ((height + MistTiles.size - 1) / MistTiles.size)
        let start = Self.startWeight(job)
        switch backend {
        case .cpu: engine = .cpu(CPUState(plan: plan, pixels: width * height, weight: start))
        case .opencl(let cc):
            engine = .opencl(try CLState(cc: cc, plan: plan, pixels: width * height, tiles: tiles, drops: job.drops, lanes: kernelLanes,
                                         weight: start))
        }
    }

    /// Every blur weight before frame 0: clear, or misted over (`MistJob.fogged`).
    private static func startWeight(_ job: MistJob) -> Float { job.fogged ? 1 : 0 }

    /// The number of the frame `renderNext` renders next.
    public var frame: Int { nextFrame }

    /// A live finger stroke (see `MistSimulation.addWipe`); `start` is a frame number.
    public func addWipe(_ wipe: MistWipe) { simulation.addWipe(wipe) }

    /// Live gravity from the next frame on.
    public func setGravity(_ g: SIMD2<Double>) { simulation.setGravity(g) }

    /// Starts the sequence again from frame 0 (drops, fog and camera as new), keeping the
    /// buffers and programs: a benchmark times the same sequence run after run this way.
    public func rewind() throws {
        simulation = MistSimulation(job: job, width: width, height: height)
        nextFrame = 0
        hasCamera = false
        kernelSeconds = 0
        switch engine {
        case .cpu(let s): s.weight.update(repeating: Self.startWeight(job), count: width * height)
        case .opencl(let s): try s.weight.write([Float](repeating: Self.startWeight(job), count: width * height), queue: s.cc.queue)
        }
    }

    /// Renders the next frame. `camera` is the sharp image for this frame, or nil to keep the
    /// previous one (a still camera: its blur is kept too). The first frame needs one.
    public func renderNext(camera: Image8?) async throws -> Image8 {
        let f = nextFrame
        if let camera {
            guard camera.width == width && camera.height == height else {
                throw GlintError("camera frame \(f) is \(camera.width)x\(camera.height), the sequence is \(width)x\(height)")
            }
        } else if !hasCamera {
            throw GlintError("the first mist frame needs a camera image")
        }
        let shapes = simulation.advance(frame: f)
        let tiles = MistTiles(shapes: shapes, width: width, height: height)
        var p = GlintMistParams()
        p.inv_width = 1 / Float(width)
        p.fog_step = Float(0.01 * 60 / job.fps)
        p.refraction = 3
        p.bend = 0.9
        p.width = Int32(width); p.height = Int32(height)
        p.tile_size = Int32(MistTiles.size)
        p.tiles_x = Int32(tiles.tilesX); p.tiles_y = Int32(tiles.tilesY)
        p.shape_count = Int32(shapes.count)
        p.frame = Int32(truncatingIfNeeded: f)
        let frame: Image8
        switch engine {
        case .cpu(let s): frame = await renderCPU(s, camera: camera, shapes: shapes, tiles: tiles, p: p)
        case .opencl(let s): frame = try renderCL(s, camera: camera, shapes: shapes, tiles: tiles, p: p)
        }
        hasCamera = true
        nextFrame += 1
        return frame
    }

    private func renderCPU(_ s: CPUState, camera: Image8?, shapes: [GlintMistShape], tiles: MistTiles,
                           p: GlintMistParams) async -> Image8 {
        let n = width * height * 4
        if let camera { s.sharp = camera.pixels }
        // The array is neither copied nor changed while its storage is read below (s keeps it).
        let sharpBase = s.sharp.withUnsafeBufferPointer { UnsafeMutablePointer(mutating: $0.baseAddress!) }
        let h = height, band = MistTiles.size
        let sharp = SharedBuffer(UnsafeMutableBufferPointer(start: sharpBase, count: n))
        let blurred = SharedBuffer(UnsafeMutableBufferPointer(start: s.blurred, count: n))
        // The frame is composed straight into the array it is returned in: every byte is written
        // below, and the array is neither copied nor changed until the compose has finished.
        var pixels = [UInt8](unsafeUninitializedCapacity: n) { _, count in count = n }
        let out = SharedBuffer(pixels.withUnsafeMutableBufferPointer { $0 })
        let weight = SharedBuffer(UnsafeMutableBufferPointer(start: s.weight, count: width * height))
        let shapeStorage = UnsafeMutableBufferPointer<GlintMistShape>.allocate(capacity: max(1, shapes.count))
        defer { shapeStorage.deallocate() }
        _ = shapeStorage.initialize(from: shapes)
        let shapePointer = SharedBuffer(shapeStorage)
        let compose: @Sendable (Range<Int>) -> Void = { rows in
            MistCPU.compose(sharp: sharp.base, blurred: blurred.base, weight: weight.base, out: out.base,
                            shapes: shapePointer.base, tiles: tiles, p: p, rows: rows)
        }
        if camera != nil {
            // A new camera image: each band of rows is composed as soon as its blur is done,
            // while the blurred rows are still in the worker's caches.
            await s.blur.run(src: UnsafeRawPointer(sharpBase), dst: UnsafeMutableRawPointer(s.blurred), then: compose)
        } else {
            await CPUParallel.forEach((h + band - 1) / band) { b in compose(b * band ..< min(h, (b + 1) * band)) }
        }
        return Image8(width: width, height: height, pixels: pixels)
    }

    private func renderCL(_ s: CLState, camera: Image8?, shapes: [GlintMistShape], tiles: MistTiles,
                          p: GlintMistParams) throws -> Image8 {
        let q = s.cc.queue
        var events: [Event] = []
        if let camera {
            try s.sharp.write(camera.pixels, queue: q)
            events += try s.blur.encode(src: s.sharp, dst: s.blurred)
        }
        if shapes.count > s.shapes.count { s.shapes = try Buffer(context: s.cc.context, count: shapes.count * 2) }
        if tiles.list.count > s.tileList.count { s.tileList = try Buffer(context: s.cc.context, count: tiles.list.count * 2) }
        if !shapes.isEmpty { try s.shapes.write(shapes, queue: q) }
        if !tiles.list.isEmpty { try s.tileList.write(tiles.list, queue: q) }
        try s.tileStart.write(tiles.start, queue: q)
        try s.compose.setArguments(s.sharp, s.blurred, s.weight, s.out, s.shapes, s.tileStart, s.tileList, StructArgument(p))
        if s.lanes == 1 {
            events.append(try s.cc.launch(s.compose, items: [width, height]))
        } else {
            events.append(try s.cc.queue.enqueue(s.compose, global: [height], local: [1]))
        }
        let pixels = try s.out.read(queue: q)
        for e in events { kernelSeconds += Double(try e.durationNanoseconds()) * 1e-9 }
        return Image8(width: width, height: height, pixels: pixels)
    }

    /// The blur weights after the last frame (for tests and inspection).
    public func weights() throws -> [Float] {
        switch engine {
        case .cpu(let s): return Array(UnsafeBufferPointer(start: s.weight, count: width * height))
        case .opencl(let s): return try s.weight.read(queue: s.cc.queue)
        }
    }

    /// The blurred camera image of the last frame (for tests).
    public func blurred() throws -> Image8 {
        switch engine {
        case .cpu(let s):
            return Image8(width: width, height: height, pixels: Array(UnsafeBufferPointer(start: s.blurred, count: width * height * 4)))
        case .opencl(let s):
            return Image8(width: width, height: height, pixels: try s.blurred.read(queue: s.cc.queue))
        }
    }
}
