/// What one channel of a `PixelImage` can be: a byte (`Image8`) or a float (`ImageF`).
public protocol PixelChannel: SIMDScalar, Sendable, Hashable, Codable, ExpressibleByIntegerLiteral {
    /// The image type's name and what one channel is called, for messages ("Image8", "bytes").
    static var imageTypeName: String { get }
    static var channelNoun: String { get }
}

extension UInt8: PixelChannel {
    public static var imageTypeName: String { "Image8" }
    public static var channelNoun: String { "bytes" }
}

extension Float: PixelChannel {
    public static var imageTypeName: String { "ImageF" }
    public static var channelNoun: String { "floats" }
}

/// An 8-bit RGBA image: four interleaved bytes per pixel, row 0 at the top.
///
/// This is the layout PNG files are read into and written from; colour values are
/// whatever the producer put there (sRGB-encoded for anything that came from a PNG).
public typealias Image8 = PixelImage<UInt8>

/// A float RGBA image (linear light by convention): four interleaved floats per pixel, row 0 at the top.
public typealias ImageF = PixelImage<Float>

/// An RGBA image: four interleaved channels per pixel, row 0 at the top. Used as `Image8` or
/// `ImageF`; everything here is `@inlinable`, so callers in other modules get code specialised
/// for the channel type, as fast as a non-generic struct.
public struct PixelImage<Channel: PixelChannel>: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// RGBA channels, `width * height * 4` of them. Mutate freely, but keep the count: every
    /// accessor and encoder relies on it. (No `didSet` guards it: an observer makes each
    /// element write from another module copy the whole array.)
    public var pixels: [Channel]

    @inlinable
    public init(width: Int, height: Int, pixels: [Channel]) {
        precondition(width >= 0 && height >= 0, "negative image size")
        precondition(pixels.count == width * height * 4,
                     "\(Channel.imageTypeName) \(width)x\(height) needs \(width * height * 4) \(Channel.channelNoun), got \(pixels.count)")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// A transparent black image.
    @inlinable
    public init(width: Int, height: Int) {
        precondition(width >= 0 && height >= 0, "negative image size")
        self.init(width: width, height: height, pixels: [Channel](repeating: 0, count: width * height * 4))
    }

    /// Offset of pixel (x, y)'s red channel in `pixels`.
    @inlinable public func index(x: Int, y: Int) -> Int {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(width)x\(height)")
        return (y * width + x) * 4
    }

    /// One pixel as (r, g, b, a).
    @inlinable public subscript(x: Int, y: Int) -> SIMD4<Channel> {
        get {
            let i = index(x: x, y: y)
            return SIMD4(pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
        }
        set {
            let i = index(x: x, y: y)
            pixels[i] = newValue.x; pixels[i + 1] = newValue.y
            pixels[i + 2] = newValue.z; pixels[i + 3] = newValue.w
        }
    }

    /// Same size and the same channel values (compared as `Channel`'s `==` does: a NaN float differs).
    @inlinable public static func == (a: Self, b: Self) -> Bool {
        a.width == b.width && a.height == b.height && a.pixels == b.pixels
    }
}

extension PixelImage {
    /// Rows `rows` of the image as an image of their own (a shard's band).
    public func rows(_ rows: Range<Int>) -> PixelImage {
        precondition(rows.lowerBound >= 0 && rows.upperBound <= height, "rows outside the image")
        return PixelImage(width: width, height: rows.count, pixels: Array(pixels[rows.lowerBound * width * 4 ..< rows.upperBound * width * 4]))
    }
}

extension PixelImage where Channel == UInt8 {
    /// Each byte divided by 255; no transfer curve is undone.
    public func toFloat() -> ImageF {
        ImageF(width: width, height: height, pixels: pixels.map { Float($0) / 255 })
    }
}

extension PixelImage where Channel == Float {
    /// Quantises every channel to a byte: clamp to [0, 1], scale by 255, round to nearest.
    /// No transfer curve is applied (encode to sRGB first if the result is for display).
    /// NaN becomes 0: a bad sample in a render must not trap the conversion.
    public func to8Bit() -> Image8 {
        Image8(width: width, height: height, pixels: pixels.map { ImageF.quantize($0) })
    }

    private static func quantize(_ v: Float) -> UInt8 {
        guard !v.isNaN else { return 0 }
        return UInt8((min(max(v, 0), 1) * 255).rounded())
    }

    /// Quantises every channel to 16 bits: clamp to [0, 1], scale by 65535, round to nearest
    /// (NaN becomes 0). No transfer curve is applied: for `PNG.encode16`, which stores linear
    /// light, the values should be linear.
    public func to16Bit() -> [UInt16] {
        pixels.map { ImageF.quantize16($0) }
    }

    /// R, G and B taken as sRGB-encoded display values and decoded to linear light
    /// (`Color.srgbToLinear`, which clamps to [0, 1]); alpha kept.
    public func srgbToLinear() -> ImageF {
        var out = pixels
        for i in 0..<out.count where i & 3 != 3 { out[i] = Color.srgbToLinear(out[i]) }
        return ImageF(width: width, height: height, pixels: out)
    }

    /// One channel as `to16Bit` quantises it.
    public static func quantize16(_ v: Float) -> UInt16 {
        guard !v.isNaN else { return 0 }
        return UInt16((Double(min(max(v, 0), 1)) * 65535).rounded())
    }
}

/// Limits on image dimensions, checked before any pixel buffer is allocated, so that a
/// forged header or a mistyped option fails with a message instead of exhausting memory.
public enum ImageLimits {
    /// Largest width or height accepted.
    public static let maxSide = 32768
    /// Largest pixel count accepted (2^28: 1 GiB as 8-bit RGBA, 4 GiB as float RGBA).
    public static let maxPixels = 1 << 28

    /// Throws a one-line message when `width` x `height` is empty or too large.
    public static func check(width: Int, height: Int) throws(GlintError) {
        guard width >= 1 && height >= 1 else {
            throw GlintError("image size \(width)x\(height) is invalid: width and height must be at least 1")
        }
        guard width <= maxSide && height <= maxSide else {
            throw GlintError("image size \(width)x\(height) is over the limit of \(maxSide) pixels a side")
        }
        guard width * height <= maxPixels else {
            throw GlintError("image size \(width)x\(height) is over the limit of \(maxPixels) pixels")
        }
    }

    /// Default for `inputPixels`: 2^26, an 8192 x 8192 image (256 MiB as 8-bit RGBA, 1 GiB as
    /// float RGBA, a few seconds of blur on two cores).
    public static let defaultInputPixels = 1 << 26

    private static let inputLimit = Locked<Int?>(nil)

    /// Largest pixel count an image read from a file (PNG, PFM) may have: `defaultInputPixels`,
    /// `$GLINT_MAX_PIXELS`, or what `setInputPixels` set (a command's --max-pixels). A decoder
    /// checks it against the header before it allocates the pixels.
    public static var inputPixels: Int {
        inputLimit.withLock { limit in
            if let limit { return limit }
            var value = defaultInputPixels
            if let text = FileIO.environment("GLINT_MAX_PIXELS"), let n = Int(text), (1...maxPixels).contains(n) { value = n }
            limit = value
            return value
        }
    }

    /// Sets `inputPixels` (1 to `maxPixels`; the caller range-checks what users type).
    public static func setInputPixels(_ n: Int) {
        precondition((1...maxPixels).contains(n), "input pixel limit out of range")
        inputLimit.withLock { $0 = n }
    }

    /// Throws a one-line message when an image read from a file is too large: `check`'s limits,
    /// then `inputPixels`, with how to raise it.
    public static func checkInput(width: Int, height: Int) throws(GlintError) {
        try check(width: width, height: height)
        let limit = inputPixels
        guard width * height <= limit else {
            throw GlintError("image size \(width)x\(height) is \(width * height) pixels, over the input limit of \(limit); raise it with --max-pixels N or GLINT_MAX_PIXELS (up to \(maxPixels))")
        }
    }
}
