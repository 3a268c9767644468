import CGlintTypes
import GlintCore

/// The Swift CPU twin of Kernels/mist.cl's mist_compose: the same steps in the same order.
/// Tiles that no shape touches (most of the window) take a vectorised path with the same
/// arithmetic; in the others eight pixels at a time are tested against each shape of the tile
/// whose pixel box meets them (simd.h's glint_mist_shapes8, the kernel's operations lane by
/// lane; a shape outside its box covers no pixel, so the others need no test), and the pixels under a
/// refracting drop are drawn again, eight at a time too (glint_mist_lens8): one implementation of
/// the shape test and the lens, for every pixel.
enum MistCPU {
    @inline(__always) static func pixel(_ p: UnsafePointer<UInt8>) -> SIMD4<Float> {
        let b = UnsafeRawPointer(p).loadUnaligned(as: SIMD4<UInt8>.self)
        return SIMD4(Float(b.x), Float(b.y), Float(b.z), Float(b.w))
    }

    /// Color_To8Bit: clamp(floor(c + 0.5), 0, 255) per channel, as vector instructions.
    @inline(__always) static func bytes(_ c: SIMD4<Float>) -> SIMD4<UInt8> { glint_bytes4(c) }

    /// One frame's compose over rows y0..<y1.
    static func compose(sharp: UnsafePointer<UInt8>, blurred: UnsafePointer<UInt8>, weight: UnsafeMutablePointer<Float>,
                        out: UnsafeMutablePointer<UInt8>, shapes: UnsafePointer<GlintMistShape>,
                        tiles: MistTiles, p: GlintMistParams, rows: Range<Int>) {
        let w = Int(p.width), ts = Int(p.tile_size)
        tiles.start.withUnsafeBufferPointer { start in tiles.list.withUnsafeBufferPointer { list in
            tiles.bounds.withUnsafeBufferPointer { bounds in
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
                                      shapes: shapes, list: list, range: s0..<s1, bounds: bounds.baseAddress!, p: p)
                        }
                        x = end
                    }
                }
            }
        } }
    }

    /// mist_compose over `count` pixels of row y in one tile that shapes touch, eight at a time:
    /// each shape of the tile whose box (`MistTiles.bounds`) meets the eight pixels is tested
    /// against them at once (glint_mist_shapes8: the kernel's operations lane by lane, so the same
    /// values), the fog blend is done for the group, then the pixels under a refracting drop are
    /// drawn again, the group's at once (glint_mist_lens8). A shape whose box misses the pixels
    /// covers none of them, so passing it over changes nothing, and the shapes tested keep the
    /// tile's order (the first refracting drop is the one drawn). The span's last group may be
    /// short of eight: the test then works on a copy of its weights, and the lanes past its
    /// pixels are neither written back nor drawn.
    @inline(never) static func shapeSpan(_ x0: Int, _ count: Int, _ y: Int, sharp: UnsafePointer<UInt8>, blurred: UnsafePointer<UInt8>,
                                         weight: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<UInt8>,
                                         shapes: UnsafePointer<GlintMistShape>, list: UnsafeBufferPointer<Int32>, range: Range<Int>,
                                         bounds: UnsafePointer<SIMD4<Int32>>, p: GlintMistParams) {
        let w = Int(p.width), h = Int(p.height)
        let py = (Float(y) + 0.5) * p.inv_width
        let lane = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: 2 * range.count) { store in
            // The tile's shapes whose boxes hold row y, in the tile's order; then per group, those
            // whose boxes meet its pixels.
            let row = store.baseAddress!, group = row + range.count
            var rowCount = 0
            for k in range {
                let s = list[k], b = bounds[Int(s)]
                if Int(b[2]) <= y && y <= Int(b[3]) { row[rowCount] = s; rowCount += 1 }
            }
            if rowCount == 0 {
                fogSpan(sharp + 4 * (y * w + x0), blurred + 4 * (y * w + x0), weight + y * w + x0, out + 4 * (y * w + x0), count, p.fog_step)
                return
            }
            var x = x0
            while x < x0 + count {
                let live = min(8, x0 + count - x)
                var groupCount = 0
                for k in 0 ..< rowCount {
                    let b = bounds[Int(row[k])]
                    if Int(b[0]) < x + live && x <= Int(b[1]) { group[groupCount] = row[k]; groupCount += 1 }
                }
                let i = y * w + x
                // Float(x) + l is exact (x is far below 2^24), so each lane is the kernel's (Float(x + l) + 0.5).
                let px = (SIMD8(repeating: Float(x)) + lane + 0.5) * p.inv_width
                var wt = SIMD8<Float>(repeating: 0)
                var lens = SIMD8<Int32>(repeating: -1), lensD2 = SIMD8<Float>(repeating: 0)
                let lanes = withUnsafeMutableBytes(of: &wt) { wb in
                    let weights = wb.baseAddress!.assumingMemoryBound(to: Float.self)
                    weights.update(from: weight + i, count: live)
                    let found = withUnsafeMutableBytes(of: &lens) { l in
                        withUnsafeMutableBytes(of: &lensD2) { d in
                            glint_mist_shapes8(px, py, shapes, group, 0, groupCount, weights, p.fog_step,
                                               l.baseAddress!.assumingMemoryBound(to: Int32.self), d.baseAddress!.assumingMemoryBound(to: Float.self))
                        }
                    }
                    (weight + i).update(from: weights, count: live)
                    return found & ((1 << live) - 1)
                }
                if live == 8 {
                    blend4(sharp + 4 * i, blurred + 4 * i, out + 4 * i, wt.lowHalf)
                    blend4(sharp + 4 * (i + 4), blurred + 4 * (i + 4), out + 4 * (i + 4), wt.highHalf)
                } else {
                    for l in 0..<live { blend1(sharp + 4 * (i + l), blurred + 4 * (i + l), out + 4 * (i + l), wt[l]) }
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
                x += live
            }
        }
    }

    /// The kernel's blend, sharp + (blurred - sharp) * weight, of four pixels (16 lanes), each
    /// with its own weight.
    @inline(__always) static func blend4(_ sharp: UnsafePointer<UInt8>, _ blurred: UnsafePointer<UInt8>,
                                         _ out: UnsafeMutablePointer<UInt8>, _ wv: SIMD4<Float>) {
        let w16 = SIMD16(lowHalf: SIMD8(lowHalf: SIMD4(repeating: wv.x), highHalf: SIMD4(repeating: wv.y)),
                         highHalf: SIMD8(lowHalf: SIMD4(repeating: wv.z), highHalf: SIMD4(repeating: wv.w)))
        let s = floatsInline(bytesAt: sharp), b = floatsInline(bytesAt: blurred)
        UnsafeMutableRawPointer(out).storeBytes(of: toBytesInline(s + (b - s) * w16), as: SIMD16<UInt8>.self)
    }

    /// `blend4` for one pixel.
    @inline(__always) static func blend1(_ sharp: UnsafePointer<UInt8>, _ blurred: UnsafePointer<UInt8>,
                                         _ out: UnsafeMutablePointer<UInt8>, _ wt: Float) {
        let s = pixel(sharp), b = pixel(blurred)
        UnsafeMutableRawPointer(out).storeBytes(of: bytes(s + (b - s) * wt), as: SIMD4<UInt8>.self)
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
            blend4(sharp + 4 * i, blurred + 4 * i, out + 4 * i, wv)
            i += 4
        }
        while i < count {
            let wt = min(weight[i] + step, 1)
            weight[i] = wt
            blend1(sharp + 4 * i, blurred + 4 * i, out + 4 * i, wt)
            i += 1
        }
    }
}
