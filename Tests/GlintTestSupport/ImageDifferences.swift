// Image comparisons for tests, all measured by GlintCore's `ImageCompare` (the measures
// `glint compare` reports), so tests and the tool agree on what a difference is.

import GlintCore

/// How two images of the same size differ (docs/DESIGN.md's parity measures).
public struct ImageComparison: CustomStringConvertible {
    public let difference: ImageDifference

    public init(_ a: Image8, _ b: Image8) throws { difference = try ImageCompare.compare(a, b) }
    public init(_ a: ImageF, _ b: ImageF) throws { difference = try ImageCompare.compare(a, b) }

    /// Largest difference of any channel, in the images' unit (levels for 8-bit images).
    public var maxAbs: Double { difference.overall.maxAbs }
    /// Mean absolute channel difference, in the images' unit.
    public var meanAbs: Double { difference.overall.meanAbs }
    /// Mean absolute channel difference as a fraction of full scale.
    public var meanAbsolute: Double { difference.overall.meanAbs / difference.fullScale }
    /// Peak signal-to-noise ratio in dB (infinite for identical images).
    public var psnr: Double { difference.overall.psnr }
    /// Largest |a-b| / max(|a|, |b|, 1e-6): the float parity measure.
    public var maxRelative: Double { difference.overall.maxRelative }
    /// Fraction of pixels with any channel different.
    public var differingPixels: Double {
        Double(difference.pixelMax.count { $0 != 0 }) / Double(max(difference.pixelMax.count, 1))
    }

    public var description: String {
        "max |diff| \(maxAbs), mean |diff| \(meanAbsolute * 100)% of full scale, PSNR \(psnr) dB, "
            + "\(differingPixels * 100)% of pixels differ"
    }
}

/// Largest difference of any channel between two 8-bit images, in levels.
public func maxDifference(_ a: Image8, _ b: Image8) throws -> Int { Int(try ImageComparison(a, b).maxAbs) }

/// Mean absolute difference over all four channels of two 8-bit images, in levels: alpha counts
/// (as zero) where ImageCompare leaves the alpha of opaque images out.
public func meanDifference(_ a: Image8, _ b: Image8) throws -> Double {
    let d = try ImageComparison(a, b).difference
    return d.overall.meanAbs * Double(d.channels.count) / 4
}

/// Largest |a-b| / max(|a|, |b|, 1e-6) between two float images: docs/DESIGN.md's float parity measure.
public func maxRelative(_ a: ImageF, _ b: ImageF) throws -> Double { try ImageComparison(a, b).maxRelative }
