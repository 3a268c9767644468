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
