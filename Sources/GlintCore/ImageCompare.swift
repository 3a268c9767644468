import Glibc

/// Difference statistics of one channel (or of all channels together).
///
/// Values are in the images' own unit: levels 0...255 for 8-bit images, plain values for float
/// images. `fullScale` is that unit's peak (255 or 1), used for PSNR and for shares of full scale.
public struct ChannelDifference: Sendable, Equatable {
    /// Largest |a - b|.
    public var maxAbs: Double
    /// Mean |a - b|.
    public var meanAbs: Double
    /// Root of the mean squared difference.
    public var rmse: Double
    /// 20 log10(fullScale / RMSE) in dB; +infinity for identical channels.
    public var psnr: Double
    /// Pixels whose difference is over the threshold (1 level for 8-bit images), and their share.
    public var pixelsOver: Int
    public var shareOver: Double
    /// Largest |a - b| / max(|a|, |b|) over the pixels where either is non-zero (float images;
    /// values below `relativeFloor` count as that floor, so noise at zero is not a huge ratio).
    public var maxRelative: Double
}

/// How two images differ: per channel and overall.
public struct ImageDifference: Sendable {
    public let width: Int
    public let height: Int
    /// "R", "G", "B" and, when either image has any non-opaque pixel, "A".
    public let channelNames: [String]
    public let channels: [ChannelDifference]
    /// All compared channels together; `pixelsOver` counts pixels with any channel over.
    public let overall: ChannelDifference
    /// 255 for 8-bit images, 1 for float images.
    public let fullScale: Double
    /// The per-pixel difference threshold for `pixelsOver` (1 level, or 1/255 for float images).
    public let threshold: Double
    /// Per pixel, the largest channel difference (row-major): the source of the heat map.
    public let pixelMax: [Float]

    public var identical: Bool { overall.maxAbs == 0 }
}

public enum ImageCompare {
    /// Values below this magnitude count as this for relative errors.
    public static let relativeFloor = 1e-6

    /// Compares two 8-bit images of the same size. Alpha is compared only when either image has
    /// a pixel that is not opaque (an RGB PNG reads as opaque RGBA).
    public static func compare(_ a: Image8, _ b: Image8) throws(GlintError) -> ImageDifference {
        try checkSizes(a.width, a.height, b.width, b.height)
        let withAlpha = hasAlpha(a.pixels) || hasAlpha(b.pixels)
        return a.pixels.withUnsafeBufferPointer { pa in
            b.pixels.withUnsafeBufferPointer { pb in
                measure(width: a.width, height: a.height, channels: withAlpha ? 4 : 3, fullScale: 255, threshold: 1) { i in
                    (Double(pa[i]), Double(pb[i]))
                }
            }
        }
    }

    /// Compares two float images of the same size (alpha as for 8-bit images, 1 being opaque).
    public static func compare(_ a: ImageF, _ b: ImageF) throws(GlintError) -> ImageDifference {
        try checkSizes(a.width, a.height, b.width, b.height)
        let withAlpha = a.pixels.enumerated().contains { $0.offset % 4 == 3 && $0.element != 1 }
            || b.pixels.enumerated().contains { $0.offset % 4 == 3 && $0.element != 1 }
        return a.pixels.withUnsafeBufferPointer { pa in
            b.pixels.withUnsafeBufferPointer { pb in
                measure(width: a.width, height: a.height, channels: withAlpha ? 4 : 3, fullScale: 1, threshold: 1.0 / 255) { i in
                    (Double(pa[i]), Double(pb[i]))
                }
            }
        }
    }

    private static func checkSizes(_ aw: Int, _ ah: Int, _ bw: Int, _ bh: Int) throws(GlintError) {
        guard aw == bw && ah == bh else {
            throw GlintError("the images differ in size: \(aw)x\(ah) and \(bw)x\(bh)")
        }
    }

    private static func hasAlpha(_ p: [UInt8]) -> Bool {
        var i = 3
        while i < p.count { if p[i] != 255 { return true }; i += 4 }
        return false
    }

    /// One pass over RGBA-interleaved values; `value(i)` gives (a, b) of element i.
    private static func measure(width: Int, height: Int, channels: Int, fullScale: Double, threshold: Double,
                                value: (Int) -> (Double, Double)) -> ImageDifference {
        let n = width * height
        var maxAbs = [Double](repeating: 0, count: channels), sumAbs = maxAbs, sumSq = maxAbs, maxRel = maxAbs
        var over = [Int](repeating: 0, count: channels)
        var pixelsOver = 0
        var pixelMax = [Float](repeating: 0, count: n)
        for p in 0..<n {
            var largest = 0.0
            for c in 0..<channels {
                let (x, y) = value(p * 4 + c)
                let d = abs(x - y)
                maxAbs[c] = max(maxAbs[c], d)
                sumAbs[c] += d
                sumSq[c] += d * d
                if d > threshold { over[c] += 1 }
                if d > 0 { maxRel[c] = max(maxRel[c], d / max(abs(x), abs(y), relativeFloor)) }
                largest = max(largest, d)
            }
            pixelMax[p] = Float(largest)
            if largest > threshold { pixelsOver += 1 }
        }
        func stats(maxAbs: Double, sumAbs: Double, sumSq: Double, count: Int, over: Int, pixels: Int, maxRel: Double) -> ChannelDifference {
            let rmse = count > 0 ? (sumSq / Double(count)).squareRoot() : 0
            return ChannelDifference(maxAbs: maxAbs, meanAbs: count > 0 ? sumAbs / Double(count) : 0, rmse: rmse,
                                     psnr: rmse > 0 ? 20 * log10(fullScale / rmse) : .infinity,
                                     pixelsOver: over, shareOver: pixels > 0 ? Double(over) / Double(pixels) : 0,
                                     maxRelative: maxRel)
        }
        let perChannel = (0..<channels).map {
            stats(maxAbs: maxAbs[$0], sumAbs: sumAbs[$0], sumSq: sumSq[$0], count: n, over: over[$0], pixels: n, maxRel: maxRel[$0])
        }
        let overall = stats(maxAbs: maxAbs.max() ?? 0, sumAbs: sumAbs.reduce(0, +), sumSq: sumSq.reduce(0, +),
                            count: n * channels, over: pixelsOver, pixels: n, maxRel: maxRel.max() ?? 0)
        return ImageDifference(width: width, height: height, channelNames: Array(["R", "G", "B", "A"].prefix(channels)),
                               channels: perChannel, overall: overall, fullScale: fullScale, threshold: threshold,
                               pixelMax: pixelMax)
    }

    /// A false-colour map of where and how much two images differ: equal pixels show image A's
    /// luminance dimmed to a third (for orientation); differing pixels run from dark blue through
    /// red and yellow to white at the largest difference. Opaque RGB.
    public static func heatMap(_ difference: ImageDifference, background a: Image8) -> Image8 {
        let largest = Double(difference.pixelMax.max() ?? 0)
        var out = [UInt8](repeating: 255, count: difference.width * difference.height * 4)
        for p in 0..<difference.width * difference.height {
            let d = Double(difference.pixelMax[p])
            let rgb: SIMD3<Double>
            if d == 0 || largest == 0 {
                let i = p * 4
                let y = (0.2126 * Double(a.pixels[i]) + 0.7152 * Double(a.pixels[i + 1]) + 0.0722 * Double(a.pixels[i + 2])) / 3
                rgb = SIMD3(repeating: y)
            } else {
                rgb = heatColor(d / largest) * 255
            }
            out[p * 4] = UInt8(min(max(rgb.x.rounded(), 0), 255))
            out[p * 4 + 1] = UInt8(min(max(rgb.y.rounded(), 0), 255))
            out[p * 4 + 2] = UInt8(min(max(rgb.z.rounded(), 0), 255))
        }
        return Image8(width: difference.width, height: difference.height, pixels: out)
    }

    /// The heat ramp at t in (0, 1]: dark blue, magenta, red, yellow, white; even the smallest
    /// difference stands out against the dimmed background.
    public static func heatColor(_ t: Double) -> SIMD3<Double> {
        let stops: [SIMD3<Double>] = [SIMD3(0.10, 0.10, 0.60), SIMD3(0.75, 0.10, 0.75), SIMD3(0.95, 0.15, 0.10),
                                      SIMD3(1.00, 0.85, 0.10), SIMD3(1.00, 1.00, 1.00)]
        let x = min(max(t, 0), 1) * Double(stops.count - 1)
        let i = min(Int(x), stops.count - 2)
        let f = x - Double(i)
        return stops[i] + (stops[i + 1] - stops[i]) * f
    }
}

// MARK: Tolerances

/// When two outputs count as matching: every criterion must hold. docs/DESIGN.md's parity table
/// gives each workload's; `--tolerance` spells one for image pairs.
public struct Tolerance: Sendable, Equatable, CustomStringConvertible {
    public enum Criterion: Sendable, Equatable {
        /// Every value equal.
        case identical
        /// Largest difference at most this (levels for 8-bit images).
        case maxAbs(Double)
        /// Mean absolute difference below this fraction of full scale.
        case meanBelow(Double)
        /// PSNR at least this many dB.
        case minPSNR(Double)
        /// Largest relative difference at most this (float images).
        case maxRelative(Double)
    }

    public var criteria: [Criterion]
    public init(_ criteria: [Criterion]) { self.criteria = criteria }

    /// Fractal colours; blur, mist, isometric and pulse 8-bit output: within 1 level.
    public static let oneLevel = Tolerance([.maxAbs(1)])
    /// The ray tracer: mean absolute difference < 0.5% of full scale and PSNR >= 40 dB.
    public static let statistical = Tolerance([.meanBelow(0.005), .minPSNR(40)])
    /// Float outputs of blur, mist, isometric and pulse.
    public static let floatRelative = Tolerance([.maxRelative(1e-5)])

    /// Parses `exact`, `N` or `max:N`, `mean:P%` (or a fraction), `psnr:DB`, `rel:X`, joined by commas.
    public init(parsing text: String) throws(GlintError) {
        var list: [Criterion] = []
        for part in text.lowercased().split(separator: ",").map({ $0.trimmingCharacters() }) {
            let pieces = part.split(separator: ":", maxSplits: 1).map(String.init)
            func number(_ s: String) throws(GlintError) -> Double {
                var s = s
                var scale = 1.0
                if s.hasSuffix("%") { s.removeLast(); scale = 0.01 }
                guard let v = Double(s), v.isFinite, v >= 0 else {
                    throw GlintError("tolerance '\(text)': '\(part)' needs a non-negative number")
                }
                return v * scale
            }
            if part == "exact" || part == "identical" { list.append(.identical); continue }
            if pieces.count == 1 { list.append(.maxAbs(try number(pieces[0]))); continue }
            switch pieces[0] {
            case "max": list.append(.maxAbs(try number(pieces[1])))
            case "mean": list.append(.meanBelow(try number(pieces[1])))
            case "psnr": list.append(.minPSNR(try number(pieces[1])))
            case "rel": list.append(.maxRelative(try number(pieces[1])))
            default:
                throw GlintError("tolerance '\(text)': unknown criterion '\(pieces[0])' (use exact, max:N, mean:P%, psnr:DB, rel:X)")
            }
        }
        guard !list.isEmpty else { throw GlintError("tolerance '\(text)' is empty (use exact, max:N, mean:P%, psnr:DB, rel:X)") }
        criteria = list
    }

    /// Each criterion, whether it holds, and a line saying so: "max 1 <= 1: pass".
    public func evaluate(_ d: ImageDifference) -> [(passed: Bool, text: String)] {
        criteria.map { c in
            let o = d.overall
            switch c {
            case .identical:
                return (o.maxAbs == 0, "identical: max difference \(short(o.maxAbs))")
            case .maxAbs(let limit):
                return (o.maxAbs <= limit, "max difference \(short(o.maxAbs)) <= \(short(limit))")
            case .meanBelow(let f):
                let share = o.meanAbs / d.fullScale
                return (share < f, "mean difference \(short(share * 100))% of full scale < \(short(f * 100))%")
            case .minPSNR(let db):
                return (o.psnr >= db, "PSNR \(o.psnr.isFinite ? short(o.psnr) + " dB" : "inf") >= \(short(db)) dB")
            case .maxRelative(let r):
                return (o.maxRelative <= r, "max relative difference \(short(o.maxRelative)) <= \(short(r))")
            }
        }
    }

    public func passes(_ d: ImageDifference) -> Bool { evaluate(d).allSatisfy(\.passed) }

    public var description: String {
        criteria.map { c in
            switch c {
            case .identical: "exact"
            case .maxAbs(let v): "max:\(short(v))"
            case .meanBelow(let f): "mean:\(short(f * 100))%"
            case .minPSNR(let db): "psnr:\(short(db))"
            case .maxRelative(let r): "rel:\(short(r))"
            }
        }.joined(separator: ",")
    }
}

/// A number in a few significant digits without Foundation: 1, 0.5, 1e-05, 40.
func short(_ x: Double) -> String {
    guard x.isFinite else { return x.isNaN ? "nan" : (x > 0 ? "inf" : "-inf") }
    if x == x.rounded() && abs(x) < 1e15 { return String(Int64(x)) }
    var s = String(x)
    if s.count > 8, abs(x) >= 1e-3, abs(x) < 1e6 {
        let p = 1e4
        s = String((x * p).rounded() / p)
    }
    return s
}
