// Deterministic test data and hand-made files.

import GlintCore

/// SplitMix64: small, seeded, the same sequence on every machine, so failures reproduce.
public struct SplitMix64 {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in 0..<n (n > 0).
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    public mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

/// The PNG chunk CRC (ISO 3309, reflected polynomial 0xEDB88320), bit by bit.
public func chunkCRC<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for b in bytes {
        crc ^= UInt32(b)
        for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}

public func bigEndian32(_ bytes: [UInt8], at i: Int) -> UInt32 {
    bytes[i..<i + 4].reduce(0) { $0 << 8 | UInt32($1) }
}

public func putBigEndian32(_ value: UInt32, into bytes: inout [UInt8], at i: Int) {
    for k in 0..<4 { bytes[i + k] = UInt8(truncatingIfNeeded: value >> (24 - 8 * k)) }
}

/// A valid 1x1 PNG whose IHDR claims `width` x `height` (with a correct CRC, so only the size is wrong).
public func forgedPNG(width: UInt32, height: UInt32) throws(GlintError) -> [UInt8] {
    var png = try PNG.encode(Image8(width: 1, height: 1))
    // Signature (8), then IHDR: length (4), "IHDR" (4), width (4), height (4), 5 more bytes, CRC (4).
    putBigEndian32(width, into: &png, at: 16)
    putBigEndian32(height, into: &png, at: 20)
    putBigEndian32(chunkCRC(png[12..<29]), into: &png, at: 29)
    return png
}

/// An 8-bit image whose pixel (x, y) is `pixel(x, y)`.
public func makeImage(width: Int, height: Int, _ pixel: (_ x: Int, _ y: Int) -> SIMD4<UInt8>) -> Image8 {
    var image = Image8(width: width, height: height)
    for y in 0..<height {
        for x in 0..<width { image[x, y] = pixel(x, y) }
    }
    return image
}
