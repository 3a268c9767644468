// `glint blur` and `glint mist`, black-box: outputs, parity through `compare`, and bad input
// (one clear line, a non-zero exit, nothing written).

import Foundation
import GlintCore
import GlintTestSupport
import Testing

/// A small test picture as an RGBA PNG (and as a PFM when asked).
private func writeInput(_ box: Sandbox, _ name: String = "in.png", width: Int = 40, height: Int = 28) throws {
    let image = makeImage(width: width, height: height) { x, y in
        SIMD4(UInt8(x * 6 % 256), UInt8(y * 9 % 256), (x / 8 + y / 8) % 2 == 0 ? 220 : 20, 255)
    }
    try box.write(name, name.hasSuffix(".pfm") ? try PFM.encode(image.toFloat()) : try PNG.encode(image, alpha: false))
}

@Suite("glint blur", .serialized)
struct BlurCLITests {
    @Test("blur a PNG and a PFM, exact and recursive, on both paths")
    func blurWritesImages() throws {
        try withSandbox { box in
            for name in ["in.png", "in.pfm"] { try writeInput(box, name) }
            for (method, device) in [("exact", "cpu"), ("recursive", "opencl")] {
                let r = try box.run(["blur", "in.png", "-o", "\(method).png", "--sigma", "3", "--method", method, "--device", device])
                #expect(r.status == 0, "\(r)")
                #expect(r.stdout.hasPrefix("wrote \(method).png (40x28, sigma 3, \(method), reflect101"), "\(r)")
                let out = try PNG.decode(try box.bytes("\(method).png"), name: method)
                #expect(out.width == 40 && out.height == 28)
            }
            let f = try box.run(["blur", "in.pfm", "-o", "out.pfm", "--sigma", "2", "--border", "clamp", "--device", "cpu"])
            #expect(f.status == 0, "\(f)")
            let image = try PFM.decode(try box.bytes("out.pfm"), name: "out.pfm")
            #expect(image.width == 40 && image.height == 28)
        }
    }

    @Test("--repeat-runs says whether the device copied: PoCL works in host memory, GLINT_ZERO_COPY=0 copies")
    func repeatRunsNamesTheCopies() throws {
        // PoCL alone (a GPU, where there is one, would come first and copy).
        let icd = "/etc/OpenCL/vendors/pocl.icd"
        try #require(FileManager.default.fileExists(atPath: icd), "\(icd) not found: install Debian's pocl-opencl-icd")
        try withSandbox { box in
            try writeInput(box)
            let vendors = box.work.appendingPathComponent("vendors")
            try FileManager.default.createDirectory(at: vendors, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: icd, toPath: vendors.appendingPathComponent("pocl.icd").path)
            let env: [String: String?] = ["OCL_ICD_VENDORS": vendors.path, "OCL_ICD_FILENAMES": nil]
            let args = ["blur", "in.png", "-o", "out.png", "--sigma", "6", "--device", "opencl", "--repeat-runs", "3"]
            let shared = try box.run(args, env: env)
            #expect(shared.status == 0 && shared.stdout.contains("repeated: median ") &&
                    shared.stdout.contains("no copies (the device works in host memory)"), "\(shared)")
            let copying = try box.run(args, env: env.merging(["GLINT_ZERO_COPY": "0"]) { $1 })
            #expect(copying.status == 0 && copying.stdout.contains("writing the image and reading it back included"), "\(copying)")
        }
    }

    @Test("compare --a cpu --b opencl blur: within tolerance")
    func compareBlur() throws {
        try withSandbox { box in
            for name in ["in.png", "in.pfm"] { try writeInput(box, name) }
            for args in [["blur", "in.png", "--sigma", "5"], ["blur", "in.png", "--sigma", "2", "--method", "exact"],
                         ["blur", "in.pfm", "--sigma", "3"]] {
                let r = try box.run(["compare", "--a", "cpu", "--b", "opencl", "--runs", "1"] + args)
                #expect(r.status == 0, "\(r)")
                #expect(r.stdout.contains("within tolerance"), "\(r)")
            }
        }
    }

    @Test("help teaches with examples")
    func help() throws {
        try withSandbox { box in
            for command in ["blur", "mist"] {
                let r = try box.run([command, "--help"])
                #expect(r.status == 0)
                #expect(r.stdout.contains("Examples:") && r.stdout.contains("glint \(command) "), "\(r)")
            }
        }
    }
}

struct BadImageCommand: Sendable, CustomTestStringConvertible {
    let name: String
    let args: [String]
    let kind: BadInput.Kind
    let mentions: [String]
    /// Files or folders that must not exist afterwards.
    var absent: [String] = ["out.png"]
    var testDescription: String { name }

    /// `glint blur <input> -o <output> <options>`.
    static func blur(_ what: String, input: String = "in.png", output: String = "out.png", _ options: [String],
                     _ kind: BadInput.Kind, mentions: [String]) -> Self {
        Self(name: "blur: \(what)", args: ["blur", input, "-o", output] + options, kind: kind, mentions: mentions,
             absent: [output])
    }

    /// `glint mist --input <input> -o frames <options>`.
    static func mist(_ what: String, input: String = "in.png", _ options: [String],
                     _ kind: BadInput.Kind, mentions: [String]) -> Self {
        Self(name: "mist: \(what)", args: ["mist", "--input", input, "-o", "frames"] + options, kind: kind,
             mentions: mentions, absent: ["frames"])
    }
}

/// Mist's command lines below render two frames unless they say otherwise.
private let twoFrames = ["--frames", "2"], onCPU = ["--device", "cpu"]

let badImageCommands: [BadImageCommand] = [
    .blur("missing input", input: "nope.png", onCPU, .runtime, mentions: ["nope.png"]),
    .blur("corrupt PNG", input: "bad.png", onCPU, .runtime, mentions: ["bad.png"]),
] + ["0", "-2", "1e9"].map { .blur("--sigma \($0)", ["--sigma", $0], .validation, mentions: ["--sigma"]) } + [
    .blur("--method fast", ["--method", "fast"], .validation, mentions: ["--method"]),
    .blur("--border mirror", ["--border", "mirror"], .validation, mentions: ["--border"]),
    .blur("PNG in, PFM out", output: "out.pfm", [], .validation, mentions: ["out.pfm"]),
    .blur("absurd image size", input: "huge.png", onCPU, .runtime, mentions: ["huge.png", "limit"]),
    .mist("--frames 0", ["--frames", "0"], .validation, mentions: ["--frames"]),
    .mist("--sigma 0", twoFrames + ["--sigma", "0"], .validation, mentions: ["--sigma"]),
    .mist("missing input", input: "nope.png", twoFrames + onCPU, .runtime, mentions: ["nope.png"]),
    .mist("corrupt PNG", input: "bad.png", twoFrames + onCPU, .runtime, mentions: ["bad.png"]),
    .mist("malformed wipes JSON", twoFrames + ["--wipes", "wipes.json"] + onCPU, .runtime, mentions: ["wipes.json"]),
    .mist("wipe with a bad point", twoFrames + ["--wipes", "badpoint.json"] + onCPU, .runtime,
          mentions: ["badpoint.json", "point"]),
    .mist("--gravity and --gravity-file", twoFrames + ["--gravity", "0,1", "--gravity-file", "g.txt"], .validation,
          mentions: ["--gravity"]),
    .mist("--gravity 1", twoFrames + ["--gravity", "1"], .validation, mentions: ["--gravity"]),
    .mist("absurd image size", input: "huge.png", twoFrames + onCPU, .runtime, mentions: ["huge.png", "limit"]),
    .mist("frames of two sizes", input: "mixed", twoFrames + onCPU, .runtime, mentions: ["size"]),
]

@Suite("glint blur and mist: bad input", .serialized)
struct BlurMistBadInputTests {
    @Test(arguments: badImageCommands)
    func failsCleanly(_ c: BadImageCommand) throws {
        try withSandbox { box in
            try writeInput(box)
            try box.write("bad.png", Array("this is not a PNG at all".utf8))
            try box.write("wipes.json", Array(#"[{"start": 0, "points": [[0.1, 0.2]"#.utf8))
            try box.write("badpoint.json", Array(#"[{"start": 0, "points": [[0.1]]}]"#.utf8))
            try box.write("g.txt", Array("0,1\n".utf8))
            // A valid 1x1 PNG whose IHDR (CRC fixed up) claims 100000 x 100000 pixels.
            try box.write("huge.png", try forgedPNG(width: 100_000, height: 100_000))
            try FileManager.default.createDirectory(at: box.work.appendingPathComponent("mixed"), withIntermediateDirectories: true)
            try writeInput(box, "mixed/a.png")
            try writeInput(box, "mixed/b.png", width: 20, height: 20)
            let r = try box.run(c.args)
            expectCleanFailure(r, kind: c.kind, mentions: c.mentions)
            for name in c.absent { #expect(!box.exists(name), "\(name) must not be written\n\(r)") }
            #expect(!box.listing().contains { $0.contains(".tmp-") }, "a temporary file was left behind")
        }
    }
}

@Suite("glint mist", .serialized)
struct MistCLITests {
    @Test("mist writes numbered frames; the same seed gives the same frames; devices agree")
    func mistFrames() throws {
        try withSandbox { box in
            try writeInput(box)
            try box.write("wipes.json", Array(#"[{"start": 1, "radius": 0.1, "points": [[0.2, 0.5], [0.6, 0.5]]}]"#.utf8))
            let base = ["mist", "--input", "in.png", "--frames", "5", "--sigma", "4", "--drops", "12", "--seed", "9",
                        "--wipes", "wipes.json", "--gravity", "0.2,1"]
            let a = try box.run(base + ["-o", "a", "--device", "cpu"])
            #expect(a.status == 0, "\(a)")
            #expect(a.stdout.hasPrefix("wrote 5 frames to a/ (40x28"), "\(a)")
            let b = try box.run(base + ["-o", "b", "--device", "cpu"])
            let c = try box.run(base + ["-o", "c", "--device", "opencl"])
            #expect(b.status == 0 && c.status == 0, "\(b)\n\(c)")
            for f in 0..<5 {
                let name = "frame_0000\(f).png"
                let fa = try PNG.decode(try box.bytes("a/" + name), name: name)
                #expect(try box.bytes("a/" + name) == box.bytes("b/" + name), "frame \(f) differs between identical runs")
                let fc = try PNG.decode(try box.bytes("c/" + name), name: name)
                #expect(try maxDifference(fa, fc) <= 1, "frame \(f): cpu and opencl")
            }
            #expect(!box.exists("a/frame_00005.png"))
        }
    }

    /// The fog builds by 0.01 a frame at 60 fps up to 1: without drops, a window misted from the
    /// start shows at frame 0 what a clear one shows once fogged over (frame 110), on each device.
    @Test("--fogged starts where the fog ends up", arguments: ["cpu", "opencl"])
    func foggedStartsMisted(device: String) throws {
        try withSandbox { box in
            try writeInput(box)
            let base = ["mist", "--input", "in.png", "--sigma", "4", "--drops", "0", "--device", device]
            let fogged = try box.run(base + ["--fogged", "--frames", "1", "-o", "f"])
            let clear = try box.run(base + ["--frames", "111", "-o", "c", "-q"])
            #expect(fogged.status == 0 && clear.status == 0, "\(fogged)\n\(clear)")
            #expect(try box.bytes("f/frame_00000.png") == box.bytes("c/frame_00110.png"), "--fogged frame 0 is not the fogged-over frame")
            #expect(try box.bytes("f/frame_00000.png") != box.bytes("c/frame_00000.png"), "--fogged changed nothing")
        }
    }

    @Test("a folder of frames plays as the camera; compare mist compares the last frame")
    func mistFolderAndCompare() throws {
        try withSandbox { box in
            try FileManager.default.createDirectory(at: box.work.appendingPathComponent("cam"), withIntermediateDirectories: true)
            try writeInput(box, "cam/001.png")
            try writeInput(box, "cam/002.png", width: 40, height: 28)
            try box.write("g.txt", Array("0,1\n1,0\n".utf8))
            let r = try box.run(["mist", "--input", "cam", "-o", "out", "--frames", "3", "--sigma", "5", "--gravity-file", "g.txt",
                                 "--device", "cpu"])
            #expect(r.status == 0, "\(r)")
            #expect(box.exists("out/frame_00002.png"))
            let c = try box.run(["compare", "--a", "cpu", "--b", "opencl", "--runs", "1", "mist", "--input", "cam", "--frames", "4",
                                 "--sigma", "5"])
            #expect(c.status == 0 && c.stdout.contains("within tolerance"), "\(c)")
        }
    }
}
