import Foundation
import Testing

/// `glint locate misiurewicz` and `glint fractal --zoom-to misiurewicz` from the command line:
/// the report, the .kfr it writes and a render of it, and one-line refusals.
@Suite("glint locate misiurewicz")
struct LocateMisiurewiczCLITests {
    static let tip = ["--center", "-0.1011,0.9563", "--zoom", "1000"]

    /// The tip of the 1/3 bulb's antenna, M(4,1) numbered from z0 = 0.
    @Test func antennaTipReportedAndRendered() throws {
        try withSandbox { box in
            let r = try box.run(["locate", "misiurewicz"] + Self.tip + ["--kfr", "m41.kfr"])
            #expect(r.status == 0, "\(r)")
            let lines = reportLines(r)
            #expect(lines["preperiod"] == "4" && lines["period"] == "1", "\(r)")
            #expect(lines["point"]?.hasPrefix("-0.1010963638456221") == true, "\(r)")
            #expect(lines["point"]?.contains(",0.956286510809141") == true, "\(r)")
            #expect(lines["center"] == lines["point"], "\(r)")
            #expect(lines["multiplier"] == "1.32833" && lines["rotation"] == "119.55 degrees", "\(r)")
            #expect(lines["zoom"] == "1000" && lines["iterations"] == "1085", "\(r)")
            #expect(lines["newton-steps"].flatMap(Int.init).map { $0 > 0 } == true, "\(r)")
            #expect(lines["wrote"] == "m41.kfr", "\(r)")
            let kfr = String(decoding: try box.bytes("m41.kfr"), as: UTF8.self)
            #expect(kfr.contains("Re: -0.1010963638456221") && kfr.contains("Iterations: 1085"), "\(kfr)")
            let f = try box.run(["fractal", "--location", "m41.kfr", "--size", "30x20", "-o", "m41.png"])
            #expect(f.status == 0 && box.exists("m41.png"), "\(f)")
        }
    }

    /// glint fractal --zoom-to misiurewicz renders the view centred on the point at the same zoom
    /// and records it in the PNG; other formulas are refused.
    @Test func fractalZoomTo() throws {
        try withSandbox { box in
            let r = try box.run(["fractal", "mandelbrot"] + Self.tip + ["--zoom-to", "misiurewicz", "--size", "30x20", "-o", "z.png"])
            #expect(r.status == 0 && r.stderr.contains("zoom-to misiurewicz: preperiod 4, period 1"), "\(r)")
            let p = try box.run(["fractal", "--location", "z.png", "--print-location"])
            #expect(p.stdout.contains("Re: -0.10109636384562216") && p.stdout.contains("Im: 0.9562865108091415"), "\(p)")
            #expect(p.stdout.contains("Zoom: 2000") && p.stdout.contains("Iterations: 1085"), "\(p)")
            let julia = try box.run(["fractal", "julia", "--zoom-to", "misiurewicz", "--size", "8x8", "-o", "j.png"])
            #expect(julia.status == 1 && julia.stderrLines.count == 1 && julia.stderr.contains("mandelbrot only"), "\(julia)")
            #expect(!box.exists("j.png"))
        }
    }

    @Test func errorsAreOneLine() throws {
        try withSandbox { box in
            // Found nothing: status 1, one line, no file.
            for (args, says) in [(["--center", "0.001,0.001", "--zoom", "1e5"], "inside the set"),
                                 (["--center", "3,3", "--zoom", "1"], "orbit escapes"),
                                 (["--center", "-1.75,0", "--zoom", "10", "--preperiod", "2", "--period", "10"], "did not converge")] {
                let r = try box.run(["locate", "misiurewicz", "--kfr", "x.kfr"] + args)
                #expect(r.status == 1 && r.stderrLines.count == 1 && r.stderr.contains(says), "\(args): \(r)")
            }
            #expect(!box.exists("x.kfr"))
            // Numbers out of range: a usage error, status 2, one line.
            let options = [["--preperiod", "1"], ["--preperiod", "0"], ["--period", "0"], ["--max-period", "0"],
                           ["--max-period", "100001"], ["--max-preperiod", "1"], ["--digits", "5"], ["--iterations", "0"]]
            for bad in options.map({ Self.tip + $0 }) + [["--center", "0,1", "--zoom", "0"], ["--center", "1,2,3", "--zoom", "1"]] {
                let r = try box.run(["locate", "misiurewicz"] + bad)
                #expect(r.status == 2 && r.stderrLines.count == 1, "\(bad): \(r)")
            }
        }
    }
}
