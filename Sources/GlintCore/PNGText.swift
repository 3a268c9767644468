import CPNG
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// PNG text chunks (tEXt): written by inserting chunks into the bytes libpng's simplified API
// produced (that API writes no text), read back by walking the file's chunks.
//
// A tEXt chunk is: length (4 bytes, big-endian, of the data only), "tEXt", the data, and a CRC-32
// of the type and data. The data is a keyword of 1 to 79 Latin-1 characters, a zero byte, then
// the text in Latin-1 (no zero byte; lines end in a single LF).

extension PNG {
    /// One tEXt chunk: a keyword and its text.
    public struct TextEntry: Sendable, Equatable, CustomStringConvertible {
        public var keyword: String
        public var text: String

        public init(keyword: String, text: String) {
            self.keyword = keyword
            self.text = text
        }

        public var description: String { "\(keyword): \(text)" }
    }

    /// The largest tEXt chunk written or read (its data: keyword, zero byte and text): 1 MiB.
    public static let maxTextChunkBytes = 1 << 20

    /// The most tEXt chunks a file may hold for `readText`/`text(in:)` (libpng's own default
    /// limit on cached ancillary chunks is 1000 too).
    public static let maxTextChunks = 1000

    /// `png` (a whole PNG file's bytes) with one tEXt chunk per entry inserted before its first
    /// IDAT chunk, in order. Keywords must be 1 to 79 printable Latin-1 characters without
    /// leading, trailing or double spaces; texts must be Latin-1 without zero characters.
    public static func addingText(_ entries: [TextEntry], to png: [UInt8]) throws(GlintError) -> [UInt8] {
        try addingText(entries, to: png, context: "cannot add PNG text")
    }

    /// The tEXt chunks of a PNG held in memory, in file order. `name` is only used in messages.
    public static func text(in bytes: [UInt8], name: String) throws(GlintError) -> [TextEntry] {
        try walkText(name: name) { (offset: Int, count: Int) throws(GlintError) -> [UInt8] in
            guard offset < bytes.count else { return [] }
            return Array(bytes[offset..<min(bytes.count, offset + count)])
        }
    }

    /// The tEXt chunks of a PNG file, in file order. Only the chunk headers and the tEXt chunks
    /// are read (the image data is skipped), so this is quick on large images. A tEXt chunk over
    /// `maxTextChunkBytes`, one whose CRC does not match, or a malformed one is refused with a
    /// one-line error naming `path`. Other chunks are not checked; a file that ends early
    /// yields the text chunks before the cut.
    public static func readText(_ path: String) throws(GlintError) -> [TextEntry] {
        let (fd, _) = try FileIO.openForReading(path)
        defer { close(fd) }
        return try walkText(name: path) { (offset: Int, count: Int) throws(GlintError) -> [UInt8] in
            try FileIO.read(fd, count: count, offset: offset, path: path)
        }
    }

    /// A hash (StableHash) of the image data of a PNG held in memory: its IDAT chunks' bytes in
    /// order. Text chunks do not enter it, so a tile records the hash of its own pixels.
    public static func imageDataHash(_ png: [UInt8], name: String) throws(GlintError) -> String {
        guard png.count >= 33, png[0..<8].elementsEqual(signature) else { throw GlintError("\(name) is not a PNG file") }
        var h = StableHash()
        var offset = 8
        while offset + 8 <= png.count {
            let length = Int(be32(png, offset))
            let type = Array(png[(offset + 4)..<(offset + 8)])
            guard length <= png.count - offset - 12 else { throw GlintError("cannot read \(name): truncated PNG (chunk at byte \(offset))") }
            if type == Array("IEND".utf8) { break }
            if type == Array("IDAT".utf8) {
                h.update(bytes: png[(offset + 8)..<(offset + 8 + length)])
            }
            offset += 12 + length
        }
        return h.hex
    }

    // MARK: - Internals

    /// Walks the chunks after the signature through `read(offset, count)` (which returns fewer
    /// bytes at the end of the data) and collects the tEXt chunks, up to IEND or the end.
    private static func walkText(name: String,
                                 read: (_ offset: Int, _ count: Int) throws(GlintError) -> [UInt8]) throws(GlintError) -> [TextEntry] {
        _ = try header(read(0, 33), name: name)
        var entries: [TextEntry] = []
        var offset = 8
        var chunks = 0
        while true {
            let head = try read(offset, 8)
            guard head.count == 8 else { break }
            let length = Int(be32(head, 0))
            let type = Array(head[4..<8])
            guard type.allSatisfy(isASCIILetter) else {
                throw GlintError("cannot read \(name): corrupt PNG (no chunk type at byte \(offset + 4))")
            }
            guard length <= 0x7FFF_FFFF else {
                throw GlintError("cannot read \(name): corrupt PNG (chunk \(typeName(type)) at byte \(offset) claims \(length) bytes)")
            }
            if type == Array("IEND".utf8) { break }
            if type == Array("tEXt".utf8) {
                guard length <= maxTextChunkBytes else {
                    throw GlintError("cannot read \(name): a tEXt chunk of \(length) bytes is over the \(maxTextChunkBytes)-byte limit")
                }
                let body = try read(offset + 8, length + 4)
                guard body.count == length + 4 else {
                    throw GlintError("cannot read \(name): truncated PNG (the tEXt chunk at byte \(offset) is cut short)")
                }
                let data = Array(body[0..<length])
                guard crc32(type + data) == be32(body, length) else {
                    throw GlintError("cannot read \(name): corrupt tEXt chunk at byte \(offset) (CRC mismatch)")
                }
                entries.append(try parseText(data, name: name, offset: offset))
                guard entries.count <= maxTextChunks else {
                    throw GlintError("cannot read \(name): more than \(maxTextChunks) tEXt chunks")
                }
            }
            chunks += 1
            guard chunks <= 1 << 20 else { throw GlintError("cannot read \(name): corrupt PNG (over a million chunks)") }
            offset += 12 + length
        }
        return entries
    }

    private static func parseText(_ data: [UInt8], name: String, offset: Int) throws(GlintError) -> TextEntry {
        guard let zero = data.firstIndex(of: 0) else {
            throw GlintError("cannot read \(name): corrupt tEXt chunk at byte \(offset) (no keyword separator)")
        }
        let keyword = latin1(data[..<zero])
        guard validKeyword(keyword) else {
            throw GlintError("cannot read \(name): corrupt tEXt chunk at byte \(offset) (bad keyword)")
        }
        let text = data[(zero + 1)...]
        guard !text.contains(0) else {
            throw GlintError("cannot read \(name): corrupt tEXt chunk at byte \(offset) (a zero byte in its text)")
        }
        return TextEntry(keyword: keyword, text: latin1(text))
    }

    static func addingText(_ entries: [TextEntry], to png: [UInt8], context: String) throws(GlintError) -> [UInt8] {
        guard !entries.isEmpty else { return png }
        let chunks = try textChunks(entries, context: context)
        // Before the first IDAT: the place every reader looks, and ahead of the image data.
        guard png.count >= 33, png[0..<8].elementsEqual(signature) else { throw GlintError("\(context): not a PNG") }
        var offset = 8
        while offset + 8 <= png.count {
            let type = Array(png[(offset + 4)..<(offset + 8)])
            if type == Array("IDAT".utf8) || type == Array("IEND".utf8) {
                return Array(png[..<offset]) + chunks + Array(png[offset...])
            }
            offset += 12 + Int(be32(png, offset))
        }
        throw GlintError("\(context): the PNG has no IDAT chunk")
    }

    /// The tEXt chunks of `entries`, in order, each checked (keyword, Latin-1, size).
    static func textChunks(_ entries: [TextEntry], context: String) throws(GlintError) -> [UInt8] {
        var chunks: [UInt8] = []
        for entry in entries {
            guard validKeyword(entry.keyword) else {
                throw GlintError("\(context): the keyword \(JSON.printable(entry.keyword, limit: 90)) is not 1 to 79 printable Latin-1 characters without leading, trailing or double spaces")
            }
            guard let text = latin1Bytes(entry.text), !text.contains(0) else {
                throw GlintError("\(context): the text of \(entry.keyword) is not Latin-1 without zero characters")
            }
            let data = latin1Bytes(entry.keyword)! + [0] + text
            guard data.count <= maxTextChunkBytes else {
                throw GlintError("\(context): the text of \(entry.keyword) (\(data.count) bytes) is over the \(maxTextChunkBytes)-byte limit")
            }
            chunks += chunk("tEXt", data)
        }
        return chunks
    }

    /// PNG keywords: 1 to 79 characters of Latin-1 32...126 or 161...255, with no leading,
    /// trailing or consecutive spaces.
    static func validKeyword(_ keyword: String) -> Bool {
        guard let bytes = latin1Bytes(keyword), (1...79).contains(bytes.count) else { return false }
        guard bytes.allSatisfy({ (32...126).contains($0) || $0 >= 161 }) else { return false }
        if bytes.first == 32 || bytes.last == 32 { return false }
        return !zip(bytes, bytes.dropFirst()).contains { $0 == 32 && $1 == 32 }
    }

    private static func latin1<C: Collection<UInt8>>(_ bytes: C) -> String {
        String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    private static func latin1Bytes(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.unicodeScalars.count)
        for s in text.unicodeScalars {
            guard s.value < 256 else { return nil }
            out.append(UInt8(s.value))
        }
        return out
    }

    private static func isASCIILetter(_ b: UInt8) -> Bool { (65...90).contains(b) || (97...122).contains(b) }

    private static func typeName(_ type: [UInt8]) -> String { String(decoding: type, as: UTF8.self) }

    private static func be32(_ bytes: [UInt8], _ i: Int) -> UInt32 {
        bytes[i..<(i + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func bytes32(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
    }

    /// CRC-32 of a chunk's type and data, as PNG defines it (ISO 3309; zlib's crc32).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: CPNG.crc32(0, $0.baseAddress, UInt32($0.count))) }
    }

    /// A whole chunk: length, type, data, CRC-32 of type and data.
    static func chunk<C: Collection<UInt8>>(_ type: String, _ data: C) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bytes32(UInt32(data.count)) + body + bytes32(crc32(body))
    }
}
