// Chained passes from the command line: `--then`.

import Foundation
import GlintCore
import Testing

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
