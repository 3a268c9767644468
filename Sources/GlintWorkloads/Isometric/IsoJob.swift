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

    /// These settings for another source: its pixels, or (on a device) only its size.
    public func reapplied(to source: Image8?, width: Int, height: Int) -> IsoJob {
        var job = source.map(IsoJob.init(source:)) ?? IsoJob(sourceWidth: width, sourceHeight: height)
        job.depth = depth
        job.cornerRadius = cornerRadius
        job.supersampling = supersampling
        return job
    }

    public func validate() throws(GlintError) {
        try ImageLimits.check(width: sourceWidth, height: sourceHeight)
        guard depth.isFinite && depth >= 0 && depth <= 4096 else { throw GlintError(field: "depth", "must be in [0, 4096] (got \(depth))") }
        let half = Double(min(sourceWidth, sourceHeight)) / 2
        guard cornerRadius.isFinite && cornerRadius >= 0 && cornerRadius <= half else {
            throw GlintError(field: "cornerRadius", "must be in [0, \(Format.short(half))] for a \(sourceWidth)x\(sourceHeight) image (got \(cornerRadius))")
        }
        guard (1...8).contains(supersampling) else { throw GlintError(field: "supersampling", "must be 1 to 8 (got \(supersampling))") }
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

extension IsoJob: PixelIdentifiable {
    /// The source's pixels where the job holds them, else its size.
    public func writeIdentity(into identity: inout PixelIdentity) {
        identity.add("source", source)
        identity.add("iso", fields: sourceWidth, sourceHeight, depth, cornerRadius, supersampling)
    }
}
