import CGlintTypes
import GlintCore

/// The Swift CPU twin of Kernels/mist.cl's mist_compose: the same steps in the same order.
/// Tiles that no shape touches (most of the window) take a vectorised path with the same
/// arithmetic; in the others eight pixels at a time are tested against each shape of the tile
/// (simd.h's glint_mist_shapes8, the kernel's operations lane by lane), and the pixels under a
/// refracting drop are drawn again, eight at a time too (glint_mist_lens8).
enum MistCPU {
    /// tan(x) on [0, 1): Mist_Tan's Padé approximant, the same float operations.
    @inline(__always) static func tan(_ x: Float) -> Float {
        let x2 = x * x
        return x * (945 - 105 * x2 + x2 * x2) / (945 - 420 * x2 + 15 * x2 * x2)
    }

    @inline(__always) static func pixel(_ p: UnsafePointer<UInt8>, _ i: Int) -> SIMD4<Float> {
        let b = UnsafeRawPointer(p + 4 * i).loadUnaligned(as: SIMD4<UInt8>.self)
        return SIMD4(Float(b.x), Float(b.y), Float(b.z), Float(b.w))
    }

    /// Mist_Sample: bilinear, edges clamped.
    static func sample(_ img: UnsafePointer<UInt8>, _ w: Int, _ h: Int, _ fx: Float, _ fy: Float) -> SIMD4<Float> {
        let x0f = fx.rounded(.down), y0f = fy.rounded(.down)
        let ax = fx - x0f, ay = fy - y0f
        // The kernel's (int) conversion; the clamps make any huge value harmless.
        let x0 = Int(max(min(x0f, 1e9), -1e9)), y0 = Int(max(min(y0f, 1e9), -1e9))
        let xa = min(max(x0, 0), w - 1), xb = min(max(x0 + 1, 0), w - 1)
        let ya = min(max(y0, 0), h - 1), yb = min(max(y0 + 1, 0), h - 1)
        let p00 = pixel(img, ya * w + xa), p10 = pixel(img, ya * w + xb)
        let p01 = pixel(img, yb * w + xa), p11 = pixel(img, yb * w + xb)
        let top = p00 + (p10 - p00) * ax
        let bottom = p01 + (p11 - p01) * ax
        return top + (bottom - top) * ay
    }

    /// Color_To8Bit: clamp(floor(c + 0.5), 0, 255) per channel, as vector instructions.
    @inline(__always) static func bytes(_ c: SIMD4<Float>) -> SIMD4<UInt8> { glint_bytes4(c) }

    /// One frame's compose over rows y0..<y1.
    static func compose(sharp: UnsafePointer<UInt8>, blurred: UnsafePointer<UInt8>, weight: UnsafeMutablePointer<Float>,
                        out: UnsafeMutablePointer<UInt8>, shapes: UnsafePointer<GlintMistShape>,
                        tiles: MistTiles, p: GlintMistParams, rows: Range<Int>) {
        let w = Int(p.width), ts = Int(p.tile_size)
        tiles.start.withUnsafeBufferPointer { start in
            tiles.list.withUnsafeBufferPointer { list in
                for y in rows {
                    let tileRow = (y / ts) * Int(p.tiles_x)
                    var x = 0
                    while x < w {
                        let tx = x / ts
                        let end = min(w, (tx + 1) * ts)
                        let s0 = Int(start[tileRow + tx]), s1 = Int(start[tileRow + tx + 1])
                        if s0 == s1 {
                            fogSpan(sharp + 4 * (y * w + x), blurred + 4 * (y * w + x), weight + y * w + x,
                                    out + 4 * (y * w + x), end - x, p.fog_step)
                        } else {
                            shapeSpan(x, end - x, y, sharp: sharp, blurred: blurred, weight: weight, out: out,
                                      shapes: shapes, list: list, range: s0..<s1, p: p)
                        }
                        x = end
                    }
                }
            }
        }
    }

    /// mist_compose for one pixel.
    static func composePixel(_ x: Int, _ y: Int, w: Int, h: Int, sharp: UnsafePointer<UInt8>, blurred: UnsafePointer<UInt8>,
                             weight: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<UInt8>,
                             shapes: UnsafePointer<GlintMistShape>, list: UnsafeBufferPointer<Int32>, range: Range<Int>,
                             p: GlintMistParams) {
        let i = y * w + x
        let px = (Float(x) + 0.5) * p.inv_width
        let py = (Float(y) + 0.5) * p.inv_width
        var wt = min(weight[i] + p.fog_step, 1)
        var lens = -1
        var lensD2: Float = 0
        for k in range {
            let s = Int(list[k])
            let sh = shapes[s]
            let dx = px - sh.ax, dy = py - sh.ay
            let ex = sh.bx - sh.ax, ey = sh.by - sh.ay
            let ee = ex * ex + ey * ey
            var t: Float = 0
            if ee > 0 { t = min(max((dx * ex + dy * ey) / ee, 0), 1) }
            let qx = dx - t * ex, qy = dy - t * ey
            let d2 = qx * qx + qy * qy
            if d2 < sh.radius * sh.radius {
                wt = 0
                if sh.refract > 0 && lens < 0 { lens = s; lensD2 = d2 }
            }
        }
        weight[i] = wt
        let c: SIMD4<Float>
        if lens >= 0 {
            c = lensColour(px, py, shapes[lens], lensD2, sharp: sharp, p: p)
        } else {
            let s = pixel(sharp, i), b = pixel(blurred, i)
            c = s + (b - s) * wt
        }
        UnsafeMutableRawPointer(out + 4 * i).storeBytes(of: bytes(c), as: SIMD4<UInt8>.self)
    }

    /// The colour under a refracting drop `sh`, at (px, py), lensD2 from its axis.
    @inline(__always) static func lensColour(_ px: Float, _ py: Float, _ sh: GlintMistShape, _ lensD2: Float,
                                             sharp: UnsafePointer<UInt8>, p: GlintMistParams) -> SIMD4<Float> {
        let rel = lensD2.squareRoot() / sh.radius
        let f = tan(p.bend * rel) * p.refraction
        let sx = px - f * (px - sh.ax), sy = py - f * (py - sh.ay)
        let fw = Float(p.width)
        let v = sample(sharp, Int(p.width), Int(p.height), sx * fw - 0.5, sy * fw - 0.5)
        let r2 = rel * rel
        let k = 1 - sh.shade * (r2 * r2)
        return SIMD4(v.x * k, v.y * k, v.z * k, v.w)
    }

    /// mist_compose over `count` pixels of row y in one tile that shapes touch, eight at a time:
    /// each of the tile's shapes is tested against the eight pixels at once (the kernel's
    /// operations lane by lane, so the same values), the fog blend is done for the group, then the
    /// pixels under a refracting drop are drawn again, the group's at once (glint_mist_lens8).
    /// The span's last pixels short of eight go through `composePixel`.
    @inline(never) static func shapeSpan(_ x0: Int, _ count: Int, _ y: Int, sharp: UnsafePointer<UInt8>, blurred: UnsafePointer<UInt8>,
                                         weight: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<UInt8>,
                                         shapes: UnsafePointer<GlintMistShape>, list: UnsafeBufferPointer<Int32>, range: Range<Int>,
                                         p: GlintMistParams) {
        let w = Int(p.width), h = Int(p.height)
        let py = (Float(y) + 0.5) * p.inv_width
        let lane = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)
        var x = x0
        while x + 8 <= x0 + count {
            let i = y * w + x
            // Float(x) + l is exact (x is far below 2^24), so each lane is composePixel's (Float(x + l) + 0.5).
            let px = (SIMD8(repeating: Float(x)) + lane + 0.5) * p.inv_width
            // The weights are updated in place; the blend below reads them back.
            var lens = SIMD8<Int32>(repeating: -1), lensD2 = SIMD8<Float>(repeating: 0)
            let lanes = withUnsafeMutableBytes(of: &lens) { l in
                withUnsafeMutableBytes(of: &lensD2) { d in
                    glint_mist_shapes8(px, py, shapes, list.baseAddress!, range.lowerBound, range.upperBound, weight + i, p.fog_step,
                                       l.baseAddress!.assumingMemoryBound(to: Int32.self), d.baseAddress!.assumingMemoryBound(to: Float.self))
                }
            }
            let wt = UnsafeRawPointer(weight + i).loadUnaligned(as: SIMD8<Float>.self)
            for half in 0 ..< 2 {
                let wv = half == 0 ? wt.lowHalf : wt.highHalf
                let j = i + 4 * half
                let w16 = SIMD16(lowHalf: SIMD8(lowHalf: SIMD4(repeating: wv.x), highHalf: SIMD4(repeating: wv.y)),
                                 highHalf: SIMD8(lowHalf: SIMD4(repeating: wv.z), highHalf: SIMD4(repeating: wv.w)))
                let s = floatsInline(bytesAt: sharp + 4 * j), b = floatsInline(bytesAt: blurred + 4 * j)
                UnsafeMutableRawPointer(out + 4 * j).storeBytes(of: toBytesInline(s + (b - s) * w16), as: SIMD16<UInt8>.self)
            }
            if lanes != 0 {
                withUnsafeBytes(of: lens) { l in
                    withUnsafeBytes(of: lensD2) { d in
                        glint_mist_lens8(px, py, shapes, l.baseAddress!.assumingMemoryBound(to: Int32.self),
                                         d.baseAddress!.assumingMemoryBound(to: Float.self), lanes, sharp, w, h,
                                         p.bend, p.refraction, out + 4 * i)
                    }
                }
            }
            x += 8
        }
        while x < x0 + count {
            composePixel(x, y, w: w, h: h, sharp: sharp, blurred: blurred, weight: weight, out: out,
                         shapes: shapes, list: list, range: range, p: p)
            x += 1
        }
    }

    /// The kernel's no-shape case over `count` pixels: weight = min(weight + step, 1), then
    /// sharp + (blurred - sharp) * weight, four pixels (16 lanes) at a time.
    @inline(never) static func fogSpan(_ sharp: UnsafePointer<UInt8>, _ blurred: UnsafePointer<UInt8>,
                                       _ weight: UnsafeMutablePointer<Float>, _ out: UnsafeMutablePointer<UInt8>,
                                       _ count: Int, _ step: Float) {
        var i = 0
        let one = SIMD4<Float>(repeating: 1)
        while i + 4 <= count {
            // min(w + step, 1) for w + step >= 0: non-negative floats order as their bit patterns.
            let sum = UnsafeRawPointer(weight + i).loadUnaligned(as: SIMD4<Float>.self) + SIMD4(repeating: step)
            let d = unsafeBitCast(sum, to: SIMD4<Int32>.self) &- unsafeBitCast(one, to: SIMD4<Int32>.self)
            let wv = unsafeBitCast(unsafeBitCast(one, to: SIMD4<Int32>.self) &+ (d & (d &>> 31)), to: SIMD4<Float>.self)
            UnsafeMutableRawPointer(weight + i).storeBytes(of: wv, as: SIMD4<Float>.self)
            let w16 = SIMD16(lowHalf: SIMD8(lowHalf: SIMD4(repeating: wv.x), highHalf: SIMD4(repeating: wv.y)),
                             highHalf: SIMD8(lowHalf: SIMD4(repeating: wv.z), highHalf: SIMD4(repeating: wv.w)))
            let s = floatsInline(bytesAt: sharp + 4 * i), b = floatsInline(bytesAt: blurred + 4 * i)
            let c = s + (b - s) * w16
            UnsafeMutableRawPointer(out + 4 * i).storeBytes(of: toBytesInline(c), as: SIMD16<UInt8>.self)
            i += 4
        }
        while i < count {
            let wt = min(weight[i] + step, 1)
            weight[i] = wt
            let s = pixel(sharp, i), b = pixel(blurred, i)
            UnsafeMutableRawPointer(out + 4 * i).storeBytes(of: bytes(s + (b - s) * wt), as: SIMD4<UInt8>.self)
            i += 1
        }
    }
}
