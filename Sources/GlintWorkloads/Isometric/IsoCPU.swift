import CGlintTypes
import GlintCL
import GlintCore

/// The Swift twin of Kernels/isometric.cl: the same functions in the same order. Pixels inside
/// the top face or a flat side face take one sample at their centre, those wholly outside are
/// transparent, the rest (edges, rounded corners, the depth limit) average ss x ss samples; see
/// the kernel's header and docs/DESIGN.md.
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

    /// The source point under canvas point (qx, qy).
    @inline(__always)
    static func sourcePoint(_ p: GlintIsoParams, _ qx: Float, _ qy: Float) -> SIMD2<Float> {
        let a = qx - p.origin_x
        let b = 2 * (qy - p.origin_y)
        return SIMD2(p.src_cx + k * (a + b), p.src_cy + k * (b - a))
    }

    /// The colour at source point (x, y): transparent outside the shape and its extrusion.
    static func sample(_ src: UnsafePointer<UInt8>, _ p: GlintIsoParams, _ x: Float, _ y: Float) -> SIMD4<Float> {
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

    /// What a canvas pixel needs (the kernel's ISO_EDGE ... ISO_CLEAR).
    public enum PixelKind: Hashable, Sendable {
        /// An edge, a rounded corner or the depth limit may cross it: ss x ss samples.
        case edge
        /// Wholly inside the top face: one sample at the centre.
        case top
        /// Wholly inside one flat side face, within the depth: one sample at the centre.
        case side
        /// Wholly outside the shape and its extrusion: transparent.
        case clear
    }

    /// How far (source pixels) a pixel's footprint may reach from its centre's source point,
    /// with room for rounding: see the kernel's ISO_MARGIN.
    static let margin: Float = 1.25

    /// `Iso_Classify`: the pixel whose centre maps to source point (x, y).
    @inline(__always)
    static func classify(_ p: GlintIsoParams, _ x: Float, _ y: Float) -> PixelKind {
        let w = Float(p.src_width), h = Float(p.src_height), r = p.radius, d = p.depth_src
        let m = margin
        let dx = max(max(r - x, x - (w - r)), 0)
        let dy = max(max(r - y, y - (h - r)), 0)
        let d2 = dx * dx + dy * dy
        if x >= m && x <= w - m && y >= m && y <= h - m && d2 <= (r - m) * (r - m) { return .top }
        if d2 <= (r + m) * (r + m) { return .edge }
        if d <= 0 { return .clear }
        let e = x - y
        if x < -m || y < -m || max(x - w, y - h) > d + m || e > w + m || -e > h + m { return .clear }
        if y - h > m && y - h < d - m && e + h > r + m && e + h < w - r - m { return .side }
        if x - w > m && x - w < d - m && w - e > r + m && w - e < h - r - m { return .side }
        return .edge
    }

    /// The kind of canvas pixel (px, py).
    public static func kind(_ p: GlintIsoParams, _ px: Int32, _ py: Int32) -> PixelKind {
        let centre = sourcePoint(p, Float(px) + 0.5, Float(py) + 0.5)
        return classify(p, centre.x, centre.y)
    }

    /// `Iso_Store`: the average of n samples whose alpha-weighted colours add to sum and alphas to alpha.
    @inline(__always)
    static func store(_ sum: SIMD3<Float>, _ alpha: Float, _ n: Float) -> SIMD4<UInt8> {
        let rgb = alpha > 0 ? sum / alpha : .zero
        return SIMD4(Color.to8Bit(rgb.x), Color.to8Bit(rgb.y), Color.to8Bit(rgb.z), Color.to8Bit(alpha / n))
    }

    /// The ss x ss average over canvas pixel (px, py), which `iso_render` takes for edge pixels.
    public static func supersampled(_ src: UnsafePointer<UInt8>, _ p: GlintIsoParams, _ px: Int32, _ py: Int32) -> SIMD4<UInt8> {
        var sum = SIMD3<Float>.zero
        var alpha: Float = 0
        for j in 0..<p.ss {
            for i in 0..<p.ss {
                let qx = Float(px) + (Float(i) + 0.5) / Float(p.ss)
                let qy = Float(py) + (Float(j) + 0.5) / Float(p.ss)
                let s = sourcePoint(p, qx, qy)
                let c = sample(src, p, s.x, s.y)
                sum += SIMD3(c.x, c.y, c.z) * c.w
                alpha += c.w
            }
        }
        return store(sum, alpha, Float(p.ss * p.ss))
    }

    /// One canvas pixel, as `iso_render` computes it.
    public static func pixel(_ src: UnsafePointer<UInt8>, _ p: GlintIsoParams, _ px: Int32, _ py: Int32) -> SIMD4<UInt8> {
        let centre = sourcePoint(p, Float(px) + 0.5, Float(py) + 0.5)
        switch classify(p, centre.x, centre.y) {
        case .clear:
            return .zero
        case .top, .side:
            let c = sample(src, p, centre.x, centre.y)
            return store(SIMD3(c.x, c.y, c.z) * c.w, c.w, 1)
        case .edge:
            return supersampled(src, p, px, py)
        }
    }
}

extension Isometric {
    /// Eight canvas pixels in a row, lanes 0 ... 7.
    typealias Lanes = SIMD8<Float>

    /// The Swift path renders the canvas in tiles of this many columns and rows: a canvas row
    /// runs diagonally through the source, a new source row every pixel or two, so a whole row's
    /// texels do not stay in cache for the next one; a tile's do (its source parallelogram is
    /// some 32 KB).
    static let tileWidth = 128, tileHeight = 32

    /// Pixels x0 ..< x1 of canvas row py into `row` (the row's out_width RGBA8 pixels; every byte
    /// of the span is written). Runs of eight pixels that are all on the top face take their
    /// samples eight at a time (`topFace8`), runs that are all clear are stored as zeros in one
    /// store, the others go pixel by pixel; every pixel equals `pixel(src, p, px, py)`. The
    /// kernel's work-items take the same runs of eight (its float8 lanes).
    static func renderSpan(_ src: UnsafePointer<UInt8>, _ p: GlintIsoParams, _ py: Int32, _ x0: Int, _ x1: Int,
                           _ row: UnsafeMutableRawPointer) {
        let fw = Float(p.src_width), fh = Float(p.src_height), r = p.radius, d = p.depth_src, m = margin
        let b = 2 * (Float(py) + 0.5 - p.origin_y)
        let steps = Lanes(0, 1, 2, 3, 4, 5, 6, 7)
        var px = x0
        while px + 8 <= x1 {
            // sourcePoint and classify, lane by lane: the same operations on each lane.
            let a = (Lanes(repeating: Float(px)) + steps + 0.5) - p.origin_x
            let x = p.src_cx + k * (a + b)
            let y = p.src_cy + k * (b - a)
            let dx = maxLanes(maxLanes(r - x, x - (fw - r)), .zero)
            let dy = maxLanes(maxLanes(r - y, y - (fh - r)), .zero)
            let d2 = dx * dx + dy * dy
            let top = (x .>= m) .& (x .<= fw - m) .& (y .>= m) .& (y .<= fh - m) .& (d2 .<= (r - m) * (r - m))
            if allLanes(top) {
                topFace8(src, p, x, y, row + px * 4)
            } else {
                let e = x - y
                let beyond = (x .< -m) .| (y .< -m) .| (maxLanes(x - fw, y - fh) .> d + m) .| (e .> fw + m) .| (-e .> fh + m)
                let clear = (d2 .> (r + m) * (r + m)) .& (d <= 0 ? .init(repeating: true) : beyond)
                if allLanes(clear) {
                    // Clear (transparent) pixels are written too: every byte of the span is
                    // written, so the canvas needs no zeroing first.
                    row.storeBytes(of: SIMD32<UInt8>(), toByteOffset: px * 4, as: SIMD32<UInt8>.self)
                } else {
                    for i in px..<px + 8 {
                        row.storeBytes(of: pixel(src, p, Int32(i), py), toByteOffset: i * 4, as: SIMD4<UInt8>.self)
                    }
                }
            }
            px += 8
        }
        for i in px..<x1 {
            row.storeBytes(of: pixel(src, p, Int32(i), py), toByteOffset: i * 4, as: SIMD4<UInt8>.self)
        }
    }

    /// `pixel` for eight top-face pixels whose centres map to (x, y): one bilinear sample each,
    /// stored as `store(c.xyz * c.w, c.w, 1)`. The same operations as `bilinear` lane by lane;
    /// on the top face the texels are inside the source (x and y are at least 1.25 from its
    /// sides), so `load`'s clamps do nothing and floor is truncation.
    @inline(__always)
    static func topFace8(_ src: UnsafePointer<UInt8>, _ p: GlintIsoParams, _ x: Lanes, _ y: Lanes, _ out: UnsafeMutableRawPointer) {
        let sx = x - 0.5, sy = y - 0.5
        let ix = glint_trunc8(sx), iy = glint_trunc8(sy)
        let fx = sx - glint_float8_of(ix), fy = sy - glint_float8_of(iy)
        let index = iy &* p.src_width &+ ix
        let raw = UnsafeRawPointer(src), stride = Int(p.src_width) * 4
        // Each lane's texels (x0, y0) and (x0 + 1, y0) in one 8-byte load, and the two below.
        var upper = SIMD8<UInt64>(), lower = SIMD8<UInt64>()
        for l in 0..<8 {
            let o = Int(index[l]) * 4
            upper[l] = raw.loadUnaligned(fromByteOffset: o, as: UInt64.self)
            lower[l] = raw.loadUnaligned(fromByteOffset: o + stride, as: UInt64.self)
        }
        let u = unsafeBitCast(upper, to: SIMD16<UInt32>.self), v = unsafeBitCast(lower, to: SIMD16<UInt32>.self)
        let t = Texels(t00: u.evenHalf, t10: u.oddHalf, t01: v.evenHalf, t11: v.oddHalf, fx: fx, gx: 1 - fx, fy: fy, gy: 1 - fy)
        let r = t.channel(0), g = t.channel(8), b = t.channel(16), alpha = t.channel(24)
        // store: rgb = (c.xyz * alpha) / alpha where alpha > 0, 0 elsewhere, and alpha / 1 = alpha.
        // Where every alpha is 1, (c * 1) / 1 is c.
        let packed: SIMD8<UInt32>
        if allLanes(alpha .== 1) {
            packed = to8Bit8(r) | to8Bit8(g) &<< 8 | to8Bit8(b) &<< 16 | to8Bit8(alpha) &<< 24
        } else {
            let zero = Lanes(repeating: 0), positive = alpha .> 0
            packed = to8Bit8(zero.replacing(with: (r * alpha) / alpha, where: positive))
                | to8Bit8(zero.replacing(with: (g * alpha) / alpha, where: positive)) &<< 8
                | to8Bit8(zero.replacing(with: (b * alpha) / alpha, where: positive)) &<< 16
                | to8Bit8(alpha) &<< 24
        }
        out.storeBytes(of: packed, as: SIMD8<UInt32>.self)
    }

    /// The four texels around eight sample points (RGBA8, one lane each) and the weights.
    struct Texels {
        let t00, t10, t01, t11: SIMD8<UInt32>
        let fx, gx, fy, gy: Lanes

        /// One channel (the byte at bit `shift`) interpolated as `bilinear` does, from texels in [0, 1].
        @inline(__always)
        func channel(_ shift: UInt32) -> Lanes {
            let top = Texels.unit(t00, shift) * gx + Texels.unit(t10, shift) * fx
            let bottom = Texels.unit(t01, shift) * gx + Texels.unit(t11, shift) * fx
            return top * gy + bottom * fy
        }

        @inline(__always)
        static func unit(_ t: SIMD8<UInt32>, _ shift: UInt32) -> Lanes {
            glint_float8_of(unsafeBitCast((t &>> shift) & 0xff, to: SIMD8<Int32>.self)) / 255
        }
    }

    /// `Color.to8Bit` lane by lane: floor(clamp01(v) * 255 + 0.5), where the floor of a value
    /// of at least 0.5 is its truncation.
    @inline(__always)
    static func to8Bit8(_ v: Lanes) -> SIMD8<UInt32> {
        let c = minLanes(maxLanes(v, .zero), .one) * 255 + 0.5
        return SIMD8<UInt32>(truncatingIfNeeded: glint_trunc8(c))
    }

    /// Lane-wise maximum and minimum of values that are never NaN (Swift's generic
    /// pointwiseMax and pointwiseMin are element loops).
    @inline(__always) static func maxLanes(_ a: Lanes, _ b: Lanes) -> Lanes { a.replacing(with: b, where: b .> a) }
    @inline(__always) static func minLanes(_ a: Lanes, _ b: Lanes) -> Lanes { a.replacing(with: b, where: b .< a) }

    /// Whether every lane of the mask is set (one vmovmskps).
    @inline(__always) static func allLanes(_ m: SIMDMask<SIMD8<Int32>>) -> Bool {
        glint_bits8(unsafeBitCast(m, to: SIMD8<Int32>.self)) == 0xff
    }
}
