// `glint fractal` locations: the view record every PNG carries, --location (a Glint PNG or a
// Kalles Fraktaler .kfr file) with the command line overriding it, and --print-location.

import Foundation
import GlintCore
import GlintTestSupport
import Testing

@Suite("glint fractal: locations")
struct LocationCLITests {
    /// Near the Misiurewicz point M(4,1), 60 digits after the point: filaments at 1e25.
    static let re = "-0.101096363845622161025785445738622565463805442826253483876931"
    static let im = "0.956286510809141500771096057729977435809833336510529170034314"
    static let deep = ["fractal", "mandelbrot", "--center", "\(re),\(im)", "--zoom", "1e25", "--iterations", "1000",
                       "--size", "24x16", "--device", "cpu"]

    /// The glint:view record of a PNG, as key -> value.
    static func record(_ box: Sandbox, _ name: String) throws -> [String: String] {
        let entries = try PNG.readText(box.path(name))
        let view = try #require(entries.first { $0.keyword == "glint:view" }, "\(name) has no glint:view text chunk: \(entries)")
        var pairs: [String: String] = [:]
        for line in view.text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { pairs[parts[0]] = parts[1] }
        }
        return pairs
    }

    /// `Key: value` lines of --print-location's output.
    static func kfr(_ text: String) -> [String: String] {
        var pairs: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters() }
            if parts.count == 2 { pairs[parts[0]] = parts[1] }
        }
        return pairs
    }

    @Test("a deep-zoom PNG records its view; --location renders the same file again")
    func pngRoundTrip() throws {
        try withSandbox { box in
            let a = try box.run(Self.deep + ["-o", "a.png"])
            try #require(a.status == 0, "\(a)")
            let image = try PNG.read(box.path("a.png"))
            #expect(distinctColours(image) > 4, "the view is (nearly) flat: pick another")
            let view = try Self.record(box, "a.png")
            #expect(view["center"] == "\(Self.re),\(Self.im)", "\(view)")
            #expect(view["zoom"] == "1e25" && view["iterations"] == "1000" && view["size"] == "24x16", "\(view)")
            #expect(view["formula"] == "mandelbrot" && view["precision"] == "perturbation", "\(view)")
            #expect(view["palette"] == "tutorial" && view["smooth"] == "false" && view["bailout"] == "2.0" && view["c"] == "-0.76,0.15", "\(view)")

            // No formula, no view options: all from the file.
            let b = try box.run(["fractal", "--location", "a.png", "--device", "cpu", "-o", "b.png"])
            #expect(b.status == 0, "\(b)")
            #expect(b.stdout.hasPrefix("wrote b.png (24x16, mandelbrot, perturbation,"), "\(b)")
            #expect(try PNG.read(box.path("b.png")).pixels == image.pixels)
            #expect(try box.bytes("b.png") == box.bytes("a.png"), "same view, same record, same file")
        }
    }

    @Test("--print-location prints .kfr text (KF's Zoom is twice glint's) that --location reads back")
    func printedLocationRoundTrip() throws {
        try withSandbox { box in
            let a = try box.run(Self.deep + ["-o", "a.png"])
            try #require(a.status == 0, "\(a)")
            let printed = try box.run(["fractal", "--location", "a.png", "--print-location"])
            #expect(printed.status == 0 && printed.stderr.isEmpty, "\(printed)")
            let fields = Self.kfr(printed.stdout)
            #expect(fields == ["Re": Self.re, "Im": Self.im, "Zoom": "2e25", "Iterations": "1000"], "\(printed)")
            #expect(printed.stdout.contains("\r\n"), "KF's own line ends")
            #expect(box.listing() == ["a.png"], "--print-location writes nothing: \(box.listing())")

            // The same without --location: the options alone.
            let direct = try box.run(Self.deep + ["--print-location"])
            #expect(direct.stdout == printed.stdout, "\(direct)")

            try box.write("x.kfr", Array(printed.stdout.utf8))
            let again = try box.run(["fractal", "--location", "x.kfr", "--print-location"])
            #expect(again.stdout == printed.stdout, "\(again)")
            // A .kfr has no size: give it; the rest (bailout, palette...) are glint's defaults, as in a.png.
            let c = try box.run(["fractal", "--location", "x.kfr", "--size", "24x16", "--device", "cpu", "-o", "c.png"])
            #expect(c.status == 0, "\(c)")
            #expect(try PNG.read(box.path("c.png")).pixels == PNG.read(box.path("a.png")).pixels)
            #expect(try Self.record(box, "c.png")["zoom"] == "1e25")
        }
    }

    @Test("options given on the command line override the file's")
    func commandLineWins() throws {
        try withSandbox { box in
            let a = try box.run(Self.deep + ["--smooth", "--palette", "fire", "-o", "a.png"])
            try #require(a.status == 0, "\(a)")
            let printed = try box.run(["fractal", "--location", "a.png", "--iterations", "77", "--print-location"])
            #expect(Self.kfr(printed.stdout)["Iterations"] == "77", "\(printed)")
            #expect(Self.kfr(printed.stdout)["Re"] == Self.re, "\(printed)")

            let d = try box.run(["fractal", "--location", "a.png", "--iterations", "300", "--no-smooth", "--size", "12x8",
                                 "--device", "cpu", "-o", "d.png"])
            #expect(d.status == 0, "\(d)")
            let view = try Self.record(box, "d.png")
            #expect(view["iterations"] == "300" && view["smooth"] == "false" && view["size"] == "12x8", "\(view)")
            #expect(view["palette"] == "fire" && view["center"] == "\(Self.re),\(Self.im)" && view["zoom"] == "1e25", "\(view)")

            // The formula too: a sierpinski-julia (which has no perturbation) from the mandelbrot's
            // file keeps the file's centre.
            let j = try box.run(["fractal", "sierpinski-julia", "--location", "a.png", "--zoom", "1", "--c", "-0.8,0.156",
                                 "--device", "cpu", "-o", "j.png"])
            #expect(j.status == 0, "\(j)")
            let jv = try Self.record(box, "j.png")
            #expect(jv["formula"] == "sierpinski-julia" && jv["zoom"] == "1" && jv["c"] == "-0.8,0.156", "\(jv)")
            #expect(jv["precision"] == "float", "perturbation recorded, but auto picks again for a view it does not fit: \(jv)")
        }
    }

    @Test("a Kalles Fraktaler .kfr written by hand (CRLF, other keys, KF's exponent style)")
    func handWrittenKFR() throws {
        try withSandbox { box in
            let text = "Re: -0.7436438870371587047521915061\r\nIm: 0.1318259042053119704931320563\r\n"
                + "Zoom: 4.E003\r\nIterations: 700\r\nIterDiv: 1.000000\r\nColors: 255,255,255,0,0,0,\r\nSmooth: 1\r\n"
            try box.write("seahorse.kfr", Array(text.utf8))
            let r = try box.run(["fractal", "--location", "seahorse.kfr", "--size", "32x20", "--device", "cpu", "-o", "s.png"])
            #expect(r.status == 0, "\(r)")
            let view = try Self.record(box, "s.png")
            #expect(view["formula"] == "mandelbrot" && view["iterations"] == "700", "\(view)")
            #expect(view["center"] == "-0.7436438870371587047521915061,0.1318259042053119704931320563", "\(view)")
            #expect(view["zoom"] == "2000", "KF Zoom 4e3 is glint zoom 2e3 (the same view height): \(view)")
            let printed = try box.run(["fractal", "--location", "seahorse.kfr", "--print-location"])
            #expect(Self.kfr(printed.stdout)["Zoom"] == "4000", "\(printed)")
            // An LF-only file with only the three keys works too; Iterations then defaults.
            try box.write("min.kfr", Array("Re: 0.25\nIm: 0\nZoom: 1\n".utf8))
            let m = try box.run(["fractal", "--location", "min.kfr", "--print-location"])
            #expect(Self.kfr(m.stdout) == ["Re": "0.25", "Im": "0", "Zoom": "1", "Iterations": "128"], "\(m)")
        }
    }

    @Test("the 16-bit PNG records the view too")
    func sixteenBit() throws {
        try withSandbox { box in
            let r = try box.run(["fractal", "julia", "--size", "20x10", "--bit-depth", "16", "--c", "-0.4,0.6", "--device", "cpu", "-o", "j16.png"])
            try #require(r.status == 0, "\(r)")
            let view = try Self.record(box, "j16.png")
            #expect(view["formula"] == "julia" && view["c"] == "-0.4,0.6" && view["center"] == "0.0,0.0" && view["zoom"] == "1.0", "\(view)")
            let again = try box.run(["fractal", "--location", "j16.png", "--bit-depth", "16", "--device", "cpu", "-o", "k16.png"])
            #expect(again.status == 0, "\(again)")
            #expect(try box.bytes("k16.png") == box.bytes("j16.png"))
        }
    }

    struct Garbled: Sendable, CustomTestStringConvertible {
        let name: String
        let file: String
        /// The file's bytes, or nil to make it from a real render (`corruptPNG`).
        let bytes: [UInt8]?
        var corrupt: Corruption = .none
        let mentions: String
        var testDescription: String { name }

        enum Corruption: Sendable { case none, textCRC, record, noRecord }
    }

    static let garbled: [Garbled] = [
        Garbled(name: "missing file", file: "nowhere.kfr", bytes: nil, mentions: "nowhere.kfr"),
        Garbled(name: "binary junk", file: "junk.kfr", bytes: [0x00, 0xFF, 0x13, 0x37, 0x00, 0x42], mentions: "junk.kfr"),
        Garbled(name: "text without Re/Im/Zoom", file: "notes.kfr", bytes: Array("just some notes\nno keys here\n".utf8), mentions: "Re, Im and Zoom"),
        Garbled(name: "Re not a number", file: "bad.kfr", bytes: Array("Re: minus one\nIm: 0\nZoom: 1\n".utf8), mentions: "minus one"),
        Garbled(name: "Zoom negative", file: "neg.kfr", bytes: Array("Re: 0\nIm: 0\nZoom: -5\n".utf8), mentions: "Zoom"),
        Garbled(name: "Zoom past the deepest", file: "deep.kfr", bytes: Array("Re: 0\nIm: 0\nZoom: 1e2000000\n".utf8), mentions: "deepest zoom"),
        Garbled(name: "centre outside the plane", file: "far.kfr", bytes: Array("Re: 1e20\nIm: 0\nZoom: 1\n".utf8), mentions: "far.kfr"),
        Garbled(name: "Iterations out of range", file: "it.kfr", bytes: Array("Re: 0\nIm: 0\nZoom: 1\nIterations: 0\n".utf8), mentions: "Iterations"),
        Garbled(name: "a PNG without a record", file: "plain.png", bytes: nil, corrupt: .noRecord, mentions: "glint:view"),
        Garbled(name: "a record with a bad CRC", file: "crc.png", bytes: nil, corrupt: .textCRC, mentions: "CRC"),
        Garbled(name: "a garbled record", file: "rec.png", bytes: nil, corrupt: .record, mentions: "garbled"),
        Garbled(name: "a truncated PNG", file: "cut.png", bytes: Array(pngSignature + [0, 0, 0, 13]), mentions: "cut.png"),
    ]

    @Test("a missing or garbled location: one line, exit 1, nothing written", arguments: garbled)
    func garbledLocation(_ g: Garbled) throws {
        try withSandbox { box in
            if let bytes = g.bytes { try box.write(g.file, bytes) }
            if g.corrupt != .none {
                var png = try PNG.encode(Image8(width: 2, height: 2), alpha: false)
                if g.corrupt != .noRecord {
                    let record = g.corrupt == .record ? "version=1\nzoom=banana\n" : "version=1\nformula=julia\n"
                    png = try PNG.addingText([PNG.TextEntry(keyword: "glint:view", text: record)], to: png)
                }
                if g.corrupt == .textCRC, let i = (0..<(png.count - 8)).first(where: { Array(png[$0..<($0 + 7)]) == Array("formula".utf8) }) {
                    png[i] = UInt8(ascii: "F")
                }
                try box.write(g.file, png)
            }
            let before = box.listing()
            for extra in [["-o", "out.png"], ["--print-location"]] {
                let r = try box.run(["fractal", "--location", g.file, "--size", "16x8", "--device", "cpu"] + extra)
                expectCleanFailure(r, kind: .runtime, mentions: [g.file, g.mentions])
                #expect(r.status == 1, "\(r)")
                #expect(r.stderr.contains("--location"), "\(r)")
            }
            #expect(box.listing() == before, "files changed: \(box.listing())")
        }
    }

    @Test("usage errors: no formula and no --location; --print-location with --frames")
    func usage() throws {
        try withSandbox { box in
            let none = try box.run(["fractal", "--size", "16x8", "-o", "out.png"])
            expectCleanFailure(none, kind: .validation, mentions: ["formula"])
            #expect(none.status == 2, "\(none)")
            let frames = try box.run(["fractal", "mandelbrot", "--frames", "2", "--print-location"])
            expectCleanFailure(frames, kind: .validation, mentions: ["--print-location"])
            #expect(frames.status == 2, "\(frames)")
            #expect(box.listing().isEmpty, "\(box.listing())")
        }
    }

    @Test("--power: recorded in the PNG and the .kfr, read back from both; refused past 8 and off mandelbrot")
    func power() throws {
        try withSandbox { box in
            let a = try box.run(Self.deep + ["--power", "3", "-o", "a.png"])
            try #require(a.status == 0, "\(a)")
            #expect(try Self.record(box, "a.png")["power"] == "3")
            #expect(try Self.record(box, "a.png")["precision"] == "perturbation")
            let b = try box.run(["fractal", "--location", "a.png", "-o", "b.png"])
            #expect(b.status == 0, "\(b)")
            #expect(try box.bytes("a.png") == box.bytes("b.png"), "--location of a power-3 PNG renders it again")
            let printed = try box.run(["fractal", "--location", "a.png", "--print-location"])
            #expect(Self.kfr(printed.stdout)["Power"] == "3", "\(printed)")
            try box.write("p.kfr", Array(printed.stdout.utf8))
            let c = try box.run(["fractal", "--location", "p.kfr", "--size", "24x16", "--device", "cpu", "-o", "c.png"])
            #expect(c.status == 0, "\(c)")
            #expect(try Self.record(box, "c.png")["power"] == "3")
            // Power 2 is left out of both, as before.
            let q = try box.run(Self.deep + ["--print-location"])
            #expect(Self.kfr(q.stdout)["Power"] == nil, "\(q)")
            let high = try box.run(["fractal", "mandelbrot", "--power", "9", "-o", "x.png"])
            expectCleanFailure(high, kind: .validation, mentions: ["--power"])
            let julia = try box.run(["fractal", "julia", "--power", "3", "-o", "x.png"])
            expectCleanFailure(julia, kind: .runtime, mentions: ["mandelbrot only"])
            #expect(!box.exists("x.png"))
        }
    }

    @Test("--color and --light: recorded in the PNG and rendered again from it; --de writes a grey PFM of distances")
    func distanceColouring() throws {
        try withSandbox { box in
            let a = try box.run(Self.deep + ["--color", "slope", "--light", "120,0.75", "-o", "a.png", "--de", "a.pfm"])
            try #require(a.status == 0, "\(a)")
            let view = try Self.record(box, "a.png")
            #expect(view["color"] == "slope" && view["light"] == "120.0,0.75", "\(view)")
            let b = try box.run(["fractal", "--location", "a.png", "-o", "b.png"])
            #expect(b.status == 0, "\(b)")
            #expect(try box.bytes("a.png") == box.bytes("b.png"), "--location renders the slope-shaded PNG again")
            let pfm = try PFM.read(box.path("a.pfm"))
            #expect(pfm.width == 24 && pfm.height == 16)
            #expect(pfm.pixels.contains { $0 > 0 }, "the view has distances")
            #expect(String(decoding: try box.bytes("a.pfm").prefix(3), as: UTF8.self) == "Pf\n", "a grey PFM")
            // A count-coloured PNG records neither.
            let c = try box.run(Self.deep + ["-o", "c.png"])
            #expect(c.status == 0, "\(c)")
            #expect(try Self.record(box, "c.png")["color"] == nil)
            let bad = try box.run(["fractal", "burning-ship", "--color", "de", "-o", "x.png"])
            expectCleanFailure(bad, kind: .runtime, mentions: ["mandelbrot and julia"])
            let raw = try box.run(["fractal", "burning-ship", "--size", "16x8", "--de", "x.pfm", "-o", "x.png"])
            expectCleanFailure(raw, kind: .runtime, mentions: ["mandelbrot's and julia's"])
            let light = try box.run(Self.deep + ["--light", "45,-1", "-o", "x.png"])
            expectCleanFailure(light, kind: .runtime, mentions: ["height"])
            let frames = try box.run(Self.deep + ["--frames", "2", "--de", "x.pfm", "-o", "f"])
            expectCleanFailure(frames, kind: .validation, mentions: ["--de"])
            #expect(!box.exists("x.png") && !box.exists("x.pfm"))
        }
    }
}
