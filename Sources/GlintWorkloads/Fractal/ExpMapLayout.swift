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
///
/// A zoom that needs more rows than one image holds is cut into segments (`segments`): each is
/// rows `firstRow ..< firstRow + rows` of the whole strip, computed from their index in the whole
/// strip (so a segment's pixels are the whole strip's), and consecutive segments overlap by the
/// rows one frame reads, so that every frame is assembled from a single segment.
public struct ExpMapLayout: Sendable, Equatable {
    /// log2 of the radius at the strip's top edge.
    public static let topRadiusLog2 = 2.0
    /// Octaves past 1/zoom the rows go on.
    public static let centreOctaves = 12.0
    public static let maxColumns = 16384

    public let columns: Int
    /// This segment's first row in the whole strip (0 for the whole strip or its first segment).
    public let firstRow: Int
    /// This segment's rows.
    public let rows: Int
    /// The whole strip's rows.
    public let wholeRows: Int

    /// Rows an octave of radius: columns·ln 2/(2π).
    public var rowsPerOctave: Double { ExpMapStrip.Record.squareRowsPerOctave(columns: columns) }
    /// The radius at the whole strip's top edge (the record's `radius`).
    public var radius: Double { exp2(Self.topRadiusLog2) }
    /// The radius at this segment's top edge, the largest |dc| of its samples (0 below Double's range).
    public var topRadius: Double { exp2(Self.topRadiusLog2 - Double(firstRow) / rowsPerOctave) }
    /// Whether this layout ends the whole strip (its last rows reach the view's zoom).
    public var isLast: Bool { firstRow + rows == wholeRows }

    /// log2 of the first and last frame zooms this segment serves whole: a frame at zoom z reads
    /// rows R·log2 z to R·(log2 z + 14) of the whole strip, and one more row each side for the
    /// bilinear read (none beyond the whole strip's own ends).
    public var zoomStartLog2: Double { firstRow == 0 ? 0 : Double(firstRow + 1) / rowsPerOctave }
    public func zoomEndLog2(zoomLog2: Double) -> Double {
        isLast ? zoomLog2 : Double(firstRow + rows - 1) / rowsPerOctave - Self.topRadiusLog2 - Self.centreOctaves
    }

    /// The whole strip of `columns` for a zoom of 2^zoomLog2; errors (one line) when it would not fit an image.
    public init(columns: Int, zoomLog2: Double) throws(GlintError) {
        let rows = try Self.wholeRows(columns: columns, zoomLog2: zoomLog2)
        guard Double(rows) <= Double(Self.maxSegmentRows(columns: columns)) else {
            throw GlintError(field: "exp-map", "\(columns) columns to 2^\(Int(zoomLog2)) take \(rows) rows, over the image limits (\(ImageLimits.maxSide) a side, \(ImageLimits.maxPixels) pixels): cut it into segments, or use fewer columns or a shallower zoom")
        }
        self.init(columns: columns, firstRow: 0, rows: rows, wholeRows: rows)
    }

    private init(columns: Int, firstRow: Int, rows: Int, wholeRows: Int) {
        (self.columns, self.firstRow, self.rows, self.wholeRows) = (columns, firstRow, rows, wholeRows)
    }

    /// The most rows one segment of `columns` may have: an image's limits.
    public static func maxSegmentRows(columns: Int) -> Int { min(ImageLimits.maxSide, ImageLimits.maxPixels / columns) }

    /// Rows two consecutive segments share: the 14 octaves one frame reads, and a row each side.
    public static func overlapRows(columns: Int) -> Int {
        Int((ExpMapStrip.Record.squareRowsPerOctave(columns: columns) * (topRadiusLog2 + centreOctaves)).rounded(.up)) + 2
    }

    /// The rows of the whole strip of `columns` to 2^zoomLog2: R·(2 + 12 + log2 zoom), rounded up.
    static func wholeRows(columns: Int, zoomLog2: Double) throws(GlintError) -> Int {
        guard (8...Self.maxColumns).contains(columns) else {
            throw GlintError(field: "exp-map", "columns must be between 8 and \(Self.maxColumns) (got \(columns))")
        }
        guard zoomLog2.isFinite, zoomLog2 > 0 else {
            throw GlintError(field: "exp-map", "the zoom must be above 1: the strip runs from zoom 1 to it")
        }
        let rows = (ExpMapStrip.Record.squareRowsPerOctave(columns: columns) * (topRadiusLog2 + centreOctaves + zoomLog2)).rounded(.up)
        // A strip of more than 2^40 rows (1e10000 at 16384 columns is 2^22) is no strip to render.
        guard rows <= 0x1p40 else {
            throw GlintError(field: "exp-map", "\(columns) columns to 2^\(Int(zoomLog2)) take about \(Int(min(rows, 1e15))) rows: use fewer columns or a shallower zoom")
        }
        return Int(rows)
    }

    /// The strip of `columns` for a zoom of 2^zoomLog2, whole when it fits `segmentRows` (default:
    /// what one image holds), else as segments of `segmentRows` rows (the last one shorter), each
    /// starting `segmentRows − overlapRows` rows after the one before.
    public static func segments(columns: Int, zoomLog2: Double, segmentRows: Int? = nil) throws(GlintError) -> [ExpMapLayout] {
        let whole = try wholeRows(columns: columns, zoomLog2: zoomLog2)
        let most = maxSegmentRows(columns: columns), overlap = overlapRows(columns: columns)
        let n = segmentRows ?? most
        guard n <= most else {
            throw GlintError(field: "segment-rows", "\(n) rows of \(columns) columns are over the image limits (at most \(most))")
        }
        guard n > overlap + 1 else {
            throw GlintError(field: "segment-rows", "must be above \(overlap + 1) for \(columns) columns: consecutive segments share \(overlap) rows, the 14 octaves one frame reads (got \(n))")
        }
        var layouts: [ExpMapLayout] = []
        var first = 0
        while first + n < whole {
            layouts.append(ExpMapLayout(columns: columns, firstRow: first, rows: n, wholeRows: whole))
            first += n - overlap
        }
        layouts.append(ExpMapLayout(columns: columns, firstRow: first, rows: whole - first, wholeRows: whole))
        return layouts
    }

    /// What both paths read, computed once on the host: per column (cos θ, sin θ), and per row
    /// the radius as a mantissa in [1, 2) and a power of two, from the row's index in the whole strip.
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
            let l = Self.topRadiusLog2 - (Double(firstRow + y) + 0.5) / r
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
    /// 2π/columns: a strip pixel's side in units of its row's radius (the derivative's unit).
    public let pixelAngle: Double

    public init(_ layout: ExpMapLayout) {
        (columns, rowMantissa, rowExponent) = layout.tables()
        pixelAngle = Self.pixelAngle(columns: layout.columns)
    }

    /// 2π/columns, as the kernels compute it (2.0·M_PI/(double)columns: the same bits).
    static func pixelAngle(columns: Int) -> Double { 2 * Double.pi / Double(columns) }

    /// Row sy's pixel side as a mantissa at the row's power of two (`offset`'s exponent): the
    /// unit the derivative is carried in, so that a strip's distances are in its own pixels.
    @inline(__always)
    func spacing(sy: Int) -> Double { rowMantissa[sy] * pixelAngle }

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
    /// The layout and the zooms the strip (or segment) serves: from 1, or the segment's first
    /// whole frame, to the job's zoom, or the segment's last whole frame.
    public static func entry(job: FractalJob, layout: ExpMapLayout) -> PNG.TextEntry {
        let zoomLog2 = job.exactZoom.log2Magnitude ?? 0
        let start = layout.firstRow == 0 ? DeepNumber(1.0) : DeepNumber(power2: layout.zoomStartLog2)
        let end = layout.isLast ? job.exactZoom : DeepNumber(power2: layout.zoomEndLog2(zoomLog2: zoomLog2))
        return PNG.TextEntry(keyword: ExpMapStrip.keyword,
                             text: ExpMapStrip.recordText(columns: layout.columns, rows: layout.rows, firstRow: layout.firstRow,
                                                          wholeRows: layout.rows == layout.wholeRows ? nil : layout.wholeRows,
                                                          rowsPerOctave: layout.rowsPerOctave, radius: layout.radius,
                                                          zoomStart: start, zoomEnd: end, center: job.exactCenter))
    }
}

extension DeepNumber {
    /// 2^`l` as a decimal of 15 significant digits (any l: 2^30000 is about 8e9030), for a
    /// segment's zooms, which are read back only through their log2.
    public init(power2 l: Double) {
        let t = l * log10(2.0)
        var e = Int(t.rounded(.down))
        var digits = Int((pow(10, t - Double(e)) * 1e14).rounded())
        if digits >= 1_000_000_000_000_000 { (digits, e) = (digits / 10, e + 1) }
        let text = String(digits)
        // d.dddde±E always parses.
        try! self.init(parsing: "\(text.prefix(1)).\(text.dropFirst())e\(e)")
    }
}
