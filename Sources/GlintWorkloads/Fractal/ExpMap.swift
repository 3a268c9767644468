import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// An exponential map (log-polar strip) of a zoom: one PNG whose columns go once round the centre
/// and whose rows go down in radius at a constant number of rows per octave, so that every frame
/// of a zoom into that centre, at any depth between the strip's two zooms, is a resampling of it.
///
/// The strip carries its geometry in one tEXt chunk, keyword `glint:expmap`, of `key=value` lines:
///
///     version=1
///     columns=1024                  (W: the image's width)
///     rows=8359                     (H: the image's height)
///     rows-per-octave=112.9620...   (R = W·ln2/(2π): strip pixels are square in log-polar)
///     radius=4.0                    (r0: the radius in the plane at the top edge, v = 0)
///     zoom-start=1                  (Z0: the first frame's zoom, Glint's convention)
///     zoom-end=1e18                 (Z1: the last frame's zoom, larger than Z0)
///     center=-0.743...,0.131...     (the zoom's centre: recorded, not used to assemble frames)
///     first-row=0                   (a: for a segment of a longer strip, its first row's index
///                                    in the whole strip; absent means 0)
///     whole-rows=377000             (for a segment: the whole strip's rows; absent for a whole strip)
///
/// `radius`, `zoom-start` and `zoom-end` are decimal texts of any size (1e1000), read as
/// `DeepNumber`s and used only through their log2, so nothing underflows at any depth. Unknown
/// keys are ignored.
///
/// Geometry: at strip position (u, v), u in [0, W) and v in [0, H), the radius is
/// r0·2^(−(a + v)/R) and the angle 2π·u/W, counter-clockwise from +re (+re to the right of the
/// picture, +im up). Strip pixel (x, y) is the sample at u = x + 0.5, v = y + 0.5.
///
/// A zoom deeper than one image's rows reach is written as segments, each a strip of its own
/// with `first-row` set and the zooms it serves whole (ExpMapLayout.segments); `ExpMapSequence`
/// reads them together.
public struct ExpMapStrip: Sendable {
    /// The PNG text keyword of the record.
    public static let keyword = "glint:expmap"
    public static let version = 1

    /// The record's fields, as the strip's renderer writes them and `frame` reads them.
    public struct Record: Sendable, Equatable {
        public var columns: Int
        public var rows: Int
        /// a: the first row's index in the whole strip (0 but for a segment).
        public var firstRow: Int
        /// A segment's whole strip's rows (nil for a whole strip).
        public var wholeRows: Int?
        /// R: rows per halving of the radius.
        public var rowsPerOctave: Double
        /// r0: the radius at the top edge, in plane units.
        public var radius: DeepNumber
        public var zoomStart: DeepNumber
        public var zoomEnd: DeepNumber
        public var center: DeepComplex

        public init(columns: Int, rows: Int, firstRow: Int = 0, wholeRows: Int? = nil, rowsPerOctave: Double, radius: DeepNumber,
                    zoomStart: DeepNumber, zoomEnd: DeepNumber, center: DeepComplex) {
            (self.columns, self.rows, self.firstRow, self.wholeRows, self.rowsPerOctave) = (columns, rows, firstRow, wholeRows, rowsPerOctave)
            (self.radius, self.zoomStart, self.zoomEnd, self.center) = (radius, zoomStart, zoomEnd, center)
        }

        /// The `key=value` text, one field a line, each decimal as given.
        public var text: String {
            ExpMapStrip.recordText(columns: columns, rows: rows, firstRow: firstRow, wholeRows: wholeRows, rowsPerOctave: rowsPerOctave,
                                   radius: radius, zoomStart: zoomStart, zoomEnd: zoomEnd, center: center)
        }

        /// R for square strip pixels: W·ln2/(2π).
        public static func squareRowsPerOctave(columns: Int) -> Double {
            Double(columns) * M_LN2 / (2 * Double.pi)
        }

        /// Reads a record's text; every refusal is one line naming the key.
        public init(parsing text: String) throws(GlintError) {
            var seen: [String: String] = [:]
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) where !line.trimmingCharacters().isEmpty {
                guard let eq = line.firstIndex(of: "=") else {
                    throw Self.garbled("a line without '=': \(JSON.printable(String(line), limit: 40))")
                }
                let key = line[..<eq].trimmingCharacters(), value = line[line.index(after: eq)...].trimmingCharacters()
                guard seen[key] == nil else { throw Self.garbled("\(key) given twice") }
                seen[key] = value
            }
            func value(_ key: String) throws(GlintError) -> String {
                guard let v = seen[key] else { throw Self.garbled("no \(key) line") }
                return v
            }
            let version = try value("version")
            guard version == String(ExpMapStrip.version) else {
                throw GlintError("an exp-map record of version \(JSON.printable(version, limit: 20)); this glint reads version \(ExpMapStrip.version)")
            }
            let (w, h) = (try value("columns"), try value("rows"))
            guard let columns = Int(w), let rows = Int(h) else { throw Self.garbled("columns=\(JSON.printable(w, limit: 20)), rows=\(JSON.printable(h, limit: 20)): not whole numbers") }
            do throws(GlintError) { try ImageLimits.check(width: columns, height: rows) } catch {
                throw Self.garbled("columns=\(columns), rows=\(rows): \(error.message)")
            }
            var firstRow = 0
            if let a = seen["first-row"] {
                // 2^40 rows bound any strip (ExpMapLayout): larger is no strip's.
                guard let n = Int(a), (0...(1 << 40)).contains(n) else {
                    throw Self.garbled("first-row=\(JSON.printable(a, limit: 20)) is not a whole number from 0 to 2^40")
                }
                firstRow = n
            }
            var wholeRows: Int?
            if let t = seen["whole-rows"] {
                guard let n = Int(t), n >= firstRow + rows, n <= 1 << 40 else {
                    throw Self.garbled("whole-rows=\(JSON.printable(t, limit: 20)) is not a whole number from first-row + rows to 2^40")
                }
                wholeRows = n
            }
            let r = try value("rows-per-octave")
            guard let rowsPerOctave = Double(r), rowsPerOctave.isFinite, rowsPerOctave > 0 else {
                throw Self.garbled("rows-per-octave=\(JSON.printable(r, limit: 40)) is not a positive finite number")
            }
            let radius = try Self.positive(value("radius"), key: "radius")
            let zoomStart = try Self.positive(value("zoom-start"), key: "zoom-start")
            let zoomEnd = try Self.positive(value("zoom-end"), key: "zoom-end")
            guard Self.less(zoomStart, zoomEnd) else {
                throw Self.garbled("zoom-end=\(JSON.printable(zoomEnd.text, limit: 30)) is not above zoom-start=\(JSON.printable(zoomStart.text, limit: 30))")
            }
            let c = try value("center")
            let parts = c.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters() }
            guard parts.count == 2, let re = try? DeepNumber(parsing: parts[0]), let im = try? DeepNumber(parsing: parts[1]) else {
                throw Self.garbled("center=\(JSON.printable(c, limit: 40)) is not two decimal numbers RE,IM")
            }
            self.init(columns: columns, rows: rows, firstRow: firstRow, wholeRows: wholeRows, rowsPerOctave: rowsPerOctave, radius: radius,
                      zoomStart: zoomStart, zoomEnd: zoomEnd, center: DeepComplex(re: re, im: im))
        }

        private static func garbled(_ why: String) -> GlintError { GlintError("garbled exp-map record (\(why))") }

        /// A decimal above zero, of any size.
        private static func positive(_ text: String, key: String) throws(GlintError) -> DeepNumber {
            guard let n = try? DeepNumber(parsing: text), !n.isNegative, !n.isZero else {
                throw garbled("\(key)=\(JSON.printable(text, limit: 40)) is not a positive decimal number")
            }
            return n
        }

        /// a < b for two positive decimals, exactly (their digits, not their log2).
        static func less(_ a: DeepNumber, _ b: DeepNumber) -> Bool {
            // The place of the leading digit decides, then the digits themselves.
            let (ma, mb) = (a.significand.count + a.exponent, b.significand.count + b.exponent)
            if ma != mb { return ma < mb }
            let n = max(a.significand.count, b.significand.count)
            let pa = a.significand + String(repeating: "0", count: n - a.significand.count)
            let pb = b.significand + String(repeating: "0", count: n - b.significand.count)
            return pa < pb
        }
    }

    public let record: Record
    /// The strip's pixels, RGBA, `record.columns` x `record.rows`.
    public let image: Image8

    /// log2 of r0, Z0 and Z1 (from the decimal texts: finite at any depth).
    public let radiusLog2: Double
    public let zoomStartLog2: Double
    public let zoomEndLog2: Double

    /// The strip `image` described by `record`; its size must be the record's.
    public init(image: Image8, record: Record) throws(GlintError) {
        guard image.width == record.columns && image.height == record.rows else {
            throw GlintError("the strip is \(image.width)x\(image.height) but its exp-map record says \(record.columns)x\(record.rows)")
        }
        self.image = image
        self.record = record
        // Positive decimals (the record checks them) always have a log2.
        radiusLog2 = record.radius.log2Magnitude ?? 0
        zoomStartLog2 = record.zoomStart.log2Magnitude ?? 0
        zoomEndLog2 = record.zoomEnd.log2Magnitude ?? 0
    }

    /// The strip `image` with the record among a PNG's text chunks (the last one with the keyword).
    public init(image: Image8, text entries: [PNG.TextEntry]) throws(GlintError) {
        guard let entry = entries.last(where: { $0.keyword == Self.keyword }) else {
            throw GlintError("no exp-map record (no \(Self.keyword) text chunk): not a strip from glint fractal --exp-map")
        }
        try self.init(image: image, record: Record(parsing: entry.text))
    }

    /// The strip in the PNG file at `path`. The record is read and checked before the pixels are
    /// decoded; every error is one line naming the file.
    public init(contentsOf path: String) throws(GlintError) {
        let record = try Self.record(at: path)
        let image = try PNG.read(path)
        do throws(GlintError) { try self.init(image: image, record: record) } catch { throw GlintError("\(path): \(error.message)") }
    }

    /// The record of the strip PNG at `path`, read without decoding its pixels; every error is
    /// one line naming the file.
    public static func record(at path: String) throws(GlintError) -> Record {
        let head = try FileIO.readHead(path, count: 8)
        guard head == PNG.signature else {
            throw GlintError("\(path) is not a PNG file (a strip is the PNG glint fractal --exp-map writes)")
        }
        guard let entry = try PNG.readText(path).last(where: { $0.keyword == keyword }) else {
            throw GlintError("\(path) has no exp-map record (no \(keyword) text chunk): not a strip from glint fractal --exp-map")
        }
        do throws(GlintError) { return try Record(parsing: entry.text) } catch { throw GlintError("\(path): \(error.message)") }
    }

    /// The record's text for a strip, as the strip's renderer writes it (the tEXt chunk's text
    /// under `keyword`): one `key=value` line each, LF-separated, decimals as given.
    /// `first-row` and `whole-rows` are written for segments only (a whole strip reads the same without them).
    public static func recordText(columns: Int, rows: Int, firstRow: Int = 0, wholeRows: Int? = nil, rowsPerOctave: Double, radius: DeepNumber,
                                  zoomStart: DeepNumber, zoomEnd: DeepNumber, center: DeepComplex) -> String {
        ([
            "version=\(version)",
            "columns=\(columns)",
            "rows=\(rows)",
            "rows-per-octave=\(rowsPerOctave)",
            "radius=\(radius.text)",
            "zoom-start=\(zoomStart.text)",
            "zoom-end=\(zoomEnd.text)",
            "center=\(center.re.text),\(center.im.text)",
        ] + (firstRow == 0 ? [] : ["first-row=\(firstRow)"]) + (wholeRows.map { ["whole-rows=\($0)"] } ?? [])).joined(separator: "\n")
    }

    /// As above with the top edge's radius a Double (finite and positive).
    public static func recordText(columns: Int, rows: Int, firstRow: Int = 0, wholeRows: Int? = nil, rowsPerOctave: Double, radius: Double,
                                  zoomStart: DeepNumber, zoomEnd: DeepNumber, center: DeepComplex) -> String {
        recordText(columns: columns, rows: rows, firstRow: firstRow, wholeRows: wholeRows, rowsPerOctave: rowsPerOctave, radius: DeepNumber(radius),
                   zoomStart: zoomStart, zoomEnd: zoomEnd, center: center)
    }

    /// log2 of frame k's zoom in a sequence of `count` (at least 2) from Z0 to Z1: equal steps
    /// in log2, a zoom at constant speed.
    public func zoomLog2(frame k: Int, of count: Int) -> Double {
        Self.zoomLog2(frame: k, of: count, from: zoomStartLog2, to: zoomEndLog2)
    }

    static func zoomLog2(frame k: Int, of count: Int, from start: Double, to end: Double) -> Double {
        precondition(count >= 2 && (0..<count).contains(k), "frame \(k) of \(count)")
        if k == count - 1 { return end }
        return start + (end - start) * Double(k) / Double(count - 1)
    }

    /// The frame at the zoom 2^`zoomLog2`, `width` x `height` pixels (Glint's zoom: at zoom 1 the
    /// height spans 2 units), resampled bilinearly from the strip (`ExpMapFrames`).
    public func frame(zoomLog2: Double, width: Int, height: Int) async -> Image8 {
        await ExpMapFrames(strip: self, width: width, height: height).frame(zoomLog2: zoomLog2)
    }
}

/// The strips of one zoom read together: one strip, or the segments `glint fractal --exp-map`
/// writes when the zoom needs more rows than one image holds, in any order. Only their records
/// are read here; each strip's pixels are decoded when its first frame is assembled (`load`),
/// so a long zoom holds one segment in memory at a time.
public struct ExpMapSequence: Sendable {
    public struct Part: Sendable {
        public let path: String
        public let record: ExpMapStrip.Record
        /// log2 of the first and last frame zooms the part serves whole.
        public let zoomStartLog2: Double
        public let zoomEndLog2: Double
    }

    /// The parts by first row.
    public let parts: [Part]

    /// The records of the PNGs at `paths`, checked to be parts of one zoom that join up (same
    /// columns, rows an octave, radius and centre; no gap between one's last zoom and the next
    /// one's first). Every error is one line naming the file.
    public init(paths: [String]) throws(GlintError) {
        guard !paths.isEmpty else { throw GlintError("no strip given") }
        var parts: [Part] = []
        for path in paths {
            let record = try ExpMapStrip.record(at: path)
            parts.append(Part(path: path, record: record, zoomStartLog2: record.zoomStart.log2Magnitude ?? 0,
                              zoomEndLog2: record.zoomEnd.log2Magnitude ?? 0))
        }
        parts.sort { $0.record.firstRow < $1.record.firstRow }
        for (a, b) in zip(parts, parts.dropFirst()) {
            let (ra, rb) = (a.record, b.record)
            guard ra.columns == rb.columns, ra.rowsPerOctave == rb.rowsPerOctave, ra.radius.text == rb.radius.text,
                  ra.center.re.text == rb.center.re.text, ra.center.im.text == rb.center.im.text else {
                throw GlintError("\(b.path) is not a segment of the zoom \(a.path) belongs to (its columns, radius or centre differ)")
            }
            guard ra.wholeRows == rb.wholeRows else {
                throw GlintError("\(a.path) and \(b.path) are segments of two strips (\(ra.wholeRows.map(String.init) ?? "whole") and \(rb.wholeRows.map(String.init) ?? "whole") rows): give one render's segments")
            }
            guard ra.firstRow != rb.firstRow else { throw GlintError("\(a.path) and \(b.path) are the same segment (first row \(ra.firstRow))") }
            // The record's decimals keep 15 digits: a rounding's worth of overlap is no gap.
            guard b.zoomStartLog2 <= a.zoomEndLog2 + 1e-9 * max(1, abs(a.zoomEndLog2)) else {
                throw GlintError("a segment is missing between \(a.path) (to zoom \(JSON.printable(ra.zoomEnd.text, limit: 24))) and \(b.path) (from \(JSON.printable(rb.zoomStart.text, limit: 24)))")
            }
        }
        if let whole = parts[parts.count - 1].record.wholeRows, parts[parts.count - 1].record.firstRow + parts[parts.count - 1].record.rows != whole {
            throw GlintError("the strip's last segment is missing: \(parts[parts.count - 1].path) ends at row \(parts[parts.count - 1].record.firstRow + parts[parts.count - 1].record.rows) of \(whole)")
        }
        self.parts = parts
    }

    public var zoomStartLog2: Double { parts[0].zoomStartLog2 }
    public var zoomEndLog2: Double { parts[parts.count - 1].zoomEndLog2 }
    public var first: ExpMapStrip.Record { parts[0].record }
    public var last: ExpMapStrip.Record { parts[parts.count - 1].record }

    /// log2 of frame k's zoom of `count`, from the first part's first zoom to the last part's last.
    public func zoomLog2(frame k: Int, of count: Int) -> Double {
        ExpMapStrip.zoomLog2(frame: k, of: count, from: zoomStartLog2, to: zoomEndLog2)
    }

    /// The part a frame at 2^zoomLog2 is assembled from: the last one that starts at or before it.
    public func part(zoomLog2: Double) -> Int {
        parts.lastIndex(where: { $0.zoomStartLog2 <= zoomLog2 }) ?? 0
    }

    /// Part i's strip, pixels and all; its record must still be the one read first.
    public func load(_ i: Int) throws(GlintError) -> ExpMapStrip {
        let strip = try ExpMapStrip(contentsOf: parts[i].path)
        guard strip.record == parts[i].record else { throw GlintError("\(parts[i].path) changed while the video was made") }
        return strip
    }
}

/// The frames of one size assembled from a strip. Where a frame pixel falls in the strip
/// depends on the zoom only through a shift of v (the zoom scales every radius alike), so each
/// pixel's strip column and its row at zoom 1 are computed once, here, and a frame is one
/// bilinear read per pixel.
///
/// Frame pixel (px, py) lies at the offset (a, −b)·s from the centre, a = px + 0.5 − Wf/2,
/// b = py + 0.5 − Hf/2, s = 2/(z·Hf). Its strip position: u = θ·W/(2π) with θ = atan2(−b, a) in
/// [0, 2π), and v = R·(log2 r0 − log2 ρ), where log2 ρ = log2 |(a, b)| + log2(2/Hf) − log2 z
/// (never ρ itself, which underflows a Double at deep zooms). The strip is read at (u − 0.5,
/// v − 0.5) in pixel-centre coordinates, wrapping round in u and clamping v to its rows.
public struct ExpMapFrames: Sendable {
    public let strip: ExpMapStrip
    public let width: Int
    public let height: Int
    /// Per pixel: u − 0.5, the strip column in pixel-centre coordinates.
    private let column: [Float]
    /// The strip's first row in the whole strip, subtracted from each whole-strip row (exactly:
    /// the row is below 2^40, so a segment reads the very rows and weights the whole strip would).
    private let firstRow: Double
    /// Per pixel: −R·log2 |(a, b)| − 0.5, the strip row at the shift 0 (+infinity at the centre
    /// of a frame with odd sides, which then reads the last row).
    private let row: [Float]

    public init(strip: ExpMapStrip, width: Int, height: Int) async {
        precondition(width >= 1 && height >= 1 && width * height <= ImageLimits.maxPixels, "frame size \(width)x\(height)")
        (self.strip, self.width, self.height) = (strip, width, height)
        firstRow = Double(strip.record.firstRow)
        let n = width * height
        let columnStore = UnsafeMutableBufferPointer<Float>.allocate(capacity: n)
        let rowStore = UnsafeMutableBufferPointer<Float>.allocate(capacity: n)
        defer { columnStore.deallocate(); rowStore.deallocate() }
        let columnOut = SharedBuffer(columnStore), rowOut = SharedBuffer(rowStore)
        let perRadian = Double(strip.record.columns) / (2 * Double.pi), R = strip.record.rowsPerOctave
        let (halfWidth, halfHeight) = (Double(width) / 2, Double(height) / 2)
        await CPUParallel.forEach(height) { py in
            let b = Double(py) + 0.5 - halfHeight
            for px in 0..<width {
                let a = Double(px) + 0.5 - halfWidth
                var theta = atan2(-b, a)
                if theta < 0 { theta += 2 * Double.pi }
                columnOut[py * width + px] = Float(theta * perRadian - 0.5)
                rowOut[py * width + px] = Float(-R * log2(hypot(a, b)) - 0.5)
            }
        }
        column = Array(columnStore)
        row = Array(rowStore)
    }

    private init(strip: ExpMapStrip, sharing other: ExpMapFrames) {
        (self.strip, width, height, column, row) = (strip, other.width, other.height, other.column, other.row)
        firstRow = Double(strip.record.firstRow)
    }

    /// The same frames from another strip of the same columns and rows an octave (the next
    /// segment of a zoom): the per-pixel tables are shared, not computed again.
    public func reading(_ strip: ExpMapStrip) -> ExpMapFrames {
        precondition(strip.record.columns == self.strip.record.columns && strip.record.rowsPerOctave == self.strip.record.rowsPerOctave,
                     "a strip of another geometry")
        return ExpMapFrames(strip: strip, sharing: self)
    }

    /// v at zoom 1 for |(a, b)| = 1 pixel: R·(log2 r0 − log2(2/Hf)); a frame adds R·log2 z.
    var baseShift: Double {
        strip.record.rowsPerOctave * (strip.radiusLog2 - (1 - log2(Double(height))))
    }

    /// The frame at the zoom 2^`zoomLog2`.
    public func frame(zoomLog2: Double) async -> Image8 {
        let (w, h) = (width, height)
        let (columns, rows) = (strip.record.columns, strip.record.rows)
        let shift = baseShift + strip.record.rowsPerOctave * zoomLog2
        let lastRow = Double(rows - 1)
        let store = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: w * h * 4)
        defer { store.deallocate() }
        let out = SharedBuffer(store)
        let (column, row, pixels, firstRow) = (column, row, strip.image.pixels, firstRow)
        await CPUParallel.forEach(h) { py in
            column.withUnsafeBufferPointer { column in
                row.withUnsafeBufferPointer { row in
                    pixels.withUnsafeBufferPointer { src in
                        for px in 0..<w {
                            let i = py * w + px
                            let x = column[i]
                            let xFloor = x.rounded(.down)
                            let fx = x - xFloor
                            var x0 = Int(xFloor)
                            if x0 < 0 { x0 += columns }
                            var x1 = x0 + 1
                            if x1 >= columns { x1 -= columns }
                            // Beyond the ends the first or last row; NaN (no zoom) reads the first.
                            var y = (Double(row[i]) + shift) - firstRow
                            if !(y > 0) { y = 0 }
                            if y > lastRow { y = lastRow }
                            let y0 = Int(y)
                            let fy = Float(y - Double(y0))
                            let y1 = min(y0 + 1, rows - 1)
                            let (r0, r1) = (y0 * columns, y1 * columns)
                            let p00 = (r0 + x0) * 4, p01 = (r0 + x1) * 4, p10 = (r1 + x0) * 4, p11 = (r1 + x1) * 4
                            let w00 = (1 - fx) * (1 - fy), w01 = fx * (1 - fy), w10 = (1 - fx) * fy, w11 = fx * fy
                            let o = i * 4
                            for c in 0..<4 {
                                let v = Float(src[p00 + c]) * w00 + Float(src[p01 + c]) * w01
                                    + Float(src[p10 + c]) * w10 + Float(src[p11 + c]) * w11
                                out[o + c] = UInt8(min(v + 0.5, 255))
                            }
                        }
                    }
                }
            }
        }
        return Image8(width: w, height: h, pixels: Array(store))
    }
}
