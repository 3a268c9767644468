// `glint blur` and `glint mist`, black-box: outputs, parity through `compare`, and bad input
// (one clear line, a non-zero exit, nothing written).

import Foundation
import GlintCore
import Testing

/// A small test picture as an RGBA PNG (and as a PFM when asked).
private func writeInput(_ box: Sandbox, _ name: String = "in.png", width: Int = 40, height: Int = 28) throws {
    var image = Image8(width: width, height: height)
    for y in 0..<height {
        for x in 0..<width {
            image[x, y] = SIMD4(UInt8(x * 6 % 256), UInt8(y * 9 % 256), (x / 8 + y / 8) % 2 == 0 ? 220 : 20, 255)
        }
    }
    if name.hasSuffix(".pfm") {
        try box.write(name, try PFM.encode(image.toFloat()))
    } else {
        try box.write(name, try PNG.encode(image, alpha: false))
    }
}

@Suite("glint blur", .serialized)
struct BlurCLITests {
    @Test("blur a PNG and a PFM, exact and recursive, on both paths")
    func blurWritesImages() throws {
        try withSandbox { box in
            try writeInput(box)
            try writeInput(box, "in.pfm")
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

    @Test("compare --a cpu --b opencl blur: within tolerance")
    func compareBlur() throws {
        try withSandbox { box in
            try writeInput(box)
            try writeInput(box, "in.pfm")
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

/// The PNG chunk CRC (reflected polynomial 0xEDB88320), bit by bit.
func chunkCRC(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for b in bytes {
        crc ^= UInt32(b)
        for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}

struct BadImageCommand: Sendable, CustomTestStringConvertible {
    let name: String
    let args: [String]
    let kind: BadInput.Kind
    let mentions: [String]
    /// Files or folders that must not exist afterwards.
    var absent: [String] = ["out.png"]
    var testDescription: String { name }
}

let badImageCommands: [BadImageCommand] = [
    BadImageCommand(name: "blur: missing input", args: ["blur", "nope.png", "-o", "out.png", "--device", "cpu"],
                    kind: .runtime, mentions: ["nope.png"]),
    BadImageCommand(name: "blur: corrupt PNG", args: ["blur", "bad.png", "-o", "out.png", "--device", "cpu"],
                    kind: .runtime, mentions: ["bad.png"]),
    BadImageCommand(name: "blur: --sigma 0", args: ["blur", "in.png", "-o", "out.png", "--sigma", "0"],
                    kind: .validation, mentions: ["--sigma"]),
    BadImageCommand(name: "blur: --sigma -2", args: ["blur", "in.png", "-o", "out.png", "--sigma", "-2"],
                    kind: .validation, mentions: ["--sigma"]),
    BadImageCommand(name: "blur: --sigma 1e9", args: ["blur", "in.png", "-o", "out.png", "--sigma", "1e9"],
                    kind: .validation, mentions: ["--sigma"]),
    BadImageCommand(name: "blur: --method fast", args: ["blur", "in.png", "-o", "out.png", "--method", "fast"],
                    kind: .validation, mentions: ["--method"]),
    BadImageCommand(name: "blur: --border mirror", args: ["blur", "in.png", "-o", "out.png", "--border", "mirror"],
                    kind: .validation, mentions: ["--border"]),
    BadImageCommand(name: "blur: PNG in, PFM out", args: ["blur", "in.png", "-o", "out.pfm"],
                    kind: .validation, mentions: ["out.pfm"], absent: ["out.pfm"]),
    BadImageCommand(name: "blur: absurd image size", args: ["blur", "huge.png", "-o", "out.png", "--device", "cpu"],
                    kind: .runtime, mentions: ["huge.png", "limit"]),
    BadImageCommand(name: "mist: --frames 0", args: ["mist", "--input", "in.png", "-o", "frames", "--frames", "0"],
                    kind: .validation, mentions: ["--frames"], absent: ["frames"]),
    BadImageCommand(name: "mist: --sigma 0", args: ["mist", "--input", "in.png", "-o", "frames", "--frames", "2", "--sigma", "0"],
                    kind: .validation, mentions: ["--sigma"], absent: ["frames"]),
    BadImageCommand(name: "mist: missing input", args: ["mist", "--input", "nope.png", "-o", "frames", "--frames", "2", "--device", "cpu"],
                    kind: .runtime, mentions: ["nope.png"], absent: ["frames"]),
    BadImageCommand(name: "mist: corrupt PNG", args: ["mist", "--input", "bad.png", "-o", "frames", "--frames", "2", "--device", "cpu"],
                    kind: .runtime, mentions: ["bad.png"], absent: ["frames"]),
    BadImageCommand(name: "mist: malformed wipes JSON",
                    args: ["mist", "--input", "in.png", "-o", "frames", "--frames", "2", "--wipes", "wipes.json", "--device", "cpu"],
                    kind: .runtime, mentions: ["wipes.json"], absent: ["frames"]),
    BadImageCommand(name: "mist: wipe with a bad point",
                    args: ["mist", "--input", "in.png", "-o", "frames", "--frames", "2", "--wipes", "badpoint.json", "--device", "cpu"],
                    kind: .runtime, mentions: ["badpoint.json", "point"], absent: ["frames"]),
    BadImageCommand(name: "mist: --gravity and --gravity-file",
                    args: ["mist", "--input", "in.png", "-o", "frames", "--frames", "2", "--gravity", "0,1", "--gravity-file", "g.txt"],
                    kind: .validation, mentions: ["--gravity"], absent: ["frames"]),
    BadImageCommand(name: "mist: --gravity 1", args: ["mist", "--input", "in.png", "-o", "frames", "--frames", "2", "--gravity", "1"],
                    kind: .validation, mentions: ["--gravity"], absent: ["frames"]),
    BadImageCommand(name: "mist: absurd image size", args: ["mist", "--input", "huge.png", "-o", "frames", "--frames", "2", "--device", "cpu"],
                    kind: .runtime, mentions: ["huge.png", "limit"], absent: ["frames"]),
    BadImageCommand(name: "mist: frames of two sizes", args: ["mist", "--input", "mixed", "-o", "frames", "--frames", "2", "--device", "cpu"],
                    kind: .runtime, mentions: ["size"], absent: ["frames"]),
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
            // A valid PNG header claiming 100000 x 100000 pixels.
            // A valid 1x1 PNG whose IHDR (CRC fixed up) claims 100000 x 100000 pixels.
            var huge = try PNG.encode(Image8(width: 1, height: 1))
            for (offset, value) in [(16, UInt32(100_000)), (20, UInt32(100_000))] {
                for k in 0..<4 { huge[offset + k] = UInt8(truncatingIfNeeded: value >> (24 - 8 * k)) }
            }
            let crc = chunkCRC(Array(huge[12..<29]))
            for k in 0..<4 { huge[29 + k] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * k)) }
            try box.write("huge.png", huge)
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
                #expect(maxPixelDifference(fa, fc) <= 1, "frame \(f): cpu and opencl")
            }
            #expect(!box.exists("a/frame_00005.png"))
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
