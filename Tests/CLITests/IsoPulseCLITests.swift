// `glint iso` and `glint pulse`, black-box.

import Foundation
import GlintCore
import Testing

@Suite("glint iso and pulse", .serialized)
struct IsoPulseCLITests {
    @Test("iso writes an RGBA PNG sized to fit, identical on cpu and opencl")
    func iso() throws {
        try withSandbox { box in
            #expect(try box.run(["fractal", "julia", "--size", "60x40", "-o", "in.png", "-q"]).status == 0)
            for device in ["cpu", "opencl"] {
                let r = try box.run(["iso", "in.png", "-o", "\(device).png", "--depth", "12", "--corner-radius", "6", "--device", device])
                #expect(r.status == 0, "\(r)")
                #expect(r.stdout.hasPrefix("wrote \(device).png ("), "\(r)")
            }
            let header = pngHeader(try box.bytes("cpu.png"))
            // Canvas: ceil((60 + 40) * 0.7071) + 2 wide, ceil(35.36 + 12) + 2 high; RGBA (colour type 6).
            #expect(header == PNGHeader(width: 73, height: 50, bitDepth: 8, colorType: 6), "\(String(describing: header))")
            #expect(try box.bytes("cpu.png") == box.bytes("opencl.png"))
        }
    }

    @Test("pulse writes numbered frames, identical on cpu and opencl")
    func pulse() throws {
        try withSandbox { box in
            for device in ["cpu", "opencl"] {
                let r = try box.run(["pulse", "-o", device, "--frames", "12", "--size", "16x8", "--hue", "0.3", "--device", device])
                #expect(r.status == 0, "\(r)")
            }
            for name in ["frame_00000.png", "frame_00005.png", "frame_00011.png"] {
                #expect(try box.bytes("cpu/\(name)") == box.bytes("opencl/\(name)"), "\(name)")
            }
            #expect(!box.exists("cpu/frame_00012.png"))
        }
    }

    @Test("bad input: one clear line, non-zero exit, nothing written",
          arguments: [
            ["iso", "missing.png", "-o", "out.png"],
            ["iso", "notpng.png", "-o", "out.png"],
            ["iso", "in.png", "-o", "out.png", "--depth", "-3"],
            ["iso", "in.png", "-o", "out.png", "--corner-radius", "500"],
            ["iso", "in.png", "-o", "out.jpg"],
            ["pulse", "-o", "frames", "--frames", "0"],
            ["pulse", "-o", "frames", "--hue", "1.5"],
            ["pulse", "-o", "frames", "--fps", "0"],
            ["pulse", "-o", "frames", "--size", "0x10"],
            ["pulse", "-o", "in.png", "--frames", "2"],
          ])
    func badInput(args: [String]) throws {
        try withSandbox { box in
            #expect(try box.run(["fractal", "mandelbrot", "--size", "20x20", "-o", "in.png", "-q"]).status == 0)
            try box.write("notpng.png", Array("not a png at all".utf8))
            let before = box.listing()
            let r = try box.run(args)
            #expect(r.status != 0 && r.status < 128, "\(r)")
            #expect(r.stderrLines.first?.lowercased().hasPrefix("error") == true, "\(r)")
            #expect(box.listing() == before, "nothing may be written: \(box.listing())")
        }
    }
}

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
            #expect(try box.bytes("a/frame_00002.png") == box.bytes("single.png"))
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

@Suite("chained passes", .serialized)
struct ChainCLITests {
    @Test("fractal --then iso equals rendering and then running glint iso, on cpu and on opencl (one read-back)")
    func chainEqualsSteps() throws {
        try withSandbox { box in
            let render = ["fractal", "julia", "--size", "60x40", "--palette", "ocean", "--smooth"]
            for device in ["cpu", "opencl"] {
                let r = try box.run(render + ["--then", "iso", "--depth", "12", "--corner-radius", "5", "-o", "chain-\(device).png", "--device", device])
                #expect(r.status == 0, "\(r)")
                if device == "opencl" { #expect(r.stdout.contains("one read-back"), "\(r)") }
            }
            #expect(try box.run(render + ["-o", "j.png", "-q"]).status == 0)
            #expect(try box.run(["iso", "j.png", "-o", "steps.png", "--depth", "12", "--corner-radius", "5", "-q"]).status == 0)
            let steps = try PNG.decode(try box.bytes("steps.png"), name: "steps")
            for device in ["cpu", "opencl"] {
                let chained = try PNG.decode(try box.bytes("chain-\(device).png"), name: device)
                #expect(chained == steps, "chain on \(device) differs from the two steps")
            }
        }
    }

    @Test("the issue's chain: fractal julia --then blur --sigma 3 --then iso --depth 30 equals the three steps, on both backends")
    func blurThenIso() throws {
        try withSandbox { box in
            let render = ["fractal", "julia", "--size", "64x48", "--smooth", "--palette", "fire"]
            for device in ["cpu", "opencl"] {
                let r = try box.run(render + ["--then", "blur", "--sigma", "3", "--then", "iso", "--depth", "30",
                                              "-o", "chain-\(device).png", "--device", device])
                #expect(r.status == 0, "\(r)")
                #expect(r.stdout.contains("then blur sigma 3") && r.stdout.contains("then iso depth 30"), "\(r)")
            }
            #expect(try box.run(render + ["-o", "j.png", "-q"]).status == 0)
            #expect(try box.run(["blur", "j.png", "-o", "b.png", "--sigma", "3", "-q"]).status == 0)
            #expect(try box.run(["iso", "b.png", "-o", "steps.png", "--depth", "30", "-q"]).status == 0)
            let steps = try PNG.decode(try box.bytes("steps.png"), name: "steps")
            for device in ["cpu", "opencl"] {
                #expect(try PNG.decode(try box.bytes("chain-\(device).png"), name: device) == steps, "\(device)")
            }
        }
    }

    @Test("rtow --then iso: the sums resolve on the device; equal to rendering then glint iso, on both backends")
    func rtowChain() throws {
        try withSandbox { box in
            let render = ["rtow", "--scene", "ch10", "--size", "40x30", "--spp", "2"]
            for device in ["cpu", "opencl"] {
                let r = try box.run(render + ["--then", "iso", "--depth", "6", "-o", "chain-\(device).png", "--device", device])
                #expect(r.status == 0, "\(r)")
            }
            #expect(try box.run(render + ["-o", "r.png", "-q", "--device", "opencl"]).status == 0)
            #expect(try box.run(["iso", "r.png", "-o", "steps.png", "--depth", "6", "-q"]).status == 0)
            let steps = try PNG.decode(try box.bytes("steps.png"), name: "steps")
            for device in ["cpu", "opencl"] {
                #expect(try PNG.decode(try box.bytes("chain-\(device).png"), name: device) == steps, "\(device)")
            }
        }
    }

    @Test("chain errors: one line, exit 2", arguments: [
        ["fractal", "julia", "--then", "sharpen", "-o", "x.png"],
        ["fractal", "julia", "--then"],
        ["fractal", "julia", "--then", "iso", "--depth", "-4", "-o", "x.png"],
        ["fractal", "julia", "--then", "blur", "--sigma", "0", "-o", "x.png"],
        ["fractal", "julia", "--then", "blur", "--method", "magic", "-o", "x.png"],
        ["pulse", "--then", "iso"],
        ["fractal", "julia", "--frames", "3", "--then", "iso", "-o", "f"],
    ])
    func errors(args: [String]) throws {
        try withSandbox { box in
            let r = try box.run(args)
            #expect(r.status == 2 || r.status == 1, "\(r)")
            #expect(r.stderrLines.first?.lowercased().hasPrefix("error") == true, "\(r)")
            #expect(box.listing().isEmpty)
        }
    }
}
