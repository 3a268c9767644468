import CGlintTypes
import GlintCL
import GlintCore

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
