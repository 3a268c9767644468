import CPNG
#if canImport(Glibc)
import Glibc
#endif

/// PNG reading and writing through libpng's simplified `png_image_*` API (and, for the `fast`
/// mode's 8-bit images, `PNGFastWriter`: zlib on every core).
///
/// Only that API of libpng is used: it reports failures in the `png_image` struct, whereas the
/// classic API reports them by `longjmp`, which would jump over Swift frames and corrupt the program.
public enum PNG {
    /// Largest PNG file `read` will load into memory.
    public static let maxFileBytes = 1 << 30

    /// The `PNG_FORMAT_*` values used here. png.h builds them by OR-ing flag macros, and Swift
    /// imports only macros that are plain literals, so they are rebuilt from the flags.
    enum Format {
        static let rgb = UInt32(PNG_FORMAT_FLAG_COLOR)
        static let rgba = rgb | UInt32(PNG_FORMAT_FLAG_ALPHA)
        static let linearRGB = rgb | UInt32(PNG_FORMAT_FLAG_LINEAR)
        static let linearRGBA = rgba | UInt32(PNG_FORMAT_FLAG_LINEAR)
    }

    /// The eight bytes every PNG file starts with.
    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// How hard PNG writing compresses (`--png-compression`). The pixels are the same in every
    /// mode; only the file's size and the time to write it change.
    public enum Compression: String, CaseIterable, Sendable {
        /// `fast` for images of `autoFastPixels` or more, `default` below.
        case auto
        /// No row filters and zlib's fastest level, the rows compressed in parts on every core
        /// at once (8-bit images: `PNGFastWriter`; 16-bit ones: libpng's fast mode, zlib level
        /// 3, on one core). Many times quicker than `default` on a 4K render; flat-coloured
        /// images (fractals) come out about as small, ray-traced ones about 30% larger, smooth
        /// ones (blurred pictures) 2 to 3 times larger.
        case fast
        /// libpng's defaults: zlib level 6 with an adaptive row filter per row. The smallest files.
        case `default`

        /// From this many pixels (4 megapixels: 2560x1600 and larger) `auto` writes `fast`.
        public static let autoFastPixels = 4_000_000

        /// Whether an image of `pixels` pixels is written in the fast mode.
        public func isFast(pixels: Int) -> Bool {
            switch self {
            case .auto: pixels >= Self.autoFastPixels
            case .fast: true
            case .default: false
            }
        }
    }

    /// The compression every PNG written by this process uses; commands set it from
    /// `--png-compression` before they render.
    public static var compression: Compression {
        get { compressionSetting.withLock { $0 } }
        set { compressionSetting.withLock { $0 = newValue } }
    }
    private static let compressionSetting = Locked(Compression.auto)

    /// Decodes any PNG (grey, palette, 16-bit, interlaced...) to 8-bit RGBA.
    /// libpng converts the samples to sRGB on the way, as its simplified API defines.
    /// The header's size is checked against `ImageLimits` before the pixel buffer exists,
    /// so a forged header cannot make us allocate gigabytes. `name` is only used in messages.
    public static func decode(_ bytes: [UInt8], name: String) throws(GlintError) -> Image8 {
        let (w, h, pixels) = try decodeSamples(bytes, name: name, format: Format.rgba, as: UInt8.self)
        return Image8(width: w, height: h, pixels: pixels)
    }

    /// Decodes a PNG to 16-bit linear RGBA samples, as libpng's simplified API reads it: a 16-bit
    /// PNG that Glint wrote (linear light, gAMA 1.0, opaque) comes back with the samples it was
    /// given, so `encode16` of the result writes the same image again. Limits as in `decode`.
    public static func decode16(_ bytes: [UInt8], name: String) throws(GlintError) -> (width: Int, height: Int, rgba16: [UInt16]) {
        let (w, h, samples) = try decodeSamples(bytes, name: name, format: Format.linearRGBA, as: UInt16.self)
        return (w, h, samples)
    }

    /// The image's RGBA samples in `format` (four `T` per pixel).
    private static func decodeSamples<T: FixedWidthInteger>(_ bytes: [UInt8], name: String, format: UInt32,
                                                            as: T.Type) throws(GlintError) -> (Int, Int, [T]) {
        guard bytes.count >= signature.count, bytes[0..<signature.count].elementsEqual(signature) else {
            throw GlintError("cannot read \(name): not a PNG file")
        }
        // libpng keeps pointing into `bytes` until the read finishes, so both calls
        // happen inside one `withUnsafeBytes`.
        let result: Result<(Int, Int, [T]), GlintError> = bytes.withUnsafeBytes { raw in
            var image = newImage()
            defer { png_image_free(&image) }  // harmless after libpng has freed it itself
            guard png_image_begin_read_from_memory(&image, raw.baseAddress, raw.count) != 0 else {
                return .failure(corrupt(name, image))
            }
            let width = Int(image.width), height = Int(image.height)
            do throws(GlintError) {
                try ImageLimits.checkInput(width: width, height: height)
                try checkPlausible(bytes, name: name)
            } catch {
                return .failure(error.message.hasPrefix("cannot read") ? error : GlintError("cannot read \(name): \(error.message)"))
            }
            image.format = format
            var samples = [T](repeating: 0, count: width * height * 4)
            // The row stride counts samples, not bytes.
            let ok = samples.withUnsafeMutableBytes {
                png_image_finish_read(&image, nil, $0.baseAddress, Int32(width * 4), nil)
            }
            guard ok != 0 else { return .failure(corrupt(name, image)) }
            return .success((width, height, samples))
        }
        return try result.get()
    }

    /// Reads and decodes a PNG file; messages name `path`.
    public static func read(_ path: String) throws(GlintError) -> Image8 {
        // The signature and IHDR chunk (33 bytes) bound the read: a stream is refused at once
        // when it is no PNG, and at most `maxPlausibleBytes` are read of one that claims to be.
        let bytes = try FileIO.read(path, head: 33) { head throws(GlintError) in
            let ihdr = try header(head, name: path)
            do throws(GlintError) { try ImageLimits.checkInput(width: ihdr.width, height: ihdr.height) } catch {
                throw GlintError("cannot read \(path): \(error.message)")
            }
            return maxPlausibleBytes(ihdr)
        }
        return try decode(bytes, name: path)
    }

    /// Width and height from a PNG file's header (its first 33 bytes; no pixels decoded),
    /// checked against `ImageLimits.checkInput`.
    public static func size(_ path: String) throws(GlintError) -> (width: Int, height: Int) {
        let ihdr = try header(FileIO.readHead(path, count: 33), name: path)
        do throws(GlintError) { try ImageLimits.checkInput(width: ihdr.width, height: ihdr.height) } catch {
            throw GlintError("cannot read \(path): \(error.message)")
        }
        return (ihdr.width, ihdr.height)
    }

    /// What a PNG's IHDR chunk says.
    struct Header {
        var width: Int, height: Int
        var bitDepth: Int, colourType: Int, interlaced: Bool

        /// Samples a pixel has in the file.
        var channels: Int { [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][colourType] ?? 4 }

        /// Bytes of the filtered, uncompressed image data: a filter byte and the packed samples
        /// of each row (Adam7 interlacing adds at most a filter byte per row of each of 7 passes).
        var rawBytes: Int {
            let rowBytes = (width * channels * bitDepth + 7) / 8
            return height * (rowBytes + 1) + (interlaced ? 7 * (height + 1) : 0)
        }
    }

    /// Reads the signature and IHDR chunk; a one-line error when they are not a PNG's.
    static func header(_ bytes: [UInt8], name: String) throws(GlintError) -> Header {
        guard bytes.count >= signature.count, bytes[0..<signature.count].elementsEqual(signature) else {
            throw GlintError("cannot read \(name): not a PNG file")
        }
        guard bytes.count >= 29, bytes[12..<16].elementsEqual("IHDR".utf8) else {
            throw GlintError("cannot read \(name): corrupt or truncated PNG (no IHDR chunk after the signature)")
        }
        func be32(_ i: Int) -> Int { bytes[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) } }
        let (width, height) = (be32(16), be32(20))
        guard width <= ImageLimits.maxSide, height <= ImageLimits.maxSide else {
            throw GlintError("cannot read \(name): image size \(width)x\(height) is over the limit of \(ImageLimits.maxSide) pixels a side")
        }
        return Header(width: width, height: height, bitDepth: Int(bytes[24]), colourType: Int(bytes[25]), interlaced: bytes[28] != 0)
    }

    /// Deflate packs at most about 1032 bytes into one, so a PNG holding fewer than
    /// rawBytes / 1032 bytes cannot hold the image its header claims: refused before libpng
    /// allocates the image's rows.
    static let deflateMaxRatio = 1032

    /// The largest file a valid PNG of this size plausibly is: the image data stored without
    /// compression (twice over, for chunk and block overheads) plus 64 MiB of other chunks
    /// (metadata, ICC profiles), within `maxFileBytes`.
    static func maxPlausibleBytes(_ ihdr: Header) -> Int {
        min(maxFileBytes, 2 * ihdr.rawBytes + (64 << 20))
    }

    private static func checkPlausible(_ bytes: [UInt8], name: String) throws(GlintError) {
        let ihdr = try header(bytes, name: name)
        let needed = ihdr.rawBytes / deflateMaxRatio
        guard bytes.count >= needed else {
            throw GlintError("cannot read \(name): corrupt or truncated PNG (its header claims \(ihdr.width)x\(ihdr.height), which needs at least \(needed) bytes of compressed data; the file holds \(bytes.count))")
        }
    }

    /// Encodes an 8-bit sRGB PNG: RGBA, or RGB when `alpha` is false (the alpha byte is
    /// dropped, not composited). The bytes are stored exactly as given. Each of `text` becomes a
    /// tEXt chunk before the image data (see `addingText`). `compression` nil: the process's
    /// (`PNG.compression`).
    public static func encode(_ image: Image8, alpha: Bool = true, text: [TextEntry] = [],
                              compression: Compression? = nil) throws(GlintError) -> [UInt8] {
        try encode8(image, alpha: alpha, text: text, compression: compression, context: "cannot encode PNG")
    }

    /// Encodes a 16-bit PNG from `width * height * 4` straight (not premultiplied) RGBA samples;
    /// with `alpha` false the fourth sample of each pixel is dropped and an RGB PNG is written.
    ///
    /// The simplified API writes 16-bit data as linear light (a gAMA of 1.0, no sRGB chunk), so
    /// the samples should be linear, not sRGB-encoded. It also expects premultiplied colour for
    /// 16-bit images with alpha and divides it back out while writing; this function premultiplies
    /// first, so opaque pixels are stored exactly, partly transparent ones to within about
    /// 32768/alpha, and libpng stores the colour of fully transparent pixels as 65535.
    public static func encode16(width: Int, height: Int, rgba16: [UInt16], alpha: Bool,
                                text: [TextEntry] = []) throws(GlintError) -> [UInt8] {
        try encode16(width: width, height: height, rgba16: rgba16, alpha: alpha, text: text, context: "cannot encode PNG")
    }

    /// Encodes a linear-light float image as a 16-bit PNG (`encode16` of `image.to16Bit()`):
    /// each channel clamped to [0, 1] and rounded to the nearest of 65536 levels.
    public static func encode16(linear image: ImageF, alpha: Bool, text: [TextEntry] = []) throws(GlintError) -> [UInt8] {
        try encode16(width: image.width, height: image.height, rgba16: image.to16Bit(), alpha: alpha, text: text)
    }

    /// Writes an 8-bit PNG (see `encode`) to a temporary name, then renames it to `path`.
    public static func write(_ image: Image8, to path: String, alpha: Bool = true, text: [TextEntry] = []) throws(GlintError) {
        try FileIO.writeAtomically(path, encode8(image, alpha: alpha, text: text, context: "cannot write \(path)"))
    }

    /// Writes a 16-bit PNG (see `encode16`) to a temporary name, then renames it to `path`.
    public static func write16(width: Int, height: Int, rgba16: [UInt16], alpha: Bool, to path: String,
                               text: [TextEntry] = []) throws(GlintError) {
        let png = try encode16(width: width, height: height, rgba16: rgba16, alpha: alpha, text: text, context: "cannot write \(path)")
        try FileIO.writeAtomically(path, png)
    }

    // MARK: - Internals

    private static func encode8(_ image: Image8, alpha: Bool, text: [TextEntry], compression: Compression? = nil,
                                context: String) throws(GlintError) -> [UInt8] {
        try checkSize(image.width, image.height, context)
        if (compression ?? PNG.compression).isFast(pixels: image.width * image.height) {
            let chunks = try textChunks(text, context: context)
            return try image.pixels.withUnsafeBufferPointer { (p) throws(GlintError) in
                try PNGFastWriter.encode(width: image.width, height: image.height, rgba: p, alpha: alpha, textChunks: chunks,
                                         context: context)
            }
        }
        let png = alpha ? try compress(image.width, image.height, Format.rgba, image.pixels, compression, context)
                        : try compress(image.width, image.height, Format.rgb, dropAlpha(image.pixels), compression, context)
        return try addingText(text, to: png, context: context)
    }

    private static func encode16(width: Int, height: Int, rgba16: [UInt16], alpha: Bool, text: [TextEntry],
                                 context: String) throws(GlintError) -> [UInt8] {
        try checkSize(width, height, context)
        precondition(rgba16.count == width * height * 4, "encode16: need \(width * height * 4) samples, got \(rgba16.count)")
        guard alpha else {
            return try addingText(text, to: compress(width, height, Format.linearRGB, dropAlpha(rgba16), nil, context), context: context)
        }
        var premultiplied = rgba16
        premultiplied.withUnsafeMutableBufferPointer { p in
            for i in stride(from: 0, to: p.count, by: 4) {
                let a = UInt32(p[i + 3])
                guard a != 65535 else { continue }
                for c in i..<(i + 3) { p[c] = UInt16((UInt32(p[c]) * a + 32767) / 65535) }
            }
        }
        return try addingText(text, to: compress(width, height, Format.linearRGBA, premultiplied, nil, context), context: context)
    }

    private static func checkSize(_ width: Int, _ height: Int, _ context: String) throws(GlintError) {
        do throws(GlintError) { try ImageLimits.check(width: width, height: height) } catch {
            throw GlintError("\(context): \(error.message)")
        }
    }

    /// RGBA to RGB by dropping every fourth sample.
    private static func dropAlpha<T: FixedWidthInteger>(_ rgba: [T]) -> [T] {
        let pixels = rgba.count / 4
        return [T](unsafeUninitializedCapacity: pixels * 3) { out, count in
            rgba.withUnsafeBufferPointer { src in
                for p in 0..<pixels {
                    out[p * 3] = src[p * 4]; out[p * 3 + 1] = src[p * 4 + 1]; out[p * 3 + 2] = src[p * 4 + 2]
                }
            }
            count = pixels * 3
        }
    }

    /// Compresses in one pass, through a growing in-memory stream (`open_memstream`): libpng's
    /// `png_image_write_to_memory` would need a first pass only to learn the size.
    private static func compress<T>(_ width: Int, _ height: Int, _ format: UInt32, _ samples: [T],
                                    _ mode: Compression?, _ context: String) throws(GlintError) -> [UInt8] {
        let fast = (mode ?? compression).isFast(pixels: width * height)
        let result: Result<[UInt8], GlintError> = samples.withUnsafeBytes { raw in
            var image = newImage()
            image.width = UInt32(width)
            image.height = UInt32(height)
            image.format = format
            if fast { image.flags |= UInt32(PNG_IMAGE_FLAG_FAST) }
            defer { png_image_free(&image) }
            // The stream writes its buffer's address and size through these pointers until it is
            // closed, so they must outlive the call that hands them over.
            let place = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: 1)
            let size = UnsafeMutablePointer<Int>.allocate(capacity: 1)
            place.initialize(to: nil)
            size.initialize(to: 0)
            defer { free(place.pointee); place.deallocate(); size.deallocate() }
            guard let stream = open_memstream(place, size) else {
                return .failure(GlintError("\(context): no memory for the PNG stream"))
            }
            let ok = png_image_write_to_stdio(&image, stream, 0, raw.baseAddress, 0, nil)
            let closed = fclose(stream)  // sets the buffer and size to the final bytes
            guard ok != 0, closed == 0, let bytes = place.pointee, size.pointee > 0 else {
                return .failure(GlintError("\(context): PNG encoding failed\(libpngDetail(image))"))
            }
            return .success([UInt8](UnsafeRawBufferPointer(start: bytes, count: size.pointee)))
        }
        return try result.get()
    }

    private static func newImage() -> png_image {
        var image = png_image()  // zeroed, with `opaque` nil, as libpng requires
        image.version = UInt32(PNG_IMAGE_VERSION)
        return image
    }

    private static func corrupt(_ name: String, _ image: png_image) -> GlintError {
        GlintError("cannot read \(name): corrupt or truncated PNG\(libpngDetail(image))")
    }

    /// " (libpng: <message>)", or "" when libpng left no message.
    private static func libpngDetail(_ image: png_image) -> String {
        let text = withUnsafeBytes(of: image.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let line = String(text.map { $0.isNewline ? " " : $0 })
        return line.isEmpty ? "" : " (libpng: \(line))"
    }
}
