import Glibc
import GlintCore
import Testing

/// A deterministic test picture: smooth gradients plus a hard edge, opaque.
private func picture(width: Int = 64, height: Int = 48) -> Image8 {
    var image = Image8(width: width, height: height)
    for y in 0..<height {
        for x in 0..<width {
            let edge: UInt8 = x > width / 2 ? 200 : 20
            image[x, y] = SIMD4(UInt8(x * 255 / (width - 1)), UInt8(y * 255 / (height - 1)), edge, 255)
        }
    }
    return image
}

@Suite struct ImageCompareTests {
    @Test func identicalImagesHaveZeroDifferenceAndInfinitePSNR() throws {
        let a = picture()
        let d = try ImageCompare.compare(a, a)
        #expect(d.identical)
        #expect(d.channelNames == ["R", "G", "B"], "opaque images compare colour only")
        for c in d.channels + [d.overall] {
            #expect(c.maxAbs == 0 && c.meanAbs == 0 && c.rmse == 0 && c.pixelsOver == 0)
            #expect(c.psnr == .infinity)
        }
        #expect(Tolerance([.identical]).passes(d))
        #expect(Tolerance.statistical.passes(d))
    }

    @Test func aSingleOneLevelChangeIsMeasuredExactly() throws {
        let a = picture()
        var b = a
        b.pixels[b.index(x: 10, y: 7) + 1] &+= 1  // one green value, one level
        let d = try ImageCompare.compare(a, b)
        let n = Double(a.width * a.height)
        #expect(d.overall.maxAbs == 1)
        #expect(d.channels[1].maxAbs == 1 && d.channels[0].maxAbs == 0 && d.channels[2].maxAbs == 0)
        // Green: one difference of 1 among n values; overall: one among 3n.
        #expect(abs(d.channels[1].meanAbs - 1 / n) < 1e-15)
        #expect(abs(d.channels[1].rmse - (1 / n).squareRoot()) < 1e-12)
        let psnrGreen = 20 * log10(255 / (1 / n).squareRoot())
        #expect(abs(d.channels[1].psnr - psnrGreen) < 1e-9)
        #expect(abs(d.overall.psnr - 20 * log10(255 / (1 / (3 * n)).squareRoot())) < 1e-9)
        // "More than 1 level" does not count a 1-level change.
        #expect(d.overall.pixelsOver == 0)
        #expect(d.pixelMax.filter { $0 != 0 }.count == 1)
        #expect(Tolerance.oneLevel.passes(d))
        #expect(!Tolerance([.identical]).passes(d))
        #expect(!Tolerance([.maxAbs(0)]).passes(d))
    }

    @Test func aShiftedImageFailsEveryTightTolerance() throws {
        let a = picture()
        var b = Image8(width: a.width, height: a.height)
        for y in 0..<a.height { for x in 0..<a.width { b[x, y] = a[(x + 1) % a.width, y] } }
        let d = try ImageCompare.compare(a, b)
        // Every pixel's red moves by about 4 levels; the edge column moves by 180 in blue.
        #expect(d.channels[0].maxAbs == 255, "the wrap-around column jumps from 255 to 0")
        #expect(d.channels[2].maxAbs == 180)
        #expect(d.overall.pixelsOver > a.width * a.height / 2)
        #expect(abs(d.overall.shareOver - Double(d.overall.pixelsOver) / Double(a.width * a.height)) < 1e-15)
        #expect(d.overall.psnr < 30)
        #expect(!Tolerance.oneLevel.passes(d))
        #expect(!Tolerance.statistical.passes(d))
        #expect(Tolerance([.maxAbs(255)]).passes(d))
    }

    @Test func alphaIsComparedOnlyWhenAnImageHasTransparency() throws {
        let a = picture()
        var b = a
        b.pixels[3] = 100
        let d = try ImageCompare.compare(a, b)
        #expect(d.channelNames == ["R", "G", "B", "A"])
        #expect(d.channels[3].maxAbs == 155)
    }

    @Test func imagesOfDifferentSizesAreRefused() {
        #expect(throws: GlintError.self) { try ImageCompare.compare(picture(width: 10, height: 10), picture(width: 10, height: 11)) }
    }

    @Test func floatImagesReportRelativeError() throws {
        var a = ImageF(width: 4, height: 2)
        for i in 0..<a.pixels.count { a.pixels[i] = i % 4 == 3 ? 1 : Float(i + 1) * 0.1 }
        var b = a
        b.pixels[5] *= 1 + 1e-6
        let d = try ImageCompare.compare(a, b)
        #expect(d.fullScale == 1 && d.channelNames.count == 3)
        #expect(d.overall.maxRelative > 0.9e-6 && d.overall.maxRelative < 1.1e-6)
        #expect(Tolerance.floatRelative.passes(d))
        b.pixels[5] *= 1.001
        #expect(!Tolerance.floatRelative.passes(try ImageCompare.compare(a, b)))
    }

    @Test func theHeatMapMarksExactlyTheDifferingPixels() throws {
        let a = picture()
        var b = a
        b.pixels[b.index(x: 3, y: 4)] &+= 9
        b.pixels[b.index(x: 40, y: 20) + 2] &+= 3
        let d = try ImageCompare.compare(a, b)
        let heat = ImageCompare.heatMap(d, background: a)
        #expect(heat.width == a.width && heat.height == a.height)
        // The largest difference is white; a smaller one is coloured; equal pixels are grey.
        #expect(heat[3, 4] == SIMD4(255, 255, 255, 255))
        let small = heat[40, 20]
        #expect(!(small.x == small.y && small.y == small.z), "a differing pixel must be coloured, got \(small)")
        let equal = heat[0, 0]
        #expect(equal.x == equal.y && equal.y == equal.z && equal.x < 90)
    }

    @Test func tolerancesParseAndPrint() throws {
        #expect(try Tolerance(parsing: "exact").criteria == [.identical])
        #expect(try Tolerance(parsing: "2").criteria == [.maxAbs(2)])
        #expect(try Tolerance(parsing: "mean:0.5%, psnr:40") == Tolerance.statistical)
        #expect(try Tolerance(parsing: "rel:1e-5") == Tolerance.floatRelative)
        #expect(Tolerance.statistical.description == "mean:0.5%,psnr:40")
        for bad in ["", "max:", "max:-1", "psnr:abc", "speed:3"] {
            #expect(throws: GlintError.self, "'\(bad)' must be refused") { try Tolerance(parsing: bad) }
        }
    }
}

@Suite struct JSONReaderTests {
    @Test func whatTheWriterWritesReadsBack() throws {
        let value = JSON.object([
            ("a", .int(-42)), ("b", .number(0.125)), ("c", .string("tab\t \"q\" \\ é 🎉")),
            ("d", .array([.null, .bool(true), .bool(false), .array([])])), ("e", .object([])),
            ("big", .int(Int64.max)), ("tiny", .number(1e-300)),
        ])
        for pretty in [true, false] {
            #expect(try JSON.parse(value.serialized(pretty: pretty)) == value)
        }
    }

    @Test func escapesAndAccessors() throws {
        let v = try JSON.parse(#"{"s": "\u00e9\ud83c\udf89\n", "n": 2.5e3, "i": 7, "l": [1, 2]}"#)
        #expect(v["s"]?.stringValue == "é🎉\n")
        #expect(v["n"]?.doubleValue == 2500 && v["n"]?.intValue == 2500)
        #expect(v["i"]?.intValue == 7 && v["l"]?.arrayValue?.count == 2 && v["missing"] == nil)
    }

    @Test func badTextNamesItsPlace() {
        for (text, place) in [("{\"a\": }", "line 1, column 7"), ("[1,\n 2,,]", "line 2, column 4"),
                              ("{\"a\" 1}", "line 1"), ("\"open", "line 1"), ("[1] x", "after"), ("nul", "literal")] {
            do {
                _ = try JSON.parse(text)
                Issue.record("'\(text)' must be refused")
            } catch {
                #expect(error.message.contains(place), "'\(text)': \(error.message)")
            }
        }
    }
}

@Suite struct RampTests {
    @Test func endsAreExactAndTheMiddleIsLinearOrGeometric() throws {
        let zoom = try Ramp(parsing: "zoom=1:1e4")
        #expect(zoom.value(frame: 0, of: 5, geometric: true) == [1])
        #expect(zoom.value(frame: 4, of: 5, geometric: true) == [1e4])
        #expect(abs(zoom.value(frame: 2, of: 5, geometric: true)[0] - 100) < 1e-9)
        let c = try Ramp(parsing: "c=-0.8,0.156:-0.7,0.256")
        let mid = c.value(frame: 1, of: 3)
        #expect(abs(mid[0] + 0.75) < 1e-12 && abs(mid[1] - 0.206) < 1e-12)
        #expect(c.value(frame: 0, of: 1) == [-0.8, 0.156], "a single frame is the start")
        for bad in ["zoom", "zoom=1", "zoom=1:2:3", "c=1,2:3", "zoom=a:b"] {
            #expect(throws: GlintError.self, "'\(bad)'") { try Ramp(parsing: bad) }
        }
    }
}
