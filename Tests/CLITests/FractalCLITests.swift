// `glint fractal` from the command line: bad input, renders on both paths, escape counts,
// 16-bit output and help. (Devices, GLINT_DEVICE and the program cache: DevicesCLITests.swift.)

import Foundation
import GlintCore
import GlintTestSupport
import Testing

let allFormulas = ["mandelbrot", "julia", "burning-ship", "sierpinski-julia", "image-julia"]

/// A small, quick render: `glint fractal <formula> --size 64x48 --iterations 64 -o <output>` + extra.
func smallRenderArgs(formula: String, output: String, extra: [String]) -> [String] {
    ["fractal", formula, "--size", "64x48", "--iterations", "64", "-o", output] + extra
}
func smallRender(_ extra: [String]) -> [String] { smallRenderArgs(formula: "mandelbrot", output: "out.png", extra: extra) }
func smallRender(_ formula: String, _ extra: [String]) -> [String] { smallRenderArgs(formula: formula, output: "out.png", extra: extra) }
func smallRender(output: String, _ extra: [String]) -> [String] { smallRenderArgs(formula: "mandelbrot", output: output, extra: extra) }

extension BadInput {
    /// `glint fractal <formula> <options>`: a small render (`smallRender`) unless `small` is false,
    /// on the Swift path unless the options pick a device; named by its options unless `name` is given.
    static func fractal(_ options: String, named name: String? = nil, formula: String = "mandelbrot", small: Bool = true,
                        output: String = "out.png", _ kind: Kind, _ mentions: String..., setup: Setup = .none) -> BadInput {
        let extra = options.split(separator: " ").map(String.init)
        let device = extra.contains("--device") ? [] : ["--device", "cpu"]
        let args = small ? smallRenderArgs(formula: formula, output: output, extra: extra + device)
                         : ["fractal", formula] + extra + ["-o", output] + device
        return BadInput(name: name ?? options, args: args, kind: kind, mentions: mentions, output: output, setup: setup)
    }
}

let badInputs: [BadInput] = [
    .fractal("--size=-5x10", small: false, .validation, "-5x10"),
    .fractal("--size 0x10", small: false, .validation, "0x10"),
    .fractal("--size 100000x100000", small: false, .validation, "100000x100000", "limit"),
    .fractal("--size abc", small: false, .validation, "abc"),
    .fractal("--zoom 0", .validation, "--zoom"),
    .fractal("--zoom -1", .validation, "--zoom"),
    .fractal("--zoom=-1", .validation, "--zoom", "-1"),
    .fractal("--device bogus", .runtime, "bogus"),
    .fractal("--device opencl:99", .runtime, "opencl:99"),
    .fractal("--device gpu", named: "--device gpu (no GPU here)", .runtime, "GPU"),
    .fractal("--texture missing.png", named: "image-julia, missing texture", formula: "image-julia", .runtime, "missing.png"),
    .fractal("--texture x.png", named: "image-julia, corrupt texture", formula: "image-julia", .runtime, "x.png",
             setup: .corruptTexture),
    .fractal("--texture half.png", named: "image-julia, truncated texture", formula: "image-julia", .runtime, "half.png",
             setup: .truncatedTexture),
    .fractal("", named: "image-julia without --texture", formula: "image-julia", .validation, "--texture"),
    .fractal("", named: "unknown formula", formula: "mandelbrat", .validation, "mandelbrat"),
    .fractal("--palette neon", named: "unknown palette", .validation, "neon"),
    .fractal("--size 64x48 --iterations 0", named: "--iterations 0", small: false, .runtime, "--iterations"),
    .fractal("--bailout 0.5", .runtime, "--bailout"),
    .fractal("--ss 0", .runtime, "--ss"),
    .fractal("--precision half", .validation, "--precision", "half"),
    .fractal("", named: "-o into a missing folder", output: "nope/out.png", .validation, "nope"),
    .fractal("", named: "-o with a .jpg extension", output: "out.jpg", .validation, "out.jpg"),
]

@Suite("glint command line", .serialized)
struct CLITests {
    @Test("the glint binary is found beside the test bundle")
    func binaryIsFound() throws {
        let url = try glintBinary.get()
        #expect(FileManager.default.isExecutableFile(atPath: url.path))
    }

    // Bad input.
    @Test("bad input: one clear error, non-zero exit, no output file", arguments: badInputs)
    func badInput(_ bad: BadInput) throws {
        try withSandbox { box in
            switch bad.setup {
            case .none: break
            case .corruptTexture:
                try box.write("x.png", Array("this is not a PNG file, just some text\n".utf8))
            case .truncatedTexture:
                let made = try box.run(smallRender(output: "full.png", ["--device", "cpu", "--palette", "rainbow"]))
                try #require(made.status == 0, "could not make the texture to truncate\n\(made)")
                let full = try box.bytes("full.png")
                try #require(pngHeader(full) != nil, "the texture made by glint is not a PNG")
                _ = try PNG.read(box.path("full.png"))  // the whole file is valid...
                try box.write("half.png", Array(full[0..<(full.count / 2)]))
                #expect(throws: GlintError.self, "...and the half is not") { try PNG.read(box.path("half.png")) }
            }
            let before = box.listing()
            let r = try box.run(bad.args)
            expectCleanFailure(r, kind: bad.kind, mentions: bad.mentions)
            #expect(!box.exists(bad.output), "\(bad.output) was written although the command failed")
            #expect(!box.exists("mandelbrot.png") && !box.exists("image-julia.png"), "a default output was written")
            let after = box.listing()
            #expect(!after.contains { $0.contains(".tmp-") }, "a temporary file was left behind: \(after)")
            #expect(after == before, "the failed command changed the folder: before \(before), after \(after)")
        }
    }

    @Test("a failed render leaves an existing output file untouched")
    func failureKeepsExistingOutput() throws {
        try withSandbox { box in
            let old = Array("previous contents".utf8)
            try box.write("out.png", old)
            for extra in [["--iterations", "0"], ["--device", "bogus"], ["--device", "opencl:99"]] {
                let r = try box.run(["fractal", "mandelbrot", "--size", "64x48", "-o", "out.png"] + extra)
                expectCleanFailure(r, kind: .runtime, mentions: [])
                #expect(try box.bytes("out.png") == old, "out.png changed after: \(extra)")
            }
            #expect(box.listing() == ["out.png"], "files: \(box.listing())")
        }
    }

    // Successful renders on both backends.
    @Test("mandelbrot on cpu and opencl: PNGs with the right header, a 'wrote' line, and the same pixels")
    func renderCPUAndOpenCL() throws {
        try withSandbox { box in
            var images: [String: Image8] = [:]
            var files: [String: [UInt8]] = [:]
            for device in ["cpu", "opencl"] {
                let r = try box.run(smallRender(output: "\(device).png", ["--device", device]))
                #expect(r.status == 0, "render on \(device) failed\n\(r)")
                #expect(r.stderr.isEmpty, "a successful render should print nothing on stderr\n\(r)")
                #expect(r.stdoutLines.count == 1, "expected just the 'wrote' line\n\(r)")
                expectWrote(r, file: "\(device).png", device: device)
                let bytes = try box.bytes("\(device).png")
                #expect(Array(bytes.prefix(8)) == pngSignature, "\(device).png has no PNG signature")
                let header = try #require(pngHeader(bytes), "\(device).png has no IHDR first")
                #expect(header == PNGHeader(width: 64, height: 48, bitDepth: 8, colorType: 2),
                        "\(device).png: want 64x48 8-bit RGB, got \(header)")
                let image = try PNG.read(box.path("\(device).png"))
                #expect(image.width == 64 && image.height == 48)
                #expect(distinctColours(image) > 4, "\(device).png is (nearly) one flat colour: not a Mandelbrot picture")
                images[device] = image
                files[device] = bytes
            }
            let cpu = try #require(images["cpu"]), cl = try #require(images["opencl"])
            if files["cpu"] != files["opencl"] {
                let diff = try maxDifference(cpu, cl)
                #expect(diff <= 1, "cpu and opencl pixels differ by up to \(diff) (at most 1 allowed)")
            }
            #expect(box.listing() == ["cpu.png", "opencl.png"], "unexpected files: \(box.listing())")
        }
    }

    // Escape counts and 16-bit PNGs.
    @Test("--counts writes a 16-bit P5 PGM of the right size, identical on cpu and opencl")
    func countsPGM() throws {
        try withSandbox { box in
            // Always 16-bit: maxval 65535, two bytes per sample, raw counts.
            var counts: [String: [UInt16]] = [:]
            for device in ["cpu", "opencl"] {
                let r = try box.run(["fractal", "mandelbrot", "--size", "64x48", "--iterations", "300",
                                     "-o", "\(device).png", "--counts", "\(device).pgm", "--device", device])
                #expect(r.status == 0, "render on \(device) failed\n\(r)")
                expectWrote(r, file: "\(device).png", device: device)
                let raw = try box.bytes("\(device).pgm")
                let header = Array("P5\n64 48\n65535\n".utf8)
                #expect(Array(raw.prefix(header.count)) == header, "\(device).pgm header: \(String(decoding: raw.prefix(16), as: UTF8.self).debugDescription)")
                #expect(raw.count == header.count + 64 * 48 * 2, "\(device).pgm: \(raw.count) bytes, want 16-bit samples")
                let pgm = try PGM.read(box.path("\(device).pgm"))
                #expect(pgm.width == 64 && pgm.height == 48 && pgm.maxValue == 65535)
                // 0 = escaped before the first iteration (|c| > 2 in the corners of the view).
                #expect(pgm.values.allSatisfy { $0 <= 300 }, "counts over the limit 300")
                #expect(pgm.values.contains(0), "the view's corners (|c| > 2) should have count 0")
                #expect(pgm.values.contains(300) && pgm.values.contains { $0 < 300 },
                        "expected both interior (300) and escaping points")
                counts[device] = pgm.values
            }
            let cpu = try #require(counts["cpu"]), cl = try #require(counts["opencl"])
            let differing = zip(cpu, cl).filter { $0 != $1 }.count
            #expect(differing == 0, "\(differing) escape counts differ between cpu and opencl")
        }
    }

    @Test("--counts stays 16-bit with an iteration limit below 256")
    func countsPGMSmallLimit() throws {
        try withSandbox { box in
            let r = try box.run(smallRender(["--counts", "c.pgm", "--device", "cpu"]))
            #expect(r.status == 0, "\(r)")
            let pgm = try PGM.read(box.path("c.pgm"))
            #expect(pgm.width == 64 && pgm.height == 48 && pgm.maxValue == 65535)
            #expect(pgm.values.allSatisfy { $0 <= 64 } && pgm.values.contains(64) && pgm.values.contains(0))
            #expect(try box.bytes("c.pgm").count == Array("P5\n64 48\n65535\n".utf8).count + 64 * 48 * 2)
        }
    }

    // --bit-depth 16's precision and encoding: BitDepthTests.swift.
    @Test("--bit-depth 16 writes a 16-bit PNG", arguments: ["cpu", "opencl"])
    func sixteenBitPNG(device: String) throws {
        try withSandbox { box in
            let r = try box.run(smallRender(["--bit-depth", "16", "--device", device]))
            #expect(r.status == 0, "\(r)")
            expectWrote(r, file: "out.png", device: device)
            let header = try #require(pngHeader(try box.bytes("out.png")), "out.png is not a PNG")
            #expect(header == PNGHeader(width: 64, height: 48, bitDepth: 16, colorType: 2), "got \(header)")
            let image = try PNG.read(box.path("out.png"))
            #expect(image.width == 64 && image.height == 48)
        }
    }

    @Test("--bit-depth other than 8 or 16 is refused")
    func badBitDepth() throws {
        try withSandbox { box in
            let r = try box.run(smallRender(["--bit-depth", "12", "--device", "cpu"]))
            expectCleanFailure(r, kind: .validation, mentions: ["--bit-depth"])
            #expect(box.listing().isEmpty)
        }
    }

    // Help.
    @Test("every command's --help states an option's default once")
    func defaultsOnce() throws {
        try withSandbox { box in
            for command in [["fractal"], ["rtow"], ["blur"], ["mist"], ["iso"], ["pulse"], ["bench"], ["compare"], ["merge"],
                            ["devices"], ["serve"], ["zoomvideo"], ["locate", "minibrot"], ["locate", "misiurewicz"]] {
                let r = try box.run(command + ["--help"])
                #expect(r.status == 0, "\(command): \(r)")
                // An option's block: its first line starts with "  -", the lines after it are indented further.
                var blocks: [String] = []
                for line in r.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
                    if line.hasPrefix("  -") || blocks.isEmpty { blocks.append(String(line)) } else { blocks[blocks.count - 1] += "\n" + line }
                }
                for block in blocks where block.components(separatedBy: "(default:").count > 2 {
                    Issue.record("\(command.joined(separator: " ")) --help states a default twice:\n\(block)")
                }
            }
        }
    }

    @Test("glint fractal --help names every formula and the view formula")
    func fractalHelp() throws {
        try withSandbox { box in
            let r = try box.run(["fractal", "--help"])
            #expect(r.status == 0, "\(r)")
            for name in allFormulas {
                #expect(r.stdout.contains(name), "--help does not mention \(name)")
            }
            #expect(r.stdout.contains("s = 2/(zoom*H)"), "--help lacks the view formula\n\(r.stdout)")
            // Every formula the CLI itself knows (it lists them when refusing an unknown one).
            let unknown = try box.run(["fractal", "no-such-formula"])
            let listed = unknown.stderrLines.first.flatMap { $0.range(of: "use ").map { $0.upperBound } }
                .map { unknown.stderrLines[0][$0...].replacingOccurrences(of: " or ", with: ", ") }  // "a, b, c or d"
                .map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            let known = try #require(listed, "the unknown-formula error lists no formulas\n\(unknown)")
            #expect(Set(known) == Set(allFormulas), "the CLI knows \(known)")
            for name in known {
                #expect(r.stdout.contains(name), "--help does not mention \(name)")
            }
        }
    }
}
