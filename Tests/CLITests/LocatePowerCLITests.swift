import Foundation
import GlintCore
import Testing

/// `glint locate minibrot|misiurewicz --power N` and `glint fractal mandelbrot --power N --zoom-to`
/// from the command line: the report and the .kfr record the power, the framed view shows the
/// minibrot, and the formulas the locators do not search are refused in one line that says why.
@Suite("glint locate --power")
struct LocateCLIPowerTests {
    /// By the period-4 minibrot of z³ + c on the upper antenna (nucleus −0.24397 + 1.32241i).
    static let cubic = ["--center", "-0.2437,1.3221", "--zoom", "2000"]

    /// The share of pixels inside the set (escape count = `iterations`) in a --counts file: a
    /// 16-bit binary PGM, "P5\nW H\n65535\n" then big-endian counts.
    static func insideShare(_ bytes: [UInt8], iterations: Int) throws -> Double {
        let newlines = bytes.indices.filter { bytes[$0] == 10 }.prefix(3)
        let header = String(decoding: bytes[..<(newlines.last ?? 0)], as: UTF8.self).split(separator: "\n")
        let size = try #require(header.count == 3 ? header[1].split(separator: " ").compactMap { Int($0) } : nil)
        let start = try #require(newlines.last) + 1
        let count = size[0] * size[1]
        try #require(bytes.count == start + 2 * count)
        var inside = 0
        for k in 0..<count where Int(bytes[start + 2 * k]) << 8 | Int(bytes[start + 2 * k + 1]) >= iterations {
            inside += 1
        }
        return Double(inside) / Double(count)
    }

    @Test func minibrotReportedWrittenAndRendered() throws {
        try withSandbox { box in
            let r = try box.run(["locate", "minibrot", "--power", "3"] + Self.cubic + ["--kfr", "c.kfr"])
            #expect(r.status == 0, "\(r)")
            let lines = reportLines(r)
            #expect(lines["power"] == "3" && lines["period"] == "4", "\(r)")
            #expect(lines["nucleus"]?.hasPrefix("-0.2439653592334836") == true, "\(r)")
            #expect(lines["nucleus"]?.contains(",1.3224072357130081") == true, "\(r)")
            #expect(lines["center"] == lines["nucleus"], "past power 2 the framing view is centred on the nucleus: \(r)")
            #expect(lines["zoom"].flatMap(Double.init).map { (515...530).contains($0) } == true, "0.7 / 1.34e-3: \(r)")
            let kfr = String(decoding: try box.bytes("c.kfr"), as: UTF8.self)
            #expect(kfr.contains("Power: 3") && kfr.contains("Iterations: 1000"), "\(kfr)")
            let f = try box.run(["fractal", "--location", "c.kfr", "--size", "30x20", "-o", "c.png"])
            #expect(f.status == 0 && box.exists("c.png"), "\(f)")
            let p = try box.run(["fractal", "--location", "c.png", "--print-location"])
            #expect(p.stdout.contains("Power: 3"), "\(p)")
            // At power 2 the report names no power, as locations do not.
            let two = try box.run(["locate", "minibrot", "--center", "-1.75,0", "--zoom", "10"])
            #expect(two.status == 0 && reportLines(two)["power"] == nil && reportLines(two)["period"] == "3", "\(two)")
        }
    }

    /// --zoom-to minibrot at power 3 frames the copy as the whole set is framed at zoom 0.7: about
    /// as much of the picture is inside the set (measured: 14.8% of 90 × 60 pixels in both). With
    /// the power-2 formula 1/(b·l²) the size would be 10 times too small and the copy's inside
    /// would fill the picture.
    @Test func fractalZoomToShowsTheMinibrot() throws {
        try withSandbox { box in
            let r = try box.run(["fractal", "mandelbrot", "--power", "3"] + Self.cubic
                                 + ["--zoom-to", "minibrot", "--size", "90x60", "-o", "z.png", "--counts", "z.pgm"])
            #expect(r.status == 0 && r.stderr.contains("zoom-to minibrot: period 4") && r.stderr.contains("400 iterations"), "\(r)")
            let p = try box.run(["fractal", "--location", "z.png", "--print-location"])
            #expect(p.stdout.contains("Re: -0.2439653592334836") && p.stdout.contains("Power: 3"), "\(p)")
            let whole = try box.run(["fractal", "mandelbrot", "--power", "3", "--center", "0,0", "--zoom", "0.7",
                                     "--iterations", "100", "--size", "90x60", "-o", "w.png", "--counts", "w.pgm"])
            #expect(whole.status == 0, "\(whole)")
            let copy = try Self.insideShare(box.bytes("z.pgm"), iterations: 400)
            let set = try Self.insideShare(box.bytes("w.pgm"), iterations: 100)
            #expect(set > 0.1 && copy > 0.7 * set && copy < 1.4 * set, "inside: copy \(copy), whole set \(set)")
        }
    }

    @Test func misiurewiczAtPowerThree() throws {
        try withSandbox { box in
            // The tip of an antenna of z³ + c: M(2,1), c² = e^(2πi/3) − 1, |λ| = 3√3 at 30 degrees.
            let r = try box.run(["locate", "misiurewicz", "--power", "3", "--center", "0.3405,1.2714", "--zoom", "2000",
                                 "--kfr", "m.kfr"])
            #expect(r.status == 0, "\(r)")
            let lines = reportLines(r)
            #expect(lines["power"] == "3" && lines["preperiod"] == "2" && lines["period"] == "1", "\(r)")
            #expect(lines["point"]?.hasPrefix("0.3406250193166066") == true, "\(r)")
            #expect(lines["multiplier"] == "5.19615" && lines["rotation"] == "30.0 degrees", "\(r)")
            let kfr = String(decoding: try box.bytes("m.kfr"), as: UTF8.self)
            #expect(kfr.contains("Power: 3"), "\(kfr)")
            let z = try box.run(["fractal", "mandelbrot", "--power", "3", "--center", "0.3405,1.2714", "--zoom", "2000",
                                 "--zoom-to", "misiurewicz", "--size", "30x20", "-o", "z.png"])
            #expect(z.status == 0 && z.stderr.contains("preperiod 2, period 1"), "\(z)")
        }
    }

    @Test func refusalsAreOneLineAndSayWhy() throws {
        try withSandbox { box in
            for (formula, says) in [("julia", "c is fixed"), ("burning-ship", "not holomorphic"), ("sierpinski-julia", "c is fixed")] {
                for target in ["minibrot", "misiurewicz"] {
                    let r = try box.run(["fractal", formula, "--zoom-to", target, "--size", "8x8", "-o", "x.png"])
                    #expect(r.status == 1 && r.stderrLines.count == 1 && r.stderr.contains(says)
                            && r.stderr.contains("mandelbrot only"), "\(formula) \(target): \(r)")
                }
            }
            #expect(!box.exists("x.png"))
            for bad in ["1", "9", "x"] {
                for command in ["minibrot", "misiurewicz"] {
                    let r = try box.run(["locate", command, "--power", bad] + Self.cubic)
                    #expect(r.status == 2 && r.stderrLines.count == 1 && r.stderr.contains("--power"), "\(command) --power \(bad): \(r)")
                }
            }
        }
    }
}
