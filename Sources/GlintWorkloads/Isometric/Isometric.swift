import CGlintTypes
import GlintCL
import GlintCore

/// One isometric render: the source image, the extrusion depth and the corner radius.
public struct IsoJob: Sendable {
    /// The pixels, for the Swift path and uploads; nil when the source is already on a device
    /// (a chained pass), where only its size is needed.
    public var source: Image8?
    public let sourceWidth: Int
    public let sourceHeight: Int
    public var depth = 20.0                // extrusion, canvas pixels straight down
    public var cornerRadius = 0.0          // rounded corners, source pixels
    public var supersampling = 4           // anti-aliasing: N x N samples per pixel

    public init(source: Image8) {
        self.source = source
        sourceWidth = source.width
        sourceHeight = source.height
    }

    /// A job for a source of this size held elsewhere (a device buffer).
    public init(sourceWidth: Int, sourceHeight: Int) {
        source = nil
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
    }

    public func validate() throws(GlintError) {
        try ImageLimits.check(width: sourceWidth, height: sourceHeight)
        guard depth.isFinite && depth >= 0 && depth <= 4096 else { throw GlintError("--depth must be in [0, 4096] (got \(depth))") }
        let half = Double(min(sourceWidth, sourceHeight)) / 2
        guard cornerRadius.isFinite && cornerRadius >= 0 && cornerRadius <= half else {
            throw GlintError("--corner-radius must be in [0, \(Format.short(half))] for a \(sourceWidth)x\(sourceHeight) image (got \(cornerRadius))")
        }
        guard (1...8).contains(supersampling) else { throw GlintError("--ss must be 1 to 8 (got \(supersampling))") }
        let (w, h) = canvasSize
        try ImageLimits.check(width: w, height: h)
    }

    /// The canvas: the diamond's bounding box plus the extrusion, with a pixel of margin all round.
    public var canvasSize: (Int, Int) {
        let span = Double(sourceWidth + sourceHeight) * Double(Isometric.k)
        return (Int(span.rounded(.up)) + 2, Int((span / 2 + depth).rounded(.up)) + 2)
    }

    public var params: GlintIsoParams {
        let (w, h) = canvasSize
        let span = Float(sourceWidth + sourceHeight) * Isometric.k
        return GlintIsoParams(src_width: Int32(sourceWidth), src_height: Int32(sourceHeight),
                              out_width: Int32(w), out_height: Int32(h),
                              origin_x: Float(w) / 2, origin_y: 1 + span / 4,
                              src_cx: Float(sourceWidth) / 2, src_cy: Float(sourceHeight) / 2,
                              depth_src: Float(depth) * Float(2.0.squareRoot()), radius: Float(cornerRadius),
                              ss: Int32(supersampling), pad0: 0)
    }
}

/// The Swift twin of Kernels/isometric.cl: the same functions in the same order.
public enum Isometric {
    /// cos 45 = sin 45, as the kernel writes it.
    public static let k: Float = 0.70710678

    /// Where source point (x, y) lands on the canvas (the forward transform).
    public static func canvasPoint(_ p: GlintIsoParams, x: Float, y: Float) -> SIMD2<Float> {
        let dx = x - p.src_cx, dy = y - p.src_cy
        return SIMD2(p.origin_x + k * (dx - dy), p.origin_y + 0.5 * (k * (dx + dy)))
    }

    @inline(__always)
    static func load(_ src: UnsafePointer<UInt8>, _ w: Int32, _ h: Int32, _ x: Int32, _ y: Int32) -> SIMD4<Float> {
        let cx = min(max(x, 0), w - 1), cy = min(max(y, 0), h - 1)
        let i = Int(cy * w + cx) * 4
        return SIMD4(Float(src[i]) / 255, Float(src[i + 1]) / 255, Float(src[i + 2]) / 255, Float(src[i + 3]) / 255)
    }

    @inline(__always)
    static func bilinear(_ src: UnsafePointer<UInt8>, _ w: Int32, _ h: Int32, _ x: Float, _ y: Float) -> SIMD4<Float> {
        let sx = x - 0.5, sy = y - 0.5
        let fx0 = sx.rounded(.down), fy0 = sy.rounded(.down)
        let fx = sx - fx0, fy = sy - fy0
        let x0 = Int32(fx0), y0 = Int32(fy0)
        let c00 = load(src, w, h, x0, y0), c10 = load(src, w, h, x0 + 1, y0)
        let c01 = load(src, w, h, x0, y0 + 1), c11 = load(src, w, h, x0 + 1, y0 + 1)
        let top = c00 * (1 - fx) + c10 * fx
        let bottom = c01 * (1 - fx) + c11 * fx
        return top * (1 - fy) + bottom * fy
    }

    @inline(__always)
    static func inside(_ x: Float, _ y: Float, _ w: Float, _ h: Float, _ r: Float) -> Bool {
        if x < 0 || x > w || y < 0 || y > h { return false }
        if r <= 0 { return true }
        let dx = max(max(r - x, x - (w - r)), 0)
        let dy = max(max(r - y, y - (h - r)), 0)
        return dx * dx + dy * dy <= r * r
    }

    @inline(__always)
    static func rectEntry(_ x: Float, _ y: Float, _ x0: Float, _ x1: Float, _ y0: Float, _ y1: Float, _ right: inout Bool) -> Float {
        let ax = x - x1, ay = y - y1
        let lo = max(ax, ay)
        let hi = min(x - x0, y - y0)
        if lo > hi || hi < 0 { return -1 }
        right = ax > ay
        return max(lo, 0)
    }

    @inline(__always)
    static func circleEntry(_ x: Float, _ y: Float, _ cx: Float, _ cy: Float, _ r: Float) -> Float {
        let mx = x - cx, my = y - cy
        let md = mx + my
        let disc = md * md - 2 * (mx * mx + my * my - r * r)
        if disc < 0 { return -1 }
        let root = disc.squareRoot()
        if (md + root) * 0.5 < 0 { return -1 }
        return max((md - root) * 0.5, 0)
    }

    @inline(__always)
    static func disc(_ x: Float, _ y: Float, _ cx: Float, _ cy: Float, _ r: Float,
                     _ best: inout Float, _ nx: inout Float, _ ny: inout Float) {
        let u = circleEntry(x, y, cx, cy, r)
        if u >= 0 && u < best { best = u; nx = (x - u - cx) / r; ny = (y - u - cy) / r }
    }

    static func sample(_ src: UnsafePointer<UInt8>, _ p: GlintIsoParams, _ qx: Float, _ qy: Float) -> SIMD4<Float> {
        let a = qx - p.origin_x
        let b = 2 * (qy - p.origin_y)
        let x = p.src_cx + k * (a + b)
        let y = p.src_cy + k * (b - a)
        let w = Float(p.src_width), h = Float(p.src_height), r = p.radius
        if inside(x, y, w, h, r) { return bilinear(src, p.src_width, p.src_height, x, y) }
        if p.depth_src <= 0 { return .zero }
        var best: Float = 3.0e38, nx: Float = 0, ny: Float = 0
        var right = false
        var u = rectEntry(x, y, 0, w, r, h - r, &right)
        if u >= 0 && u < best { best = u; nx = right ? 1 : 0; ny = right ? 0 : 1 }
        u = rectEntry(x, y, r, w - r, 0, h, &right)
        if u >= 0 && u < best { best = u; nx = right ? 1 : 0; ny = right ? 0 : 1 }
        if r > 0 {
            disc(x, y, r, r, r, &best, &nx, &ny)
            disc(x, y, w - r, r, r, &best, &nx, &ny)
            disc(x, y, r, h - r, r, &best, &nx, &ny)
            disc(x, y, w - r, h - r, r, &best, &nx, &ny)
        }
        if best > p.depth_src { return .zero }
        let c = bilinear(src, p.src_width, p.src_height, x - best, y - best)
        let t: Float = nx + ny > 0 ? min(max(ny / (nx + ny), 0), 1) : 0.5
        let shade: Float = -0.1 + 0.05 * t
        return SIMD4(min(max(c.x + shade, 0), 1), min(max(c.y + shade, 0), 1), min(max(c.z + shade, 0), 1), c.w)
    }

    /// One canvas pixel, as `iso_render` computes it.
    static func pixel(_ src: UnsafePointer<UInt8>, _ p: GlintIsoParams, _ px: Int32, _ py: Int32) -> SIMD4<UInt8> {
        var sum = SIMD3<Float>.zero
        var alpha: Float = 0
        for j in 0..<p.ss {
            for i in 0..<p.ss {
                let qx = Float(px) + (Float(i) + 0.5) / Float(p.ss)
                let qy = Float(py) + (Float(j) + 0.5) / Float(p.ss)
                let c = sample(src, p, qx, qy)
                sum += SIMD3(c.x, c.y, c.z) * c.w
                alpha += c.w
            }
        }
        let n = Float(p.ss * p.ss)
        let rgb = alpha > 0 ? sum / alpha : .zero
        return SIMD4(Color.to8Bit(rgb.x), Color.to8Bit(rgb.y), Color.to8Bit(rgb.z), Color.to8Bit(alpha / n))
    }
}

public struct IsoResult: Sendable {
    public var image: Image8
    public var kernelSeconds: Double
    public var wallSeconds: Double
}

public enum IsoRenderer {
    /// Work-groups of 16 pixels in a row on CPUs (PoCL vectorises across them), 16 x 8 on GPUs;
    /// the global size is rounded up to whole groups (the kernel skips the pixels beyond).
    static func workGroup(_ cc: ComputeContext) -> [Int] { cc.kind == .gpu ? [16, 8] : [16, 1] }

    static func launchSize(_ w: Int, _ h: Int, _ cc: ComputeContext) -> [Int] {
        let g = workGroup(cc)
        return [(w + g[0] - 1) / g[0] * g[0], (h + g[1] - 1) / g[1] * g[1]]
    }

    /// Runs the kernel on a source already on the device (the job gives its size); the canvas
    /// stays on the device.
    public static func renderOnDevice(_ job: IsoJob, source: Buffer<UInt8>, on cc: ComputeContext) throws -> (Buffer<UInt8>, Double) {
        try job.validate()
        let (w, h) = job.canvasSize
        let program = try cc.program("isometric.cl", defines: ["ISO_SS=\(job.supersampling)"])
        let kernel = try program.kernel("iso_render")
        let out = try Buffer<UInt8>(context: cc.context, count: w * h * 4)
        try kernel.setArguments(out, source, StructArgument(job.params))
        let event = try cc.queue.enqueue(kernel, global: launchSize(w, h, cc), local: workGroup(cc))
        return (out, Double(try event.durationNanoseconds()) * 1e-9)
    }

    public static func render(_ job: IsoJob, on backend: Backend, progress: (@Sendable (Double) -> Void)? = nil) async throws -> IsoResult {
        try job.validate()
        guard let source = job.source else { throw GlintError("iso: this job's source is on a device; use renderOnDevice") }
        let start = Clock.now()
        let p = job.params
        let (w, h) = job.canvasSize
        switch backend {
        case .cpu:
            let out = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: w * h * 4)
            defer { out.deallocate() }
            let shared = SharedBuffer(out)
            let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: source.pixels.count)
            defer { copy.deallocate() }
            _ = copy.initialize(from: source.pixels)
            let src = SharedBuffer(copy)
            await CPUParallel.forEach(h, progress: progress.map { report in { @Sendable done in report(Double(done) / Double(h)) } }) { py in
                let s = UnsafePointer(src.base)
                for px in 0..<w {
                    let c = Isometric.pixel(s, p, Int32(px), Int32(py))
                    let o = (py * w + px) * 4
                    shared[o] = c.x; shared[o + 1] = c.y; shared[o + 2] = c.z; shared[o + 3] = c.w
                }
            }
            return IsoResult(image: Image8(width: w, height: h, pixels: Array(out)), kernelSeconds: 0, wallSeconds: Clock.now() - start)
        case .opencl(let cc):
            let program = try cc.program("isometric.cl", defines: ["ISO_SS=\(job.supersampling)"])
            let kernel = try program.kernel("iso_render")
            let src = try Buffer<UInt8>(queue: cc.queue, copying: source.pixels)
            let out = try Buffer<UInt8>(context: cc.context, count: w * h * 4, access: .writeOnly)
            try kernel.setArguments(out, src, StructArgument(p))
            let event = try cc.queue.enqueue(kernel, global: launchSize(w, h, cc), local: workGroup(cc))
            let pixels = try out.read(queue: cc.queue)
            progress?(1)
            return IsoResult(image: Image8(width: w, height: h, pixels: pixels),
                             kernelSeconds: Double(try event.durationNanoseconds()) * 1e-9, wallSeconds: Clock.now() - start)
        }
    }
}
