import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// How a blur is computed.
public enum BlurMethod: String, CaseIterable, Sendable {
    /// The sampled Gaussian, separable, with OpenCV's kernel size and (8-bit) fixed-point arithmetic.
    case exact
    /// A cascade of four box filters (running sums): constant time per pixel whatever sigma.
    case recursive
    /// `exact` up to `BlurJob.autoRecursiveAbove`, `recursive` above.
    case auto
}

/// What lies beyond the image's edges. Raw values are the kernels' GLINT_BORDER_* codes.
public enum BorderMode: String, CaseIterable, Sendable {
    /// gfedcb|abcdefgh|gfedcba (OpenCV's BORDER_REFLECT_101, its default).
    case reflect101
    /// aaaaaa|abcdefgh|hhhhhhh
    case clamp
    /// cdefgh|abcdefgh|abcdefg
    case wrap
    /// 000000|abcdefgh|0000000
    case zero

    /// The index of the source sample for index `i` of a line of `n`, or -1 for a zero.
    /// Reflection repeats as often as needed, as OpenCV's `borderInterpolate` does.
    public func map(_ i: Int, _ n: Int) -> Int {
        if i >= 0 && i < n { return i }
        switch self {
        case .zero: return -1
        case .clamp: return i < 0 ? 0 : n - 1
        case .wrap: return ((i % n) + n) % n
        case .reflect101:
            if n == 1 { return 0 }
            var p = i
            repeat {
                p = p < 0 ? -p : 2 * (n - 1) - p
            } while p < 0 || p >= n
            return p
        }
    }
}

/// One blur, fully described.
public struct BlurJob: Sendable, Equatable {
    /// Standard deviation of the Gaussian, in pixels.
    public var sigma = 2.0
    public var method = BlurMethod.auto
    public var border = BorderMode.reflect101

    public init(sigma: Double = 2, method: BlurMethod = .auto, border: BorderMode = .reflect101) {
        self.sigma = sigma
        self.method = method
        self.border = border
    }

    /// Largest sigma accepted: beyond it a blur of any image Glint accepts is a flat colour.
    public static let maxSigma = 2000.0
    /// `auto` takes the recursive method above this sigma (the exact method's cost grows with it).
    public static let autoRecursiveAbove = 3.0

    public func validate() throws(GlintError) {
        guard sigma.isFinite, sigma > 0 else { throw GlintError(field: "sigma", "must be a positive number (got \(sigma))") }
        guard sigma <= Self.maxSigma else { throw GlintError(field: "sigma", "must be at most \(Int(Self.maxSigma)) (got \(sigma))") }
    }

    /// `exact` or `recursive`: what `auto` stands for at this sigma.
    public var resolvedMethod: BlurMethod {
        switch method {
        case .auto: sigma > Self.autoRecursiveAbove ? .recursive : .exact
        default: method
        }
    }
}

/// The two pixel formats a blur takes: 8-bit RGBA and float RGBA.
public enum PixelFormat: String, Sendable {
    case u8, f32
}

/// Everything either path needs for one (job, format, size), computed once.
public struct BlurPlan: Sendable {
    public let method: BlurMethod
    public let format: PixelFormat
    public let border: BorderMode
    public let width: Int
    public let height: Int
    /// Samples added beyond each edge: the kernel radius (exact) or the sum of the box radii (recursive).
    public let pad: Int
    /// Exact: kernel radius; the kernel has 2*radius+1 taps.
    public let radius: Int
    /// Exact, 8-bit: taps in 1/256 (sum 256), OpenCV's bit-exact fixed-point kernel.
    public let fixedTaps: [UInt16]
    /// Exact: taps as floats (8-bit: the fixed-point taps as whole numbers; float: summing to 1).
    public let floatTaps: [Float]
    /// Recursive: the four box widths (odd) and 1 / their product.
    public let boxWidths: [Int]
    public let boxScale: Float
    /// For each extended index (-pad ..< n+pad, stored from 0) the source index, or -1 (zero border).
    public let rowMap: [Int32]
    public let colMap: [Int32]

    public static let boxPasses = 4

    /// The variant a GPU calibration measures apart: `u8-exact`, `f32-recursive`, ...
    public static func autoVariant(_ job: BlurJob, format: PixelFormat) -> String { "\(format.rawValue)-\(job.resolvedMethod.rawValue)" }
    /// The work a GPU calibration weighs: pixels, times the taps for the exact method (whose
    /// cost on the Swift path grows with them, while a GPU's stays mostly its copies).
    public static func autoWork(_ job: BlurJob, format: PixelFormat, width: Int, height: Int) -> Double {
        Double(width * height) * (job.resolvedMethod == .exact ? Double(kernelSize(sigma: job.sigma, format: format)) : 1)
    }

    public init(job: BlurJob, format: PixelFormat, width: Int, height: Int) {
        self.format = format
        self.border = job.border
        self.width = width
        self.height = height
        method = job.resolvedMethod
        if method == .exact {
            let n = Self.kernelSize(sigma: job.sigma, format: format)
            radius = n / 2
            let taps = Self.gaussian(n: n, sigma: job.sigma)
            if format == .u8 {
                fixedTaps = Self.fixedPoint(taps)
                floatTaps = fixedTaps.map { Float($0) }
            } else {
                fixedTaps = []
                floatTaps = taps.map { Float($0) }
            }
            boxWidths = []
            boxScale = 1
            pad = radius
        } else {
            radius = 0
            fixedTaps = []
            floatTaps = []
            boxWidths = Self.boxWidths(sigma: job.sigma, passes: Self.boxPasses)
            boxScale = Float(1 / boxWidths.reduce(1.0) { $0 * Double($1) })
            pad = boxWidths.reduce(0) { $0 + ($1 - 1) / 2 }
        }
        let p = pad, border = job.border
        rowMap = (0 ..< height + 2 * p).map { Int32(border.map($0 - p, height)) }
        colMap = (0 ..< width + 2 * p).map { Int32(border.map($0 - p, width)) }
    }

    /// OpenCV's kernel size from sigma: round(sigma*3*2+1)|1 for 8-bit, round(sigma*4*2+1)|1 for float.
    public static func kernelSize(sigma: Double, format: PixelFormat) -> Int {
        let k = (sigma * (format == .u8 ? 3 : 4) * 2 + 1).rounded(.toNearestOrEven)
        return Int(k) | 1
    }

    /// The sampled Gaussian of `n` taps, normalised to sum 1, computed as OpenCV's
    /// getGaussianKernelBitExact does (in double; it uses soft-float doubles).
    public static func gaussian(n: Int, sigma: Double) -> [Double] {
        let scale2X = -0.125 / (sigma * sigma)
        let half = (n - 1) / 2
        var values = [Double](repeating: 0, count: half)
        var sum = 0.0
        var x = 1 - n
        for i in 0..<half {
            let t = exp(Double(x * x) * scale2X)
            values[i] = t
            sum += t
            x += 2
        }
        sum = sum * 2 + 1
        let mul = 1 / sum
        var result = [Double](repeating: 0, count: n)
        for i in 0..<half {
            result[i] = values[i] * mul
            result[n - 1 - i] = result[i]
        }
        result[half] = mul
        return result
    }

    /// OpenCV's fixed-point kernel for 8-bit images: 8 fraction bits, rounded with error
    /// diffusion from the outside in, the centre tap taking what makes the sum exactly 256.
    public static func fixedPoint(_ taps: [Double]) -> [UInt16] {
        let n = taps.count, half = n / 2
        var result = [UInt16](repeating: 0, count: n)
        var err = 0.0
        var sum = 0
        for i in 0..<half {
            let adjusted = taps[i] * 256 + err
            let v = Int(adjusted.rounded(.toNearestOrEven))
            err = adjusted - Double(v)
            result[i] = UInt16(clamping: v)
            result[n - 1 - i] = result[i]
            sum += v
        }
        result[half] = UInt16(clamping: 256 - 2 * sum)
        return result
    }

    /// Box widths whose cascade has (nearly) the Gaussian's variance: `passes` odd widths, the
    /// first m of width wl and the rest wl+2, m chosen to match sigma^2 best (Kovesi's ideal sizes).
    public static func boxWidths(sigma: Double, passes k: Int) -> [Int] {
        let ideal = (12 * sigma * sigma / Double(k) + 1).squareRoot()
        var wl = Int(ideal.rounded(.down))
        if wl % 2 == 0 { wl -= 1 }
        wl = max(wl, 1)
        let wu = wl + 2
        let s2 = 12 * sigma * sigma
        let mIdeal = (s2 - Double(k * wl * wl) - Double(4 * k * wl) - Double(3 * k)) / Double(-4 * wl - 4)
        let m = min(max(Int(mIdeal.rounded()), 0), k)
        return (0..<k).map { $0 < m ? wl : wu }
    }

    /// Recursive: the scale of the vertical pass's output (8-bit: kept in 1/256 as UInt16) and of
    /// the horizontal pass's.
    public var midScale: Float { format == .u8 ? boxScale * 256 : boxScale }
    public var outScale: Float { format == .u8 ? boxScale / 256 : boxScale }

    /// The sigma the box cascade really has.
    public var boxSigma: Double {
        (boxWidths.reduce(0.0) { $0 + Double($1 * $1 - 1) / 12 }).squareRoot()
    }

    /// Bytes of one image of this plan.
    public var imageBytes: Int { width * height * 4 * (format == .u8 ? 1 : 4) }
}

/// What a blur produced.
public struct BlurResult<Image: Sendable>: Sendable {
    public var image: Image
    /// `exact` or `recursive`: what ran.
    public var method: BlurMethod
    /// OpenCL kernel time from profiling events (0 on the CPU path).
    public var kernelSeconds: Double
    /// Wall time, transfers included.
    public var wallSeconds: Double
    /// The OpenCL kernels' form (`CLBlur.form`); nil on the CPU path.
    public var kernelForm: String? = nil
}

extension BlurJob: PixelIdentifiable {
    /// The method `auto` stands for, not `auto` itself: they blur alike.
    public func writeIdentity(into identity: inout PixelIdentity) {
        identity.add("blur", fields: sigma, resolvedMethod.rawValue, border.rawValue)
    }
}
