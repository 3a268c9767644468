import CPNG
import Foundation
import GlintCore
import GlintTestSupport
import Testing

// MARK: - Helpers

/// A fresh directory under /tmp, removed by the caller with `removeDirectory`.
private func makeTempDirectory() throws -> String {
    let path = "/tmp/glint-core-tests-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    return path
}

private func removeDirectory(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

private func noiseImage(width: Int, height: Int, seed: UInt64) -> Image8 {
    var rng = SplitMix64(seed: seed)
    return Image8(width: width, height: height, pixels: (0..<width * height * 4).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
}

/// IHDR bit depth and colour type (6 = RGBA, 2 = RGB).
private func ihdrDepthAndColourType(_ png: [UInt8]) -> (UInt8, UInt8) { (png[24], png[25]) }

/// Independent check on 16-bit output: libpng's own linear read, premultiplied RGBA or RGB.
private func libpngLinear16(_ png: [UInt8], alpha: Bool) -> [UInt16]? {
    var image = png_image()
    image.version = UInt32(PNG_IMAGE_VERSION)
    defer { png_image_free(&image) }
    return png.withUnsafeBytes { raw -> [UInt16]? in
        guard png_image_begin_read_from_memory(&image, raw.baseAddress, raw.count) != 0 else { return nil }
        image.format = UInt32(PNG_FORMAT_FLAG_LINEAR) | UInt32(PNG_FORMAT_FLAG_COLOR) | (alpha ? UInt32(PNG_FORMAT_FLAG_ALPHA) : 0)
        let channels = alpha ? 4 : 3
        var out = [UInt16](repeating: 0, count: Int(image.width) * Int(image.height) * channels)
        let ok = out.withUnsafeMutableBytes {
            png_image_finish_read(&image, nil, $0.baseAddress, Int32(Int(image.width) * channels), nil)
        }
        return ok != 0 ? out : nil
    }
}

/// Runs `body`, expecting a GlintError; returns its message (nil, and a recorded issue, if none).
private func errorMessage<T>(_ body: () throws(GlintError) -> T) -> String? {
    do {
        _ = try body()
        Issue.record("expected a GlintError")
        return nil
    } catch {
        #expect(!error.message.contains("\n"), "messages must be one line: \(error.message)")
        return error.message
    }
}

// MARK: - Image types and limits

@Test func imageAccessorsAndConversions() {
    var image = ImageF(width: 3, height: 2)
    image[2, 1] = SIMD4(-1, 0.5, 2, .nan)
    image[0, 0] = SIMD4(0, 1, 127.0 / 255, 0.25)
    #expect(image.pixels[(1 * 3 + 2) * 4 + 1] == 0.5)
    let bytes = image.to8Bit()
    #expect(bytes[2, 1] == SIMD4(0, 128, 255, 0))  // clamped, 127.5 rounds up, NaN becomes 0
    #expect(bytes[0, 0] == SIMD4(0, 255, 127, 64))
    #expect(bytes.toFloat()[0, 0] == SIMD4(0, 1, Float(127) / 255, Float(64) / 255))
    #expect(Image8(width: 2, height: 2).pixels == [UInt8](repeating: 0, count: 16))
}

@Test func imageLimitMessages() {
    #expect(errorMessage { () throws(GlintError) in try ImageLimits.check(width: 0, height: 10) }
        == "image size 0x10 is invalid: width and height must be at least 1")
    #expect(errorMessage { () throws(GlintError) in try ImageLimits.check(width: 40000, height: 40000) }
        == "image size 40000x40000 is over the limit of 32768 pixels a side")
    #expect(errorMessage { () throws(GlintError) in try ImageLimits.check(width: 20000, height: 20000) }
        == "image size 20000x20000 is over the limit of 268435456 pixels")
    #expect(throws: Never.self) {
        try ImageLimits.check(width: 1, height: 1)
        try ImageLimits.check(width: 32768, height: 8192)  // exactly maxPixels
    }
}

// MARK: - PNG

@Test func png8BitRGBARoundTripIsExact() throws {
    let image = noiseImage(width: 37, height: 23, seed: 1)
    let png = try PNG.encode(image)
    #expect(ihdrDepthAndColourType(png) == (8, 6))
    #expect(try PNG.decode(png, name: "noise.png") == image)
}

@Test func png8BitRGBRoundTripIsExact() throws {
    let image = noiseImage(width: 16, height: 9, seed: 2)
    let png = try PNG.encode(image, alpha: false)
    #expect(ihdrDepthAndColourType(png) == (8, 2))
    var opaque = image
    for i in stride(from: 3, to: opaque.pixels.count, by: 4) { opaque.pixels[i] = 255 }
    #expect(try PNG.decode(png, name: "noise.png") == opaque)
}

/// Every compression mode stores the same pixels; fast trades size for time (PNGFastWriter:
/// no row filters, so a smooth gradient, which the default's filters turn into near-zeros, comes
/// out larger); auto is fast from 4 megapixels on.
@Test func pngCompressionModesStoreTheSamePixels() throws {
    let (w, h) = (300, 200)
    var pixels = [UInt8](repeating: 255, count: w * h * 4)
    for y in 0..<h {
        for x in 0..<w {
            let i = (y * w + x) * 4
            (pixels[i], pixels[i + 1], pixels[i + 2]) = (UInt8(x * 255 / (w - 1)), UInt8(y * 255 / (h - 1)), UInt8((x + y) % 256))
        }
    }
    let gradient = Image8(width: w, height: h, pixels: pixels)
    for image in [gradient, noiseImage(width: 97, height: 61, seed: 5)] {
        var files: [PNG.Compression: [UInt8]] = [:]
        for mode in PNG.Compression.allCases {
            for alpha in [true, false] {
                let png = try PNG.encode(image, alpha: alpha, compression: mode)
                let back = try PNG.decode(png, name: "\(mode)")
                let expected = alpha ? image.pixels : image.pixels.enumerated().map { $0.offset % 4 == 3 ? 255 : $0.element }
                #expect(back.pixels == expected, "\(mode), alpha \(alpha)")
                if alpha { files[mode] = png }
            }
        }
        // Small images: auto writes what default writes, byte for byte.
        #expect(files[.auto] == files[.default])
        if image.width == w { #expect(files[.fast]!.count > files[.default]!.count, "fast keeps no row filters") }
    }
    #expect(PNG.Compression.auto.isFast(pixels: 3840 * 2160) && !PNG.Compression.auto.isFast(pixels: 1920 * 1080))
    #expect(PNG.Compression.fast.isFast(pixels: 1) && !PNG.Compression.default.isFast(pixels: 1 << 30))
}

/// The fast writer compresses the rows in parts at once and joins them into one zlib stream:
/// libpng decodes every size (one row, one part, many parts, parts larger than the writer's
/// buffers, more than one IDAT chunk) to the pixels given, with the chunks libpng's writer
/// gives an 8-bit image and the text chunks in front of the image data.
@Test func pngFastWriterJoinsItsPartsIntoOneStream() throws {
    func chunks(_ png: [UInt8]) -> [(type: String, data: [UInt8])] {
        var out: [(String, [UInt8])] = []
        var i = 8
        while i + 12 <= png.count {
            let n = png[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) }
            out.append((String(decoding: png[(i + 4)..<(i + 8)], as: UTF8.self), Array(png[(i + 8)..<(i + 8 + n)])))
            i += 12 + n
        }
        return out
    }
    let text = [PNG.TextEntry(keyword: "Comment", text: "parts")]
    for (w, h, seed) in [(1, 1, 1), (5, 31, 2), (97, 200, 3), (700, 520, 4), (6000, 64, 5)] {
        let image = noiseImage(width: w, height: h, seed: UInt64(seed))
        for alpha in [true, false] {
            let png = try PNG.encode(image, alpha: alpha, text: text, compression: .fast)
            let back = try PNG.decode(png, name: "fast.png")
            let expected = alpha ? image.pixels : image.pixels.enumerated().map { $0.offset % 4 == 3 ? 255 : $0.element }
            #expect(back.pixels == expected, "\(w)x\(h), alpha \(alpha)")
            let list = chunks(png)
            let types = list.map(\.type).filter { $0 != "IDAT" }
            #expect(types == ["IHDR", "sRGB", "tEXt", "IEND"], "\(types)")
            #expect(list.firstIndex { $0.type == "IDAT" }! > list.firstIndex { $0.type == "tEXt" }!)
            #expect(try PNG.text(in: png, name: "fast.png") == text)
            if w == 6000 { #expect(list.filter { $0.type == "IDAT" }.count > 1, "a part over 1 MiB spans IDAT chunks") }
        }
    }
    // A smooth picture of 200 rows is several parts: each part but the last ends in a sync
    // flush, an empty stored block (00 00 FF FF) on a byte boundary.
    let (w, h) = (300, 200)
    var pixels = [UInt8](repeating: 255, count: w * h * 4)
    for y in 0..<h { for x in 0..<w { pixels[(y * w + x) * 4] = UInt8(x * 255 / (w - 1)); pixels[(y * w + x) * 4 + 1] = UInt8(y) } }
    let gradient = Image8(width: w, height: h, pixels: pixels)
    let png = try PNG.encode(gradient, compression: .fast)
    #expect(try PNG.decode(png, name: "gradient.png") == gradient)
    let stream = chunks(png).filter { $0.type == "IDAT" }.flatMap(\.data)
    #expect(Array(stream.prefix(2)) == [0x78, 0x01])
    let flushes = (0..<(stream.count - 3)).filter { stream[$0] == 0 && stream[$0 + 1] == 0 && stream[$0 + 2] == 0xFF && stream[$0 + 3] == 0xFF }
    #expect(flushes.count >= 1, "the rows were compressed as one part")
    // zlib itself reads the joined stream to its end and checks its Adler-32.
    var rows = [UInt8](repeating: 0, count: h * (1 + w * 4) + 1)
    var size = UInt(rows.count)
    let status = uncompress(&rows, &size, stream, UInt(stream.count))
    #expect(status == Z_OK && Int(size) == h * (1 + w * 4), "zlib: \(status), \(size) bytes")
}

@Test func png16BitRoundTripIsExact() throws {
    let (w, h) = (11, 7)
    var rng = SplitMix64(seed: 3)
    var rgba = (0..<w * h * 4).map { _ in UInt16(truncatingIfNeeded: rng.next()) }
    for i in stride(from: 3, to: rgba.count, by: 4) { rgba[i] = 65535 }
    rgba[0] = 0; rgba[1] = 1; rgba[2] = 65535

    let withAlpha = try PNG.encode16(width: w, height: h, rgba16: rgba, alpha: true)
    #expect(ihdrDepthAndColourType(withAlpha) == (16, 6))
    #expect(libpngLinear16(withAlpha, alpha: true) == rgba)

    let rgbOnly = try PNG.encode16(width: w, height: h, rgba16: rgba, alpha: false)
    #expect(ihdrDepthAndColourType(rgbOnly) == (16, 2))
    let rgb = (0..<w * h * 4).filter { $0 % 4 != 3 }.map { rgba[$0] }
    #expect(libpngLinear16(rgbOnly, alpha: false) == rgb)

    // Read back through the 8-bit path, libpng encodes linear light as sRGB.
    let eight = try PNG.decode(rgbOnly, name: "deep.png")
    #expect(eight[0, 0] == SIMD4(0, 0, 255, 255))
}

@Test func png16BitTakesStraightAlpha() throws {
    // Straight colour 40000 at half coverage: libpng hands it back premultiplied, about 20000.
    let rgba: [UInt16] = [40000, 65535, 0, 32768, 1000, 2000, 3000, 65535]
    let png = try PNG.encode16(width: 2, height: 1, rgba16: rgba, alpha: true)
    let back = try #require(libpngLinear16(png, alpha: true))
    #expect(abs(Int(back[0]) - 20000) <= 2 && abs(Int(back[1]) - 32768) <= 2 && back[2] == 0 && back[3] == 32768)
    #expect(Array(back[4...]) == [1000, 2000, 3000, 65535])
}

@Test func pngFileWriteAndRead() throws {
    let dir = try makeTempDirectory()
    defer { removeDirectory(dir) }
    let image = noiseImage(width: 5, height: 4, seed: 4)
    try PNG.write(image, to: "\(dir)/out.png")
    try PNG.write16(width: 1, height: 1, rgba16: [1, 2, 3, 4], alpha: true, to: "\(dir)/deep.png")
    #expect(try PNG.read("\(dir)/out.png") == image)
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["deep.png", "out.png"])
    #expect(errorMessage { () throws(GlintError) in try PNG.read("\(dir)/missing.png") }
        == "cannot open \(dir)/missing.png: No such file or directory")
    #expect(errorMessage { () throws(GlintError) in try PNG.write(Image8(width: 0, height: 3), to: "\(dir)/empty.png") }
        == "cannot write \(dir)/empty.png: image size 0x3 is invalid: width and height must be at least 1")
}

/// Free space by path, for a folder that is still to be made as for one that exists: the
/// file system's own figure (statvfs, as df shows it).
@Test func freeBytesOfAPathNotMadeYet() throws {
    let dir = try makeTempDirectory()
    defer { removeDirectory(dir) }
    let there = try #require(FileIO.freeBytes(dir))
    let later = try #require(FileIO.freeBytes("\(dir)/a/b/frames"))
    #expect(there > 0 && later > 0)
    let attributes = try FileManager.default.attributesOfFileSystem(forPath: dir)
    let foundation = try #require((attributes[.systemFreeSize] as? NSNumber)?.uint64Value)
    // Other writers share the disk: the figures agree within what they may write meanwhile.
    for figure in [there, later] { #expect(figure <= foundation + (64 << 20) && figure + (64 << 20) >= foundation / 2) }
    #expect(FileIO.freeBytes("relative/not/here") != nil)
}

@Test func pngRejectsFilesThatAreNotPNG() throws {
    let dir = try makeTempDirectory()
    defer { removeDirectory(dir) }
    try Data("hello, not an image\n".utf8).write(to: URL(fileURLWithPath: "\(dir)/texture.png"))
    #expect(errorMessage { () throws(GlintError) in try PNG.read("\(dir)/texture.png") }
        == "cannot read \(dir)/texture.png: not a PNG file")
    #expect(errorMessage { () throws(GlintError) in try PNG.decode([], name: "empty.png") }
        == "cannot read empty.png: not a PNG file")
}

@Test func pngRejectsTruncatedData() throws {
    let png = try PNG.encode(noiseImage(width: 64, height: 64, seed: 5))
    // Cuts inside IHDR, in the chunk after it, halfway, and in the last IDAT chunk's CRC.
    for cut in [png.count / 2, 20, 40, png.count - 13] {
        let message = try #require(errorMessage { () throws(GlintError) in try PNG.decode(Array(png[..<cut]), name: "x.png") })
        #expect(message == "cannot read x.png: corrupt or truncated PNG (libpng: read beyond end of data)")
    }
    // The simplified reader stops once the pixels are complete and never looks at IEND, so losing
    // only that 12-byte trailer is tolerated; nothing of the image is missing then.
    #expect(try PNG.decode(Array(png.dropLast(12)), name: "x.png") == PNG.decode(png, name: "x.png"))
}

@Test func pngChecksHeaderSizeBeforeAllocating() throws {
    // The CRC helper must agree with libpng, or the forged files below would fail for the wrong reason.
    let real = try PNG.encode(Image8(width: 3, height: 2))
    #expect(chunkCRC(real[12..<29]) == bigEndian32(real, at: 29))
    #expect(try PNG.decode(forgedPNG(width: 1, height: 1), name: "ok.png") == Image8(width: 1, height: 1))

    #expect(errorMessage { () throws(GlintError) in try PNG.decode(forgedPNG(width: 100_000, height: 100_000), name: "big.png") }
        == "cannot read big.png: image size 100000x100000 is over the limit of 32768 pixels a side")
    #expect(errorMessage { () throws(GlintError) in try PNG.decode(forgedPNG(width: 20000, height: 20000), name: "big.png") }
        == "cannot read big.png: image size 20000x20000 is over the limit of 268435456 pixels")
    // libpng itself refuses a zero width and sizes past its own limits.
    for (w, h) in [(0, 1), (1, 0), (3_000_000, 1), (0x8000_0000, 1)] as [(UInt32, UInt32)] {
        let message = try #require(errorMessage { () throws(GlintError) in try PNG.decode(forgedPNG(width: w, height: h), name: "bad.png") })
        #expect(message.hasPrefix("cannot read bad.png: "), "\(message)")
    }
}

@Test func pngSurvivesDamagedData() throws {
    // Every prefix and a few hundred single-byte corruptions: each must throw or decode, never crash.
    let png = try PNG.encode(noiseImage(width: 9, height: 5, seed: 6))
    for cut in 0..<png.count { _ = try? PNG.decode(Array(png[..<cut]), name: "cut.png") }
    var rng = SplitMix64(seed: 7)
    for _ in 0..<300 {
        var damaged = png
        damaged[Int(rng.next() % UInt64(png.count))] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
        _ = try? PNG.decode(damaged, name: "damaged.png")
    }
}

// MARK: - PFM

/// The 2x2 test image and its PFM bytes, built by hand: bottom row first, little-endian floats.
private let pfmImage = ImageF(width: 2, height: 2, pixels: [1, 2, 3, 0.5, 4, 5, 6, 0.5,
                                                            7, 8, 9, 0.5, 10, 11, 12, 0.5])
private let pfmBytes: [UInt8] = Array("PF\n2 2\n-1.0\n".utf8)
    + ([7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6] as [Float]).flatMap { v -> [UInt8] in
        let bits = v.bitPattern
        return [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: bits >> UInt32($0)) }
    }

@Test func pfmEncodesBottomRowFirst() throws {
    #expect(try PFM.encode(pfmImage) == pfmBytes)
    var opaque = pfmImage
    for i in stride(from: 3, to: 16, by: 4) { opaque.pixels[i] = 1 }
    #expect(try PFM.decode(pfmBytes, name: "t.pfm") == opaque)
}

@Test func pfmRoundTripIsExact() throws {
    let dir = try makeTempDirectory()
    defer { removeDirectory(dir) }
    var rng = SplitMix64(seed: 8)
    var image = ImageF(width: 13, height: 6)
    for i in image.pixels.indices {
        image.pixels[i] = i % 4 == 3 ? 1 : Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()) & 0xBF7F_FFFF)  // finite
    }
    image.pixels[0] = -0.0
    image.pixels[1] = .leastNonzeroMagnitude
    image.pixels[2] = .greatestFiniteMagnitude
    try PFM.write(image, to: "\(dir)/img.pfm")
    let back = try PFM.read("\(dir)/img.pfm")
    #expect(back.width == 13 && back.height == 6)
    #expect(back.pixels.map(\.bitPattern) == image.pixels.map(\.bitPattern))
}

@Test func pfmReadsBigEndianAndGrey() throws {
    let big: [UInt8] = Array("PF\n1 1\n1.0\n".utf8) + [0x3F, 0x80, 0, 0, 0x40, 0, 0, 0, 0xC0, 0x40, 0, 0]
    #expect(try PFM.decode(big, name: "big.pfm").pixels == [1, 2, -3, 1])
    let grey: [UInt8] = Array("Pf\n2 1\n-2.5\n".utf8) + [0, 0, 0x80, 0x3F, 0, 0, 0, 0x3F]
    #expect(try PFM.decode(grey, name: "grey.pfm").pixels == [1, 1, 1, 1, 0.5, 0.5, 0.5, 1])
}

@Test func pfmRejectsBadFiles() {
    let truncated = Array(pfmBytes.dropLast(5))
    #expect(errorMessage { () throws(GlintError) in try PFM.decode(truncated, name: "t.pfm") }
        == "cannot read t.pfm: truncated PFM: 48 bytes of pixel data expected, 43 found")
    #expect(errorMessage { () throws(GlintError) in try PFM.decode(Array("PF\n100000 100000\n-1.0\n".utf8), name: "huge.pfm") }
        == "cannot read huge.pfm: image size 100000x100000 is over the limit of 32768 pixels a side")
    let cases: [(String, String)] = [
        ("P6\n1 1\n255\n", "not a PFM file"),
        ("", "not a PFM file"),
        ("PF\n1 x\n-1.0\n", "bad PFM header: width and height must be whole numbers"),
        ("PF\n1 1\n0\n", "bad PFM header: the scale must be a non-zero number"),
        ("PF\n1 1\nnan\n", "bad PFM header: the scale must be a non-zero number"),
        ("PF\n1 1\n-1.0", "bad PFM header: no whitespace before the pixel data"),
        ("PF\n0 1\n-1.0\n", "image size 0x1 is invalid: width and height must be at least 1"),
    ]
    for (text, why) in cases {
        #expect(errorMessage { () throws(GlintError) in try PFM.decode(Array(text.utf8), name: "b.pfm") }
            == "cannot read b.pfm: \(why)")
    }
}

// MARK: - PGM

@Test func pgm16BitBytesMatchTheSpec() throws {
    let bytes = PGM.encode16(width: 2, height: 2, values: [0, 1, 256, 65535], maxValue: 65535)
    #expect(bytes == Array("P5\n2 2\n65535\n".utf8) + [0, 0, 0, 1, 1, 0, 255, 255])
    let back = try PGM.decode(bytes)
    #expect(back.width == 2 && back.height == 2 && back.maxValue == 65535 && back.values == [0, 1, 256, 65535])

    // Below 256 one byte per sample, with out-of-range samples clamped to maxval.
    let narrow = PGM.encode16(width: 3, height: 1, values: [0, 200, 300], maxValue: 255)
    #expect(narrow == Array("P5\n3 1\n255\n".utf8) + [0, 200, 255])
    #expect(try PGM.decode(narrow).values == [0, 200, 255])
}

@Test func pgmFileAndHeaderVariants() throws {
    let dir = try makeTempDirectory()
    defer { removeDirectory(dir) }
    try PGM.write16(width: 2, height: 1, values: [7, 1000], maxValue: 1000, to: "\(dir)/d.pgm")
    let back = try PGM.read("\(dir)/d.pgm")
    #expect(back.values == [7, 1000] && back.maxValue == 1000)
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["d.pgm"])

    let commented = Array("P5 # made by hand\n# size:\n2 1\n# maxval\n300\n".utf8) + [0, 5, 1, 44]
    #expect(try PGM.decode(commented).values == [5, 300])
}

@Test func pgmRejectsBadFiles() {
    let cases: [([UInt8], String)] = [
        (Array("P2\n1 1\n255\n0".utf8), "not a binary PGM (P5) file"),
        (Array("P5\n1 1\n0\n".utf8) + [0], "bad PGM header: maxval must be a whole number from 1 to 65535"),
        (Array("P5\n1 1\n70000\n".utf8) + [0, 0], "bad PGM header: maxval must be a whole number from 1 to 65535"),
        (Array("P5\n2 2\n65535\n".utf8) + [0, 0, 0], "truncated PGM: 8 bytes of pixel data expected, 3 found"),
        (Array("P5\n1 1\n300\n".utf8) + [1, 45], "sample value 301 is over the maxval 300"),
        (Array("P5\n40000 2\n255\n".utf8), "image size 40000x2 is over the limit of 32768 pixels a side"),
    ]
    for (bytes, why) in cases {
        #expect(errorMessage { () throws(GlintError) in try PGM.decode(bytes, name: "p.pgm") } == "cannot read p.pgm: \(why)")
    }
}

// MARK: - Atomic writes

@Test func writeAtomicallyLeavesNoTemporaryFile() throws {
    let dir = try makeTempDirectory()
    defer { removeDirectory(dir) }
    try FileIO.writeAtomically("\(dir)/a.bin", [1, 2, 3])
    try FileIO.writeAtomically("\(dir)/a.bin", [4, 5])  // replaces, never appends
    try FileIO.writeAtomically("\(dir)/empty.bin", [])
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["a.bin", "empty.bin"])
    #expect(try FileIO.read("\(dir)/a.bin") == [4, 5])
    #expect(try FileIO.read("\(dir)/empty.bin") == [])

    let message = errorMessage { () throws(GlintError) in try FileIO.writeAtomically("\(dir)/no/such/dir.bin", [1]) }
    #expect(message == "cannot write \(dir)/no/such/dir.bin: No such file or directory")
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["a.bin", "empty.bin"])
}

@Test func fastPNGChecksumAndPackingMatchTheirPlainForms() {
    // The vector Adler-32 against zlib's own, for lengths around its 32-byte steps and its runs
    // of 5536 bytes, from several starting values, on noise and on all-0xFF bytes (the largest sums).
    var rng = SplitMix64(seed: 11)
    let noise = (0..<20_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    let ones = [UInt8](repeating: 0xFF, count: 20_000)
    for data in [noise, ones] {
        for n in [0, 1, 31, 32, 33, 63, 64, 5535, 5536, 5537, 11_072, 11_100, 20_000] {
            for start: UInt in [1, 0xFFF0_FFF0, 0x1234_5678] {
                let want = data.withUnsafeBufferPointer { adler32_z(start, $0.baseAddress, n) }
                let got = data.withUnsafeBufferPointer { glint_adler32(start, $0.baseAddress, n) }
                #expect(got == want, "\(n) bytes from \(start)")
            }
        }
    }
    // RGBA to RGB, for widths around its 4-pixel steps and the 2 pixels it leaves for the end.
    for w in [1, 2, 5, 6, 7, 8, 9, 10, 33, 1000] {
        let rgba = Array(noise.prefix(w * 4))
        var rgb = [UInt8](repeating: 0, count: w * 3)
        rgba.withUnsafeBufferPointer { src in rgb.withUnsafeMutableBufferPointer { glint_rgba_to_rgb(src.baseAddress, $0.baseAddress, w) } }
        #expect(rgb == rgba.enumerated().filter { $0.offset % 4 != 3 }.map(\.element), "width \(w)")
    }
}
