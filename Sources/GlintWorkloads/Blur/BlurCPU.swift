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
    /// The recursive method's image between its vertical and horizontal passes: UInt16 in 1/256
    /// for 8-bit images (half the memory traffic of floats), Float for float images.
    private var between: UnsafeMutableRawPointer?

    public init(plan: BlurPlan) {
        self.plan = plan
        if plan.method == .recursive {
            between = .allocate(byteCount: plan.width * plan.height * 4 * (plan.format == .u8 ? 2 : 4), alignment: 64)
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
        let mid = SharedRaw(UnsafeRawPointer(between!))
        let strips = (plan.width + 3) / 4
        let perItem = 4
        await CPUParallel.forEach((strips + perItem - 1) / perItem) { item in
            BoxPasses.columns(plan: plan, src: src.pointer, dst: UnsafeMutableRawPointer(mutating: mid.pointer),
                              strips: item * perItem ..< min(strips, (item + 1) * perItem))
        }
        let groups = (plan.height + 3) / 4
        await CPUParallel.forEach((groups + perItem - 1) / perItem) { item in
            BoxPasses.rows(plan: plan, src: mid.pointer, dst: UnsafeMutableRawPointer(mutating: dst.pointer),
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

/// The exact method over one band of rows.
enum ExactBand {
    static func run(plan: BlurPlan, src: UnsafeRawPointer, dst: UnsafeRawPointer, y0: Int, y1: Int) {
        let w = plan.width, r = plan.radius, n = 2 * r + 1
        let rowLen = w * 4
        // Rows are processed in chunks of 16 values; buffers are padded so the last chunk may overrun.
        let stride = (rowLen + 15) & ~15
        let padLen = stride + 8 * r + 16
        let u8 = plan.format == .u8
        // The ring holds the horizontal results: UInt16 (1/256 units) for 8-bit, Float for float.
        let ringBytes = u8 ? 2 : 4
        let ring = UnsafeMutableRawPointer.allocate(byteCount: n * stride * ringBytes, alignment: 64)
        defer { ring.deallocate() }
        let pad16 = UnsafeMutablePointer<UInt16>.allocate(capacity: u8 ? padLen : 1)
        let padF = UnsafeMutablePointer<Float>.allocate(capacity: u8 ? 1 : padLen)
        defer { pad16.deallocate(); padF.deallocate() }
        if u8 { pad16.initialize(repeating: 0, count: padLen) } else { padF.initialize(repeating: 0, count: padLen) }
        let taps = plan.floatTaps, fixed = plan.fixedTaps
        let outBytes = UnsafeMutableRawPointer(mutating: dst)

        /// Horizontal pass of extended row `e` (source row e - r, border-mapped) into ring slot `slot`.
        func horizontal(_ e: Int, _ slot: Int) {
            let out = ring + slot * stride * ringBytes
            let sy = Int(plan.rowMap[e])
            if sy < 0 {
                out.initializeMemory(as: UInt8.self, repeating: 0, count: stride * ringBytes)
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
                        out.storeBytes(of: acc, toByteOffset: 2 * i, as: SIMD16<UInt16>.self)
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
                        store16(acc, out + 4 * i)
                        i += 16
                    }
                }
            }
        }

        // Ring slot of extended row e (source row e - r) is e mod n.
        for e in y0 ..< y0 + 2 * r { horizontal(e, e % n) }
        let rows = UnsafeMutablePointer<UnsafeRawPointer>.allocate(capacity: n)
        defer { rows.deallocate() }
        let fixed32 = fixed.map { UInt32($0) }
        for y in y0..<y1 {
            horizontal(y + 2 * r, (y + 2 * r) % n)
            for j in 0..<n { rows[j] = UnsafeRawPointer(ring + ((y + j) % n) * stride * ringBytes) }
            var i = 0
            while i < rowLen {
                let count = min(16, rowLen - i)
                if u8 {
                    // (sum + 2^15) >> 16 in 32-bit integers (the sums stay below 2^24).
                    var acc = fixed32.withUnsafeBufferPointer { k in
                        var acc = SIMD16<UInt32>(repeating: k[r]) &* widen(rows[r] + 2 * i)
                        for j in 0..<r {
                            acc = acc &+ SIMD16<UInt32>(repeating: k[j]) &* (widen(rows[j] + 2 * i) &+ widen(rows[2 * r - j] + 2 * i))
                        }
                        return acc
                    }
                    acc = (acc &+ SIMD16(repeating: 32768)) &>> SIMD16(repeating: 16)
                    let b = lowBytes(acc)
                    let o = outBytes + y * rowLen + i
                    if count == 16 { o.storeBytes(of: b, as: SIMD16<UInt8>.self) } else {
                        for l in 0..<count { o.storeBytes(of: b[l], toByteOffset: l, as: UInt8.self) }
                    }
                } else {
                    let acc = taps.withUnsafeBufferPointer { k in
                        var acc = SIMD16(repeating: k[r]) * load16(rows[r] + 4 * i)
                        for j in 0..<r {
                            acc = acc + SIMD16(repeating: k[j]) * (load16(rows[j] + 4 * i) + load16(rows[2 * r - j] + 4 * i))
                        }
                        return acc
                    }
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

/// One box filter of a cascade: a running sum over the last `width` inputs, kept in a ring whose
/// length is a power of two (no wrap-around branch). Inputs before the first count as 0.
struct BoxStage {
    var ring: UnsafeMutablePointer<SIMD16<Float>>
    var width: Int
    var mask: Int
    var sum = SIMD16<Float>(repeating: 0)

    static func capacity(_ width: Int) -> Int { width <= 1 ? 1 : 1 << (Int.bitWidth - (width - 1).leadingZeroBitCount) }

    init(ring: UnsafeMutablePointer<SIMD16<Float>>, width: Int) {
        self.ring = ring
        self.width = width
        let c = Self.capacity(width)
        mask = c - 1
        ring.initialize(repeating: SIMD16(repeating: 0), count: c)
    }

    /// Takes input `t`, returns the sum of inputs t-width+1 ... t (blur.cl: BOX_STEP).
    @inline(__always) mutating func step(_ v: SIMD16<Float>, _ t: Int) -> SIMD16<Float> {
        let old = ring[(t &- width) & mask]
        ring[t & mask] = v
        sum = sum + (v - old)
        return sum
    }
}

/// The recursive method's two directions.
enum BoxPasses {
    /// Four stages' rings in one allocation; the running sums live in the loops' locals, so
    /// that they stay in registers.
    struct Cascade {
        let storage: UnsafeMutablePointer<SIMD16<Float>>
        let r0, r1, r2, r3: UnsafeMutablePointer<SIMD16<Float>>
        let w0, w1, w2, w3: Int
        let m0, m1, m2, m3: Int
        let total: Int
        init(_ widths: [Int]) {
            let caps = widths.map(BoxStage.capacity)
            total = caps.reduce(0, +)
            storage = .allocate(capacity: total)
            r0 = storage; r1 = r0 + caps[0]; r2 = r1 + caps[1]; r3 = r2 + caps[2]
            (w0, w1, w2, w3) = (widths[0], widths[1], widths[2], widths[3])
            (m0, m1, m2, m3) = (caps[0] - 1, caps[1] - 1, caps[2] - 1, caps[3] - 1)
        }
        func reset() { storage.initialize(repeating: SIMD16(repeating: 0), count: total) }

        /// Input t through the four running sums (blur.cl: BOX_CASCADE).
        @inline(__always) func step(_ v: SIMD16<Float>, _ t: Int, _ s0: inout SIMD16<Float>, _ s1: inout SIMD16<Float>,
                                    _ s2: inout SIMD16<Float>, _ s3: inout SIMD16<Float>) -> SIMD16<Float> {
            let o0 = r0[(t &- w0) & m0]; r0[t & m0] = v; s0 = s0 + (v - o0)
            let o1 = r1[(t &- w1) & m1]; r1[t & m1] = s0; s1 = s1 + (s0 - o1)
            let o2 = r2[(t &- w2) & m2]; r2[t & m2] = s1; s2 = s2 + (s1 - o2)
            let o3 = r3[(t &- w3) & m3]; r3[t & m3] = s2; s3 = s3 + (s2 - o3)
            return s3
        }
    }

    /// Vertical pass over column strips of 4 pixels: source (either format) to the float image between passes.
    static func columns(plan: BlurPlan, src: UnsafeRawPointer, dst: UnsafeMutableRawPointer, strips: Range<Int>) {
        let w = plan.width, h = plan.height, pad = plan.pad
        let steps = h + 2 * pad
        let scale = SIMD16<Float>(repeating: plan.midScale)
        let cascade = Cascade(plan.boxWidths)
        defer { cascade.storage.deallocate() }
        let u8 = plan.format == .u8
        plan.rowMap.withUnsafeBufferPointer { rowMap in
            for strip in strips {
                cascade.reset()
                let zero = SIMD16<Float>(repeating: 0)
                var s0 = zero, s1 = zero, s2 = zero, s3 = zero
                let x0 = strip * 4
                let full = x0 + 4 <= w
                for t in 0..<steps {
                    let sy = Int(rowMap[t])
                    var v = SIMD16<Float>(repeating: 0)
                    if sy >= 0 {
                        let off = sy * w * 4 + x0 * 4
                        if full {
                            v = u8 ? floats(bytesAt: src + off) : load16(src + off * 4)
                        } else {
                            for l in 0 ..< (w - x0) * 4 {
                                v[l] = u8 ? Float(src.load(fromByteOffset: off + l, as: UInt8.self))
                                          : src.load(fromByteOffset: (off + l) * 4, as: Float.self)
                            }
                        }
                    }
                    v = cascade.step(v, t, &s0, &s1, &s2, &s3)
                    if t >= 2 * pad {
                        let e = (t - 2 * pad) * w * 4 + x0 * 4
                        v = v * scale
                        if u8 {
                            let m = toUInt16(v)
                            if full { dst.storeBytes(of: m, toByteOffset: 2 * e, as: SIMD16<UInt16>.self) } else {
                                for l in 0 ..< (w - x0) * 4 { dst.storeBytes(of: m[l], toByteOffset: 2 * (e + l), as: UInt16.self) }
                            }
                        } else {
                            if full { store16(v, dst + 4 * e) } else {
                                for l in 0 ..< (w - x0) * 4 { dst.storeBytes(of: v[l], toByteOffset: 4 * (e + l), as: Float.self) }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Horizontal pass over groups of 4 rows (16 lanes: 4 rows x RGBA): float image to the destination.
    static func rows(plan: BlurPlan, src: UnsafeRawPointer, dst: UnsafeMutableRawPointer, groups: Range<Int>) {
        let w = plan.width, h = plan.height, pad = plan.pad
        let steps = w + 2 * pad
        let scale = SIMD16<Float>(repeating: plan.outScale)
        let element = plan.format == .u8 ? 2 : 4
        let cascade = Cascade(plan.boxWidths)
        defer { cascade.storage.deallocate() }
        let u8 = plan.format == .u8
        plan.colMap.withUnsafeBufferPointer { colMap in
            for g in groups {
                cascade.reset()
                let zero = SIMD16<Float>(repeating: 0)
                var s0 = zero, s1 = zero, s2 = zero, s3 = zero
                let y0 = g * 4
                let live = min(4, h - y0)
                // Rows past the image repeat the last one; their results are not stored.
                let r0 = src + y0 * w * 4 * element
                let r1 = src + min(y0 + 1, h - 1) * w * 4 * element
                let r2 = src + min(y0 + 2, h - 1) * w * 4 * element
                let r3 = src + min(y0 + 3, h - 1) * w * 4 * element
                for t in 0..<steps {
                    let sx = Int(colMap[t])
                    var v = SIMD16<Float>(repeating: 0)
                    if sx >= 0 {
                        let o = sx * 4 * element
                        if u8 {
                            v = floats(r0 + o, r1 + o, r2 + o, r3 + o)
                        } else {
                            let a = (r0 + o).loadUnaligned(as: SIMD4<Float>.self)
                            let b = (r1 + o).loadUnaligned(as: SIMD4<Float>.self)
                            let c = (r2 + o).loadUnaligned(as: SIMD4<Float>.self)
                            let d = (r3 + o).loadUnaligned(as: SIMD4<Float>.self)
                            v = SIMD16(lowHalf: SIMD8(lowHalf: a, highHalf: b), highHalf: SIMD8(lowHalf: c, highHalf: d))
                        }
                    }
                    v = cascade.step(v, t, &s0, &s1, &s2, &s3)
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
