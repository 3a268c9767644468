/// Conversions and lane-wise operations on the blur's 16-lane vectors.
///
/// The stdlib's SIMD conversions (`init(truncatingIfNeeded:)`, `init(_:rounding:)`) and its
/// `replacing(with:where:)` and `clamped` are generic and stay out-of-line calls or run lane by
/// lane through memory in the hot loops (they made the recursive blur 5x slower). A plain loop over
/// the lanes of a concrete type is vectorised by LLVM into the right instructions (vpmovzxbd +
/// vcvtdq2ps, vroundps, vminps, vpshufb), but only where it is compiled alone: inlined into a big
/// loop it stayed a lane-by-lane loop through the stack. Hence small functions, never inlined.

/// 16 bytes as floats.
@inline(never) func floats(bytesAt p: UnsafeRawPointer) -> SIMD16<Float> {
    let b = p.loadUnaligned(as: SIMD16<UInt8>.self)
    var f = SIMD16<Float>()
    for i in 0..<16 { f[i] = Float(b[i]) }
    return f
}

/// 16 UInt16 widened to UInt32.
@inline(never) func widen(_ p: UnsafeRawPointer) -> SIMD16<UInt32> {
    let b = p.loadUnaligned(as: SIMD16<UInt16>.self)
    var f = SIMD16<UInt32>()
    for i in 0..<16 { f[i] = UInt32(b[i]) }
    return f
}

/// The low byte of each lane.
@inline(never) func lowBytes(_ v: SIMD16<UInt32>) -> SIMD16<UInt8> {
    var r = SIMD16<UInt8>()
    for i in 0..<16 { r[i] = UInt8(truncatingIfNeeded: v[i]) }
    return r
}

/// Floats rounded half up and clamped to bytes: clamp(floor(v + 0.5), 0, 255), as the kernels'
/// Blur_ToBytes, for |v| < 2^22. Whole-vector arithmetic and bit operations only: a lane loop with
/// comparisons stayed a loop through memory in the package build.
@inline(never) func toBytes(_ v: SIMD16<Float>) -> SIMD16<UInt8> {
    let x = v + SIMD16(repeating: 0.5)
    let magic = SIMD16<Float>(repeating: 12_582_912)  // 1.5 * 2^23: x + magic is x rounded, in the low mantissa bits
    let n = x + magic
    // floor: one less where rounding went up (x - rounded < 0: its sign bit).
    let down = unsafeBitCast(x - (n - magic), to: SIMD16<UInt32>.self) &>> 31
    var k = unsafeBitCast(unsafeBitCast(n, to: SIMD16<UInt32>.self) &- SIMD16(repeating: 0x4B40_0000) &- down,
                          to: SIMD16<Int32>.self)
    k = k & ~(k &>> 31)  // max(k, 0)
    let over = k &- SIMD16(repeating: 255)
    k = k &- (over & ~(over &>> 31))  // min(k, 255)
    return lowBytes(unsafeBitCast(k, to: SIMD16<UInt32>.self))
}

/// The same for 4 lanes (one pixel).
@inline(never) func toBytes(_ v: SIMD4<Float>) -> SIMD4<UInt8> {
    var x = SIMD4<Float>()
    for i in 0..<4 {
        let r = (v[i] + 0.5).rounded(.down)
        let lo: Float = r > 0 ? r : 0
        x[i] = lo < 255 ? lo : 255
    }
    let bits = unsafeBitCast(x + SIMD4(repeating: 8_388_608), to: SIMD4<UInt32>.self)
    var r = SIMD4<UInt8>()
    for i in 0..<4 { r[i] = UInt8(truncatingIfNeeded: bits[i]) }
    return r
}

/// Floats in [-0.5, 2^22) rounded half to even into UInt16 (the kernels' convert_ushort4(rint(v))).
@inline(never) func toUInt16(_ v: SIMD16<Float>) -> SIMD16<UInt16> {
    let bits = unsafeBitCast(v + SIMD16(repeating: 12_582_912), to: SIMD16<UInt32>.self) &- SIMD16(repeating: 0x4B40_0000)
    var r = SIMD16<UInt16>()
    for i in 0..<16 { r[i] = UInt16(truncatingIfNeeded: bits[i]) }
    return r
}

/// One pixel (4 x UInt16) from each of four rows, as 16 floats.
@inline(never) func floats(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ c: UnsafeRawPointer, _ d: UnsafeRawPointer) -> SIMD16<Float> {
    let u = SIMD16<UInt16>(lowHalf: SIMD8(lowHalf: a.loadUnaligned(as: SIMD4<UInt16>.self), highHalf: b.loadUnaligned(as: SIMD4<UInt16>.self)),
                           highHalf: SIMD8(lowHalf: c.loadUnaligned(as: SIMD4<UInt16>.self), highHalf: d.loadUnaligned(as: SIMD4<UInt16>.self)))
    var f = SIMD16<Float>()
    for i in 0..<16 { f[i] = Float(u[i]) }
    return f
}

/// 16 bytes widened to UInt16.
@inline(never) func widenBytes(_ p: UnsafeRawPointer) -> SIMD16<UInt16> {
    let b = p.loadUnaligned(as: SIMD16<UInt8>.self)
    var r = SIMD16<UInt16>()
    for i in 0..<16 { r[i] = UInt16(b[i]) }
    return r
}

/// 16 UInt16 as floats.
@inline(never) func floats(_ v: SIMD16<UInt16>) -> SIMD16<Float> {
    var f = SIMD16<Float>()
    for i in 0..<16 { f[i] = Float(v[i]) }
    return f
}

/// 16 UInt16 widened to UInt32.
@inline(never) func widen(_ v: SIMD16<UInt16>) -> SIMD16<UInt32> {
    var f = SIMD16<UInt32>()
    for i in 0..<16 { f[i] = UInt32(v[i]) }
    return f
}

/// A row of bytes widened to UInt16: one call a row, a loop LLVM vectorises (vpmovzxbw).
@inline(never) func widenRow(_ src: UnsafePointer<UInt8>, into dst: UnsafeMutablePointer<UInt16>, count: Int) {
    for i in 0..<count { dst[i] = UInt16(src[i]) }
}

/// A row of UInt32 values below 256 narrowed to bytes: one call a row, vectorised (vpackusdw/vpackuswb).
@inline(never) func narrowRow(_ src: UnsafePointer<UInt32>, into dst: UnsafeMutablePointer<UInt8>, count: Int) {
    for i in 0..<count { dst[i] = UInt8(truncatingIfNeeded: src[i]) }
}

/// A row of UInt32 values below 2^16 narrowed to UInt16: one call a row, vectorised (vpmovdw).
@inline(never) func narrowRow(_ src: UnsafePointer<UInt32>, into dst: UnsafeMutablePointer<UInt16>, count: Int) {
    for i in 0..<count { dst[i] = UInt16(truncatingIfNeeded: src[i]) }
}
