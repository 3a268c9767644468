/// Portable Float Map: a three-line text header ("PF" or "Pf", "width height", scale), one
/// whitespace byte, then raw 32-bit floats, rows from the bottom of the image to the top.
/// The sign of the scale gives the byte order (negative: little-endian); its magnitude is
/// read but not applied, as most tools do.
public enum PFM {
    /// Largest file `read` accepts: enough for any RGB image within `ImageLimits`.
    public static let maxFileBytes = 256 + ImageLimits.maxPixels * 12

    /// Encodes a colour ("PF") map, little-endian. Alpha is dropped: the format has no place for it.
    public static func encode(_ image: ImageF) throws(GlintError) -> [UInt8] {
        try encode(image, context: "cannot encode PFM")
    }

    /// Decodes "PF" (colour) or "Pf" (grey, copied to R, G and B); alpha is set to 1.
    /// The header is validated and the size checked against `ImageLimits` before the pixel buffer
    /// is allocated. `name` is only used in messages.
    public static func decode(_ bytes: [UInt8], name: String) throws(GlintError) -> ImageF {
        func fail(_ why: String) -> GlintError { GlintError("cannot read \(name): \(why)") }
        var header = HeaderScanner(bytes, comments: false)
        guard let magic = header.token(), magic == "PF" || magic == "Pf" else { throw fail("not a PFM file") }
        let channels = magic == "PF" ? 3 : 1
        guard let width = header.token().flatMap({ Int($0) }), let height = header.token().flatMap({ Int($0) }) else {
            throw fail("bad PFM header: width and height must be whole numbers")
        }
        guard let scale = header.token().flatMap({ Double($0) }), scale.isFinite, scale != 0 else {
            throw fail("bad PFM header: the scale must be a non-zero number")
        }
        guard header.skipOneSpace() else { throw fail("bad PFM header: no whitespace before the pixel data") }
        do throws(GlintError) { try ImageLimits.check(width: width, height: height) } catch { throw fail(error.message) }

        let expected = width * height * channels * 4
        let found = bytes.count - header.position
        guard found >= expected else {
            throw fail("truncated PFM: \(expected) bytes of pixel data expected, \(found) found")
        }
        let littleEndian = scale < 0
        let start = header.position
        let pixels = [Float](unsafeUninitializedCapacity: width * height * 4) { out, count in
            bytes.withUnsafeBytes { raw in
                for fileRow in 0..<height {
                    let y = height - 1 - fileRow
                    for x in 0..<width {
                        let src = start + (fileRow * width + x) * channels * 4
                        let dst = (y * width + x) * 4
                        for c in 0..<3 {
                            let bits = raw.loadUnaligned(fromByteOffset: src + (channels == 3 ? c * 4 : 0), as: UInt32.self)
                            out[dst + c] = Float(bitPattern: littleEndian ? UInt32(littleEndian: bits) : UInt32(bigEndian: bits))
                        }
                        out[dst + 3] = 1
                    }
                }
            }
            count = width * height * 4
        }
        return ImageF(width: width, height: height, pixels: pixels)
    }

    /// Reads and decodes a PFM file; messages name `path`.
    public static func read(_ path: String) throws(GlintError) -> ImageF {
        try decode(FileIO.read(path, limit: maxFileBytes), name: path)
    }

    /// Writes a colour PFM (see `encode`) to a temporary name, then renames it to `path`.
    public static func write(_ image: ImageF, to path: String) throws(GlintError) {
        try FileIO.writeAtomically(path, encode(image, context: "cannot write \(path)"))
    }

    private static func encode(_ image: ImageF, context: String) throws(GlintError) -> [UInt8] {
        do throws(GlintError) { try ImageLimits.check(width: image.width, height: image.height) } catch {
            throw GlintError("\(context): \(error.message)")
        }
        let (width, height) = (image.width, image.height)
        let header = Array("PF\n\(width) \(height)\n-1.0\n".utf8)
        let total = header.count + width * height * 12
        return [UInt8](unsafeUninitializedCapacity: total) { out, count in
            let raw = UnsafeMutableRawBufferPointer(out)
            raw.copyBytes(from: header)
            image.pixels.withUnsafeBufferPointer { src in
                var offset = header.count
                for fileRow in 0..<height {
                    let rowStart = (height - 1 - fileRow) * width * 4  // bottom row first
                    for i in stride(from: rowStart, to: rowStart + width * 4, by: 4) {
                        for c in 0..<3 {
                            raw.storeBytes(of: src[i + c].bitPattern.littleEndian, toByteOffset: offset, as: UInt32.self)
                            offset += 4
                        }
                    }
                }
            }
            count = total
        }
    }
}
