// Animations from the command line: --frames with --ramp, and their errors.

import Foundation
import GlintCore
import Testing

@Suite("animation", .serialized)
struct AnimationCLITests {
    @Test("frame k of a ramped fractal animation equals a single render at the ramped parameters; frames are deterministic")
    func fractalFrames() throws {
        try withSandbox { box in
            let ramp = ["--frames", "5", "--ramp", "zoom=1:100", "--ramp", "center=-0.75,0:-0.7435669,0.1314023",
                        "--size", "48x32", "--iterations", "200"]
            for run in ["a", "b"] {
                let r = try box.run(["fractal", "mandelbrot", "-o", run, "--device", "opencl"] + ramp)
                #expect(r.status == 0, "\(r)")
            }
            #expect(try box.run(["fractal", "mandelbrot", "-o", "c", "--device", "cpu"] + ramp).status == 0)
            // Frame 2 of 5 is half way: zoom sqrt(100) = 10, centre the midpoint.
            let single = try box.run(["fractal", "mandelbrot", "--size", "48x32", "--iterations", "200", "--zoom", "10",
                                      "--center", "-0.74678345,0.06570115", "-o", "single.png", "--device", "opencl"])
            #expect(single.status == 0, "\(single)")
            // The same pixels (the single render's PNG also records its view; the frames do not).
            #expect(try PNG.read(box.path("a/frame_00002.png")).pixels == PNG.read(box.path("single.png")).pixels)
            for k in 0..<5 {
                let name = "frame_0000\(k).png"
                #expect(try box.bytes("a/\(name)") == box.bytes("b/\(name)"), "\(name) differs between two runs")
                #expect(try box.bytes("a/\(name)") == box.bytes("c/\(name)"), "\(name) differs between cpu and opencl")
            }
            #expect(try box.bytes("a/frame_00000.png") != box.bytes("a/frame_00004.png"))
        }
    }

    @Test("rtow orbit ramp: frame k equals a single render at the ramped orbit")
    func rtowOrbit() throws {
        try withSandbox { box in
            let base = ["rtow", "--scene", "ch10", "--size", "32x24", "--spp", "2", "--device", "opencl"]
            #expect(try box.run(base + ["--frames", "3", "--ramp", "orbit=0,0:60,20", "-o", "orbit"]).status == 0)
            let single = try box.run(base + ["--orbit", "30,10", "-o", "single.png"])
            #expect(single.status == 0, "\(single)")
            #expect(try box.bytes("orbit/frame_00001.png") == box.bytes("single.png"))
            #expect(try box.bytes("orbit/frame_00000.png") != box.bytes("orbit/frame_00002.png"))
        }
    }

    @Test("a pulse hue ramp: frame k has the hue the ramp gives it")
    func pulseHueRamp() throws {
        try withSandbox { box in
            let r = try box.run(["pulse", "-o", "p", "--frames", "3", "--ramp", "hue=0:0.5", "--size", "4x4", "--purity-range", "0"])
            #expect(r.status == 0, "\(r)")
            // Purity 0.5 (no range): full saturation and value, so the hue shows plainly: red, then
            // hue 0.25 (yellow-green), then 0.5 (cyan).
            let first = try PNG.decode(try box.bytes("p/frame_00000.png"), name: "0")
            let last = try PNG.decode(try box.bytes("p/frame_00002.png"), name: "2")
            #expect(first[1, 1] == SIMD4(255, 0, 0, 255) && last[1, 1] == SIMD4(0, 255, 255, 255))
        }
    }

    @Test("--video pipes frames to ffmpeg, or says clearly that it is missing")
    func video() throws {
        try withSandbox { box in
            let r = try box.run(["fractal", "julia", "--frames", "4", "--size", "33x20", "-o", "f", "--video", "j.mp4"])
            let ffmpeg = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].contains { FileManager.default.isExecutableFile(atPath: $0) }
            if ffmpeg {
                #expect(r.status == 0, "\(r)")
                #expect(((try? box.bytes("j.mp4").count) ?? 0) > 100, "a video file was written")
                #expect(box.exists("f/frame_00003.png"))
            } else {
                #expect(r.status == 1 && r.stderr.contains("ffmpeg is not installed"), "\(r)")
                #expect(box.listing().isEmpty, "nothing written without ffmpeg: \(box.listing())")
            }
        }
    }

    @Test("animation errors: ramp without frames, unknown parameter, bad values",
          arguments: [
            ["fractal", "mandelbrot", "--ramp", "zoom=1:2"],
            ["fractal", "mandelbrot", "--frames", "3", "--ramp", "colour=1:2", "-o", "f"],
            ["fractal", "mandelbrot", "--frames", "3", "--ramp", "zoom=0:2", "-o", "f"],
            ["fractal", "mandelbrot", "--frames", "3", "--ramp", "center=1:2", "-o", "f"],
            ["fractal", "mandelbrot", "--frames", "0", "-o", "f"],
            ["pulse", "--frames", "3", "--ramp", "hue=0:3", "-o", "f"],
          ])
    func errors(args: [String]) throws {
        try withSandbox { box in
            let r = try box.run(args)
            #expect(r.status == 2, "\(r)")
            #expect(box.listing().isEmpty)
        }
    }
}
