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
            // The same file: the same pixels and the same view record.
            #expect(try box.bytes("a/frame_00002.png") == box.bytes("single.png"))
            for k in 0..<5 {
                let name = "frame_0000\(k).png"
                #expect(try box.bytes("a/\(name)") == box.bytes("b/\(name)"), "\(name) differs between two runs")
                #expect(try box.bytes("a/\(name)") == box.bytes("c/\(name)"), "\(name) differs between cpu and opencl")
            }
            #expect(try box.bytes("a/frame_00000.png") != box.bytes("a/frame_00004.png"))
        }
    }

    @Test("frames read back through pinned staging and encoded in the background are the Swift path's, byte for byte, in order")
    func stagedPipelinedFrames() throws {
        try withSandbox { box in
            // 800x400 RGBA is 1.28 MB a frame: above the staging threshold, so every read-back is staged.
            let ramp = ["--frames", "6", "--ramp", "zoom=1:50", "--center", "-0.7435669,0.1314023", "--size", "800x400",
                        "--iterations", "120", "--smooth", "--palette", "fire"]
            let staged = try box.run(["fractal", "mandelbrot", "-o", "a", "--device", "opencl"] + ramp, env: ["GLINT_STAGING": "1"])
            #expect(staged.status == 0, "\(staged)")
            let cpu = try box.run(["fractal", "mandelbrot", "-o", "c", "--device", "cpu"] + ramp)
            #expect(cpu.status == 0, "\(cpu)")
            var frames: [[UInt8]] = []
            for k in 0..<6 {
                let name = "frame_0000\(k).png"
                let a = try box.bytes("a/\(name)")
                #expect(a == (try box.bytes("c/\(name)")), "\(name) differs between the staged OpenCL run and the Swift path")
                frames.append(a)
            }
            #expect(Set(frames).count == 6, "each frame is its own view")
            let names = try FileManager.default.contentsOfDirectory(atPath: box.path("a")).sorted()
            #expect(names == (0..<6).map { "frame_0000\($0).png" }, "only the frames, nothing staged left: \(names)")
        }
    }

    /// The frames' zooms, 20 significant digits (10^(20 + 40/3) = 2.15443469003188372175929...e33).
    static let deepZooms = ["1e20", "2.1544346900318837218e33", "4.6415888336127788924e46", "1e60"]

    @Test("a zoom to 1e60 into a long-decimal centre: one reference orbit; each frame records its view and --location renders it again, byte for byte",
          arguments: ["cpu", "opencl"])
    func deepZoomFrames(device: String) throws {
        try withSandbox { box in
            let r = try box.run(["fractal", "mandelbrot", "--frames", "4", "--ramp", "zoom=1e20:1e60", "--center", DeepZoomCLITests.misiurewicz,
                                 "--size", "48x32", "--iterations", "2000", "--device", device, "-o", "deep"], timeout: 300)
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains(", 1 reference orbit)"), "the frames share the centre's orbit: \(r)")
            for (k, zoom) in Self.deepZooms.enumerated() {
                let name = "deep/frame_0000\(k).png"
                let view = try LocationCLITests.record(box, name)
                #expect(view["zoom"] == zoom && view["center"] == DeepZoomCLITests.misiurewicz, "\(name): \(view)")
                #expect(view["precision"] == "perturbation" && view["iterations"] == "2000" && view["size"] == "48x32", "\(name): \(view)")
                let single = try box.run(["fractal", "--location", name, "--device", device, "-o", "single\(k).png"], timeout: 300)
                #expect(single.status == 0, "\(single)")
                #expect(try box.bytes(name) == box.bytes("single\(k).png"), "\(name) differs from the single render of its view")
                #expect(distinctColours(try PNG.read(box.path(name))) > 4, "\(name) shows filaments")
            }
            #expect(try box.bytes("deep/frame_00001.png") != box.bytes("deep/frame_00002.png"))
        }
    }

    @Test("a zoom ramp to 1e300: the frames' zooms are exact decimals; float for the first, one orbit for the rest")
    func zoomTo1e300() throws {
        try withSandbox { box in
            let r = try box.run(["fractal", "mandelbrot", "--frames", "4", "--ramp", "zoom=1:1e300", "--center", DeepZoomCLITests.misiurewicz,
                                 "--size", "8x6", "--iterations", "100", "--device", "cpu", "-o", "z"])
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains(", 1 reference orbit)"), "\(r)")
            let views = try (0..<4).map { try LocationCLITests.record(box, "z/frame_0000\($0).png") }
            #expect(views.map { $0["zoom"] } == ["1", "1e100", "1e200", "1e300"])
            #expect(views.map { $0["precision"] } == ["float", "perturbation", "perturbation", "perturbation"])
            let single = try box.run(["fractal", "--location", "z/frame_00003.png", "--device", "cpu", "-o", "last.png"])
            #expect(single.status == 0, "\(single)")
            #expect(try box.bytes("z/frame_00003.png") == box.bytes("last.png"))
        }
    }

    @Test("centre and zoom ramped together: each frame's centre has the digits its zoom needs; frames are their single renders")
    func centreAndZoom() throws {
        try withSandbox { box in
            let target = "-0.743643887037158704752191506114774,0.131825904205311970493132056385139"
            let r = try box.run(["fractal", "mandelbrot", "--frames", "5", "--ramp", "zoom=1:1e30", "--ramp", "center=-0.75,0:\(target)",
                                 "--size", "32x24", "--iterations", "3000", "--device", "cpu", "-o", "m"])
            #expect(r.status == 0, "\(r)")
            let views = try (0..<5).map { try LocationCLITests.record(box, "m/frame_0000\($0).png") }
            #expect(views.map { $0["zoom"] } == ["1", "3.162277660168379332e7", "1e15", "3.162277660168379332e22", "1e30"])
            #expect(views.first?["center"] == "-0.75,0" && views.last?["center"] == target)
            // Frame 2 at zoom 1e15: the exact midpoint, 16 + 20 digits after the point at most.
            #expect(views[2]["center"] == "-0.746821943518579352376095753057387,0.0659129521026559852465660281925695", "\(views[2])")
            #expect(views.map { $0["precision"] } == ["float", "double", "perturbation", "perturbation", "perturbation"])
            for k in 0..<5 {
                let single = try box.run(["fractal", "--location", "m/frame_0000\(k).png", "--device", "cpu", "-o", "s\(k).png"])
                #expect(single.status == 0, "\(single)")
                #expect(try box.bytes("m/frame_0000\(k).png") == box.bytes("s\(k).png"), "frame \(k)")
            }
        }
    }

    @Test("bad zoom and centre ramps: one line naming --ramp, exit 2, nothing written", arguments: [
        ("zoom=0:1e10", "--ramp zoom values must be positive numbers"),
        ("zoom=-1e5:1e300", "--ramp zoom values must be positive numbers"),
        ("zoom=1e-10:1", "at least 1e-9"),
        ("zoom=1:abc", "--ramp zoom must be a plain decimal number"),
        ("zoom=1:1e100000001", "exponent beyond"),
        ("zoom=1:", "--ramp zoom must be a plain decimal number"),
        ("zoom=1,0:2,0", "--ramp zoom=FROM:TO takes two numbers"),
        ("zoom=1e5", "FROM:TO"),
        ("center=-0.75,0:-0.74,x", "--ramp center must be a plain decimal number"),
        ("center=-0.75,0:1e10,0", "--ramp center values must be between -1e9 and 1e9"),
        ("center=-0.75:-0.74", "needs pairs X,Y"),
    ])
    func badDeepRamps(ramp: String, message: String) throws {
        try withSandbox { box in
            let r = try box.run(["fractal", "mandelbrot", "--frames", "3", "--ramp", ramp, "--size", "8x6", "--device", "cpu", "-o", "f"])
            #expect(r.status == 2 && r.stderrLines.count == 1, "\(r)")
            #expect(r.stderr.hasPrefix("error: ") && r.stderr.contains(message), "\(r)")
            #expect(box.listing().isEmpty)
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
