import CGlintTypes
import GlintCore

/// The Swift CPU twin of Kernels/blur.cl. Both follow the same steps per channel in the same
/// order, so the 8-bit exact path is identical (integers) and the float paths agree to the bit
/// wherever the compilers keep the order (no contraction on either side).
///
/// Exact: each band of rows is one task. 8-bit follows OpenCV's fixed-point scheme, whose result
/// is a whole number computed without rounding until the end: (sum of kx*ky*p + 2^15) >> 16 with
/// taps in 1/256. Any order of the two passes gives it, so the Swift path runs the vertical pass
/// first, on the bytes, in 16-bit lanes (ExactU8). Float: a horizontal pass into a ring of 2r+1
/// rows, then a vertical pass, as the kernel does.
/// Recursive: four running-sum box filters per direction over each line's extended sequence
/// (BoxPasses): columns eight pixels wide top to bottom, then four rows at a time left to right.
public final class CPUBlur: @unchecked Sendable {
    public let plan: BlurPlan
    /// The recursive method's image between its vertical and horizontal passes: UInt16 in 1/256
    /// for 8-bit images (half the memory traffic of floats), Float for float images.
    private var between: UnsafeMutableRawPointer?
    /// Whether the recursive method writes the 8-bit image between its passes past the caches
    /// (`glint_stream64`): a gain where the caller's other work evicts it anyway (the mist's frame
    /// moves several times the caches' size), a loss where that image would stay cached (a lone
    /// blur; figures in docs/PERFORMANCE.md#the-misty-window-on-the-avx2-machine).
    private let streaming: Bool

    public init(plan: BlurPlan, streaming: Bool = false) {
        self.plan = plan
        self.streaming = streaming
        if plan.method == .recursive {
            between = .allocate(byteCount: plan.width * plan.height * 4 * (plan.format == .u8 ? 2 : 4), alignment: 64)
        }
    }

    deinit { between?.deallocate() }

    /// Blurs `src` into `dst` (both `width * height * 4` elements of the plan's format).
    /// `then`, if given, is called with each band of rows of `dst` as soon as they are final, by
    /// the worker that made them, while they are still in its caches (the mist composes each band
    /// of its frame this way); the bands cover the image once, in no set order (unless the
    /// calling task is cancelled: then the workers stop taking work, and some never come).
    public func run(src: UnsafeRawPointer, dst: UnsafeMutableRawPointer, then: (@Sendable (Range<Int>) -> Void)? = nil) async {
        if plan.method == .exact {
            await exact(src: SharedRaw(src), dst: SharedRaw(dst), then: then)
        } else {
            await recursive(src: SharedRaw(src), dst: SharedRaw(dst), then: then)
        }
    }

    // MARK: Exact

    private func exact(src: SharedRaw, dst: SharedRaw, then: (@Sendable (Range<Int>) -> Void)?) async {
        let plan = self.plan
        let h = plan.height
        // Each band recomputes 2r rows of the horizontal pass above it: few bands (two per worker).
        let band = max(16, (h + CPUParallel.workerCount * 2 - 1) / (CPUParallel.workerCount * 2))
        let bands = (h + band - 1) / band
        await CPUParallel.forEach(bands) { b in
            let y0 = b * band, y1 = min(h, y0 + band)
            ExactBand.run(plan: plan, src: src.pointer, dst: dst.pointer, y0: y0, y1: y1)
            then?(y0 ..< y1)
        }
    }

    // MARK: Recursive

    private func recursive(src: SharedRaw, dst: SharedRaw, then: (@Sendable (Range<Int>) -> Void)?) async {
        let plan = self.plan, streaming = self.streaming
        let mid = SharedRaw(UnsafeRawPointer(between!))
        let strips = (plan.width + BoxPasses.stripPixels - 1) / BoxPasses.stripPixels
        let perItem = 4
        await CPUParallel.forEach((strips + perItem - 1) / perItem) { item in
            BoxPasses.columns(plan: plan, streaming: streaming, src: src.pointer, dst: UnsafeMutableRawPointer(mutating: mid.pointer),
                              strips: item * perItem ..< min(strips, (item + 1) * perItem))
        }
        let groups = (plan.height + 3) / 4
        await CPUParallel.forEach((groups + perItem - 1) / perItem) { item in
            BoxPasses.rows(plan: plan, src: mid.pointer, dst: UnsafeMutableRawPointer(mutating: dst.pointer),
                           groups: item * perItem ..< min(groups, (item + 1) * perItem))
            then?(item * perItem * 4 ..< min(plan.height, (item + 1) * perItem * 4))
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
        if plan.format == .u8 {
            ExactU8.run(plan: plan, src: src, dst: UnsafeMutableRawPointer(mutating: dst), y0: y0, y1: y1)
            return
        }
        let w = plan.width, r = plan.radius, n = 2 * r + 1
        let rowLen = w * 4
        // Rows are processed in chunks of 16 values; buffers are padded so the last chunk may overrun.
        let stride = (rowLen + 63) & ~63
        let padLen = stride + 8 * r + 32
        let ring = UnsafeMutableRawPointer.allocate(byteCount: n * stride * 4, alignment: 64)
        defer { ring.deallocate() }
        let padF = UnsafeMutablePointer<Float>.allocate(capacity: padLen)
        defer { padF.deallocate() }
        padF.initialize(repeating: 0, count: padLen)
        let taps = plan.floatTaps
        let outBytes = UnsafeMutableRawPointer(mutating: dst)

        /// Horizontal pass of extended row `e` (source row e - r, border-mapped) into ring slot `slot`.
        func horizontal(_ e: Int, _ slot: Int) {
            let out = ring + slot * stride * 4
            let sy = Int(plan.rowMap[e])
            if sy < 0 {
                out.initializeMemory(as: UInt8.self, repeating: 0, count: stride * 4)
                return
            }
            let row = src.assumingMemoryBound(to: Float.self) + sy * rowLen
            // The row itself in the middle (one copy), the r border pixels either side by the
            // column map (or 0).
            (padF + 4 * r).update(from: row, count: rowLen)
            @inline(__always) func border(_ e: Int) {
                let sx = Int(plan.colMap[e])
                for c in 0..<4 { padF[e * 4 + c] = sx < 0 ? 0 : row[sx * 4 + c] }
            }
            for e in 0..<r { border(e) }
            for e in w + r ..< w + 2 * r { border(e) }
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

        // Ring slot of extended row e (source row e - r) is e mod n.
        for e in y0 ..< y0 + 2 * r { horizontal(e, e % n) }
        let rows = UnsafeMutablePointer<UnsafeRawPointer>.allocate(capacity: n)
        defer { rows.deallocate() }
        for y in y0..<y1 {
            horizontal(y + 2 * r, (y + 2 * r) % n)
            for j in 0..<n { rows[j] = UnsafeRawPointer(ring + ((y + j) % n) * stride * 4) }
            var i = 0
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

/// The exact method on 8-bit images, vertical pass first, everything in 16-bit lanes (vpmullw;
/// 32-bit multiplies cost two to four times as much on the AVX2 machines this targets).
///
/// Vertical: V = sum of ky*p over the column (taps in 1/256, so V <= 255*256 < 2^16). V splits
/// into its high and low bytes, V = 256*hi + lo, and the horizontal pass sums each half apart:
/// A = sum of kx*hi, B = sum of kx*lo, both <= 255*256 again. The whole sum is S = 256*A + B
/// and the result (S + 2^15) >> 16 equals (A + 128 + (B >> 8)) >> 8, which stays below 2^16
/// because S <= 255*65536. Every step is exact, so the bytes are those of the kernels: the GPU
/// form's (rows, then columns, in 32-bit sums) and the CPU form's (blur_exact_u8_v, these steps
/// lane by lane). No pair sum overflows: an outer tap is at most 128, since the
/// two of a pair and the centre make at most 256.
///
/// Bytes are widened without shuffles: 32 bytes loaded as 16 UInt16 lanes give the even values
/// (lane & 0xFF) and the odd ones (lane >> 8). The halves are kept that way, even values and odd
/// values in separate arrays (a pixel's RGBA is two entries of each), so the horizontal pass
/// filters plain arrays (a pixel is 2 entries) and its results pack back into bytes as
/// even | odd << 8.
enum ExactU8 {
    static func run(plan: BlurPlan, src: UnsafeRawPointer, dst: UnsafeMutableRawPointer, y0: Int, y1: Int) {
        let w = plan.width, r = plan.radius
        let rowLen = w * 4
        // Each half of V per parity: r pixels of border either side (2r entries), and room for the
        // last step of 16 entries to run past the row.
        let padLen = 2 * (w + 2 * r) + 32
        let halves = UnsafeMutablePointer<UInt16>.allocate(capacity: 4 * padLen)
        let hiE = halves, hiO = halves + padLen, loE = halves + 2 * padLen, loO = halves + 3 * padLen
        let tail = UnsafeMutablePointer<UInt8>.allocate(capacity: 32)
        let zeros = UnsafeMutablePointer<UInt8>.allocate(capacity: rowLen)
        let rows = UnsafeMutablePointer<UnsafePointer<UInt8>>.allocate(capacity: 2 * r + 1)
        let taps = UnsafeMutablePointer<UInt16>.allocate(capacity: r + 1)
        defer { halves.deallocate(); tail.deallocate(); zeros.deallocate(); rows.deallocate(); taps.deallocate() }
        halves.initialize(repeating: 0, count: 4 * padLen)
        zeros.initialize(repeating: 0, count: rowLen)
        for j in 0...r { taps[j] = plan.fixedTaps[j] }
        let image = src.assumingMemoryBound(to: UInt8.self)
        let out = dst.assumingMemoryBound(to: UInt8.self)
        for y in y0..<y1 {
            for j in 0 ... 2 * r {
                let sy = Int(plan.rowMap[y + j])
                rows[j] = sy < 0 ? UnsafePointer(zeros) : image + sy * rowLen
            }
            vertical(rows: rows, taps: taps, r: r, count: rowLen,
                     hiE: hiE + 2 * r, hiO: hiO + 2 * r, loE: loE + 2 * r, loO: loO + 2 * r)
            // The r border pixels either side, from the row's own columns (or zeros).
            for e in 0 ..< r {
                for side in [e, w + r + e] {
                    let sx = Int(plan.colMap[side])
                    for half in [hiE, hiO, loE, loO] {
                        for c in 0..<2 { half[2 * side + c] = sx < 0 ? 0 : half[2 * (sx + r) + c] }
                    }
                }
            }
            horizontal(hiE: hiE, hiO: hiO, loE: loE, loO: loO, taps: taps, r: r, count: rowLen,
                       into: out + y * rowLen, tail: tail)
        }
    }

    /// V for `count` values of the output row from its 2r+1 source rows, 32 values a step (64
    /// while 64 remain: two steps' sums side by side), split into the four halves (entry k of a
    /// half is value 2k or 2k+1). Radii up to 9 get a loop each with r a constant (`horizontal`).
    @inline(never) static func vertical(rows: UnsafePointer<UnsafePointer<UInt8>>, taps k: UnsafePointer<UInt16>, r: Int,
                                        count: Int, hiE: UnsafeMutablePointer<UInt16>, hiO: UnsafeMutablePointer<UInt16>,
                                        loE: UnsafeMutablePointer<UInt16>, loO: UnsafeMutablePointer<UInt16>) {
        switch r {
        case 1: vertical(rows, k, 1, count, hiE, hiO, loE, loO)
        case 2: vertical(rows, k, 2, count, hiE, hiO, loE, loO)
        case 3: vertical(rows, k, 3, count, hiE, hiO, loE, loO)
        case 4: vertical(rows, k, 4, count, hiE, hiO, loE, loO)
        case 5: vertical(rows, k, 5, count, hiE, hiO, loE, loO)
        case 6: vertical(rows, k, 6, count, hiE, hiO, loE, loO)
        case 7: vertical(rows, k, 7, count, hiE, hiO, loE, loO)
        case 8: vertical(rows, k, 8, count, hiE, hiO, loE, loO)
        case 9: vertical(rows, k, 9, count, hiE, hiO, loE, loO)
        default: vertical(rows, k, r, count, hiE, hiO, loE, loO)
        }
    }

    @inline(__always) static func vertical(_ rows: UnsafePointer<UnsafePointer<UInt8>>, _ k: UnsafePointer<UInt16>, _ r: Int,
                                           _ count: Int, _ hiE: UnsafeMutablePointer<UInt16>, _ hiO: UnsafeMutablePointer<UInt16>,
                                           _ loE: UnsafeMutablePointer<UInt16>, _ loO: UnsafeMutablePointer<UInt16>) {
        typealias V = SIMD16<UInt16>
        let kc = V(repeating: k[r])
        let low = V(repeating: 0xFF)
        @inline(__always) func load(_ p: UnsafePointer<UInt8>, _ i: Int) -> V { UnsafeRawPointer(p + i).loadUnaligned(as: V.self) }
        @inline(__always) func store(_ even: V, _ odd: V, _ i: Int) {
            let e = i / 2
            UnsafeMutableRawPointer(hiE + e).storeBytes(of: even &>> 8, as: V.self)
            UnsafeMutableRawPointer(loE + e).storeBytes(of: even & low, as: V.self)
            UnsafeMutableRawPointer(hiO + e).storeBytes(of: odd &>> 8, as: V.self)
            UnsafeMutableRawPointer(loO + e).storeBytes(of: odd & low, as: V.self)
        }
        var i = 0
        while i + 64 <= count {
            let c = load(rows[r], i), d = load(rows[r], i &+ 32)
            var even = kc &* (c & low), odd = kc &* (c &>> 8)
            var even2 = kc &* (d & low), odd2 = kc &* (d &>> 8)
            for j in 0..<r {
                let kj = V(repeating: k[j])
                let top = rows[j], bottom = rows[2 &* r &- j]
                let a = load(top, i), b = load(bottom, i)
                let a2 = load(top, i &+ 32), b2 = load(bottom, i &+ 32)
                even = even &+ kj &* ((a & low) &+ (b & low))
                odd = odd &+ kj &* ((a &>> 8) &+ (b &>> 8))
                even2 = even2 &+ kj &* ((a2 & low) &+ (b2 & low))
                odd2 = odd2 &+ kj &* ((a2 &>> 8) &+ (b2 &>> 8))
            }
            store(even, odd, i)
            store(even2, odd2, i &+ 32)
            i += 64
        }
        while i + 32 <= count {
            let c = load(rows[r], i)
            var even = kc &* (c & low), odd = kc &* (c &>> 8)
            for j in 0..<r {
                let kj = V(repeating: k[j])
                let a = load(rows[j], i), b = load(rows[2 &* r &- j], i)
                even = even &+ kj &* ((a & low) &+ (b & low))
                odd = odd &+ kj &* ((a &>> 8) &+ (b &>> 8))
            }
            store(even, odd, i)
            i += 32
        }
        while i < count {
            var v = k[r] &* UInt16(rows[r][i])
            for j in 0..<r { v = v &+ k[j] &* (UInt16(rows[j][i]) &+ UInt16(rows[2 * r - j][i])) }
            if i % 2 == 0 { hiE[i / 2] = v >> 8; loE[i / 2] = v & 0xFF } else { hiO[i / 2] = v >> 8; loO[i / 2] = v & 0xFF }
            i += 1
        }
    }

    /// The horizontal sums of the halves (which hold the row from 2r entries before it) and the
    /// rounded bytes, 32 values a step; a last step short of 32 goes through `tail`. Radii 1 to 9
    /// (sigma up to 3 in 8 bits, where `auto` picks this method) get a copy of the loop each with
    /// r a constant, so that the taps unroll.
    @inline(never) static func horizontal(hiE: UnsafePointer<UInt16>, hiO: UnsafePointer<UInt16>,
                                          loE: UnsafePointer<UInt16>, loO: UnsafePointer<UInt16>,
                                          taps k: UnsafePointer<UInt16>, r: Int, count: Int,
                                          into out: UnsafeMutablePointer<UInt8>, tail: UnsafeMutablePointer<UInt8>) {
        switch r {
        case 1: horizontal(hiE, hiO, loE, loO, k, 1, count, out, tail)
        case 2: horizontal(hiE, hiO, loE, loO, k, 2, count, out, tail)
        case 3: horizontal(hiE, hiO, loE, loO, k, 3, count, out, tail)
        case 4: horizontal(hiE, hiO, loE, loO, k, 4, count, out, tail)
        case 5: horizontal(hiE, hiO, loE, loO, k, 5, count, out, tail)
        case 6: horizontal(hiE, hiO, loE, loO, k, 6, count, out, tail)
        case 7: horizontal(hiE, hiO, loE, loO, k, 7, count, out, tail)
        case 8: horizontal(hiE, hiO, loE, loO, k, 8, count, out, tail)
        case 9: horizontal(hiE, hiO, loE, loO, k, 9, count, out, tail)
        default: horizontal(hiE, hiO, loE, loO, k, r, count, out, tail)
        }
    }

    @inline(__always) static func horizontal(_ hiE: UnsafePointer<UInt16>, _ hiO: UnsafePointer<UInt16>,
                                             _ loE: UnsafePointer<UInt16>, _ loO: UnsafePointer<UInt16>,
                                             _ k: UnsafePointer<UInt16>, _ r: Int, _ count: Int,
                                             _ out: UnsafeMutablePointer<UInt8>, _ tail: UnsafeMutablePointer<UInt8>) {
        typealias V = SIMD16<UInt16>
        let kc = V(repeating: k[r])
        let bias = V(repeating: 128)
        @inline(__always) func at(_ half: UnsafePointer<UInt16>, _ entry: Int) -> V {
            UnsafeRawPointer(half + entry).loadUnaligned(as: V.self)
        }
        var i = 0
        while i < count {
            // The four halves' sums side by side: each tap's weight is loaded once for all four,
            // and the four chains are independent. Entry e + 2j is the pixel j to the left of
            // the centre (e + 2r); every sum stays below 2^16 (the taps sum to 256).
            let e = i / 2
            var sHE = kc &* at(hiE, e &+ 2 &* r), sLE = kc &* at(loE, e &+ 2 &* r)
            var sHO = kc &* at(hiO, e &+ 2 &* r), sLO = kc &* at(loO, e &+ 2 &* r)
            for j in 0..<r {
                let kj = V(repeating: k[j])
                let a = e &+ 2 &* j, b = e &+ 2 &* (2 &* r &- j)
                sHE = sHE &+ kj &* (at(hiE, a) &+ at(hiE, b))
                sLE = sLE &+ kj &* (at(loE, a) &+ at(loE, b))
                sHO = sHO &+ kj &* (at(hiO, a) &+ at(hiO, b))
                sLO = sLO &+ kj &* (at(loO, a) &+ at(loO, b))
            }
            let even = (sHE &+ bias &+ (sLE &>> 8)) &>> 8
            let odd = (sHO &+ bias &+ (sLO &>> 8)) &>> 8
            let bytes = even | (odd &<< 8)
            if i + 32 <= count {
                UnsafeMutableRawPointer(out + i).storeBytes(of: bytes, as: V.self)
            } else {
                UnsafeMutableRawPointer(tail).storeBytes(of: bytes, as: V.self)
                (out + i).update(from: tail, count: count - i)
            }
            i += 32
        }
    }
}

/// The recursive method's two directions.
///
/// A line (a column strip, or a group of rows) goes through the cascade as its extended
/// sequence: the samples with the border applied, `pad` entries on each side, behind `w0` zero
/// entries (the inputs before the first count as 0). Stage 0 then reads the input that leaves its
/// window straight from the sequence, and only stages 1 to 3 keep rings: per step four stores
/// instead of five, and no border lookup.
enum BoxPasses {
    /// Stages 1 to 3: rings in one allocation, each a power of two long (no wrap-around branch);
    /// the running sums live in the loops' locals, so that they stay in registers.
    struct Cascade {
        let storage: UnsafeMutablePointer<SIMD16<Float>>
        let r1, r2, r3: UnsafeMutablePointer<SIMD16<Float>>
        let w0, w1, w2, w3: Int
        let m1, m2, m3: Int

        static func capacity(_ width: Int) -> Int { width <= 1 ? 1 : 1 << (Int.bitWidth - (width - 1).leadingZeroBitCount) }

        /// Vectors a slot holds: 1, or 2 for the fused column pass (glint_box_columns_u8).
        let lines: Int

        init(_ widths: [Int], lines: Int = 1) {
            let caps = widths.dropFirst().map(Self.capacity)
            self.lines = lines
            storage = .allocate(capacity: caps.reduce(0, +) * lines)
            r1 = storage; r2 = r1 + caps[0] * lines; r3 = r2 + caps[1] * lines
            (w0, w1, w2, w3) = (widths[0], widths[1], widths[2], widths[3])
            (m1, m2, m3) = (caps[0] - 1, caps[1] - 1, caps[2] - 1)
        }
        /// Zeros the slots a sweep reads before it writes them: stage k's first w_k steps read
        /// slots (t - w_k) & m_k, the ring's last w_k.
        func reset() {
            (r1 + (m1 + 1 - w1) * lines).initialize(repeating: SIMD16(repeating: 0), count: w1 * lines)
            (r2 + (m2 + 1 - w2) * lines).initialize(repeating: SIMD16(repeating: 0), count: w2 * lines)
            (r3 + (m3 + 1 - w3) * lines).initialize(repeating: SIMD16(repeating: 0), count: w3 * lines)
        }

        /// Ring k's storage as floats, for the C loops.
        var floats: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) {
            func f(_ p: UnsafeMutablePointer<SIMD16<Float>>) -> UnsafeMutablePointer<Float> {
                UnsafeMutableRawPointer(p).assumingMemoryBound(to: Float.self)
            }
            return (f(r1), f(r2), f(r3))
        }

        /// Input t (`v`) through the four running sums (blur.cl: BOX_LINE); `o0` is input
        /// t - w0, the one leaving stage 0's window.
        @inline(__always) func step(_ v: SIMD16<Float>, _ o0: SIMD16<Float>, _ t: Int, _ s0: inout SIMD16<Float>,
                                    _ s1: inout SIMD16<Float>, _ s2: inout SIMD16<Float>, _ s3: inout SIMD16<Float>) -> SIMD16<Float> {
            s0 = s0 + (v - o0)
            let o1 = r1[(t &- w1) & m1]; r1[t & m1] = s0; s1 = s1 + (s0 - o1)
            let o2 = r2[(t &- w2) & m2]; r2[t & m2] = s1; s2 = s2 + (s1 - o2)
            let o3 = r3[(t &- w3) & m3]; r3[t & m3] = s2; s3 = s3 + (s2 - o3)
            return s3
        }
    }

    /// A line's extended sequence: `every` interleaved lines (entry t of line k at
    /// `every * t + k` from `sequence`), `lead` zero entries before entry 0.
    struct Line {
        let storage: UnsafeMutablePointer<SIMD16<Float>>
        let sequence: UnsafeMutablePointer<SIMD16<Float>>
        let every: Int

        init(lead: Int, steps: Int, every: Int) {
            storage = .allocate(capacity: every * (lead + steps))
            storage.initialize(repeating: SIMD16(repeating: 0), count: every * lead)
            sequence = storage + every * lead
            self.every = every
        }

        /// Where a sweep of `count` results puts them (entry i of line k at `every * i + k`): over
        /// the sequence's own first entries, which keeps a line's memory in the caches, where
        /// 2 pad >= w0: result i is written at step i + 2 pad, when entry i was last read at step
        /// i + w0 (the input leaving stage 0's window); otherwise in memory of its own.
        func output(plan: BlurPlan, count: Int) -> UnsafeMutablePointer<SIMD16<Float>> {
            2 * plan.pad >= plan.boxWidths[0] ? sequence : .allocate(capacity: every * count)
        }

        /// Frees what `output` allocated.
        func release(_ output: UnsafeMutablePointer<SIMD16<Float>>) {
            if output != sequence { output.deallocate() }
        }

        /// Where the `n` samples go (entries pad ..< pad + n: the border leaves samples in place).
        func samples(pad: Int) -> UnsafeMutablePointer<SIMD16<Float>> { sequence + every * pad }

        /// The border entries (t < pad and t >= pad + n) from the samples, by the plan's map
        /// (extended index -> sample index, or -1 for 0), for the first `vectors` lines (those
        /// holding samples: a strip's last may fill fewer).
        func extend(n: Int, pad: Int, map: UnsafePointer<Int32>, vectors: Int? = nil) {
            let live = vectors ?? every
            @inline(__always) func entry(_ t: Int) {
                let m = Int(map[t])
                for k in 0 ..< live {
                    sequence[every * t + k] = m >= 0 ? sequence[every * (pad + m) + k] : SIMD16(repeating: 0)
                }
            }
            for t in 0 ..< pad { entry(t) }
            for t in pad + n ..< n + 2 * pad { entry(t) }
        }
    }

    /// The sweep: the `steps` entries of one line's extended sequence (16 lanes each, `every`
    /// vectors apart, as in `output`) through the cascade. Pure float loads, stores and
    /// arithmetic: conversions happen before and after, in batches, so that no call spills the
    /// running sums out of their registers.
    @inline(__always) static func sweep(_ cascade: Cascade, sequence: UnsafePointer<SIMD16<Float>>, steps: Int, pad: Int,
                                        scale: SIMD16<Float>, output: UnsafeMutablePointer<SIMD16<Float>>, every: Int = 1) {
        assert(cascade.lines == 1, "step's rings hold one vector a slot")
        cascade.reset()
        let zero = SIMD16<Float>(repeating: 0)
        var s0 = zero, s1 = zero, s2 = zero, s3 = zero
        let back = every * cascade.w0
        // The first 2 pad steps fill the cascade; each later one gives an output sample.
        for t in 0 ..< 2 * pad {
            let at = sequence + every * t
            _ = cascade.step(at[0], at[-back], t, &s0, &s1, &s2, &s3)
        }
        for t in 2 * pad ..< steps {
            let at = sequence + every * t
            output[every * (t - 2 * pad)] = cascade.step(at[0], at[-back], t, &s0, &s1, &s2, &s3) * scale
        }
    }

    /// Pixels in a column strip: 8 (2 x 16 lanes). A strip's extended sequence, its results
    /// written over it (`Line.output`), takes 64 bytes per row per 4 pixels: 0.3 MB at a 4K
    /// height (2160 rows), within the 512 KB second-level cache of the AVX2 EPYCs this path
    /// targets (16 pixels would not be, and measured no faster on Zen 4). The conversions and
    /// sweeps work for any multiple of 8.
    static let stripPixels = 8

    /// How many rows ahead the fused column pass asks for its source's lines: enough to cover a
    /// memory access at a few nanoseconds a row.
    static let prefetchRows = 16

    /// Vertical pass over column strips of `stripPixels` pixels: source (either format) to the
    /// image between passes.
    static func columns(plan: BlurPlan, streaming: Bool, src: UnsafeRawPointer, dst: UnsafeMutableRawPointer, strips: Range<Int>) {
        let w = plan.width, h = plan.height, pad = plan.pad, steps = h + 2 * pad
        let vectors = stripPixels / 4
        let cascade = Cascade(plan.boxWidths), pair = Cascade(plan.boxWidths, lines: 2)
        let line = Line(lead: plan.boxWidths[0], steps: steps, every: vectors)
        let output = line.output(plan: plan, count: h)
        defer { cascade.storage.deallocate(); pair.storage.deallocate(); line.storage.deallocate(); line.release(output) }
        let u8 = plan.format == .u8
        plan.rowMap.withUnsafeBufferPointer { rowMap in
            for strip in strips {
                let x0 = strip * stripPixels
                let lanes = min(stripPixels, w - x0) * 4
                if u8 && lanes == 32 && vectors == 2 {
                    // A whole 8-bit strip: read, swept and written in one loop (no line buffer).
                    pair.reset()
                    let (r1, r2, r3) = pair.floats
                    let out = dst + x0 * 8
                    let stream = streaming && Int(bitPattern: out) & 31 == 0 && (w * 8) & 31 == 0
                    glint_box_columns_u8(src.assumingMemoryBound(to: UInt8.self) + x0 * 4, w * 4, rowMap.baseAddress!, steps, pad,
                                         r1, r2, r3, pair.w0, pair.w1, pair.w2, pair.w3, pair.m1, pair.m2, pair.m3,
                                         plan.midScale, prefetchRows, out.assumingMemoryBound(to: UInt8.self), w * 8, stream ? 1 : 0)
                    if stream { glint_store_fence() }
                    continue
                }
                if u8 { gatherBytes(src + x0 * 4, stride: w * 4, rows: h, lanes: lanes, into: line.samples(pad: pad)) }
                else { gatherFloats(src + x0 * 16, stride: w * 16, rows: h, lanes: lanes, into: line.samples(pad: pad)) }
                line.extend(n: h, pad: pad, map: rowMap.baseAddress!, vectors: (lanes + 15) / 16)
                for k in 0 ..< (lanes + 15) / 16 {
                    sweep(cascade, sequence: line.sequence + k, steps: steps, pad: pad,
                          scale: SIMD16(repeating: plan.midScale), output: output + k, every: vectors)
                }
                if u8 { scatterUInt16(output, rows: h, lanes: lanes, into: dst + x0 * 8, stride: w * 8, streaming: streaming) }
                else { scatterFloats(output, rows: h, lanes: lanes, into: dst + x0 * 16, stride: w * 16) }
            }
        }
    }

    /// Horizontal pass over groups of 4 rows (16 lanes: 4 rows x RGBA): the image between passes to the destination.
    static func rows(plan: BlurPlan, src: UnsafeRawPointer, dst: UnsafeMutableRawPointer, groups: Range<Int>) {
        let w = plan.width, h = plan.height, pad = plan.pad, steps = w + 2 * pad
        let cascade = Cascade(plan.boxWidths)
        let line = Line(lead: plan.boxWidths[0], steps: steps, every: 1)
        let output = line.output(plan: plan, count: w)
        defer { cascade.storage.deallocate(); line.storage.deallocate(); line.release(output) }
        let u8 = plan.format == .u8
        plan.colMap.withUnsafeBufferPointer { colMap in
            for g in groups {
                let y0 = g * 4
                let live = min(4, h - y0)
                if u8 { transposeUInt16(src + y0 * w * 8, stride: w * 8, rows: live, width: w, into: line.samples(pad: pad)) }
                else { transposeFloats(src + y0 * w * 16, stride: w * 16, rows: live, width: w, into: line.samples(pad: pad)) }
                line.extend(n: w, pad: pad, map: colMap.baseAddress!)
                sweep(cascade, sequence: line.sequence, steps: steps, pad: pad,
                      scale: SIMD16(repeating: plan.outScale), output: output)
                if u8 { untransposeBytes(output, width: w, rows: live, into: dst + y0 * w * 4, stride: w * 4) }
                else { untransposeFloats(output, width: w, rows: live, into: dst + y0 * w * 16, stride: w * 16) }
            }
        }
    }
}
