/// Binary greyscale Netpbm ("P5"). Used for 16-bit single-channel outputs (iteration counts,
/// depth) that PNG's simplified API would push through a gamma curve.
public enum PGM {
    /// Largest file `read` accepts: enough for any 16-bit image within `ImageLimits`.
    public static let maxFileBytes = 256 + ImageLimits.maxPixels * 2

    /// Encodes `width * height` samples, row 0 at the top. Samples above `maxValue` are clamped
    /// to it, since Netpbm forbids them. As the Netpbm spec says, a `maxValue` of 256 or more
    /// gives two bytes per sample, most significant first; below 256, one byte.
    public static func encode16(width: Int, height: Int, values: [UInt16], maxValue: UInt16) -> [UInt8] {
        precondition(width >= 0 && height >= 0 && values.count == width * height,
                     "PGM.encode16: \(width)x\(height) needs \(width * height) samples, got \(values.count)")
        precondition(maxValue >= 1, "PGM.encode16: maxValue must be at least 1")
        let header = Array("P5\n\(width) \(height)\n\(maxValue)\n".utf8)
        let wide = maxValue >= 256
        var out = header
        out.reserveCapacity(header.count + values.count * (wide ? 2 : 1))
        for v in values {
            let s = min(v, maxValue)
            if wide { out.append(UInt8(s >> 8)) }
            out.append(UInt8(truncatingIfNeeded: s))
        }
        return out
    }

    /// Writes a P5 file (see `encode16`) to a temporary name, then renames it to `path`.
    public static func write16(width: Int, height: Int, values: [UInt16], maxValue: UInt16,
                               to path: String) throws(GlintError) {
        do throws(GlintError) { try ImageLimits.check(width: width, height: height) } catch {
            throw GlintError("cannot write \(path): \(error.message)")
        }
        try FileIO.writeAtomically(path, encode16(width: width, height: height, values: values, maxValue: maxValue))
    }

    /// Decodes a P5 image (comments allowed in the header). The size is checked against
    /// `ImageLimits` before allocating, and every sample must be at most the maxval.
    public static func decode(_ bytes: [UInt8], name: String = "PGM data") throws(GlintError)
        -> (width: Int, height: Int, maxValue: Int, values: [UInt16])
    {
        func fail(_ why: String) -> GlintError { GlintError("cannot read \(name): \(why)") }
        var header = HeaderScanner(bytes, comments: true)
        guard header.token() == "P5" else { throw fail("not a binary PGM (P5) file") }
        guard let width = header.token().flatMap({ Int($0) }), let height = header.token().flatMap({ Int($0) }) else {
            throw fail("bad PGM header: width and height must be whole numbers")
        }
        guard let maxValue = header.token().flatMap({ Int($0) }), (1...65535).contains(maxValue) else {
            throw fail("bad PGM header: maxval must be a whole number from 1 to 65535")
        }
        guard header.skipOneSpace() else { throw fail("bad PGM header: no whitespace before the pixel data") }
        do throws(GlintError) { try ImageLimits.check(width: width, height: height) } catch { throw fail(error.message) }

        let bytesPerSample = maxValue >= 256 ? 2 : 1
        let count = width * height
        let found = bytes.count - header.position
        guard found >= count * bytesPerSample else {
            throw fail("truncated PGM: \(count * bytesPerSample) bytes of pixel data expected, \(found) found")
        }
        var values = [UInt16](repeating: 0, count: count)
        var largest: UInt16 = 0
        let start = header.position
        values.withUnsafeMutableBufferPointer { out in
            for i in 0..<count {
                let v = bytesPerSample == 2
                    ? UInt16(bytes[start + 2 * i]) << 8 | UInt16(bytes[start + 2 * i + 1])
                    : UInt16(bytes[start + i])
                out[i] = v
                largest = max(largest, v)
            }
        }
        guard Int(largest) <= maxValue else { throw fail("sample value \(largest) is over the maxval \(maxValue)") }
        return (width, height, maxValue, values)
    }

    /// Reads and decodes a P5 file; messages name `path`.
    public static func read(_ path: String) throws(GlintError) -> (width: Int, height: Int, maxValue: Int, values: [UInt16]) {
        try decode(FileIO.read(path, limit: maxFileBytes), name: path)
    }
}

/// Splits the text header of a Netpbm-style file (PGM, PFM) into whitespace-separated tokens.
struct HeaderScanner {
    private let bytes: [UInt8]
    private let comments: Bool
    /// Offset of the next unread byte.
    private(set) var position = 0

    init(_ bytes: [UInt8], comments: Bool) {
        self.bytes = bytes
        self.comments = comments
    }

    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }

    /// The next token, or nil at the end of the data or when the token is implausibly long
    /// (binary junk rather than a header).
    mutating func token(maxLength: Int = 32) -> String? {
        while position < bytes.count {
            if Self.isSpace(bytes[position]) {
                position += 1
            } else if comments && bytes[position] == UInt8(ascii: "#") {
                while position < bytes.count && bytes[position] != 0x0A && bytes[position] != 0x0D { position += 1 }
            } else {
                break
            }
        }
        let start = position
        while position < bytes.count && !Self.isSpace(bytes[position]) {
            position += 1
            if position - start > maxLength { return nil }
        }
        return position > start ? String(decoding: bytes[start..<position], as: UTF8.self) : nil
    }

    /// Consumes the single whitespace byte that separates the header from binary data.
    mutating func skipOneSpace() -> Bool {
        guard position < bytes.count, Self.isSpace(bytes[position]) else { return false }
        position += 1
        return true
    }
}
