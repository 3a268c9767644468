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
            throw GlintError("--spp must be between 1 and \(Self.maxSamplesPerPixel) (got \(samplesPerPixel))")
        }
        guard (1...Self.depthLimit).contains(maxDepth) else {
            throw GlintError("--depth must be between 1 and \(Self.depthLimit) (got \(maxDepth))")
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

    static let magic = Array("GLINT-RTOW-CHECKPOINT 1\n".utf8)

    /// The checkpoint file: a magic line, one line of JSON (job identity, size, samples), then the
    /// sums as little-endian float32 RGB, row 0 first.
    public func encode() -> [UInt8] {
        let header = JSON.object([("job", .string(jobID)), ("width", .int(Int64(width))), ("height", .int(Int64(height))),
                                  ("samples_per_pixel", .int(Int64(samplesPerPixel)))])
        var out = Self.magic + Array(header.serialized(pretty: false).utf8) + [10]
        out.reserveCapacity(out.count + width * height * 12)
        for i in stride(from: 0, to: sums.count, by: 4) {
            for c in 0..<3 { withUnsafeBytes(of: sums[i + c].bitPattern.littleEndian) { out.append(contentsOf: $0) } }
        }
        return out
    }

    public static func decode(_ bytes: [UInt8], name: String) throws(GlintError) -> RTAccumulation {
        func fail(_ why: String) -> GlintError { GlintError("\(name): \(why)") }
        guard bytes.count > magic.count, Array(bytes[0 ..< magic.count]) == magic else {
            throw fail("not a glint rtow checkpoint")
        }
        guard let nl = bytes[magic.count...].firstIndex(of: 10) else { throw fail("truncated checkpoint header") }
        let header = try? JSON.parse(String(decoding: bytes[magic.count ..< nl], as: UTF8.self))
        guard let header, let job = header["job"]?.stringValue, let w = header["width"]?.intValue,
              let h = header["height"]?.intValue, let n = header["samples_per_pixel"]?.intValue,
              n >= 0, n <= RTJob.maxSamplesPerPixel else {
            throw fail("damaged checkpoint header")
        }
        do throws(GlintError) { try ImageLimits.check(width: Int(w), height: Int(h)) } catch { throw fail(error.message) }
        let start = nl + 1
        guard bytes.count - start == Int(w * h) * 12 else {
            throw fail("checkpoint holds \(bytes.count - start) bytes of sums, \(w * h * 12) expected (truncated?)")
        }
        var acc = RTAccumulation(jobID: job, width: Int(w), height: Int(h))
        acc.samplesPerPixel = Int(n)
        bytes.withUnsafeBytes { raw in
            for p in 0 ..< Int(w * h) {
                for c in 0..<3 {
                    let bits = raw.loadUnaligned(fromByteOffset: start + (p * 3 + c) * 4, as: UInt32.self)
                    acc.sums[p * 4 + c] = Float(bitPattern: UInt32(littleEndian: bits))
                }
            }
        }
        return acc
    }

    /// Writes the checkpoint to a temporary name, then renames it over `path`.
    public func write(to path: String) throws(GlintError) {
        try FileIO.writeAtomically(path, encode())
    }

    public static func read(_ path: String) throws(GlintError) -> RTAccumulation {
        try decode(FileIO.read(path, limit: 64 + 512 + ImageLimits.maxPixels * 12), name: path)
    }
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
