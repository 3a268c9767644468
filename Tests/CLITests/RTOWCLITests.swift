// `glint rtow` from the command line.

import Foundation
import GlintCore
import GlintTestSupport
import Testing

/// A small, quick ray-traced render: 64x48 (as `expectWrote` wants), few samples, shallow paths.
func smallRTOW(_ extra: [String], output: String = "out.png") -> [String] {
    ["rtow", "--size", "64x48", "--spp", "2", "--depth", "8", "-o", output] + extra
}

extension BadInput {
    /// `glint rtow <options>`: a small render (`smallRTOW`) on the Swift path, named by its options
    /// unless `name` is given.
    static func rtow(_ options: String, named name: String? = nil, output: String = "out.png", _ kind: Kind,
                     _ mentions: String...) -> BadInput {
        let extra = options.split(separator: " ").map(String.init)
        return BadInput(name: "rtow: \(name ?? options)", args: smallRTOW(extra + ["--device", "cpu"], output: output),
                        kind: kind, mentions: mentions, output: output)
    }
}

let rtowBadInputs: [BadInput] = [
    .rtow("--scene ch9", named: "unknown scene", .validation, "ch9"),
    .rtow("--spp 0", .validation, "--spp"),
    .rtow("--depth 0", .validation, "--depth"),
    .rtow("--roll 90", .validation, "--roll", "63"),
    .rtow("--vfov 180", .validation, "--vfov"),
    .rtow("--orbit abc", .validation, "--orbit", "abc"),
    .rtow("--lookfrom 1,2", .validation, "--lookfrom"),
    .rtow("--distance 0", .validation, "--distance"),
    .rtow("--vup 13,2,3", named: "--vup along the view", .runtime, "vup"),
    .rtow("--scene missing.json", named: "missing scene file", .runtime, "missing.json"),
    .rtow("--resume nope.ckpt", named: "missing checkpoint", .runtime, "nope.ckpt"),
    .rtow("", named: "-o into a missing folder", output: "nope/out.png", .validation, "nope"),
    .rtow("--pfm x.png", named: "--pfm with a .png name", .validation, "--pfm"),
]

@Suite("glint rtow command line", .serialized)
struct RTOWCLITests {
    @Test("rtow bad input: one clear error, non-zero exit, no output file", arguments: rtowBadInputs)
    func badInput(_ bad: BadInput) throws {
        try withSandbox { box in
            let r = try box.run(bad.args)
            expectCleanFailure(r, kind: bad.kind, mentions: bad.mentions)
            #expect(!box.exists(bad.output) && !box.exists("rtow.png"), "an output was written")
            #expect(box.listing().isEmpty, "files left: \(box.listing())")
        }
    }

    @Test("a bad scene file: one line naming the field; nothing written")
    func badSceneFile() throws {
        try withSandbox { box in
            try box.write("s.json", Array(#"{"spheres": [{"center": [0, 0, 0], "radius": 1, "material": "gold"}]}"#.utf8))
            let r = try box.run(smallRTOW(["--scene", "s.json", "--device", "cpu"]))
            expectCleanFailure(r, kind: .runtime, mentions: ["s.json", "spheres[0].material", "gold"])
            #expect(box.listing() == ["s.json"])
        }
    }

    @Test("rtow on cpu and opencl: PNGs of the same picture, a 'wrote' line with samples/s", arguments: ["ch8", "ch10", "cover"])
    func renderBothBackends(_ scene: String) throws {
        try withSandbox { box in
            var images: [Image8] = []
            for device in ["cpu", "opencl"] {
                let r = try box.run(smallRTOW(["--scene", scene, "--device", device], output: "\(device).png"))
                expectWrote(r, file: "\(device).png", device: device)
                #expect(r.stdout.contains("M samples/s") && r.stdout.contains("2 spp"), "\(r)")
                #expect(r.stderr.isEmpty, "\(r)")
                let header = try #require(pngHeader(try box.bytes("\(device).png")))
                #expect(header == PNGHeader(width: 64, height: 48, bitDepth: 8, colorType: 2), "\(header)")
                images.append(try PNG.read(box.path("\(device).png")))
            }
            // The parity contract; on PoCL the images are in fact identical.
            let comparison = try ImageComparison(images[0], images[1])
            #expect(try meanDifference(images[0], images[1]) / 255 < 0.005, "\(comparison)")
            #expect(distinctColours(images[0]) > 20)
        }
    }

    @Test("a render stopped at a checkpoint and resumed equals an uninterrupted one; --pfm writes floats")
    func checkpointAndResume() throws {
        try withSandbox { box in
            let common = ["--scene", "cover", "--seed", "3", "--device", "cpu"]
            let straight = try box.run(smallRTOW(common + ["--spp", "4", "--pfm", "straight.pfm"], output: "straight.png"))
            #expect(straight.status == 0, "\(straight)")
            let first = try box.run(smallRTOW(common + ["--spp", "1", "--checkpoint", "c.ckpt"], output: "part.png"))
            #expect(first.status == 0, "\(first)")
            #expect(box.exists("c.ckpt"))
            let second = try box.run(smallRTOW(common + ["--spp", "4", "--resume", "c.ckpt", "--pfm", "resumed.pfm"], output: "resumed.png"))
            #expect(second.status == 0 && second.stdout.contains("(1 resumed)"), "\(second)")
            #expect(try box.bytes("resumed.png") == box.bytes("straight.png"), "resumed PNG differs")
            #expect(try box.bytes("resumed.pfm") == box.bytes("straight.pfm"), "resumed PFM differs")
            let pfm = try PFM.read(box.path("straight.pfm"))
            #expect(pfm.width == 64 && pfm.height == 48)
            // Another job's checkpoint: refused, one line, no output.
            let other = try box.run(smallRTOW(["--scene", "cover", "--seed", "4", "--spp", "4", "--resume", "c.ckpt", "--device", "cpu"], output: "other.png"))
            expectCleanFailure(other, kind: .runtime, mentions: ["different job"])
            #expect(!box.exists("other.png"))
            #expect(!box.listing().contains { $0.contains(".tmp-") })
        }
    }

    @Test("glint rtow --help teaches: scenes, gestures, checkpoints, examples")
    func help() throws {
        try withSandbox { box in
            let r = try box.run(["rtow", "--help"])
            #expect(r.status == 0, "\(r)")
            for word in ["ch8", "ch10", "cover", "--orbit", "--distance", "--turn", "--roll", "--aperture", "--focus-dist",
                         "--checkpoint", "--resume", "--partial", "--pfm", "--app-glass", "Examples:", "89.999", "0.314"] {
                #expect(r.stdout.contains(word), "--help does not mention \(word)")
            }
        }
    }
}
