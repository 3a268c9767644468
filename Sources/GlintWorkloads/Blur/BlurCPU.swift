import GlintCore

/// The Swift CPU twin of Kernels/blur.cl. Both follow the same steps per channel in the same
/// order, so the 8-bit exact path is identical (integers) and the float paths agree to the bit
/// wherever the compilers keep the order (no contraction on either side).
///
/// Exact: a horizontal pass into a ring of 2r+1 rows, then a vertical pass; each band of rows is
/// one task. 8-bit follows OpenCV's fixed-point scheme: horizontal sums in 1/256 (integers below
/// 2^16), vertical sums in 1/65536 (integers below 2^24, so exact in float), rounded half up.
/// Recursive: four running-sum box filters per direction, streamed through small ring buffers:
/// columns four pixels wide top to bottom, then four rows at a time left to right.
public final class CPUBlur: @unchecked Sendable {
    public let plan: BlurPlan
    /// The recursive method's float image between its vertical and horizontal passes.
    private var between: UnsafeMutableBufferPointer<Float>?

    public init(plan: BlurPlan) {
        self.plan = plan
        if plan.method == .recursive {
            between = .allocate(capacity: plan.width * plan.height * 4)
        }
    }

    deinit { between?.deallocate() }

    /// Blurs `src` into `dst` (both `width * height * 4` elements of the plan's format).
    public func run(src: UnsafeRawPointer, dst: UnsafeMutableRawPointer) async {
        if plan.method == .exact {
            await exact(src: SharedRaw(src), dst: SharedRaw(dst))
        } else {
            await recursive(src: SharedRaw(src), dst: SharedRaw(dst))
        }
    }

    // MARK: Exact

    private func exact(src: SharedRaw, dst: SharedRaw) async {
        let plan = self.plan
        let h = plan.height
        let band = max(16, (h + CPUParallel.workerCount * 4 - 1) / (CPUParallel.workerCount * 4))
        let bands = (h + band - 1) / band
        await CPUParallel.forEach(bands) { b in
            let y0 = b * band, y1 = min(h, y0 + band)
            ExactBand.run(plan: plan, src: src.pointer, dst: dst.pointer, y0: y0, y1: y1)
        }
    }

    // MARK: Recursive

    private func recursive(src: SharedRaw, dst: SharedRaw) async {
        let plan = self.plan
        let mid = SharedRaw(UnsafeRawPointer(between!.baseAddress!))
        let strips = (plan.width + 3) / 4
        let perItem = 4
        await CPUParallel.forEach((strips + perItem - 1) / perItem) { item in
            BoxPasses.columns(plan: plan, src: src.pointer, dst: UnsafeMutablePointer(mutating: mid.pointer.assumingMemoryBound(to: Float.self)),
                              strips: item * perItem ..< min(strips, (item + 1) * perItem))
        }
        let groups = (plan.height + 3) / 4
        await CPUParallel.forEach((groups + perItem - 1) / perItem) { item in
            BoxPasses.rows(plan: plan, src: mid.pointer.assumingMemoryBound(to: Float.self), dst: UnsafeMutableRawPointer(mutating: dst.pointer),
                           groups: item * perItem ..< min(groups, (item + 1) * perItem))
        }
    }
}

/// A raw pointer that worker tasks share; they write disjoint parts.
struct SharedRaw: @unchecked Sendable {
    let pointer: UnsafeRawPointer
    init(_ p: UnsafeRawPointer) { pointer = p }
    init(_ p: UnsafeMutableRawPointer) { pointer = UnsafeRawPointer(p) }
}

@inline(__always) func load16(_ p: UnsafeRawPointer) -> SIMD16<Float> { p.loadUnaligned(as: SIMD16<Float>.self) }
@inline(__always) func store16(_ v: SIMD16<Float>, _ p: UnsafeMutableRawPointer) { p.storeBytes(of: v, as: SIMD16<Float>.self) }

/// 16 floats rounded half up and clamped to bytes.
@inline(__always) func toBytes(_ v: SIMD16<Float>) -> SIMD16<UInt8> {
    let r = (v + SIMD16(repeating: 0.5)).rounded(.down)
    let c = r.clamped(lowerBound: SIMD16(repeating: 0), upperBound: SIMD16(repeating: 255))
    return SIMD16<UInt8>(truncatingIfNeeded: SIMD16<Int32>(c, rounding: .towardZero))
}

@inline(__always) func bytesToFloat(_ p: UnsafeRawPointer) -> SIMD16<Float> {
    SIMD16<Float>(SIMD16<Int32>(truncatingIfNeeded: p.loadUnaligned(as: SIMD16<UInt8>.self)))
}

/// The exact method over one band of rows.
enum ExactBand {
    static func run(plan: BlurPlan, src: UnsafeRawPointer, dst: UnsafeRawPointer, y0: Int, y1: Int) {
        let w = plan.width, r = plan.radius, n = 2 * r + 1
        let rowLen = w * 4
        // Rows are processed in chunks of 16 values; buffers are padded so the last chunk may overrun.
        let stride = (rowLen + 15) & ~15
        let padLen = stride + 8 * r + 16
        let ring = UnsafeMutablePointer<Float>.allocate(capacity: n * stride)
        defer { ring.deallocate() }
        let u8 = plan.format == .u8
        let pad16 = UnsafeMutablePointer<UInt16>.allocate(capacity: u8 ? padLen : 1)
        let padF = UnsafeMutablePointer<Float>.allocate(capacity: u8 ? 1 : padLen)
        defer { pad16.deallocate(); padF.deallocate() }
        if u8 { pad16.initialize(repeating: 0, count: padLen) } else { padF.initialize(repeating: 0, count: padLen) }
        let taps = plan.floatTaps, fixed = plan.fixedTaps
        let outBytes = UnsafeMutableRawPointer(mutating: dst)

        /// Horizontal pass of extended row `e` (source row e - r, border-mapped) into ring slot `slot`.
        func horizontal(_ e: Int, _ slot: Int) {
            let out = ring + slot * stride
            let sy = Int(plan.rowMap[e])
            if sy < 0 {
                out.initialize(repeating: 0, count: stride)
                return
            }
            if u8 {
                let row = src.assumingMemoryBound(to: UInt8.self) + sy * rowLen
                // Extended row: r pixels either side, border-mapped.
                for e in 0 ..< w + 2 * r {
                    let sx = e < r || e >= w + r ? Int(plan.colMap[e]) : e - r
                    for c in 0..<4 { pad16[e * 4 + c] = sx < 0 ? 0 : UInt16(row[sx * 4 + c]) }
                }
                fixed.withUnsafeBufferPointer { k in
                    let kc = SIMD16<UInt16>(repeating: k[r])
                    var i = 0
                    while i < stride {
                        let p = UnsafeRawPointer(pad16 + i)
                        var acc = kc &* p.loadUnaligned(fromByteOffset: 8 * r, as: SIMD16<UInt16>.self)
                        for j in 0..<r {
                            let a = p.loadUnaligned(fromByteOffset: 8 * j, as: SIMD16<UInt16>.self)
                            let b = p.loadUnaligned(fromByteOffset: 8 * (2 * r - j), as: SIMD16<UInt16>.self)
                            acc = acc &+ SIMD16(repeating: k[j]) &* (a &+ b)
                        }
                        store16(SIMD16<Float>(SIMD16<Int32>(truncatingIfNeeded: acc)), UnsafeMutableRawPointer(out + i))
                        i += 16
                    }
                }
            } else {
                let row = src.assumingMemoryBound(to: Float.self) + sy * rowLen
                for e in 0 ..< w + 2 * r {
                    let sx = e < r || e >= w + r ? Int(plan.colMap[e]) : e - r
                    for c in 0..<4 { padF[e * 4 + c] = sx < 0 ? 0 : row[sx * 4 + c] }
                }
                taps.withUnsafeBufferPointer { k in
                    var i = 0
                    while i < stride {
                        let p = UnsafeRawPointer(padF + i)
                        var acc = SIMD16(repeating: k[r]) * load16(p + 16 * r)
                        for j in 0..<r {
                            acc = acc + SIMD16(repeating: k[j]) * (load16(p + 16 * j) + load16(p + 16 * (2 * r - j)))
                        }
                        store16(acc, UnsafeMutableRawPointer(out + i))
                        i += 16
                    }
                }
            }
        }

        // Ring slot of extended row e (source row e - r) is e mod n.
        for e in y0 ..< y0 + 2 * r { horizontal(e, e % n) }
        let rows = UnsafeMutablePointer<UnsafeRawPointer>.allocate(capacity: n)
        defer { rows.deallocate() }
        let tail = UnsafeMutablePointer<Float>.allocate(capacity: 16)
        defer { tail.deallocate() }
        taps.withUnsafeBufferPointer { k in
            for y in y0..<y1 {
                horizontal(y + 2 * r, (y + 2 * r) % n)
                for j in 0..<n { rows[j] = UnsafeRawPointer(ring + ((y + j) % n) * stride) }
                var i = 0
                while i < rowLen {
                    var acc = SIMD16(repeating: k[r]) * load16(rows[r] + 4 * i)
                    for j in 0..<r {
                        acc = acc + SIMD16(repeating: k[j]) * (load16(rows[j] + 4 * i) + load16(rows[2 * r - j] + 4 * i))
                    }
                    let count = min(16, rowLen - i)
                    if u8 {
                        // (sum + 2^15) >> 16, exact: every value here is a whole number below 2^24.
                        let v = ((acc + SIMD16(repeating: 32768)) * SIMD16(repeating: 1.0 / 65536)).rounded(.down)
                        let b = SIMD16<UInt8>(truncatingIfNeeded: SIMD16<Int32>(v, rounding: .towardZero))
                        let o = outBytes + y * rowLen + i
                        if count == 16 { o.storeBytes(of: b, as: SIMD16<UInt8>.self) } else {
                            for l in 0..<count { o.storeBytes(of: b[l], toByteOffset: l, as: UInt8.self) }
                        }
                    } else {
                        let o = outBytes + (y * rowLen + i) * 4
                        if count == 16 { store16(acc, o) } else {
                            for l in 0..<count { o.storeBytes(of: acc[l], toByteOffset: 4 * l, as: Float.self) }
                        }
                    }
                    i += 16
                }
            }
        }
    }
}

/// One box filter of a cascade: a running sum over the last `width` inputs, kept in a ring.
struct BoxStage {
    var ring: UnsafeMutablePointer<SIMD16<Float>>
    var width: Int
    var slot = 0
    var sum = SIMD16<Float>(repeating: 0)

    init(ring: UnsafeMutablePointer<SIMD16<Float>>, width: Int) {
        self.ring = ring
        self.width = width
        ring.initialize(repeating: SIMD16(repeating: 0), count: width)
    }

    /// Takes the next input, returns the sum of the last `width` inputs (blur_box.cl: Box_Step).
    @inline(__always) mutating func step(_ v: SIMD16<Float>) -> SIMD16<Float> {
        let old = ring[slot]
        ring[slot] = v
        slot += 1
        if slot == width { slot = 0 }
        sum = sum + (v - old)
        return sum
    }
}

/// The recursive method's two directions.
enum BoxPasses {
    /// Four stages sharing one ring allocation.
    struct Cascade {
        var s0, s1, s2, s3: BoxStage
        let storage: UnsafeMutablePointer<SIMD16<Float>>
        init(_ widths: [Int]) {
            storage = .allocate(capacity: widths.reduce(0, +))
            var p = storage
            var stages: [BoxStage] = []
            for w in widths {
                stages.append(BoxStage(ring: p, width: w))
                p += w
            }
            (s0, s1, s2, s3) = (stages[0], stages[1], stages[2], stages[3])
        }
        mutating func reset(_ widths: [Int]) {
            var p = storage
            for (i, w) in widths.enumerated() {
                let s = BoxStage(ring: p, width: w)
                switch i { case 0: s0 = s; case 1: s1 = s; case 2: s2 = s; default: s3 = s }
                p += w
            }
        }
        @inline(__always) mutating func step(_ v: SIMD16<Float>) -> SIMD16<Float> {
            s3.step(s2.step(s1.step(s0.step(v))))
        }
    }

    /// Vertical pass over column strips of 4 pixels: source (either format) to the float image between passes.
    static func columns(plan: BlurPlan, src: UnsafeRawPointer, dst: UnsafeMutablePointer<Float>, strips: Range<Int>) {
        let w = plan.width, h = plan.height, pad = plan.pad
        let steps = h + 2 * pad
        let scale = SIMD16<Float>(repeating: plan.boxScale)
        var cascade = Cascade(plan.boxWidths)
        defer { cascade.storage.deallocate() }
        let u8 = plan.format == .u8
        plan.rowMap.withUnsafeBufferPointer { rowMap in
            for strip in strips {
                cascade.reset(plan.boxWidths)
                let x0 = strip * 4
                let full = x0 + 4 <= w
                for t in 0..<steps {
                    let sy = Int(rowMap[t])
                    var v = SIMD16<Float>(repeating: 0)
                    if sy >= 0 {
                        let off = sy * w * 4 + x0 * 4
                        if full {
                            v = u8 ? bytesToFloat(src + off) : load16(src + off * 4)
                        } else {
                            for l in 0 ..< (w - x0) * 4 {
                                v[l] = u8 ? Float(src.load(fromByteOffset: off + l, as: UInt8.self))
                                          : src.load(fromByteOffset: (off + l) * 4, as: Float.self)
                            }
                        }
                    }
                    v = cascade.step(v)
                    if t >= 2 * pad {
                        let o = dst + (t - 2 * pad) * w * 4 + x0 * 4
                        v = v * scale
                        if full { store16(v, UnsafeMutableRawPointer(o)) } else {
                            for l in 0 ..< (w - x0) * 4 { o[l] = v[l] }
                        }
                    }
                }
            }
        }
    }

    /// Horizontal pass over groups of 4 rows (16 lanes: 4 rows x RGBA): float image to the destination.
    static func rows(plan: BlurPlan, src: UnsafePointer<Float>, dst: UnsafeMutableRawPointer, groups: Range<Int>) {
        let w = plan.width, h = plan.height, pad = plan.pad
        let steps = w + 2 * pad
        let scale = SIMD16<Float>(repeating: plan.boxScale)
        var cascade = Cascade(plan.boxWidths)
        defer { cascade.storage.deallocate() }
        let u8 = plan.format == .u8
        plan.colMap.withUnsafeBufferPointer { colMap in
            for g in groups {
                cascade.reset(plan.boxWidths)
                let y0 = g * 4
                let live = min(4, h - y0)
                // Rows past the image repeat the last one; their results are not stored.
                let r0 = src + y0 * w * 4
                let r1 = src + min(y0 + 1, h - 1) * w * 4
                let r2 = src + min(y0 + 2, h - 1) * w * 4
                let r3 = src + min(y0 + 3, h - 1) * w * 4
                for t in 0..<steps {
                    let sx = Int(colMap[t])
                    var v = SIMD16<Float>(repeating: 0)
                    if sx >= 0 {
                        let o = sx * 4
                        let a = UnsafeRawPointer(r0 + o).loadUnaligned(as: SIMD4<Float>.self)
                        let b = UnsafeRawPointer(r1 + o).loadUnaligned(as: SIMD4<Float>.self)
                        let c = UnsafeRawPointer(r2 + o).loadUnaligned(as: SIMD4<Float>.self)
                        let d = UnsafeRawPointer(r3 + o).loadUnaligned(as: SIMD4<Float>.self)
                        v = SIMD16(lowHalf: SIMD8(lowHalf: a, highHalf: b), highHalf: SIMD8(lowHalf: c, highHalf: d))
                    }
                    v = cascade.step(v)
                    if t >= 2 * pad {
                        let x = t - 2 * pad
                        v = v * scale
                        if u8 {
                            let b = toBytes(v)
                            let base = dst + y0 * w * 4 + x * 4
                            base.storeBytes(of: b.lowHalf.lowHalf, as: SIMD4<UInt8>.self)
                            if live > 1 { base.storeBytes(of: b.lowHalf.highHalf, toByteOffset: w * 4, as: SIMD4<UInt8>.self) }
                            if live > 2 { base.storeBytes(of: b.highHalf.lowHalf, toByteOffset: 2 * w * 4, as: SIMD4<UInt8>.self) }
                            if live > 3 { base.storeBytes(of: b.highHalf.highHalf, toByteOffset: 3 * w * 4, as: SIMD4<UInt8>.self) }
                        } else {
                            let base = dst + (y0 * w * 4 + x * 4) * 4
                            base.storeBytes(of: v.lowHalf.lowHalf, as: SIMD4<Float>.self)
                            if live > 1 { base.storeBytes(of: v.lowHalf.highHalf, toByteOffset: w * 16, as: SIMD4<Float>.self) }
                            if live > 2 { base.storeBytes(of: v.highHalf.lowHalf, toByteOffset: 2 * w * 16, as: SIMD4<Float>.self) }
                            if live > 3 { base.storeBytes(of: v.highHalf.highHalf, toByteOffset: 3 * w * 16, as: SIMD4<Float>.self) }
                        }
                    }
                }
            }
        }
    }
}
