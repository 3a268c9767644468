/// Portable Float Map: a three-line text header, then raw 32-bit floats, rows from the bottom of
/// the image to the top. The header is exactly
///
///     PF or Pf            "PF" colour (3 floats a pixel), "Pf" grey (1)
///     WIDTH HEIGHT        two whole numbers, one space between
///     SCALE               a non-zero number: negative little-endian, positive big-endian
///
/// each line ended by one LF (0x0A; no CR), so the raster starts right after the scale's LF and
/// the file holds exactly header + width x height x channels x 4 bytes. The scale's magnitude is
/// read but not applied, as most tools do.
public enum PFM {
    /// Largest file `read` accepts: enough for any RGB image within `ImageLimits`.
    public static let maxFileBytes = 256 + ImageLimits.maxPixels * 12

    /// Encodes a colour ("PF") map, little-endian. Alpha is dropped: the format has no place for it.
    public static func encode(_ image: ImageF) throws(GlintError) -> [UInt8] {
        try encode(image, context: "cannot encode PFM")
    }

    /// Encodes one value a pixel (row-major, top row first) as a grey ("Pf") map, little-endian.
    public static func encodeGrey(width: Int, height: Int, values: [Float]) throws(GlintError) -> [UInt8] {
        do throws(GlintError) { try ImageLimits.check(width: width, height: height) } catch {
            throw GlintError("cannot encode PFM: \(error.message)")
        }
        guard values.count == width * height else {
            throw GlintError("cannot encode PFM: \(values.count) values for \(width)x\(height)")
        }
        let header = Array("Pf\n\(width) \(height)\n-1.0\n".utf8)
        var out = header
        out.reserveCapacity(header.count + values.count * 4)
        for fileRow in 0..<height {
            let row = height - 1 - fileRow   // bottom row first
            for x in 0..<width {
                let bits = values[row * width + x].bitPattern   // least significant byte first
                out.append(UInt8(truncatingIfNeeded: bits)); out.append(UInt8(truncatingIfNeeded: bits >> 8))
                out.append(UInt8(truncatingIfNeeded: bits >> 16)); out.append(UInt8(truncatingIfNeeded: bits >> 24))
            }
        }
        return out
    }

    /// Decodes "PF" (colour) or "Pf" (grey, copied to R, G and B); alpha is set to 1.
    /// The header must be exactly the one the format defines (see `PFM`), and the file exactly as
    /// long as it says; sizes are checked against `ImageLimits` and the length before the pixel
    /// buffer is allocated. `name` is only used in messages.
    public static func decode(_ bytes: [UInt8], name: String) throws(GlintError) -> ImageF {
        func fail(_ why: String) -> GlintError { GlintError("cannot read \(name): \(why)") }
        let (width, height, channels, littleEndian, start) = try header(bytes, name: name)
        let expected = width * height * channels * 4
        let found = bytes.count - start
        guard found >= expected else {
            throw fail("truncated PFM: \(expected) bytes of pixel data expected, \(found) found")
        }
        guard found == expected else {
            let extra = found - expected
            throw fail("\(extra) \(extra == 1 ? "byte" : "bytes") after the pixel data (a \(width)x\(height) \(channels == 3 ? "PF" : "Pf") file holds exactly \(start + expected) bytes; the header must end with a single \\n)")
        }
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

    /// Parses and checks the header (see `PFM`): the size, the channel count, the byte order and
    /// where the raster starts. Throws the one-line message for a bad header or an image over
    /// `ImageLimits.inputPixels`.
    static func header(_ bytes: [UInt8], name: String) throws(GlintError) -> (width: Int, height: Int, channels: Int, littleEndian: Bool, start: Int) {
        func fail(_ why: String) -> GlintError { GlintError("cannot read \(name): \(why)") }
        var header = StrictHeader(bytes: bytes)
        guard bytes.count >= 3, bytes[0] == UInt8(ascii: "P"), bytes[1] == UInt8(ascii: "F") || bytes[1] == UInt8(ascii: "f"),
              StrictHeader.isSpace(bytes[2]) else {
            throw fail("not a PFM file")
        }
        let channels = bytes[1] == UInt8(ascii: "F") ? 3 : 1
        header.position = 2
        guard header.lineEnd() else {
            throw fail(header.crMessage ?? "bad PFM header: \"\(channels == 3 ? "PF" : "Pf")\" must be alone on the first line, ended by \\n")
        }

        // Line 2: WIDTH HEIGHT, one space between.
        let line2 = header.position
        let widthText = header.token()
        let heightText = header.consume(UInt8(ascii: " ")) ? header.token() : []
        let sizeLine = !widthText.isEmpty && !heightText.isEmpty
            && widthText.count <= StrictHeader.maxToken && heightText.count <= StrictHeader.maxToken
        if sizeLine && !(StrictHeader.isDigits(widthText) && StrictHeader.isDigits(heightText)) {
            throw fail("bad PFM header: width and height must be whole numbers")
        }
        guard sizeLine, header.lineEnd() else {
            throw fail(header.crMessage ?? "bad PFM header: the size line must be \"WIDTH HEIGHT\" (two whole numbers, one space between, then \\n), found \(header.excerpt(from: line2))")
        }
        let (w, h) = (String(decoding: widthText, as: UTF8.self), String(decoding: heightText, as: UTF8.self))
        guard widthText.count <= 9, heightText.count <= 9, let width = Int(w), let height = Int(h) else {
            throw fail("image size \(w)x\(h) is over the limit of \(ImageLimits.maxSide) pixels a side")
        }
        do throws(GlintError) { try ImageLimits.checkInput(width: width, height: height) } catch { throw fail(error.message) }

        // Line 3: SCALE, then the single \n before the raster.
        let line3 = header.position
        let scaleText = header.token()
        guard !scaleText.isEmpty, scaleText.count <= StrictHeader.maxToken else {
            throw fail("bad PFM header: the scale line must be one number followed by \\n, found \(header.excerpt(from: line3))")
        }
        guard let scale = StrictHeader.decimal(scaleText), scale.isFinite, scale != 0 else {
            throw fail("bad PFM header: the scale must be a non-zero number")
        }
        guard header.position < bytes.count else { throw fail("bad PFM header: no whitespace before the pixel data") }
        guard header.lineEnd() else {
            throw fail(header.crMessage ?? "bad PFM header: the scale line must be one number followed by \\n, found \(header.excerpt(from: line3))")
        }

        return (width, height, channels, scale < 0, header.position)
    }

    /// Reads and decodes a PFM file; messages name `path`.
    /// Width and height from a PFM file's header (its first 64 bytes; no pixels read).
    public static func size(_ path: String) throws(GlintError) -> (width: Int, height: Int) {
        let h = try header(FileIO.readHead(path, count: 64), name: path)
        return (h.width, h.height)
    }

    public static func read(_ path: String) throws(GlintError) -> ImageF {
        // The header (about 100 bytes at most) bounds the read to what it promises, plus a
        // little so that a few stray bytes after the raster get `decode`'s precise message.
        let bytes = try FileIO.read(path, head: 512) { head throws(GlintError) in
            let h = try header(head, name: path)
            return h.start + h.width * h.height * h.channels * 4 + 4096
        }
        return try decode(bytes, name: path)
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

/// Reads the PFM header byte by byte, exactly as the format defines it (no token skipping:
/// whitespace is where the format puts it or the header is refused).
private struct StrictHeader {
    let bytes: [UInt8]
    var position = 0
    /// Set when a line ended with CR: the message for it.
    private(set) var crMessage: String?

    /// Longest number token read (a header number needs far fewer characters).
    static let maxToken = 32

    init(bytes: [UInt8]) { self.bytes = bytes }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }
    static func isDigits(_ t: [UInt8]) -> Bool { t.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }

    /// A decimal number: [+-]? digits [. digits] [(e|E) [+-]? digits] (no hex, inf or nan).
    static func decimal(_ t: [UInt8]) -> Double? {
        var i = 0, digits = 0
        func isDigit(_ k: Int) -> Bool { k < t.count && t[k] >= UInt8(ascii: "0") && t[k] <= UInt8(ascii: "9") }
        if i < t.count, t[i] == UInt8(ascii: "+") || t[i] == UInt8(ascii: "-") { i += 1 }
        while isDigit(i) { i += 1; digits += 1 }
        if i < t.count, t[i] == UInt8(ascii: ".") {
            i += 1
            while isDigit(i) { i += 1; digits += 1 }
        }
        guard digits > 0 else { return nil }
        if i < t.count, t[i] == UInt8(ascii: "e") || t[i] == UInt8(ascii: "E") {
            i += 1
            if i < t.count, t[i] == UInt8(ascii: "+") || t[i] == UInt8(ascii: "-") { i += 1 }
            guard isDigit(i) else { return nil }
            while isDigit(i) { i += 1 }
        }
        guard i == t.count else { return nil }
        return Double(String(decoding: t, as: UTF8.self))
    }

    /// The bytes up to the next whitespace (at most `maxToken + 1` of them: longer is junk).
    mutating func token() -> [UInt8] {
        let start = position
        while position < bytes.count, !Self.isSpace(bytes[position]), position - start <= Self.maxToken { position += 1 }
        return Array(bytes[start..<position])
    }

    mutating func consume(_ b: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == b else { return false }
        position += 1
        return true
    }

    /// Consumes the LF that ends a header line; false (noting a CR) when the next byte is not LF.
    mutating func lineEnd() -> Bool {
        if position < bytes.count, bytes[position] == 0x0D {
            crMessage = "bad PFM header: a line ends with \\r (CR); PFM header lines end with a single \\n (LF)"
        }
        return consume(0x0A)
    }

    /// The header text from `start` to the end of its line, quoted for a message (escaped, at
    /// most 24 characters).
    func excerpt(from start: Int) -> String {
        var end = start
        while end < bytes.count, bytes[end] != 0x0A, end - start < 96 { end += 1 }
        return JSON.quotedForMessage(String(decoding: bytes[start..<end], as: UTF8.self), limit: 24)
    }
}
