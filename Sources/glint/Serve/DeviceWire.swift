#if Serve
import Glibc
import GlintCore
import GlintWorkloads

/// Messages between the server and its device workers, over pipes: a 4-byte little-endian
/// length, that many bytes of JSON (the header), then `bytes` bytes of payload (pixels) when the
/// header counts any.
struct WorkerMessage: Sendable {
    var header: JSON
    var payload: [UInt8] = []

    subscript(_ key: String) -> JSON? { header[key] }
    func int(_ key: String) -> Int? { header[key]?.intValue.map { Int($0) } }
    func double(_ key: String) -> Double { header[key]?.doubleValue ?? 0 }
    func string(_ key: String) -> String? { header[key]?.stringValue }

    /// A header over this is not one of ours (a frame's wipes may take a few MB).
    static let maxHeader = 64 << 20

    func write(to fd: Int32) throws {
        var fields = header.objectValue ?? []
        fields.removeAll { $0.0 == "bytes" }
        fields.append(("bytes", .int(Int64(payload.count))))
        let text = Array(JSON.object(fields).serialized(pretty: false).utf8)
        var n = UInt32(text.count).littleEndian
        var head = [UInt8](repeating: 0, count: 4)
        withUnsafeBytes(of: &n) { head = Array($0) }
        try Self.writeAll(fd, head + text)
        try Self.writeAll(fd, payload)
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { p in
            var done = 0
            while done < p.count {
                let n = Glibc.write(fd, p.baseAddress! + done, p.count - done)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw GlintError("the pipe to the device worker is closed: \(FileIO.errnoText())") }
                done += n
            }
        }
    }

    /// The next message, or nil at the end of the pipe or on one that is not a message (a
    /// header that does not read, a payload over `maxPayload` bytes).
    static func read(from fd: Int32, maxPayload: Int) -> WorkerMessage? {
        guard let head = readExactly(fd, 4) else { return nil }
        let length = Int(head.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }.littleEndian)
        guard length <= maxHeader, let text = readExactly(fd, length),
              let header = try? JSON.parse(String(decoding: text, as: UTF8.self)) else { return nil }
        let count = header["bytes"]?.intValue.map { Int($0) } ?? 0
        guard count >= 0, count <= maxPayload, let payload = readExactly(fd, count) else { return nil }
        return WorkerMessage(header: header, payload: payload)
    }

    /// The most payload a message may carry for pictures of up to `maxPixels`: a run's 8-bit
    /// and float pictures and its counts (24 bytes a pixel), and 1 MiB more.
    static func maxPayload(maxPixels: Int) -> Int { maxPixels * 24 + (1 << 20) }

    private static func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
        var ok = true
        // Not zero-filled first: every byte is read into place, or the message is dropped.
        let out = [UInt8](unsafeUninitializedCapacity: count) { p, initialized in
            var done = 0
            while done < count {
                let n = Glibc.read(fd, p.baseAddress! + done, count - done)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { ok = false; break }
                done += n
            }
            // On a short read the bytes past `done` are zeroed, so that the array is whole.
            if done < count { (p.baseAddress! + done).initialize(repeating: 0, count: count - done) }
            initialized = count
        }
        return ok ? out : nil
    }
}

// MARK: Pictures on the wire

extension Image8 {
    var wireHeader: [(String, JSON)] { [("width", .int(Int64(width))), ("height", .int(Int64(height)))] }

    /// The picture a message carries: the header's size, the payload's first bytes at `offset`.
    static func fromWire(_ m: WorkerMessage, offset: Int = 0, prefix: String = "") throws -> Image8 {
        guard let w = m.int(prefix + "width"), let h = m.int(prefix + "height"), (0...ImageLimits.maxSide).contains(w),
              (0...ImageLimits.maxSide).contains(h), offset + w * h * 4 <= m.payload.count else {
            throw ServeError(status: 500, message: "a device worker sent a malformed picture")
        }
        // A payload that is just the picture is taken as it is, not copied.
        if offset == 0 && m.payload.count == w * h * 4 { return Image8(width: w, height: h, pixels: m.payload) }
        return Image8(width: w, height: h, pixels: Array(m.payload[offset ..< offset + w * h * 4]))
    }
}

extension ComparisonRun {
    /// The header fields and payload of a run: the picture, then the float picture and counts
    /// where the run has them.
    var wire: (fields: [(String, JSON)], payload: [UInt8]) {
        var fields = image.wireHeader + [("wall", .number(wallSeconds)), ("kernel", .number(kernelSeconds))]
        if let n = chosenIterations { fields.append(("iterations", .int(Int64(n)))) }
        var payload = image.pixels
        if let f = floatImage {
            fields += [("float_width", .int(Int64(f.width))), ("float_height", .int(Int64(f.height)))]
            f.pixels.withUnsafeBytes { payload += $0 }
        }
        if let c = counts {
            fields.append(("counts", .int(Int64(c.count))))
            c.withUnsafeBytes { payload += $0 }
        }
        return (fields, payload)
    }

    static func fromWire(_ m: WorkerMessage) throws -> ComparisonRun {
        let image = try Image8.fromWire(m)
        var offset = image.pixels.count
        var float: ImageF?
        if let w = m.int("float_width"), let h = m.int("float_height") {
            guard (0...ImageLimits.maxSide).contains(w), (0...ImageLimits.maxSide).contains(h), offset + w * h * 16 <= m.payload.count else {
                throw ServeError(status: 500, message: "a device worker sent a malformed run")
            }
            let n = w * h * 4
            var pixels = [Float](repeating: 0, count: n)
            pixels.withUnsafeMutableBytes { d in m.payload.withUnsafeBytes { s in d.copyMemory(from: UnsafeRawBufferPointer(rebasing: s[offset ..< offset + n * 4])) } }
            float = ImageF(width: w, height: h, pixels: pixels)
            offset += n * 4
        }
        var counts: [UInt32]?
        if let n = m.int("counts") {
            guard n >= 0, n <= m.payload.count, offset + n * 4 <= m.payload.count else { throw ServeError(status: 500, message: "a device worker sent a malformed run") }
            var c = [UInt32](repeating: 0, count: n)
            c.withUnsafeMutableBytes { d in m.payload.withUnsafeBytes { s in d.copyMemory(from: UnsafeRawBufferPointer(rebasing: s[offset ..< offset + n * 4])) } }
            counts = c
        }
        return ComparisonRun(image: image, floatImage: float, counts: counts, wallSeconds: m.double("wall"),
                             kernelSeconds: m.double("kernel"), chosenIterations: m.int("iterations"))
    }
}
#endif
