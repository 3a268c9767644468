import Foundation
import GlintCore
import GlintTestSupport
import Testing

// PNG text chunks: written into the encoder's bytes before the image data, read back from memory
// and from files; every chunk's CRC valid, the decoder unaffected, and bad text chunks refused.

/// The chunks of a PNG: offset, type, data and whether the stored CRC matches (checked with the
/// test support's own bit-by-bit CRC, not the library's).
private func chunks(_ png: [UInt8]) -> [(offset: Int, type: String, data: [UInt8], crcOK: Bool)] {
    var out: [(Int, String, [UInt8], Bool)] = []
    var o = 8
    while o + 12 <= png.count {
        let length = Int(bigEndian32(png, at: o))
        guard o + 12 + length <= png.count else { break }
        let type = String(decoding: png[(o + 4)..<(o + 8)], as: UTF8.self)
        let data = Array(png[(o + 8)..<(o + 8 + length)])
        out.append((o, type, data, chunkCRC(png[(o + 4)..<(o + 8 + length)]) == bigEndian32(png, at: o + 8 + length)))
        o += 12 + length
    }
    return out
}

private func sampleImage() -> Image8 {
    makeImage(width: 13, height: 7) { x, y in SIMD4(UInt8(x * 19), UInt8(y * 31), UInt8((x * y) & 255), 255) }
}

private func temporaryFile(_ bytes: [UInt8]) throws -> String {
    let path = "/tmp/glint-pngtext-\(UUID().uuidString).png"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
}

private func textError(_ bytes: [UInt8]) -> String? {
    do {
        _ = try PNG.text(in: bytes, name: "t.png")
        return nil
    } catch {
        return error.message
    }
}

/// `png` with its first tEXt chunk's data replaced (length and CRC rewritten unless `keepCRC`).
private func replacingText(_ png: [UInt8], with data: [UInt8], keepCRC: Bool = false) throws -> [UInt8] {
    let text = try #require(chunks(png).first { $0.type == "tEXt" })
    var chunk: [UInt8] = [0, 0, 0, 0] + Array("tEXt".utf8) + data + [0, 0, 0, 0]
    putBigEndian32(UInt32(data.count), into: &chunk, at: 0)
    let crc = keepCRC ? bigEndian32(png, at: text.offset + 8 + text.data.count) : chunkCRC(chunk[4..<(8 + data.count)])
    putBigEndian32(crc, into: &chunk, at: 8 + data.count)
    return Array(png[..<text.offset]) + chunk + Array(png[(text.offset + 12 + text.data.count)...])
}

@Suite("PNG text chunks")
struct PNGTextTests {
    static let entries = [
        PNG.TextEntry(keyword: "glint:view", text: "version=1\nformula=mandelbrot\ncenter=-0.75,0.0\nzoom=1e100\n"),
        PNG.TextEntry(keyword: "Comment", text: "Latin-1 too: caf\u{E9} \u{B5}"),
    ]

    @Test("8-bit: the entries come back in order, every CRC is valid, the pixels decode unchanged")
    func roundTrip8() throws {
        let image = sampleImage()
        let plain = try PNG.encode(image, alpha: false)
        let png = try PNG.encode(image, alpha: false, text: Self.entries)
        #expect(try PNG.text(in: png, name: "t.png") == Self.entries)
        #expect(try PNG.text(in: plain, name: "plain.png") == [])
        let all = chunks(png)
        #expect(all.allSatisfy { $0.crcOK }, "\(all.map { ($0.type, $0.crcOK) })")
        let types = all.map(\.type)
        #expect(types.filter { $0 == "tEXt" }.count == 2)
        let firstIDAT = try #require(types.firstIndex(of: "IDAT"))
        #expect(types.lastIndex(of: "tEXt")! < firstIDAT, "the text goes before the image data: \(types)")
        #expect(types.last == "IEND")
        // Only the text chunks were added.
        #expect(png.count == plain.count + Self.entries.reduce(0) { $0 + 12 + $1.keyword.count + 1 + $1.text.unicodeScalars.count })
        let decoded = try PNG.decode(png, name: "t.png")
        #expect(decoded.pixels == (try PNG.decode(plain, name: "plain.png")).pixels)
        #expect(decoded.pixels == image.pixels)
    }

    @Test("16-bit and RGBA: text written and read; the file reader skips the image data")
    func roundTrip16AndFile() throws {
        let image = sampleImage()
        let rgba16 = image.pixels.map { UInt16($0) * 257 }
        let png16 = try PNG.encode16(width: image.width, height: image.height, rgba16: rgba16, alpha: false, text: Self.entries)
        #expect(try PNG.text(in: png16, name: "16.png") == Self.entries)
        #expect(chunks(png16).allSatisfy { $0.crcOK })
        _ = try PNG.decode(png16, name: "16.png")

        let path = try temporaryFile(png16)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try PNG.readText(path) == Self.entries)
        #expect(try PNG.read(path).width == image.width)

        // write(...) with text, then both readers.
        let written = "/tmp/glint-pngtext-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: written) }
        try PNG.write(image, to: written, alpha: true, text: [Self.entries[0]])
        #expect(try PNG.readText(written) == [Self.entries[0]])
        #expect(try PNG.read(written).pixels == image.pixels)
    }

    @Test("a text chunk whose CRC does not match is refused, naming the file; the decoder still reads the image")
    func corruptCRC() throws {
        var png = try PNG.encode(sampleImage(), alpha: false, text: [Self.entries[0]])
        let text = try #require(chunks(png).first { $0.type == "tEXt" })
        png[text.offset + 8 + 12] ^= 0x20  // one letter of the text flipped; the CRC kept
        let message = try #require(textError(png))
        #expect(message.contains("t.png") && message.contains("CRC"), "\(message)")
        #expect(!message.contains("\n"))
        let path = try temporaryFile(png)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: GlintError.self) { try PNG.readText(path) }
        // libpng skips an ancillary chunk with a bad CRC: the pixels are unaffected.
        #expect(try PNG.decode(png, name: "t.png").pixels == sampleImage().pixels)
    }

    @Test("malformed text chunks are refused with one line each")
    func malformed() throws {
        let png = try PNG.encode(sampleImage(), alpha: false, text: [Self.entries[0]])
        // No zero byte between keyword and text.
        let noSeparator = try replacingText(png, with: Array("glint:view-without-separator".utf8))
        #expect(textError(noSeparator)?.contains("separator") == true, "\(textError(noSeparator) ?? "no error")")
        // An empty keyword.
        let noKeyword = try replacingText(png, with: [0] + Array("text".utf8))
        #expect(textError(noKeyword)?.contains("keyword") == true)
        // A second zero byte in the text.
        let zero = try replacingText(png, with: Array("k".utf8) + [0, 65, 0, 66])
        #expect(textError(zero)?.contains("zero") == true)
        // A chunk over the 1 MiB limit is refused before its data is read.
        let big = try replacingText(png, with: Array("k".utf8) + [0] + [UInt8](repeating: 65, count: PNG.maxTextChunkBytes))
        let message = try #require(textError(big))
        #expect(message.contains("limit"), "\(message)")
        let path = try temporaryFile(big)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: GlintError.self) { try PNG.readText(path) }
        // Cut inside the text chunk.
        let text = try #require(chunks(png).first { $0.type == "tEXt" })
        #expect(textError(Array(png[..<(text.offset + 20)]))?.contains("truncated") == true)
        // Not a PNG at all.
        #expect(textError(Array("just text, no PNG".utf8))?.contains("not a PNG") == true)
    }

    @Test("what tEXt cannot hold is refused when writing")
    func refusedOnWrite() throws {
        let image = sampleImage()
        for keyword in ["", String(repeating: "k", count: 80), " lead", "trail ", "two  spaces", "tab\there", "\u{263A}"] {
            #expect(throws: GlintError.self, "keyword \(keyword.debugDescription)") {
                try PNG.encode(image, text: [PNG.TextEntry(keyword: keyword, text: "x")])
            }
        }
        #expect(throws: GlintError.self, "not Latin-1") { try PNG.encode(image, text: [PNG.TextEntry(keyword: "k", text: "\u{263A}")]) }
        #expect(throws: GlintError.self, "zero byte") { try PNG.encode(image, text: [PNG.TextEntry(keyword: "k", text: "a\u{0}b")]) }
        let tooLong = String(repeating: "x", count: PNG.maxTextChunkBytes)
        #expect(throws: GlintError.self, "over 1 MiB") { try PNG.encode(image, text: [PNG.TextEntry(keyword: "k", text: tooLong)]) }
        // 79 characters is the longest keyword.
        let longest = PNG.TextEntry(keyword: String(repeating: "k", count: 79), text: "")
        #expect(try PNG.text(in: PNG.encode(image, text: [longest]), name: "k.png") == [longest])
    }
}
