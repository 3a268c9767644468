import CGlintTypes
import GlintCore

/// One ray-traced render, fully described: a render is a pure function of this value
/// (and, bit for bit, of the backend).
public struct RTJob: Sendable {
    public var scene: RTScene
    public var camera: RTCamera
    public var width = 1200                 // image pixels
    public var height = 800
    public var samplesPerPixel = 50         // camera samples per pixel
    public var maxDepth = 50                // rays per sample at most (the book's depth)
    public var seed: UInt64 = 0             // key of the counter-based RNG
    public var tMin = 1e-3                  // nearest accepted hit (SwiftRTOW's t_min)

    /// A job for `scene` seen through the scene's own camera.
    public init(scene: RTScene) {
        self.scene = scene
        camera = scene.camera
    }

    public static let maxSamplesPerPixel = 1 << 24
    public static let depthLimit = 10_000

    /// Checks every field; one clear line for the first bad one.
    public func validate() throws(GlintError) {
        try ImageLimits.check(width: width, height: height)
        guard (1...Self.maxSamplesPerPixel).contains(samplesPerPixel) else {
            throw GlintError(field: "samplesPerPixel", "must be between 1 and \(Self.maxSamplesPerPixel) (got \(samplesPerPixel))")
        }
        guard (1...Self.depthLimit).contains(maxDepth) else {
            throw GlintError(field: "maxDepth", "must be between 1 and \(Self.depthLimit) (got \(maxDepth))")
        }
        guard tMin.isFinite, tMin >= 0 else { throw GlintError("t_min must be a number >= 0") }
        try scene.validate()
        try camera.validate()
    }

    /// The struct the kernel reads (the Swift twin reads the same fields).
    public var params: GlintRTParams {
        let f = camera.frame(aspect: Double(width) / Double(height))
        var p = GlintRTParams()
        p.seed = seed
        (p.origin_x, p.origin_y, p.origin_z) = Self.floats(f.origin)
        p.lens_radius = Float(f.lensRadius)
        (p.corner_x, p.corner_y, p.corner_z) = Self.floats(f.corner)
        p.t_min = Float(tMin)
        (p.horizontal_x, p.horizontal_y, p.horizontal_z) = Self.floats(f.horizontal)
        (p.vertical_x, p.vertical_y, p.vertical_z) = Self.floats(f.vertical)
        (p.u_x, p.u_y, p.u_z) = Self.floats(f.u)
        (p.v_x, p.v_y, p.v_z) = Self.floats(f.v)
        (p.sky_bottom_r, p.sky_bottom_g, p.sky_bottom_b) = Self.floats(scene.sky.bottom)
        (p.sky_top_r, p.sky_top_g, p.sky_top_b) = Self.floats(scene.sky.top)
        p.width = Int32(width)
        p.height = Int32(height)
        p.max_depth = Int32(maxDepth)
        return p
    }

    static func floats(_ v: SIMD3<Double>) -> (Float, Float, Float) { (Float(v.x), Float(v.y), Float(v.z)) }

    /// What identifies the image this job accumulates: everything but the sample count. A
    /// checkpoint carries it, and resuming refuses a checkpoint whose identity differs.
    public func identity(_ bvh: RTBVH) -> String {
        var h = StableHash()
        h.update("glint-rtow-1")
        func bytes<T>(_ value: T) { withUnsafeBytes(of: value) { for b in $0 { h.update(b) } } }
        bytes(params)
        for n in bvh.nodes { bytes(n) }
        for b in bvh.blocks { bytes(b) }
        for s in bvh.spheres { bytes(s) }
        for m in bvh.materials { bytes(m) }
        return h.hex
    }

    /// Camera samples of the whole image.
    public var sampleCount: Int { width * height * samplesPerPixel }
}

/// Running per-pixel sums of a progressive render: samples 0 ..< samplesPerPixel of every pixel,
/// added in sample order. Resuming from it continues the very same float additions.
public struct RTAccumulation: Sendable, Equatable {
    public let jobID: String
    public let width: Int
    public let height: Int
    public internal(set) var samplesPerPixel: Int
    /// RGBA per pixel (A unused), row 0 at the top.
    public internal(set) var sums: [Float]
    /// False only for a checkpoint of the old format (no checksum) decoded for inspection: its
    /// sample count and sums cannot be checked, and `RTRenderer` will not resume it.
    public internal(set) var verified = true

    public init(jobID: String, width: Int, height: Int) {
        self.init(jobID: jobID, width: width, height: height, zeroed: true)
    }

    /// `zeroed: false` leaves `sums` empty (standing for zeros) for a renderer that fills its own
    /// buffer and sets them when it ends; no caller ever sees the empty state.
    init(jobID: String, width: Int, height: Int, zeroed: Bool) {
        self.jobID = jobID
        self.width = width
        self.height = height
        samplesPerPixel = 0
        sums = zeroed ? [Float](repeating: 0, count: width * height * 4) : []
    }

    /// The mean colour per pixel (linear light), alpha 1.
    public func linearImage() -> ImageF {
        let n = Float(max(samplesPerPixel, 1))
        let pixels = [Float](unsafeUninitializedCapacity: sums.count) { out, count in
            sums.withUnsafeBufferPointer { s in
                for i in stride(from: 0, to: s.count, by: 4) {
                    out[i] = s[i] / n
                    out[i + 1] = s[i + 1] / n
                    out[i + 2] = s[i + 2] / n
                    out[i + 3] = 1
                }
            }
            count = sums.count
        }
        return ImageF(width: width, height: height, pixels: pixels)
    }

    /// The book's output: gamma 2 (square root), clamped to [0, 0.999], times 256; alpha 255.
    /// `gammaByte` two pixels at a time (vector division and square root: the same IEEE values).
    public func gammaImage() -> Image8 {
        let n = Float(max(samplesPerPixel, 1))
        let pixels = [UInt8](unsafeUninitializedCapacity: sums.count) { out, count in
            sums.withUnsafeBufferPointer { s in
                let total = s.count
                var i = 0
                while i + 8 <= total {
                    var v = UnsafeRawPointer(s.baseAddress! + i).loadUnaligned(as: SIMD8<Float>.self) / SIMD8(repeating: n)
                    v.replace(with: 0, where: .!(v .> 0))  // also NaN
                    var g = glint_sqrt8(v)
                    g.replace(with: 0.999, where: g .> 0.999)
                    let b = glint_trunc8(g * 256)
                    for l in 0..<8 { out[i + l] = l & 3 == 3 ? 255 : UInt8(truncatingIfNeeded: b[l]) }
                    i += 8
                }
                while i < total {
                    out[i] = i & 3 == 3 ? 255 : Self.gammaByte(s[i] / n)
                    i += 1
                }
            }
            count = sums.count
        }
        return Image8(width: width, height: height, pixels: pixels)
    }

    @inline(__always)
    public static func gammaByte(_ v: Float) -> UInt8 {
        guard v > 0 else { return 0 }  // also NaN
        let g = min(v.squareRoot(), 0.999)
        return UInt8(256 * g)
    }

    // MARK: Checkpoint files

    static let magic = Array("GLINT-RTOW-CHECKPOINT 2\n".utf8)
    /// The format before checksums: decoded for inspection only (`verified` false).
    static let legacyMagic = Array("GLINT-RTOW-CHECKPOINT 1\n".utf8)
    /// Longest header line read (the real one is about 150 bytes).
    static let maxHeaderBytes = 1024
    static let headerFields = ["job", "width", "height", "samples_per_pixel", "checksum"]

    /// The checkpoint file: a magic line, one line of JSON (job identity, size, samples, and a
    /// checksum of the rest of the header and of the sums), then the sums as little-endian
    /// float32 RGB, row 0 first. The header is written in exactly one form, which `decode` expects.
    public func encode() -> [UInt8] {
        let sumBytes = [UInt8](unsafeUninitializedCapacity: width * height * 12) { out, count in
            let raw = UnsafeMutableRawBufferPointer(out)
            sums.withUnsafeBufferPointer { s in
                var offset = 0
                for i in stride(from: 0, to: s.count, by: 4) {
                    for c in 0..<3 {
                        raw.storeBytes(of: s[i + c].bitPattern.littleEndian, toByteOffset: offset, as: UInt32.self)
                        offset += 4
                    }
                }
            }
            count = width * height * 12
        }
        let header = Self.header(job: jobID, width: width, height: height, samplesPerPixel: samplesPerPixel,
                                 checksum: Self.checksum(job: jobID, width: width, height: height,
                                                         samplesPerPixel: samplesPerPixel, sums: sumBytes[...]))
        return Self.magic + Array(header.utf8) + [10] + sumBytes
    }

    /// The header line as `encode` writes it (without its newline).
    static func header(job: String, width: Int, height: Int, samplesPerPixel: Int, checksum: String) -> String {
        JSON.object([("job", .string(job)), ("width", .int(Int64(width))), ("height", .int(Int64(height))),
                     ("samples_per_pixel", .int(Int64(samplesPerPixel))), ("checksum", .string(checksum))])
            .serialized(pretty: false)
    }

    /// The `StableHash` (two 64-bit FNV-1a lanes) of the format, every header field but the checksum, and the
    /// sums' bytes: any edit of a header field or of a sum byte changes it.
    static func checksum(job: String, width: Int, height: Int, samplesPerPixel: Int, sums: ArraySlice<UInt8>) -> String {
        var h = StableHash()
        h.update("GLINT-RTOW-CHECKPOINT 2")
        h.update(job)
        h.update(String(width))
        h.update(String(height))
        h.update(String(samplesPerPixel))
        for b in sums { h.update(b) }
        return h.hex
    }

    /// Reads a checkpoint, checking every field: the magic line, the header's fields (no unknown,
    /// missing or duplicate ones; the size within `ImageLimits`; samples per pixel within
    /// 0...RTJob.maxSamplesPerPixel, 0 only with zero sums), the file's length against the size,
    /// the checksum, and every sum (finite and >= 0). Messages are one line naming `name`.
    /// A checkpoint of the old format (no checksum) is decoded with `verified` false, its sums
    /// unchecked: `read` and `RTRenderer` refuse it.
    public static func decode(_ bytes: [UInt8], name: String) throws(GlintError) -> RTAccumulation {
        func fail(_ why: String) -> GlintError { GlintError("\(name): \(why)") }
        let legacy: Bool
        if bytes.starts(with: magic) {
            legacy = false
        } else if bytes.starts(with: legacyMagic) {
            legacy = true
        } else {
            throw fail("not a glint rtow checkpoint")
        }
        let headerStart = magic.count
        guard let nl = bytes[headerStart ..< min(bytes.count, headerStart + maxHeaderBytes)].firstIndex(of: 10) else {
            throw fail(bytes.count < headerStart + maxHeaderBytes ? "truncated checkpoint header" : "damaged checkpoint header (no end of line in its first \(maxHeaderBytes) bytes)")
        }
        let headerText = String(decoding: bytes[headerStart ..< nl], as: UTF8.self)
        let header: JSON
        do throws(GlintError) { header = try JSON.parse(headerText) } catch { throw fail("damaged checkpoint header: \(error.message)") }
        guard let fields = header.objectValue else { throw fail("damaged checkpoint header: not a JSON object") }
        let expected = legacy ? headerFields.dropLast() : headerFields[...]
        for (key, _) in fields where !expected.contains(key) {
            throw fail("unknown checkpoint header field \(JSON.quotedForMessage(key, limit: 40)) (a checkpoint header holds \(expected.joined(separator: ", ")))")
        }
        for key in expected where header[key] == nil { throw fail("damaged checkpoint header: no \"\(key)\" field") }
        func integer(_ key: String) throws(GlintError) -> Int {
            guard case .int(let v) = header[key]! else {
                throw fail("damaged checkpoint header: \"\(key)\" must be a whole number, got \(JSON.printable(header[key]!.serialized(pretty: false), limit: 40))")
            }
            return Int(v)
        }
        guard let job = header["job"]!.stringValue, (1...128).contains(job.utf8.count),
              job.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E }) else {
            throw fail("damaged checkpoint header: \"job\" must be the job's identity (letters and digits), got \(JSON.printable(header["job"]!.serialized(pretty: false), limit: 40))")
        }
        let w = try integer("width"), h = try integer("height"), n = try integer("samples_per_pixel")
        do throws(GlintError) { try ImageLimits.check(width: w, height: h) } catch { throw fail("damaged checkpoint header: \(error.message)") }
        guard (0...RTJob.maxSamplesPerPixel).contains(n) else {
            throw fail("damaged checkpoint header: \"samples_per_pixel\" must be between 0 and \(RTJob.maxSamplesPerPixel), got \(n)")
        }
        let start = nl + 1
        guard bytes.count - start == w * h * 12 else {
            throw fail("checkpoint holds \(bytes.count - start) bytes of sums, \(w * h * 12) expected for \(w)x\(h) (truncated or damaged)")
        }
        if !legacy {
            guard let stored = header["checksum"]!.stringValue,
                  headerText == Self.header(job: job, width: w, height: h, samplesPerPixel: n, checksum: stored) else {
                throw fail("damaged checkpoint header: not in the form glint writes (edited?); render it again")
            }
            guard stored == checksum(job: job, width: w, height: h, samplesPerPixel: n, sums: bytes[start...]) else {
                throw fail("checksum mismatch: the checkpoint was edited or damaged; render it again")
            }
        }
        var acc = RTAccumulation(jobID: job, width: w, height: h)
        acc.samplesPerPixel = n
        acc.verified = !legacy
        var bad: (index: Int, value: Float)? = nil
        var anyNonZero = false
        acc.sums.withUnsafeMutableBufferPointer { sums in
            bytes.withUnsafeBytes { raw in
                for p in 0 ..< w * h {
                    for c in 0..<3 {
                        let bits = raw.loadUnaligned(fromByteOffset: start + (p * 3 + c) * 4, as: UInt32.self)
                        let v = Float(bitPattern: UInt32(littleEndian: bits))
                        sums[p * 4 + c] = v
                        if !(v.isFinite && v >= 0) && bad == nil { bad = (p * 3 + c, v) }
                        if v != 0 { anyNonZero = true }
                    }
                }
            }
        }
        if !legacy {
            if let bad {
                let (p, c) = (bad.index / 3, bad.index % 3)
                throw fail("damaged checkpoint: the \(["red", "green", "blue"][c]) sum of pixel (\(p % w), \(p / w)) is \(bad.value); sums must be finite and >= 0")
            }
            guard n > 0 || !anyNonZero else {
                throw fail("damaged checkpoint: \"samples_per_pixel\" is 0 but the sums are not all zero")
            }
        }
        return acc
    }

    /// Writes the checkpoint to a temporary name, then renames it over `path`.
    public func write(to path: String) throws(GlintError) {
        try FileIO.writeAtomically(path, encode())
    }

    /// Reads and checks a checkpoint (see `decode`) to resume; a checkpoint of the old format,
    /// without a checksum, is refused (it cannot be checked).
    public static func read(_ path: String) throws(GlintError) -> RTAccumulation {
        // The header bounds the read: a stream or an oversized file is refused once it passes
        // the length the header's size gives, before gigabytes are read.
        let bytes = try FileIO.read(path, head: magic.count + maxHeaderBytes) { head throws(GlintError) in
            if let length = expectedLength(head) { return length }
            _ = try decode(head, name: path)  // a bad header: throws its message
            return head.count
        }
        let acc = try decode(bytes, name: path)
        guard acc.verified else { throw GlintError("\(path): \(legacyMessage)") }
        return acc
    }

    /// The file length a checkpoint header promises (header plus 12 bytes a pixel), or nil when
    /// `head` does not start with a readable header within the size limits.
    static func expectedLength(_ head: [UInt8]) -> Int? {
        guard head.starts(with: magic) || head.starts(with: legacyMagic) else { return nil }
        let start = magic.count
        guard let nl = head[start ..< min(head.count, start + maxHeaderBytes)].firstIndex(of: 10),
              let header = try? JSON.parse(String(decoding: head[start ..< nl], as: UTF8.self)),
              case .int(let w)? = header["width"], case .int(let h)? = header["height"],
              (1...Int64(ImageLimits.maxSide)).contains(w), (1...Int64(ImageLimits.maxSide)).contains(h),
              w * h <= Int64(ImageLimits.maxPixels) else { return nil }
        return nl + 1 + Int(w * h) * 12
    }

    static let legacyMessage = "a checkpoint of an older glint, without a checksum: it cannot be checked, so it is not resumed; render it again"
}

/// How far a render is, for progress bars.
public struct RTProgress: Sendable {
    /// Samples per pixel accumulated so far (the resumed ones included), and the target.
    public var samplesPerPixel: Int
    public var targetSamplesPerPixel: Int
    /// Pixel samples traced by this call so far, and its elapsed seconds.
    public var samplesTraced: Int
    public var seconds: Double
    /// Done fraction of the whole job, 0...1 (counts finished parts of a pass).
    public var fraction: Double
    public var samplesPerSecond: Double { seconds > 0 ? Double(samplesTraced) / seconds : 0 }
}

/// What a render produced.
public struct RTResult: Sendable {
    /// Gamma 2, 8-bit RGBA (alpha 255): the book's output.
    public var image: Image8
    /// Mean colour per pixel, linear light (alpha 1); computed when asked for.
    public var linear: ImageF { accumulation.linearImage() }
    /// Pixel samples traced by this call (resumed samples not counted).
    public var samples: Int
    /// Samples per pixel in the image (resumed ones included); below the job's when stopped early.
    public var samplesPerPixel: Int
    /// Wall time of the render (transfers included) and OpenCL kernel time (profiling events; 0 on the CPU).
    public var wallSeconds: Double
    public var kernelSeconds: Double
    /// The sums, to checkpoint or continue.
    public var accumulation: RTAccumulation
    /// Whether the render stopped before the job's sample count (`RTRenderer.Options.shouldStop`).
    public var stoppedEarly: Bool

    public var samplesPerSecond: Double { wallSeconds > 0 ? Double(samples) / wallSeconds : 0 }
}

// MARK: Shards' checkpoints

extension RTAccumulation {
    /// What a band's identity adds to its job's: the rows and the image's height.
    static func bandSuffix(_ band: Range<Int>, of height: Int) -> String {
        "-rows-\(band.lowerBound)-\(band.upperBound)-of-\(height)"
    }

    /// For the sums of a shard's band (`--shard`): the whole render's identity, the rows and
    /// the image's height; nil for a whole image.
    public var band: (job: String, rows: Range<Int>, height: Int)? {
        // The job's identity is hex digits: <job>-rows-<y0>-<y1>-of-<height>.
        let parts = jobID.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[1] == "rows", parts[4] == "of", let y0 = Int(parts[2]), let y1 = Int(parts[3]),
              let h = Int(parts[5]), y0 >= 0, y0 < y1, y1 <= h else { return nil }
        return (String(parts[0]), y0 ..< y1, h)
    }

    /// The checkpoints of every band of one render joined into the whole render's: what one
    /// process would have saved at the same samples per pixel, byte for byte. Each is checked:
    /// a band's, of one job, one size and one sample count, none missing and none twice.
    public static func joining(_ parts: [(name: String, sums: RTAccumulation)]) throws(GlintError) -> RTAccumulation {
        guard let first = parts.first else { throw GlintError("no shard checkpoints among the inputs (a whole render's checkpoint is not joined again)") }
        var bands: [(name: String, acc: RTAccumulation, rows: Range<Int>)] = []
        for (name, acc) in parts {
            guard let b = acc.band else { throw GlintError("\(name): the checkpoint of a whole image, not of a shard's band") }
            guard let f = first.sums.band, b.job == f.job, b.height == f.height, acc.width == first.sums.width else {
                throw GlintError("\(name) belongs to another render than \(first.name) (scene, camera, size, depth or seed differ)")
            }
            guard acc.samplesPerPixel == first.sums.samplesPerPixel else {
                throw GlintError("\(name) holds \(acc.samplesPerPixel) samples per pixel, \(first.name) \(first.sums.samplesPerPixel): resume the shards to one count first")
            }
            bands.append((name, acc, b.rows))
        }
        bands.sort { $0.rows.lowerBound < $1.rows.lowerBound }
        let height = first.sums.band!.height
        var next = 0
        for (k, b) in bands.enumerated() {
            if b.rows.lowerBound < next {
                let other = bands[k - 1].name
                throw GlintError("\(b.name) and \(other) overlap (rows \(b.rows.lowerBound)-\(min(next, b.rows.upperBound) - 1)): keep one")
            }
            if b.rows.lowerBound > next { throw GlintError("rows \(next)-\(b.rows.lowerBound - 1) are missing: no checkpoint holds them") }
            next = b.rows.upperBound
        }
        if next < height { throw GlintError("rows \(next)-\(height - 1) are missing: no checkpoint holds them") }
        var joined = RTAccumulation(jobID: first.sums.band!.job, width: first.sums.width, height: height, zeroed: false)
        joined.samplesPerPixel = first.sums.samplesPerPixel
        joined.sums.reserveCapacity(first.sums.width * height * 4)
        for b in bands { joined.sums += b.acc.sums }
        return joined
    }
}

extension RTJob: PixelIdentifiable {
    /// The scene's spheres, materials and sky, the camera and every setting (the scene's name
    /// and its own camera draw nothing: `camera` is the one rendered).
    public func writeIdentity(into identity: inout PixelIdentity) {
        for m in scene.materials {
            switch m {
            case .lambertian(let albedo): identity.add("lambertian", fields: albedo)
            case .metal(let albedo, let fuzz): identity.add("metal", fields: albedo, fuzz)
            case .dielectric(let ior, let attenuation): identity.add("dielectric", fields: ior, attenuation)
            }
        }
        for s in scene.spheres { identity.add("sphere", fields: s.center, s.radius, s.material) }
        identity.add("sky", fields: scene.sky.bottom, scene.sky.top)
        identity.add("camera", camera)
        identity.add("settings", fields: width, height, samplesPerPixel, maxDepth, seed, tMin)
    }
}

extension RTCamera: PixelIdentifiable {
    public func writeIdentity(into identity: inout PixelIdentity) {
        identity.add("camera", fields: lookfrom, lookat, vup, vfov, aperture, focusDist)
    }
}
