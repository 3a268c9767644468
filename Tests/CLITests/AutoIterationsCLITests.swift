import Foundation
import Testing

/// `glint fractal --iterations auto` from the command line: the count it picks is said, recorded
/// in the PNG and the same on both backends and in every shard; where it cannot apply, one line.
@Suite("glint fractal --iterations auto")
struct AutoIterationsCLITests {
    static let seahorse = ["fractal", "mandelbrot", "--center", "-0.743643887037158704752191506114774,0.131825904205311970493132056385139",
                           "--zoom", "1e9", "--size", "48x30", "--iterations", "auto"]

    /// The count from `iterations auto: N (...)` on stderr.
    func chosen(_ r: RunResult) -> Int? {
        guard let line = r.stderrLines.first(where: { $0.hasPrefix("iterations auto: ") }) else { return nil }
        return Int(line.dropFirst("iterations auto: ".count).prefix { $0.isNumber })
    }

    @Test func chosenRecordedAndTheSameEverywhere() throws {
        try withSandbox { box in
            let cpu = try box.run(Self.seahorse + ["--device", "cpu", "-o", "cpu.png"])
            let cl = try box.run(Self.seahorse + ["--device", "opencl", "-o", "cl.png"])
            #expect(cpu.status == 0 && cl.status == 0, "\(cpu) \(cl)")
            let n = try #require(chosen(cpu), "\(cpu)")
            #expect(n > 128 && chosen(cl) == n, "\(cpu) \(cl)")
            // The PNG records the count: --location renders the same image with a fixed one.
            let p = try box.run(["fractal", "--location", "cpu.png", "--print-location"])
            #expect(p.stdout.contains("Iterations: \(n)\r\n"), "\(p)")
            #expect(try box.run(["fractal", "--location", "cpu.png", "--device", "cpu", "-o", "again.png", "-q"]).status == 0)
            #expect(try box.bytes("again.png") == box.bytes("cpu.png"))
            // Shards probe the whole view: their tiles merge into the single render.
            try FileManager.default.createDirectory(atPath: box.path("t"), withIntermediateDirectories: true)
            for i in 1...2 {
                #expect(try box.run(Self.seahorse + ["--device", "cpu", "--shard", "\(i)/2", "-o", "t/p\(i).png", "-q"]).status == 0)
            }
            #expect(try box.run(["merge", "t", "-o", "merged.png", "-q"]).status == 0)
            #expect(try box.bytes("merged.png") == box.bytes("cpu.png"))
            // -q says nothing.
            let quiet = try box.run(Self.seahorse + ["--device", "cpu", "-o", "q.png", "-q"])
            #expect(quiet.status == 0 && quiet.stderr.isEmpty && quiet.stdout.isEmpty, "\(quiet)")
        }
    }

    @Test func eachFrameGetsItsOwn() throws {
        try withSandbox { box in
            let r = try box.run(["fractal", "mandelbrot", "--center", "-0.743643887037158704752191506114774,0.131825904205311970493132056385139",
                                 "--frames", "2", "--ramp", "zoom=1:1e9", "--size", "32x20", "--iterations", "auto", "--device", "cpu", "-o", "f"])
            #expect(r.status == 0, "\(r)")
            let lines = r.stderrLines.filter { $0.hasPrefix("iterations auto (frame ") }
            #expect(lines.count == 2, "\(r)")
            // The whole set and seahorse valley at 1e9 need other limits; each PNG records its own.
            let counts = lines.map { Int($0.split(separator: " ")[4].prefix { $0.isNumber }) }
            #expect(counts.count == 2 && counts[0] != counts[1], "\(lines)")
            for (k, n) in counts.enumerated() {
                let p = try box.run(["fractal", "--location", "f/frame_0000\(k).png", "--print-location"])
                #expect(p.stdout.contains("Iterations: \(n ?? -1)\r\n"), "\(p)")
            }
        }
    }

    /// compare and glint serve run the probe as part of each run, on that run's backend.
    @Test func compareProbesOnEachSide() throws {
        try withSandbox { box in
            let r = try box.run(["compare", "--a", "cpu", "--b", "opencl", "--runs", "1"] + Self.seahorse)
            #expect(r.status == 0, "\(r)")
        }
    }

    @Test func refusedWhereItCannotApply() throws {
        try withSandbox { box in
            let cases: [([String], String)] = [
                (["fractal", "mandelbrot", "--iterations", "auto", "--print-location"], "--print-location renders nothing"),
                (["fractal", "mandelbrot", "--iterations", "automatic", "-o", "x.png"], "--iterations"),
            ]
            for (args, expected) in cases {
                let r = try box.run(args)
                #expect(r.status != 0 && r.stderrLines.count == 1 && r.stderr.contains(expected), "\(args): \(r)")
            }
            #expect(!box.exists("x.png"))
        }
    }
}
