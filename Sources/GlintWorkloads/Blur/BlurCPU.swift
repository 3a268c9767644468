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
        // Each band recomputes 2r rows of the horizontal pass above it: few bands (two per worker).
        let band = max(16, (h + CPUParallel.workerCount * 2 - 1) / (CPUParallel.workerCount * 2))
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
        let strips = (plan.width + 7) / 8
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
        // Rows are processed in chunks of 64 values; buffers are padded so the last chunk may overrun.
        let stride = (rowLen + 63) & ~63
        let padLen = stride + 8 * r + 32
        let u8 = plan.format == .u8
        // The ring holds the horizontal results: for 8-bit OpenCV's 1/256 units as UInt32 (below
        // 2^16; the vertical sums stay below 2^24), for float images floats.
        let ringBytes = 4
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
                // Extended row: r pixels either side, border-mapped; the inside widened 16 bytes at a time.
                for e in 0 ..< r {
                    for side in [e, w + r + e] {
                        let sx = Int(plan.colMap[side])
                        for c in 0..<4 { pad16[side * 4 + c] = sx < 0 ? 0 : UInt16(row[sx * 4 + c]) }
                    }
                }
                widenRow(row, into: pad16 + 4 * r, count: rowLen)
                fixed.withUnsafeBufferPointer { taps in
                    let k = taps.baseAddress!
                    let kc = SIMD16<UInt16>(repeating: k[r])
                    var i = 0
                    // Two chunks of 16 at a time: two independent multiply-add chains (one chain
                    // waited on each multiply's latency).
                    while i < stride {
                        let p = UnsafeRawPointer(pad16 + i), q = p + 32
                        var acc = kc &* p.loadUnaligned(fromByteOffset: 8 * r, as: SIMD16<UInt16>.self)
                        var acc2 = kc &* q.loadUnaligned(fromByteOffset: 8 * r, as: SIMD16<UInt16>.self)
                        for j in 0..<r {
                            let kj = SIMD16<UInt16>(repeating: k[j])
                            let a = p.loadUnaligned(fromByteOffset: 8 * j, as: SIMD16<UInt16>.self)
                            let b = p.loadUnaligned(fromByteOffset: 8 * (2 * r - j), as: SIMD16<UInt16>.self)
                            let a2 = q.loadUnaligned(fromByteOffset: 8 * j, as: SIMD16<UInt16>.self)
                            let b2 = q.loadUnaligned(fromByteOffset: 8 * (2 * r - j), as: SIMD16<UInt16>.self)
                            acc = acc &+ kj &* (a &+ b)
                            acc2 = acc2 &+ kj &* (a2 &+ b2)
                        }
                        // Widened by splitting even and odd lanes (no shuffle): the 32 values are
                        // stored as their 16 even lanes, then their 16 odd lanes.
                        let x = unsafeBitCast(acc, to: SIMD8<UInt32>.self), x2 = unsafeBitCast(acc2, to: SIMD8<UInt32>.self)
                        let low = SIMD8<UInt32>(repeating: 0xFFFF)
                        out.storeBytes(of: SIMD16(lowHalf: x & low, highHalf: x2 & low), toByteOffset: 4 * i, as: SIMD16<UInt32>.self)
                        out.storeBytes(of: SIMD16(lowHalf: x &>> 16, highHalf: x2 &>> 16), toByteOffset: 4 * (i + 16), as: SIMD16<UInt32>.self)
                        i += 32
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
        // 8-bit: one output row's results, two bytes a lane, before they are narrowed in one go.
        let sums = UnsafeMutableRawPointer.allocate(byteCount: u8 ? stride * 2 : 4, alignment: 64)
        defer { sums.deallocate() }
        // 8-bit: the taps, each broadcast to a vector once.
        let kv32 = UnsafeMutablePointer<SIMD16<UInt32>>.allocate(capacity: r + 1)
        defer { kv32.deallocate() }
        for j in 0...r { kv32[j] = SIMD16(repeating: UInt32(u8 ? fixed[j] : 0)) }
        for y in y0..<y1 {
            horizontal(y + 2 * r, (y + 2 * r) % n)
            for j in 0..<n { rows[j] = UnsafeRawPointer(ring + ((y + j) % n) * stride * ringBytes) }
            var i = 0
            if u8 {
                // OpenCV's column filter in integers: taps in 1/256, sums below 2^24, then
                // (sum + 2^15) >> 16, which is at most 255. The kernel computes the same whole
                // numbers in float (exact below 2^24), so both give the same bytes. 64 values per
                // step (four accumulators): the row pointers and the taps are read once per step.
                let k = kv32
                while i < stride {
                    let c = UnsafeRawPointer(rows[r]) + 4 * i
                    var a0 = k[r] &* c.load(as: SIMD16<UInt32>.self)
                    var a1 = k[r] &* c.load(fromByteOffset: 64, as: SIMD16<UInt32>.self)
                    var a2 = k[r] &* c.load(fromByteOffset: 128, as: SIMD16<UInt32>.self)
                    var a3 = k[r] &* c.load(fromByteOffset: 192, as: SIMD16<UInt32>.self)
                    for j in 0..<r {
                        let p = rows[j] + 4 * i, q = rows[2 * r - j] + 4 * i
                        let kj = k[j]
                        a0 = a0 &+ kj &* (p.load(as: SIMD16<UInt32>.self) &+ q.load(as: SIMD16<UInt32>.self))
                        a1 = a1 &+ kj &* (p.load(fromByteOffset: 64, as: SIMD16<UInt32>.self) &+ q.load(fromByteOffset: 64, as: SIMD16<UInt32>.self))
                        a2 = a2 &+ kj &* (p.load(fromByteOffset: 128, as: SIMD16<UInt32>.self) &+ q.load(fromByteOffset: 128, as: SIMD16<UInt32>.self))
                        a3 = a3 &+ kj &* (p.load(fromByteOffset: 192, as: SIMD16<UInt32>.self) &+ q.load(fromByteOffset: 192, as: SIMD16<UInt32>.self))
                    }
                    // Even and odd values back together: each lane holds two output bytes.
                    let half = SIMD16<UInt32>(repeating: 1 << 15)
                    let o = sums + 2 * i
                    o.storeBytes(of: ((a0 &+ half) &>> 16) | (((a1 &+ half) &>> 8) & SIMD16(repeating: 0xFF00)), as: SIMD16<UInt32>.self)
                    o.storeBytes(of: ((a2 &+ half) &>> 16) | (((a3 &+ half) &>> 8) & SIMD16(repeating: 0xFF00)), toByteOffset: 64, as: SIMD16<UInt32>.self)
                    i += 64
                }
                narrowRow(sums.assumingMemoryBound(to: UInt32.self), into: outBytes + y * rowLen, count: rowLen / 2)
                continue
            }
            while i < rowLen {
                let count = min(16, rowLen - i)
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

    /// The sweep: every input sample of one line group (16 lanes) through the cascade, the
    /// border applied by `map` (extended index -> sample index in `input`, or -1 for 0). Pure
    /// float loads, stores and arithmetic: conversions happen before and after, in batches, so
    /// that no call spills the running sums out of their registers.
    /// Samples are `every` vectors apart in `input` and `output` (2: one half of a 32-lane strip).
    @inline(__always) static func sweep(_ cascade: Cascade, input: UnsafePointer<SIMD16<Float>>, map: UnsafePointer<Int32>,
                                        steps: Int, pad: Int, scale: SIMD16<Float>, output: UnsafeMutablePointer<SIMD16<Float>>,
                                        every: Int = 1) {
        cascade.reset()
        let zero = SIMD16<Float>(repeating: 0)
        var s0 = zero, s1 = zero, s2 = zero, s3 = zero
        for t in 0..<steps {
            let m = Int(map[t])
            let v = m >= 0 ? input[every * m] : zero
            let r = cascade.step(v, t, &s0, &s1, &s2, &s3)
            if t >= 2 * pad { output[every * (t - 2 * pad)] = r * scale }
        }
    }

    /// Vertical pass over column strips of 8 pixels (2 x 16 lanes): source (either format) to the
    /// image between passes.
    static func columns(plan: BlurPlan, src: UnsafeRawPointer, dst: UnsafeMutableRawPointer, strips: Range<Int>) {
        let w = plan.width, h = plan.height, pad = plan.pad
        let cascade = Cascade(plan.boxWidths)
        let input = UnsafeMutablePointer<SIMD16<Float>>.allocate(capacity: 2 * h)
        let output = UnsafeMutablePointer<SIMD16<Float>>.allocate(capacity: 2 * h)
        defer { cascade.storage.deallocate(); input.deallocate(); output.deallocate() }
        let u8 = plan.format == .u8
        plan.rowMap.withUnsafeBufferPointer { rowMap in
            for strip in strips {
                let x0 = strip * 8
                let lanes = min(8, w - x0) * 4
                if u8 { gatherBytes(src + x0 * 4, stride: w * 4, rows: h, lanes: lanes, into: input) }
                else { gatherFloats(src + x0 * 16, stride: w * 16, rows: h, lanes: lanes, into: input) }
                for half in 0 ..< (lanes > 16 ? 2 : 1) {
                    sweep(cascade, input: input + half, map: rowMap.baseAddress!, steps: h + 2 * pad, pad: pad,
                          scale: SIMD16(repeating: plan.midScale), output: output + half, every: 2)
                }
                if u8 { scatterUInt16(output, rows: h, lanes: lanes, into: dst + x0 * 8, stride: w * 8) }
                else { scatterFloats(output, rows: h, lanes: lanes, into: dst + x0 * 16, stride: w * 16) }
            }
        }
    }

    /// Horizontal pass over groups of 4 rows (16 lanes: 4 rows x RGBA): the image between passes to the destination.
    static func rows(plan: BlurPlan, src: UnsafeRawPointer, dst: UnsafeMutableRawPointer, groups: Range<Int>) {
        let w = plan.width, h = plan.height, pad = plan.pad
        let cascade = Cascade(plan.boxWidths)
        let input = UnsafeMutablePointer<SIMD16<Float>>.allocate(capacity: w)
        let output = UnsafeMutablePointer<SIMD16<Float>>.allocate(capacity: w)
        defer { cascade.storage.deallocate(); input.deallocate(); output.deallocate() }
        let u8 = plan.format == .u8
        plan.colMap.withUnsafeBufferPointer { colMap in
            for g in groups {
                let y0 = g * 4
                let live = min(4, h - y0)
                if u8 { transposeUInt16(src + y0 * w * 8, stride: w * 8, rows: live, width: w, into: input) }
                else { transposeFloats(src + y0 * w * 16, stride: w * 16, rows: live, width: w, into: input) }
                sweep(cascade, input: input, map: colMap.baseAddress!, steps: w + 2 * pad, pad: pad,
                      scale: SIMD16(repeating: plan.outScale), output: output)
                if u8 { untransposeBytes(output, width: w, rows: live, into: dst + y0 * w * 4, stride: w * 4) }
                else { untransposeFloats(output, width: w, rows: live, into: dst + y0 * w * 16, stride: w * 16) }
            }
        }
    }
}

// MARK: Batch conversions around the sweeps (never inlined: each is a small loop LLVM vectorises)

/// Column strip: `rows` rows of `lanes` (<= 32) values at `stride`, as 2 x 16 floats per row
/// (missing lanes 0).
@inline(never) func gatherBytes(_ p: UnsafeRawPointer, stride: Int, rows: Int, lanes: Int, into out: UnsafeMutablePointer<SIMD16<Float>>) {
    if lanes == 32 {
        for y in 0..<rows {
            out[2 * y] = floatsInline(bytesAt: p + y * stride)
            out[2 * y + 1] = floatsInline(bytesAt: p + y * stride + 16)
        }
    } else {
        for y in 0..<rows {
            var a = SIMD16<Float>(repeating: 0), b = a
            for l in 0..<lanes {
                let v = Float(p.load(fromByteOffset: y * stride + l, as: UInt8.self))
                if l < 16 { a[l] = v } else { b[l - 16] = v }
            }
            out[2 * y] = a
            out[2 * y + 1] = b
        }
    }
}

@inline(__always) func floatsInline(bytesAt p: UnsafeRawPointer) -> SIMD16<Float> {
    let b = p.loadUnaligned(as: SIMD16<UInt8>.self)
    var f = SIMD16<Float>()
    for i in 0..<16 { f[i] = Float(b[i]) }
    return f
}

@inline(never) func gatherFloats(_ p: UnsafeRawPointer, stride: Int, rows: Int, lanes: Int, into out: UnsafeMutablePointer<SIMD16<Float>>) {
    for y in 0..<rows {
        if lanes == 32 {
            out[2 * y] = p.loadUnaligned(fromByteOffset: y * stride, as: SIMD16<Float>.self)
            out[2 * y + 1] = p.loadUnaligned(fromByteOffset: y * stride + 64, as: SIMD16<Float>.self)
            continue
        }
        var a = SIMD16<Float>(repeating: 0), b = a
        for l in 0..<lanes {
            let v = p.load(fromByteOffset: y * stride + 4 * l, as: Float.self)
            if l < 16 { a[l] = v } else { b[l - 16] = v }
        }
        out[2 * y] = a
        out[2 * y + 1] = b
    }
}

/// The strip back: rounded half to even into UInt16 (the kernels' convert_ushort4(rint(v))).
@inline(never) func scatterUInt16(_ v: UnsafePointer<SIMD16<Float>>, rows: Int, lanes: Int, into p: UnsafeMutableRawPointer, stride: Int) {
    for y in 0..<rows {
        for half in 0..<2 {
            let bits = unsafeBitCast(v[2 * y + half] + SIMD16(repeating: 12_582_912), to: SIMD16<UInt32>.self) &- SIMD16(repeating: 0x4B40_0000)
            var r = SIMD16<UInt16>()
            for i in 0..<16 { r[i] = UInt16(truncatingIfNeeded: bits[i]) }
            let live = min(16, lanes - 16 * half)
            if live == 16 { p.storeBytes(of: r, toByteOffset: y * stride + 32 * half, as: SIMD16<UInt16>.self) } else {
                for l in 0..<max(live, 0) { p.storeBytes(of: r[l], toByteOffset: y * stride + 32 * half + 2 * l, as: UInt16.self) }
            }
        }
    }
}

@inline(never) func scatterFloats(_ v: UnsafePointer<SIMD16<Float>>, rows: Int, lanes: Int, into p: UnsafeMutableRawPointer, stride: Int) {
    for y in 0..<rows {
        for half in 0..<2 {
            let live = min(16, lanes - 16 * half)
            if live == 16 { p.storeBytes(of: v[2 * y + half], toByteOffset: y * stride + 64 * half, as: SIMD16<Float>.self); continue }
            for l in 0..<max(live, 0) { p.storeBytes(of: v[2 * y + half][l], toByteOffset: y * stride + 64 * half + 4 * l, as: Float.self) }
        }
    }
}

/// Row group: pixel x of `rows` (<= 4) rows of UInt16 RGBA as the 16 lanes of input[x] (missing rows 0).
@inline(never) func transposeUInt16(_ p: UnsafeRawPointer, stride: Int, rows: Int, width: Int, into out: UnsafeMutablePointer<SIMD16<Float>>) {
    let r1 = min(1, rows - 1) * stride, r2 = min(2, rows - 1) * stride, r3 = min(3, rows - 1) * stride
    for x in 0..<width {
        let o = x * 8
        let u = SIMD16<UInt16>(lowHalf: SIMD8(lowHalf: p.loadUnaligned(fromByteOffset: o, as: SIMD4<UInt16>.self),
                                               highHalf: p.loadUnaligned(fromByteOffset: o + r1, as: SIMD4<UInt16>.self)),
                               highHalf: SIMD8(lowHalf: p.loadUnaligned(fromByteOffset: o + r2, as: SIMD4<UInt16>.self),
                                               highHalf: p.loadUnaligned(fromByteOffset: o + r3, as: SIMD4<UInt16>.self)))
        var f = SIMD16<Float>()
        for i in 0..<16 { f[i] = Float(u[i]) }
        out[x] = f
    }
}

@inline(never) func transposeFloats(_ p: UnsafeRawPointer, stride: Int, rows: Int, width: Int, into out: UnsafeMutablePointer<SIMD16<Float>>) {
    let r1 = min(1, rows - 1) * stride, r2 = min(2, rows - 1) * stride, r3 = min(3, rows - 1) * stride
    for x in 0..<width {
        let o = x * 16
        out[x] = SIMD16(lowHalf: SIMD8(lowHalf: p.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self),
                                       highHalf: p.loadUnaligned(fromByteOffset: o + r1, as: SIMD4<Float>.self)),
                        highHalf: SIMD8(lowHalf: p.loadUnaligned(fromByteOffset: o + r2, as: SIMD4<Float>.self),
                                        highHalf: p.loadUnaligned(fromByteOffset: o + r3, as: SIMD4<Float>.self)))
    }
}

/// The group back as bytes: clamp(floor(v + 0.5), 0, 255) (Blur_ToBytes), rows written: `rows`.
@inline(never) func untransposeBytes(_ v: UnsafePointer<SIMD16<Float>>, width: Int, rows: Int, into p: UnsafeMutableRawPointer, stride: Int) {
    for x in 0..<width {
        let b = toBytesInline(v[x])
        let o = x * 4
        p.storeBytes(of: b.lowHalf.lowHalf, toByteOffset: o, as: SIMD4<UInt8>.self)
        if rows > 1 { p.storeBytes(of: b.lowHalf.highHalf, toByteOffset: o + stride, as: SIMD4<UInt8>.self) }
        if rows > 2 { p.storeBytes(of: b.highHalf.lowHalf, toByteOffset: o + 2 * stride, as: SIMD4<UInt8>.self) }
        if rows > 3 { p.storeBytes(of: b.highHalf.highHalf, toByteOffset: o + 3 * stride, as: SIMD4<UInt8>.self) }
    }
}

@inline(never) func untransposeFloats(_ v: UnsafePointer<SIMD16<Float>>, width: Int, rows: Int, into p: UnsafeMutableRawPointer, stride: Int) {
    for x in 0..<width {
        let f = v[x]
        let o = x * 16
        p.storeBytes(of: f.lowHalf.lowHalf, toByteOffset: o, as: SIMD4<Float>.self)
        if rows > 1 { p.storeBytes(of: f.lowHalf.highHalf, toByteOffset: o + stride, as: SIMD4<Float>.self) }
        if rows > 2 { p.storeBytes(of: f.highHalf.lowHalf, toByteOffset: o + 2 * stride, as: SIMD4<Float>.self) }
        if rows > 3 { p.storeBytes(of: f.highHalf.highHalf, toByteOffset: o + 3 * stride, as: SIMD4<Float>.self) }
    }
}

/// toBytes for inlining into a conversion loop: whole-vector arithmetic and bit operations.
@inline(__always) func toBytesInline(_ v: SIMD16<Float>) -> SIMD16<UInt8> {
    let x = v + SIMD16(repeating: 0.5)
    let magic = SIMD16<Float>(repeating: 12_582_912)
    let n = x + magic
    let down = unsafeBitCast(x - (n - magic), to: SIMD16<UInt32>.self) &>> 31
    var k = unsafeBitCast(unsafeBitCast(n, to: SIMD16<UInt32>.self) &- SIMD16(repeating: 0x4B40_0000) &- down,
                          to: SIMD16<Int32>.self)
    k = k & ~(k &>> 31)
    let over = k &- SIMD16(repeating: 255)
    k = k &- (over & ~(over &>> 31))
    var r = SIMD16<UInt8>()
    for i in 0..<16 { r[i] = UInt8(truncatingIfNeeded: k[i]) }
    return r
}
