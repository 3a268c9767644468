import CGlintTypes

// The recursive blur's batch conversions around its sweeps (BlurCPU.swift): between the images'
// layouts and the sweeps' lines of 16-lane float vectors. Never inlined: each is a small loop LLVM
// vectorises.

/// Column strip: `rows` rows of `lanes` (<= 4 * stripPixels) values at `stride`, as
/// stripPixels / 4 vectors of 16 floats per row
/// (missing lanes 0; vectors past the last live one are not written).
@inline(never) func gatherBytes(_ p: UnsafeRawPointer, stride: Int, rows: Int, lanes: Int, into out: UnsafeMutablePointer<SIMD16<Float>>) {
    let n = BoxPasses.stripPixels / 4
    if lanes == 16 * n {
        for y in 0..<rows {
            for k in 0..<n { out[n * y + k] = floatsInline(bytesAt: p + y * stride + 16 * k) }
        }
        return
    }
    for y in 0..<rows {
        for k in 0 ..< (lanes + 15) / 16 {
            let live = min(16, lanes - 16 * k)
            var a = SIMD16<Float>(repeating: 0)
            for l in 0..<live { a[l] = Float(p.load(fromByteOffset: y * stride + 16 * k + l, as: UInt8.self)) }
            out[n * y + k] = a
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
    let n = BoxPasses.stripPixels / 4
    if lanes == 16 * n {
        for y in 0..<rows {
            for k in 0..<n { out[n * y + k] = p.loadUnaligned(fromByteOffset: y * stride + 64 * k, as: SIMD16<Float>.self) }
        }
        return
    }
    for y in 0..<rows {
        for k in 0 ..< (lanes + 15) / 16 {
            let live = min(16, lanes - 16 * k)
            if live == 16 {
                out[n * y + k] = p.loadUnaligned(fromByteOffset: y * stride + 64 * k, as: SIMD16<Float>.self)
                continue
            }
            var a = SIMD16<Float>(repeating: 0)
            for l in 0..<live { a[l] = p.load(fromByteOffset: y * stride + 64 * k + 4 * l, as: Float.self) }
            out[n * y + k] = a
        }
    }
}

/// The strip back: rounded half to even into UInt16, below 0 clamped to 0 (blur.cl's MID_ROUND).
@inline(never) func scatterUInt16(_ v: UnsafePointer<SIMD16<Float>>, rows: Int, lanes: Int, into p: UnsafeMutableRawPointer, stride: Int,
                                  streaming: Bool) {
    let n = BoxPasses.stripPixels / 4
    /// rint(max(f, 0)) as 16-bit lanes (f at most 65535), as the fused column pass rounds them.
    @inline(__always) func ushorts(_ f: SIMD16<Float>) -> SIMD16<UInt16> { glint_ushorts16(f) }
    // With `streaming`, whole strips whose rows start 32-byte aligned (the image between passes is
    // 64-byte aligned; a width that is a multiple of 4 keeps every row so) go past the caches.
    if streaming && lanes == 16 * n && Int(bitPattern: p) & 31 == 0 && stride & 31 == 0 {
        for y in 0..<rows {
            for k in Swift.stride(from: 0, to: n, by: 2) {
                glint_stream64(p + y &* stride + 32 * k, ushorts(v[n * y + k]), ushorts(v[n * y + k + 1]))
            }
        }
        glint_store_fence()
        return
    }
    if lanes == 16 * n {
        for y in 0..<rows {
            for k in 0..<n { p.storeBytes(of: ushorts(v[n * y + k]), toByteOffset: y * stride + 32 * k, as: SIMD16<UInt16>.self) }
        }
        return
    }
    for y in 0..<rows {
        for k in 0 ..< (lanes + 15) / 16 {
            let r = ushorts(v[n * y + k])
            let live = min(16, lanes - 16 * k)
            if live == 16 { p.storeBytes(of: r, toByteOffset: y * stride + 32 * k, as: SIMD16<UInt16>.self) } else {
                for l in 0..<live { p.storeBytes(of: r[l], toByteOffset: y * stride + 32 * k + 2 * l, as: UInt16.self) }
            }
        }
    }
}

@inline(never) func scatterFloats(_ v: UnsafePointer<SIMD16<Float>>, rows: Int, lanes: Int, into p: UnsafeMutableRawPointer, stride: Int) {
    let n = BoxPasses.stripPixels / 4
    if lanes == 16 * n {
        for y in 0..<rows {
            for k in 0..<n { p.storeBytes(of: v[n * y + k], toByteOffset: y * stride + 64 * k, as: SIMD16<Float>.self) }
        }
        return
    }
    for y in 0..<rows {
        for k in 0 ..< (lanes + 15) / 16 {
            let live = min(16, lanes - 16 * k)
            if live == 16 { p.storeBytes(of: v[n * y + k], toByteOffset: y * stride + 64 * k, as: SIMD16<Float>.self); continue }
            for l in 0..<live { p.storeBytes(of: v[n * y + k][l], toByteOffset: y * stride + 64 * k + 4 * l, as: Float.self) }
        }
    }
}

/// Row group: pixel x of `rows` (<= 4) rows of UInt16 RGBA as the 16 lanes of input[x] (missing
/// rows repeat the last; their results are never written), four pixels a step (simd.h).
@inline(never) func transposeUInt16(_ p: UnsafeRawPointer, stride: Int, rows: Int, width: Int, into out: UnsafeMutablePointer<SIMD16<Float>>) {
    glint_transpose_ushorts(p.assumingMemoryBound(to: UInt8.self), stride, rows, width,
                            UnsafeMutableRawPointer(out).assumingMemoryBound(to: Float.self))
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

/// The group back as bytes: clamp(floor(v + 0.5), 0, 255) (blur.cl's TO_PIX1), rows written: `rows`,
/// four pixels a step (simd.h).
@inline(never) func untransposeBytes(_ v: UnsafePointer<SIMD16<Float>>, width: Int, rows: Int, into p: UnsafeMutableRawPointer, stride: Int) {
    glint_untranspose_bytes(UnsafeRawPointer(v).assumingMemoryBound(to: Float.self), width, rows,
                            p.assumingMemoryBound(to: UInt8.self), stride)
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

/// blur.cl's TO_PIX1 for inlining into a conversion loop: clamp(floor(v + 0.5), 0, 255) per lane, as
/// whole-vector instructions (simd.h).
@inline(__always) func toBytesInline(_ v: SIMD16<Float>) -> SIMD16<UInt8> { glint_bytes16(v) }
