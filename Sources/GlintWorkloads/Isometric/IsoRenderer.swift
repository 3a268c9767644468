import CGlintTypes
import GlintCL
import GlintCore

/// An isometric render and what it took.
public struct IsoResult: Sendable {
    public var image: Image8
    public var kernelSeconds: Double
    public var wallSeconds: Double
}

public enum IsoRenderer {
    /// Work-groups of 16 x 8 work-items, each eight pixels of a row: 128 x 8 pixels, whose
    /// source texels stay in cache (a canvas row runs diagonally through the source). The
    /// global size is rounded up to whole groups (the kernel skips the pixels beyond).
    static func workGroup(_ cc: ComputeContext) -> [Int] { [16, 8] }

    /// A work-item per eight pixels of a row (the kernel's float8 lanes).
    static func launchSize(_ w: Int, _ h: Int, _ cc: ComputeContext) -> [Int] {
        let g = workGroup(cc), items = (w + 7) / 8
        return [(items + g[0] - 1) / g[0] * g[0], (h + g[1] - 1) / g[1] * g[1]]
    }

    /// Runs the kernel on a source already on the device (the job gives its size); the canvas
    /// stays on the device.
    public static func renderOnDevice(_ job: IsoJob, source: Buffer<UInt8>, on cc: ComputeContext) throws -> (Buffer<UInt8>, Double) {
        try job.validate()
        let (w, h) = job.canvasSize
        let program = try cc.program("isometric.cl", defines: ["ISO_SS=\(job.supersampling)"])
        let kernel = try program.kernel("iso_render")
        let out = try Buffer<UInt8>(context: cc.context, count: w * h * 4)
        try kernel.setArguments(out, source, StructArgument(job.params), Int32(0), Int32(h))
        let event = try cc.queue.enqueue(kernel, global: launchSize(w, h, cc), local: workGroup(cc))
        return (out, Double(try event.durationNanoseconds()) * 1e-9)
    }

    /// Renders the canvas, or only its rows `rows` (a shard's band: the result holds just them,
    /// each pixel as in the whole render).
    public static func render(_ job: IsoJob, on backend: Backend, rows: Range<Int>? = nil,
                              progress: (@Sendable (Double) -> Void)? = nil) async throws -> IsoResult {
        try job.validate()
        guard let source = job.source else { throw GlintError("iso: this job's source is on a device; use renderOnDevice") }
        let start = Clock.now()
        let p = job.params
        let (w, canvasHeight) = job.canvasSize
        let band = rows ?? 0 ..< canvasHeight
        guard !band.isEmpty, band.lowerBound >= 0, band.upperBound <= canvasHeight else {
            throw GlintError("rows \(band.lowerBound)..<\(band.upperBound) lie outside a canvas of \(canvasHeight) rows")
        }
        let y0 = band.lowerBound, h = band.count
        switch backend {
        case .cpu:
            // The canvas is rendered straight into the array it is returned in: the tiles cover
            // it and renderSpan writes every byte (clear pixels as zeros), so it is neither zeroed
            // first nor copied after. The source array is read in place: the job holds it, and
            // it is neither copied nor changed while the tiles read it.
            var pixels = LargeArrays.uninitialized(UInt8.self, count: w * h * 4)
            let shared = SharedBuffer(pixels.withUnsafeMutableBufferPointer { $0 })
            let src = SharedBuffer(UnsafeMutableBufferPointer(mutating: source.pixels.withUnsafeBufferPointer { $0 }))
            let (tw, th) = (Isometric.tileWidth, Isometric.tileHeight)
            let across = (w + tw - 1) / tw, tiles = across * ((h + th - 1) / th)
            await CPUParallel.forEach(tiles, progress: progress.map { report in { @Sendable done in report(Double(done) / Double(tiles)) } }) { t in
                let x0 = t % across * tw, r0 = t / across * th
                for r in r0..<min(r0 + th, h) {
                    Isometric.renderSpan(UnsafePointer(src.base), p, Int32(y0 + r), x0, min(x0 + tw, w),
                                         UnsafeMutableRawPointer(shared.base + r * w * 4))
                }
            }
            withExtendedLifetime(source) {}
            return IsoResult(image: Image8(width: w, height: h, pixels: pixels), kernelSeconds: 0, wallSeconds: Clock.now() - start)
        case .opencl(let cc):
            let program = try cc.program("isometric.cl", defines: ["ISO_SS=\(job.supersampling)"])
            let kernel = try program.kernel("iso_render")
            let src = try Buffer<UInt8>(queue: cc.queue, copying: source.pixels)
            let out = try Buffer<UInt8>(context: cc.context, count: w * h * 4, access: .writeOnly)
            try kernel.setArguments(out, src, StructArgument(p), Int32(y0), Int32(band.upperBound))
            let event = try cc.queue.enqueue(kernel, global: launchSize(w, h, cc), local: workGroup(cc))
            let pixels = try out.read(queue: cc.queue)
            progress?(1)
            return IsoResult(image: Image8(width: w, height: h, pixels: pixels),
                             kernelSeconds: Double(try event.durationNanoseconds()) * 1e-9, wallSeconds: Clock.now() - start)
        }
    }
}
