#if canImport(Glibc)
import Glibc
#endif
import GlintCore

/// The layout of an exponential-map strip (`glint fractal --exp-map COLUMNS`): a zoom from 1 to
/// the view's zoom at its centre as one log-polar image, which `glint zoomvideo` turns into the
/// frames of a zoom video. Column x holds the angle θ = 2π(x + 0.5)/columns (counter-clockwise
/// from +re); row y the radius r = 4 · 2^(−(y + 0.5)/R) around the centre, R = columns·ln 2/(2π)
/// rows an octave, so that the strip's pixels are square in log-polar terms.
///
/// The top row's radius, 4, reaches the corners of a frame at zoom 1 up to an aspect of 3.8:1;
/// the rows go on 2^12 times past 1/zoom, so that the centre pixels of the last frame (up to 4096
/// pixels high) still read the strip.
public struct ExpMapLayout: Sendable, Equatable {
    /// log2 of the radius at the strip's top edge.
    public static let topRadiusLog2 = 2.0
    /// Octaves past 1/zoom the rows go on.
    public static let centreOctaves = 12.0
    public static let maxColumns = 16384

    public let columns: Int
    public let rows: Int

    /// Rows an octave of radius: columns·ln 2/(2π).
    public var rowsPerOctave: Double { ExpMapStrip.Record.squareRowsPerOctave(columns: columns) }
    /// The radius at the top edge.
    public var radius: Double { exp2(Self.topRadiusLog2) }

    /// The strip of `columns` for a zoom of 2^zoomLog2; errors (one line) when it would not fit an image.
    public init(columns: Int, zoomLog2: Double) throws(GlintError) {
        guard (8...Self.maxColumns).contains(columns) else {
            throw GlintError(field: "exp-map", "columns must be between 8 and \(Self.maxColumns) (got \(columns))")
        }
        guard zoomLog2.isFinite, zoomLog2 > 0 else {
            throw GlintError(field: "exp-map", "the zoom must be above 1: the strip runs from zoom 1 to it")
        }
        self.columns = columns
        let octaves = Self.topRadiusLog2 + Self.centreOctaves + zoomLog2
        let rows = (ExpMapStrip.Record.squareRowsPerOctave(columns: columns) * octaves).rounded(.up)
        guard rows <= Double(ImageLimits.maxSide), Double(columns) * rows <= Double(ImageLimits.maxPixels) else {
            throw GlintError(field: "exp-map", "\(columns) columns to 2^\(Int(zoomLog2)) take \(Int(min(rows, 1e15))) rows, over the image limits (\(ImageLimits.maxSide) a side, \(ImageLimits.maxPixels) pixels): use fewer columns or a shallower zoom")
        }
        self.rows = Int(rows)
    }

    /// What both paths read, computed once on the host: per column (cos θ, sin θ), and per row
    /// the radius as a mantissa in [1, 2) and a power of two.
    public func tables() -> (columns: [Double], rowMantissa: [Double], rowExponent: [Int32]) {
        var cols = [Double](repeating: 0, count: 2 * columns)
        for x in 0..<columns {
            let theta = 2 * Double.pi * (Double(x) + 0.5) / Double(columns)
            cols[2 * x] = cos(theta)
            cols[2 * x + 1] = sin(theta)
        }
        var mantissa = [Double](repeating: 0, count: rows), exponent = [Int32](repeating: 0, count: rows)
        let r = rowsPerOctave
        for y in 0..<rows {
            let l = Self.topRadiusLog2 - (Double(y) + 0.5) / r
            let e = l.rounded(.down)
            mantissa[y] = exp2(l - e)
            exponent[y] = Int32(e)
        }
        return (cols, mantissa, exponent)
    }
}

/// An exp-map strip's tables as the perturbation loops read them (ExpMapLayout.tables).
public struct ExpMapTables: Sendable {
    public let columns: [Double]
    public let rowMantissa: [Double]
    public let rowExponent: [Int32]

    public init(_ layout: ExpMapLayout) { (columns, rowMantissa, rowExponent) = layout.tables() }

    /// Sample (sx, sy)'s offset from the centre: (cos θ, sin θ) × the row's mantissa, and its
    /// power of two (exp-map kernels: the same products).
    @inline(__always)
    func offset(sx: Int, sy: Int) -> (re: Double, im: Double, exponent: Int) {
        let m = rowMantissa[sy]
        return (columns[2 * sx] * m, columns[2 * sx + 1] * m, Int(rowExponent[sy]))
    }
}

/// A strip's `glint:expmap` text chunk (ExpMapStrip's record), for glint zoomvideo.
public enum ExpMapRecord {
    /// The layout and the zoom the strip covers, from 1 to the job's.
    public static func entry(job: FractalJob, layout: ExpMapLayout) -> PNG.TextEntry {
        PNG.TextEntry(keyword: ExpMapStrip.keyword,
                      text: ExpMapStrip.recordText(columns: layout.columns, rows: layout.rows, rowsPerOctave: layout.rowsPerOctave,
                                                   radius: layout.radius, zoomStart: DeepNumber(1.0), zoomEnd: job.exactZoom,
                                                   center: job.exactCenter))
    }
}
