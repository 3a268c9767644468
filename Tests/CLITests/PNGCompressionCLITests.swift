// --png-compression: the same pixels in every mode, a smaller or a quicker file.

import Foundation
import GlintCore
import Testing

extension CLITests {
    @Test("--png-compression fast and default store the same pixels; auto is default for small images; a bad mode is a usage error")
    func pngCompressionModes() throws {
        try withSandbox { box in
            // A smooth ramp of colour, which the default's row filters compress and fast's lack of them does not.
            let args = ["fractal", "julia", "--size", "240x160", "--iterations", "200", "--smooth", "--palette", "rainbow",
                        "--device", "cpu", "-q"]
            for mode in ["fast", "default", "auto"] {
                let r = try box.run(args + ["--png-compression", mode, "-o", "\(mode).png"])
                #expect(r.status == 0, "\(mode): \(r)")
            }
            let decoded = try ["fast", "default", "auto"].map { try PNG.decode(try box.bytes("\($0).png"), name: $0) }
            #expect(decoded[0] == decoded[1] && decoded[1] == decoded[2], "the modes must store the same pixels")
            #expect(try box.bytes("fast.png").count > box.bytes("default.png").count)
            #expect(try box.bytes("auto.png") == box.bytes("default.png"), "auto is default under 4 megapixels")
            // After a --then pass too (moved to the render's options, as -o and --device are).
            let chained = try box.run(["fractal", "julia", "--size", "40x30", "--device", "cpu", "--then", "iso",
                                       "--png-compression", "fast", "-o", "chain.png", "-q"])
            #expect(chained.status == 0, "\(chained)")
            // Each PNG still records its view.
            #expect(try PNG.text(in: box.bytes("fast.png"), name: "fast").contains { $0.keyword == "glint:view" })
            for command in [args, ["rtow", "--scene", "ch8", "--size", "8x8", "--spp", "1"], ["pulse", "--size", "8x8"]] {
                let bad = try box.run(command + ["--png-compression", "max", "-o", "bad.png"])
                expectCleanFailure(bad, kind: .validation, mentions: ["--png-compression", "auto, fast or default"])
            }
            #expect(!FileManager.default.fileExists(atPath: box.path("bad.png")))
        }
    }

    @Test("--png-compression fast writes the same bytes on one thread and on many, on both backends")
    func pngFastBytesDoNotDependOnThreads() throws {
        try withSandbox { box in
            // 300 rows: parts compressed at once (PNGFastWriter), however many workers take them.
            for device in ["cpu", "opencl"] {
                var files: [[UInt8]] = []
                for threads in ["1", "2", "5"] {
                    let r = try box.run(["fractal", "mandelbrot", "--size", "400x300", "--png-compression", "fast", "--device", device,
                                         "-q", "-o", "t\(threads).png"], env: ["GLINT_THREADS": threads])
                    #expect(r.status == 0, "\(r)")
                    files.append(try box.bytes("t\(threads).png"))
                }
                #expect(files[0] == files[1] && files[1] == files[2], "\(device): the bytes changed with GLINT_THREADS")
                let auto = try box.run(["fractal", "mandelbrot", "--size", "400x300", "--device", device, "-q", "-o", "auto.png"])
                #expect(auto.status == 0, "\(auto)")
                #expect(try PNG.decode(files[0], name: "t1.png") == PNG.decode(box.bytes("auto.png"), name: "auto.png"))
            }
        }
    }
}
