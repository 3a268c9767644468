/// Row conversions for the exact 8-bit blur.
///
/// The stdlib's SIMD conversions (`init(truncatingIfNeeded:)`, `init(_:rounding:)`) are generic and
/// stay out-of-line calls or run lane by lane through memory in hot loops. A plain loop over a row
/// of a concrete type is vectorised by LLVM into the right instructions, but only where it is
/// compiled alone: inlined into a big loop it stayed a lane-by-lane loop through the stack. Hence
/// one call a row, never inlined.

/// A row of bytes widened to UInt16 (vpmovzxbw).
@inline(never) func widenRow(_ src: UnsafePointer<UInt8>, into dst: UnsafeMutablePointer<UInt16>, count: Int) {
    for i in 0..<count { dst[i] = UInt16(src[i]) }
}

/// A row of UInt32 values below 2^16 stored as `count` UInt16 at `dst` (vpmovdw); `dst` is raw
/// memory (the image's bytes, two per value) and needs no alignment.
@inline(never) func narrowRow(_ src: UnsafePointer<UInt32>, into dst: UnsafeMutableRawPointer, count: Int) {
    for i in 0..<count { dst.storeBytes(of: UInt16(truncatingIfNeeded: src[i]), toByteOffset: 2 * i, as: UInt16.self) }
}
