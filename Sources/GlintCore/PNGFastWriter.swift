import CPNG
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// The `fast` PNG writer for 8-bit sRGB images: the rows split into parts that zlib compresses
/// on every core at once, joined into one zlib stream.
///
/// Each part is a raw deflate stream of its rows (each row: filter byte 0, then its samples);
/// every part but the last ends with a sync flush (an empty stored block), so the parts end on
/// byte boundaries and concatenate into one valid deflate stream, the last closing it. The
/// zlib header goes in front, the Adler-32 of all the rows (the parts' checksums joined with
/// `adler32_combine`) behind. Level 1, no row filters: for a 4K fractal the file comes out
/// within a tenth of libpng's level 3 and is written several times sooner on two cores; a part
/// starts with an empty window, which costs a few hundred bytes per part.
///
/// The chunks are those libpng's simplified writer gives an 8-bit image (IHDR, sRGB, IDAT,
/// IEND), with the text chunks before the image data, so a file differs from libpng's own fast
/// mode only in its compressed bytes; every reader decodes the same pixels. The tests decode
/// what this writes with libpng. The parts depend on the height alone, so with the same zlib a
/// file's bytes are the same on any machine and with any number of threads.
enum PNGFastWriter {
    /// zlib level 1 (its fastest matching), as the header's FLEVEL 0 says.
    static let level: Int32 = 1

    /// At most this many parts, each of at least `minimumRowsPerPart` rows (fewer rows: one
    /// part). The parts depend on the image's height only, never on the machine (a merged
    /// render's file equals the single render's).
    static let maximumParts = 16
    static let minimumRowsPerPart = 64

    /// An 8-bit PNG of `rgba` (width * height * 4 bytes): RGBA, or RGB without the fourth byte;
    /// `textChunks` (whole chunks) go in front of the image data.
    static func encode(width: Int, height: Int, rgba: UnsafeBufferPointer<UInt8>, alpha: Bool, textChunks: [UInt8] = [],
                       context: String) throws(GlintError) -> [UInt8] {
        precondition(rgba.count == width * height * 4, "PNGFastWriter: need \(width * height * 4) bytes, got \(rgba.count)")
        let channels = alpha ? 4 : 3
        let rowBytes = 1 + width * channels
        let parts = max(1, min(maximumParts, height / minimumRowsPerPart))
        let results = PartResults(count: parts)
        let source = SendablePointer(rgba.baseAddress!)
        // Each worker takes the next part until none is left.
        let next = Locked(0)
        DispatchQueue.concurrentPerform(iterations: min(CPUFeatures.workerCount, parts)) { _ in
            while true {
                let k = next.withLock { n in defer { n += 1 }; return n }
                if k >= parts { break }
                let y0 = height * k / parts, y1 = height * (k + 1) / parts
                results.set(k, compressPart(source.base, width: width, rows: y0..<y1, channels: channels,
                                            rowBytes: rowBytes, last: k == parts - 1))
            }
        }
        // Join: the checksums of the parts (each over its rows' bytes) into the whole's.
        var compressed: [[UInt8]] = []
        var adler: UInt = 1
        for k in 0..<parts {
            let part: Part
            switch results.get(k) {
            case .success(let p)?: part = p
            case .failure(let e)?: throw GlintError("\(context): \(e.message)")
            case nil: throw GlintError("\(context): PNG encoding failed")
            }
            let length = (height * (k + 1) / parts - height * k / parts) * rowBytes
            adler = k == 0 ? part.adler : adler32_combine(adler, part.adler, off_t(length))
            compressed.append(part.bytes)
            results.clear(k)
        }
        // The stream's end: the Adler-32 behind the last part (its header is in the first).
        compressed[parts - 1] += PNG.bytes32(UInt32(truncatingIfNeeded: adler))

        var png = PNG.signature
        png.reserveCapacity(64 + textChunks.count + compressed.reduce(0) { $0 + $1.count } + 12 * (parts + 4))
        var ihdr = PNG.bytes32(UInt32(width)) + PNG.bytes32(UInt32(height))
        ihdr += [8, alpha ? 6 : 2, 0, 0, 0]  // depth 8, RGB(A), deflate, adaptive filtering, no interlace
        png += PNG.chunk("IHDR", ihdr)
        png += PNG.chunk("sRGB", [0])  // perceptual intent, as libpng writes for 8-bit images
        png += textChunks
        // The stream in IDAT chunks of at most 1 MiB (readers take any split), each part's bytes
        // let go once copied.
        let chunk = 1 << 20
        for k in 0..<parts {
            var offset = 0
            while offset < compressed[k].count {
                let end = min(compressed[k].count, offset + chunk)
                png += PNG.chunk("IDAT", compressed[k][offset..<end])
                offset = end
            }
            compressed[k] = []
        }
        png += PNG.chunk("IEND", [UInt8]())
        return png
    }

    struct Part: Sendable {
        var bytes: [UInt8]
        var adler: UInt
    }

    /// One part's rows as raw deflate (ending in a sync flush, or the stream's end for the last
    /// part) and the Adler-32 of the bytes compressed.
    static func compressPart(_ rgba: UnsafePointer<UInt8>, width: Int, rows: Range<Int>, channels: Int,
                             rowBytes: Int, last: Bool) -> Result<Part, PartError> {
        var stream = z_stream()
        guard glint_deflate_init_raw(&stream, level) == Z_OK else { return .failure(PartError("zlib could not start (no memory)")) }
        defer { deflateEnd(&stream) }
        // RGB rows are packed here; the filter byte (0: none) goes in before each row.
        let row = UnsafeMutablePointer<UInt8>.allocate(capacity: channels == 4 ? 0 : rowBytes - 1)
        let filter = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        filter.initialize(to: 0)
        defer { row.deallocate(); filter.deallocate() }
        let scratchSize = 1 << 17
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: scratchSize)
        defer { scratch.deallocate() }
        // The first part starts the zlib stream: its header (deflate, 32 KiB window; FLEVEL 0,
        // the fastest level; FCHECK).
        var out: [UInt8] = rows.lowerBound == 0 ? [0x78, 0x01] : []
        var adler = adler32(0, nil, 0)

        // deflate with `flush` until it leaves room in the scratch buffer: all input taken and,
        // for a flush or the finish, all it holds written; full buffers are moved to `out`.
        func run(_ flush: Int32) -> Bool {
            var status: Int32
            repeat {
                stream.next_out = scratch
                stream.avail_out = UInt32(scratchSize)
                status = deflate(&stream, flush)
                if status == Z_STREAM_ERROR { return false }
                out.append(contentsOf: UnsafeBufferPointer(start: scratch, count: scratchSize - Int(stream.avail_out)))
            } while stream.avail_out == 0
            return flush != Z_FINISH || status == Z_STREAM_END
        }

        // Each row goes in as its filter byte and its samples, straight from the image when it
        // is RGBA (zlib copies what it takes into its window anyway).
        for y in rows {
            let src = rgba + y * width * 4
            let samples: UnsafePointer<UInt8>
            if channels == 4 {
                samples = src
            } else {
                glint_rgba_to_rgb(src, row, width)
                samples = UnsafePointer(row)
            }
            adler = glint_adler32(glint_adler32(adler, filter, 1), samples, rowBytes - 1)
            stream.next_in = filter
            stream.avail_in = 1
            guard run(Z_NO_FLUSH) else { return .failure(PartError("zlib failed while compressing")) }
            stream.next_in = UnsafeMutablePointer(mutating: samples)
            stream.avail_in = UInt32(rowBytes - 1)
            guard run(Z_NO_FLUSH) else { return .failure(PartError("zlib failed while compressing")) }
        }
        guard run(last ? Z_FINISH : Z_SYNC_FLUSH) else { return .failure(PartError("zlib failed while finishing")) }
        return .success(Part(bytes: out, adler: adler))
    }

    struct PartError: Error, Sendable {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// The parts' results, each written by one worker.
    final class PartResults: @unchecked Sendable {
        private var slots: [Result<Part, PartError>?]
        private let lock = Locked(())
        init(count: Int) { slots = Array(repeating: nil, count: count) }
        func set(_ k: Int, _ value: Result<Part, PartError>) { lock.withLock { _ in slots[k] = value } }
        func get(_ k: Int) -> Result<Part, PartError>? { lock.withLock { _ in slots[k] } }
        func clear(_ k: Int) { lock.withLock { _ in slots[k] = nil } }
    }

    struct SendablePointer: @unchecked Sendable {
        let base: UnsafePointer<UInt8>
        init(_ base: UnsafePointer<UInt8>) { self.base = base }
    }
}
