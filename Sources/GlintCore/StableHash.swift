/// Two 64-bit FNV-1a lanes written together as 32 hex digits: the standard 64-bit FNV-1a, and a
/// second lane with another offset basis that hashes every byte XOR 0x5a. (Not the 128-bit
/// FNV-1a: that multiplies in 128 bits.) Stable across runs, platforms and Swift versions (unlike
/// `Hasher`), for cache keys and checksums. Not a cryptographic hash.
public struct StableHash: Sendable {
    private var a: UInt64 = 0xcbf2_9ce4_8422_2325
    private var b: UInt64 = 0x6c62_272e_07bb_0142

    public init() {}

    public mutating func update(_ text: String) {
        for byte in text.utf8 { update(byte) }
        // A separator keeps ("ab","c") and ("a","bc") apart.
        update(0xff)
    }

    /// Every byte of `bytes`, in order (no separator: a checksum of data, not of parts).
    public mutating func update<C: Collection>(bytes: C) where C.Element == UInt8 {
        for byte in bytes { update(byte) }
    }

    /// The hash of `bytes` alone.
    public static func of<C: Collection>(bytes: C) -> String where C.Element == UInt8 {
        var h = StableHash()
        h.update(bytes: bytes)
        return h.hex
    }

    public mutating func update(_ byte: UInt8) {
        a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        b = (b ^ UInt64(byte ^ 0x5a)) &* 0x0000_0100_0000_01b3
    }

    public var hex: String {
        func h(_ v: UInt64) -> String {
            let s = String(v, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }
        return h(a) + h(b)
    }

    public static func of(_ parts: String...) -> String {
        var h = StableHash()
        for p in parts { h.update(p) }
        return h.hex
    }
}
