import Foundation
import Testing

/// A locator's report, "key value" lines, by key.
func reportLines(_ r: RunResult) -> [String: String] {
    Dictionary(r.stdoutLines.compactMap { line -> (String, String)? in
        guard let space = line.firstIndex(of: " ") else { return nil }
        return (String(line[..<space]), String(line[line.index(after: space)...]))
    }, uniquingKeysWith: { first, _ in first })
}

/// `glint locate minibrot` from the command line: its report, the .kfr it writes and a render of
/// that location, and one-line errors.
@Suite("glint locate minibrot")
struct LocateCLITests {
    @Test func periodThreeFramedAndRendered() throws {
        try withSandbox { box in
            let r = try box.run(["locate", "minibrot", "--center", "-1.75,0", "--zoom", "10", "--kfr", "p3.kfr"])
            #expect(r.status == 0, "\(r)")
            let lines = reportLines(r)
            #expect(lines["period"] == "3", "\(r)")
            #expect(lines["nucleus"]?.hasPrefix("-1.754877666246692") == true, "\(r)")
            #expect(lines["zoom"].flatMap(Double.init).map { (30...50).contains($0) } == true, "\(r)")
            let kfr = String(decoding: try box.bytes("p3.kfr"), as: UTF8.self)
            #expect(kfr.contains("Re: ") && kfr.contains("Zoom: ") && kfr.contains("Iterations: "), "\(kfr)")
            let f = try box.run(["fractal", "--location", "p3.kfr", "--size", "30x20", "-o", "p3.png"])
            #expect(f.status == 0, "\(f)")
            #expect(box.exists("p3.png"))
        }
    }

    /// glint fractal --zoom-to minibrot renders the framing view and records it in the PNG.
    @Test func fractalZoomTo() throws {
        try withSandbox { box in
            let r = try box.run(["fractal", "mandelbrot", "--center", "-1.75,0", "--zoom", "10", "--zoom-to", "minibrot",
                                 "--size", "30x20", "-o", "z.png"])
            #expect(r.status == 0 && r.stderr.contains("period 3"), "\(r)")
            let p = try box.run(["fractal", "--location", "z.png", "--print-location"])
            #expect(p.stdout.contains("Re: -1.769154303181542") && p.stdout.contains("Zoom: 78.8"), "\(p)")
            let julia = try box.run(["fractal", "julia", "--zoom-to", "minibrot", "--size", "8x8", "-o", "j.png"])
            #expect(julia.status == 1 && julia.stderrLines.count == 1 && !box.exists("j.png"), "\(julia)")
        }
    }

    @Test func errorsAreOneLine() throws {
        try withSandbox { box in
            let outside = try box.run(["locate", "minibrot", "--center", "3,3", "--zoom", "1"])
            #expect(outside.status == 1 && outside.stderrLines.count == 1, "\(outside)")
            #expect(outside.stderr.contains("no minibrot period"), "\(outside)")
            for bad in [["--center", "1,2,3", "--zoom", "1"], ["--center", "x,0", "--zoom", "1"],
                        ["--center", "0,0", "--zoom", "0"], ["--center", "0,0", "--zoom", "1", "--period", "0"],
                        ["--center", "0,0", "--zoom", "1", "--digits", "5"]] {
                let r = try box.run(["locate", "minibrot"] + bad)
                #expect(r.status == 2 && r.stderrLines.count == 1, "\(bad): \(r)")
            }
            #expect(!box.exists("p.kfr"))
        }
    }
}
