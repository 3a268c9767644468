import GlintCore
import GlintWorkloads
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Zoom frames from an exponential-map strip: where each frame pixel lands in the strip, the
/// wrap round in angle and the clamp past the ends, the frames' zooms, and the record.
@Suite struct ExpMapTests {
    static func number(_ text: String) -> DeepNumber { try! DeepNumber(parsing: text) }

    static func record(columns: Int = 256, rows: Int = 256, rowsPerOctave: Double = 16, radius: String = "4",
                       zoomStart: String = "1", zoomEnd: String = "256") -> ExpMapStrip.Record {
        ExpMapStrip.Record(columns: columns, rows: rows, rowsPerOctave: rowsPerOctave, radius: number(radius),
                           zoomStart: number(zoomStart), zoomEnd: number(zoomEnd),
                           center: DeepComplex(re: number("-0.75"), im: number("0.1")))
    }

    /// A strip whose red is its column and green its row (256 x 256 at most), blue 7: bilinear
    /// reads of it give back the position read, to within the rounding to a level.
    static func coordinateStrip(_ record: ExpMapStrip.Record = record()) -> ExpMapStrip {
        var image = Image8(width: record.columns, height: record.rows)
        for y in 0..<record.rows {
            for x in 0..<record.columns { image[x, y] = SIMD4(UInt8(x), UInt8(y), 7, 255) }
        }
        return try! ExpMapStrip(image: image, record: record)
    }

    /// The strip position (pixel-centre coordinates: u − 0.5, v − 0.5) of frame pixel (px, py),
    /// straight from the definition, forming the plane offset itself (fine at shallow zooms).
    static func position(_ r: ExpMapStrip.Record, px: Int, py: Int, width: Int, height: Int, zoom: Double) -> (x: Double, y: Double) {
        let s = 2 / (zoom * Double(height))
        let dx = (Double(px) + 0.5 - Double(width) / 2) * s
        let dy = -(Double(py) + 0.5 - Double(height) / 2) * s
        var theta = atan2(dy, dx)
        if theta < 0 { theta += 2 * Double.pi }
        let u = theta * Double(r.columns) / (2 * Double.pi)
        let v = r.rowsPerOctave * (log2(r.radius.nearestDouble) - log2((dx * dx + dy * dy).squareRoot()))
        return (u - 0.5, v - 0.5)
    }

    /// A bilinear read of `strip` at (x, y) in pixel-centre coordinates, wrapping x and clamping y.
    static func bilinear(_ strip: Image8, x: Double, y: Double) -> SIMD4<Double> {
        let (w, h) = (strip.width, strip.height)
        let yc = min(max(y, 0), Double(h - 1))
        let (xf, yf) = (x.rounded(.down), yc.rounded(.down))
        let (fx, fy) = (x - xf, yc - yf)
        let x0 = ((Int(xf) % w) + w) % w, x1 = (x0 + 1) % w
        let y0 = Int(yf), y1 = min(y0 + 1, h - 1)
        func p(_ x: Int, _ y: Int) -> SIMD4<Double> { SIMD4<Double>(strip[x, y]) }
        let top = p(x0, y0) * (1 - fx) + p(x1, y0) * fx
        let bottom = p(x0, y1) * (1 - fx) + p(x1, y1) * fx
        return top * (1 - fy) + bottom * fy
    }

    @Test("landmarks: right of the centre reads column 0/W, up W/4, left W/2, down 3W/4; doubling the radius moves R rows")
    func landmarks() async {
        let strip = Self.coordinateStrip()
        // 65 x 65: pixel (32, 32) is the centre, its row and column the axes.
        let zoom = 4.0
        let f = await strip.frame(zoomLog2: log2(zoom), width: 65, height: 65)
        let r = strip.record
        // Up (+im), left and down: a quarter, a half and three quarters of the way round.
        #expect(abs(Double(f[32, 16].x) - (64 - 0.5)) <= 0.5, "\(f[32, 16])")
        #expect(abs(Double(f[16, 32].x) - (128 - 0.5)) <= 0.5, "\(f[16, 32])")
        #expect(abs(Double(f[32, 48].x) - (192 - 0.5)) <= 0.5, "\(f[32, 48])")
        // Just above the +re axis the first columns, just below it the last.
        #expect(f[63, 31].x <= 2, "\(f[63, 31])")
        #expect(f[63, 33].x >= 253, "\(f[63, 33])")
        // Up the +im axis, 8 and 16 pixels out: one octave, R = 16 rows apart.
        let (near, far) = (Int(f[32, 24].y), Int(f[32, 16].y))
        #expect(abs(near - far - 16) <= 1, "rows \(near) and \(far)")
        // 8 pixels out at zoom 4 is 2·8/(4·65) plane units: v = R·(log2 4 − log2(16/260)).
        let v = r.rowsPerOctave * (2 - log2(16.0 / 260))
        #expect(abs(Double(near) - (v - 0.5)) <= 0.5, "row \(near), expected \(v - 0.5)")
        // The centre pixel (radius 0) reads the last row.
        #expect(f[32, 32].y == 255)
    }

    @Test("every frame pixel is the strip's bilinear read at the position the geometry gives (within a level)",
          arguments: [(65, 65, 1.0), (64, 36, 3.0), (120, 50, 40.0), (31, 80, 200.0)])
    func everyPixel(width: Int, height: Int, zoom: Double) async {
        // A strip with detail in both directions: a checker of primes, not a ramp.
        let r = Self.record(columns: 97, rows: 211, rowsPerOctave: 97 * M_LN2 / (2 * Double.pi), radius: "3")
        var image = Image8(width: r.columns, height: r.rows)
        for y in 0..<r.rows {
            for x in 0..<r.columns { image[x, y] = SIMD4(UInt8((x * 37 + y * 11) % 256), UInt8((x * x + 3 * y) % 256), UInt8(y % 256), 255) }
        }
        let strip = try! ExpMapStrip(image: image, record: r)
        let f = await strip.frame(zoomLog2: log2(zoom), width: width, height: height)
        var worst = 0.0
        for py in 0..<height {
            for px in 0..<width {
                let (x, y) = Self.position(r, px: px, py: py, width: width, height: height, zoom: zoom)
                let want = Self.bilinear(image, x: x, y: y)
                let got = SIMD4<Double>(f[px, py])
                for c in 0..<4 { worst = max(worst, abs(got[c] - want[c])) }
            }
        }
        // Rounding to a level (0.5) plus float32 weights and positions.
        #expect(worst <= 1.0, "largest difference \(worst) levels")
    }

    @Test("the strip wraps round in angle: on the +re axis a pixel is half the last column and half the first")
    func wrapsRound() async {
        let r = Self.record(columns: 64, rows: 32, rowsPerOctave: 8)
        var image = Image8(width: 64, height: 32)
        for y in 0..<32 {
            image[0, y] = SIMD4(255, 0, 0, 255)
            image[63, y] = SIMD4(0, 0, 255, 255)
            for x in 1..<63 { image[x, y] = SIMD4(0, 0, 0, 255) }
        }
        let strip = try! ExpMapStrip(image: image, record: r)
        let f = await strip.frame(zoomLog2: 1, width: 33, height: 33)
        // θ = 0 is u = 0: x = −0.5, half way between column 63 and column 0.
        // (127.5 each, rounded either way by the float weights.)
        for px in 17..<33 {
            let p = f[px, 16]
            #expect((127...128).contains(p.x) && p.y == 0 && (127...128).contains(p.z), "pixel \(px): \(p)")
        }
        // Just above the axis, mostly column 0; just below, mostly column 63.
        #expect(f[32, 15].x > 128 && f[32, 15].z < 128, "\(f[32, 15])")
        #expect(f[32, 17].z > 128 && f[32, 17].x < 128, "\(f[32, 17])")
        // Left of the centre (u = W/2) no edge column is read.
        #expect(f[4, 16] == SIMD4(0, 0, 0, 255))
    }

    @Test("past the strip's ends a frame reads the first or last row")
    func clampsPastTheEnds() async {
        let strip = Self.coordinateStrip()
        // Far wider than the top edge's radius: every pixel above row 0.
        let outside = await strip.frame(zoomLog2: -40, width: 40, height: 30)
        #expect((0..<30).allSatisfy { y in (0..<40).allSatisfy { outside[$0, y].y == 0 } })
        // Far deeper than the bottom edge: every pixel below the last row.
        let inside = await strip.frame(zoomLog2: 80, width: 40, height: 30)
        #expect((0..<30).allSatisfy { y in (0..<40).allSatisfy { inside[$0, y].y == 255 } })
        // Columns still follow the angle there: the pixel straight up reads a quarter of the way round.
        #expect(abs(Double(inside[20, 2].x) - 63.5) <= 1.5 && abs(Double(outside[20, 2].x) - 63.5) <= 1.5)
    }

    @Test("frame k of N zooms at constant speed from zoom-start to zoom-end, at any depth")
    func zoomProgression() async {
        let strip = Self.coordinateStrip(Self.record(radius: "4e-1000", zoomStart: "1e1000", zoomEnd: "1e1010"))
        let ten = log2(10.0)
        for k in 0..<11 {
            #expect(abs(strip.zoomLog2(frame: k, of: 11) - Double(1000 + k) * ten) < 1e-9, "frame \(k)")
        }
        #expect(strip.zoomLog2(frame: 0, of: 2) == strip.zoomStartLog2)
        #expect(strip.zoomLog2(frame: 1, of: 2) == strip.zoomEndLog2)
        // Each step moves the same rows: log2(10)·R rows a frame, the frame's pixels alike.
        let a = await strip.frame(zoomLog2: strip.zoomLog2(frame: 3, of: 11), width: 65, height: 65)
        let b = await strip.frame(zoomLog2: strip.zoomLog2(frame: 4, of: 11), width: 65, height: 65)
        let step = ten * strip.record.rowsPerOctave
        #expect(abs(Double(b[32, 8].y) - Double(a[32, 8].y) - step) <= 1, "\(a[32, 8]) -> \(b[32, 8])")
    }

    @Test("a strip at 1e1000 gives the frames of the same strip at 1: only the log2 of radius and zoom count")
    func deepEqualsShallow() async {
        let shallow = Self.coordinateStrip(Self.record(radius: "4", zoomStart: "1", zoomEnd: "256"))
        let deep = Self.coordinateStrip(Self.record(radius: "4e-1000", zoomStart: "1e1000", zoomEnd: "2.56e1002"))
        for k in [0, 2, 5] {
            let s = await shallow.frame(zoomLog2: shallow.zoomLog2(frame: k, of: 6), width: 48, height: 27)
            let d = await deep.frame(zoomLog2: deep.zoomLog2(frame: k, of: 6), width: 48, height: 27)
            let worst = zip(s.pixels, d.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(worst <= 1, "frame \(k): largest difference \(worst)")
        }
    }

    @Test("the record prints and reads back; unknown keys are ignored")
    func recordRoundTrip() throws {
        let r = Self.record(columns: 1024, rows: 30000, rowsPerOctave: ExpMapStrip.Record.squareRowsPerOctave(columns: 1024),
                            radius: "2.5", zoomStart: "1", zoomEnd: "1e1000")
        let text = ExpMapStrip.recordText(columns: 1024, rows: 30000, rowsPerOctave: r.rowsPerOctave, radius: Self.number("2.5"),
                                          zoomStart: Self.number("1"), zoomEnd: Self.number("1e1000"),
                                          center: DeepComplex(re: Self.number("-0.75"), im: Self.number("0.1")))
        #expect(text == r.text)
        #expect(text.hasPrefix("version=1\ncolumns=1024\nrows=30000\nrows-per-octave=112.96"))
        #expect(text.hasSuffix("\nradius=2.5\nzoom-start=1\nzoom-end=1e1000\ncenter=-0.75,0.1"))
        #expect(try ExpMapStrip.Record(parsing: text) == r)
        #expect(try ExpMapStrip.Record(parsing: "palette=fire\n" + text + "\nfuture=7\n") == r)
        #expect(ExpMapStrip.keyword == "glint:expmap")
        // The Double form of the radius writes its shortest text.
        let fromDouble = ExpMapStrip.recordText(columns: 8, rows: 8, rowsPerOctave: 1, radius: 2.0, zoomStart: Self.number("1"),
                                                zoomEnd: Self.number("2"), center: DeepComplex(re: 0, im: 0))
        #expect(fromDouble.contains("\nradius=2.0\n"))
        // From a PNG's text entries, the last record wins.
        let image = Image8(width: 1024, height: 30000 / 1000)
        let small = Self.record(columns: 1024, rows: 30)
        let strip = try ExpMapStrip(image: image, text: [PNG.TextEntry(keyword: "glint:expmap", text: text),
                                                         PNG.TextEntry(keyword: "Comment", text: "x"),
                                                         PNG.TextEntry(keyword: "glint:expmap", text: small.text)])
        #expect(strip.record == small)
        // A segment's first row and whole strip's rows print and read back; bad ones are refused.
        var segment = r
        (segment.firstRow, segment.wholeRows) = (12_000, 400_000)
        #expect(segment.text.hasSuffix("\nfirst-row=12000\nwhole-rows=400000"))
        #expect(try ExpMapStrip.Record(parsing: segment.text) == segment)
        for (bad, key) in [("first-row=-1", "first-row"), ("first-row=x", "first-row"), ("first-row=1e3", "first-row"),
                           ("whole-rows=100", "whole-rows"), ("whole-rows=2000000000000", "whole-rows")] {
            #expect { try ExpMapStrip.Record(parsing: text + "\n" + bad) } throws: {
                ($0 as? GlintError)?.message.contains(key) == true
            }
        }
    }

    @Test("records that are refused, each with one line", arguments: [
        ("version=2", "version"), ("columns=0", "columns"), ("columns=40000", "columns"), ("rows=ten", "rows"),
        ("rows-per-octave=0", "rows-per-octave"), ("rows-per-octave=-3", "rows-per-octave"),
        ("rows-per-octave=inf", "rows-per-octave"), ("rows-per-octave=nan", "rows-per-octave"), ("rows-per-octave=1e400", "rows-per-octave"),
        ("radius=0", "radius"), ("radius=-2", "radius"), ("radius=2x", "radius"),
        ("zoom-start=1e10", "zoom-end"), ("zoom-end=1", "zoom-end"), ("zoom-end=0.5", "zoom-end"), ("zoom-start=0", "zoom-start"),
        ("center=1", "center"), ("center=a,b", "center"),
    ])
    func refusedRecords(change: String, mentions: String) {
        let key = String(change.split(separator: "=")[0])
        // The record with this key's line replaced.
        var lines = Self.record(zoomEnd: "1e10").text.split(separator: "\n").map(String.init)
        lines = lines.map { $0.hasPrefix(key + "=") ? change : $0 }
        do {
            _ = try ExpMapStrip.Record(parsing: lines.joined(separator: "\n"))
            Issue.record("\(change) was accepted")
        } catch {
            #expect(error.message.contains(mentions) && !error.message.contains("\n"), "\(error.message)")
        }
    }

    @Test("refused: a missing key, a repeated key, a zoom-end equal to zoom-start written otherwise, a size unlike the image's, no record")
    func refusedStrips() {
        func refuses(_ text: String, _ mentions: String) {
            do {
                _ = try ExpMapStrip.Record(parsing: text)
                Issue.record("accepted: \(text)")
            } catch { #expect(error.message.contains(mentions), "\(error.message)") }
        }
        let text = Self.record().text
        for key in ["version", "columns", "rows", "rows-per-octave", "radius", "zoom-start", "zoom-end", "center"] {
            refuses(text.split(separator: "\n").filter { !$0.hasPrefix(key + "=") }.joined(separator: "\n"), "no \(key) line")
        }
        refuses(text + "\nrows=9", "rows given twice")
        refuses(text + "\nnothing here", "without '='")
        refuses(Self.record(zoomStart: "1e10", zoomEnd: "10000000000").text, "zoom-end")
        refuses(Self.record(zoomStart: "1.0000000000000000000001e100", zoomEnd: "1e100").text, "zoom-end")
        #expect((try? ExpMapStrip.Record(parsing: Self.record(zoomStart: "1e100", zoomEnd: "1.0000000000000000000001e100").text)) != nil)
        do {
            _ = try ExpMapStrip(image: Image8(width: 10, height: 10), record: Self.record())
            Issue.record("a 10x10 image was taken for a 256x256 strip")
        } catch { #expect(error.message.contains("10x10") && error.message.contains("256x256"), "\(error.message)") }
        do {
            _ = try ExpMapStrip(image: Image8(width: 256, height: 256), text: [PNG.TextEntry(keyword: "glint:view", text: "version=1")])
            Issue.record("a PNG without a record was taken")
        } catch { #expect(error.message.contains("glint:expmap"), "\(error.message)") }
    }
}
