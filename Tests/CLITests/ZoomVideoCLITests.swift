// glint zoomvideo: frames from an exponential-map strip, and its refusals.

import Foundation
import GlintCore
import GlintWorkloads
import Testing

@Suite("zoomvideo", .serialized)
struct ZoomVideoCLITests {
    static func number(_ text: String) -> DeepNumber { try! DeepNumber(parsing: text) }

    /// A 64 x 48 strip, red its column x 4 and green its row x 5, with its record (`record`
    /// replaces the text when given).
    static func strip(record: String? = nil) throws -> [UInt8] {
        var image = Image8(width: 64, height: 48)
        for y in 0..<48 {
            for x in 0..<64 { image[x, y] = SIMD4(UInt8(x * 4), UInt8(y * 5), 90, 255) }
        }
        let text = record ?? ExpMapStrip.recordText(columns: 64, rows: 48, rowsPerOctave: 8, radius: number("3"),
                                                    zoomStart: number("1"), zoomEnd: number("32"),
                                                    center: DeepComplex(re: number("-0.75"), im: number("0.1")))
        return try PNG.encode(image, alpha: false, text: [PNG.TextEntry(keyword: ExpMapStrip.keyword, text: text)])
    }

    @Test("a strip into 3 frames: each the library's frame at its zoom, the first and last at zoom-start and zoom-end")
    func writesFrames() async throws {
        try await Self.withAsyncSandbox { box in
            try box.write("strip.png", try Self.strip())
            let r = try box.run(["zoomvideo", "strip.png", "--size", "32x18", "--frames", "3", "-o", "out"])
            #expect(r.status == 0, "\(r)")
            #expect(r.stdoutLines.first?.hasPrefix("wrote 3 frames to out/ (32x18, strip 64x48, zoom 1 to 32, ") == true, "\(r)")
            let names = try FileManager.default.contentsOfDirectory(atPath: box.path("out")).sorted()
            #expect(names == ["frame_00000.png", "frame_00001.png", "frame_00002.png"], "\(names)")
            let strip = try ExpMapStrip(contentsOf: box.path("strip.png"))
            for k in 0..<3 {
                let frame = try PNG.read(box.path("out/frame_0000\(k).png"))
                let want = await strip.frame(zoomLog2: strip.zoomLog2(frame: k, of: 3), width: 32, height: 18)
                #expect(frame == want, "frame \(k)")
            }
            #expect(strip.zoomLog2(frame: 2, of: 3) == 5)
            #expect(try box.bytes("out/frame_00000.png") != box.bytes("out/frame_00002.png"))
        }
    }

    /// `withSandbox` for a test that awaits.
    static func withAsyncSandbox(_ body: (Sandbox) async throws -> Void) async throws {
        let box = try Sandbox()
        defer { try? FileManager.default.removeItem(at: box.root) }
        try await body(box)
    }

    @Test("--seconds: round(fps x seconds) frames")
    func seconds() throws {
        try withSandbox { box in
            try box.write("strip.png", try Self.strip())
            let r = try box.run(["zoomvideo", "strip.png", "--size", "20x20", "--seconds", "0.5", "--fps", "9", "-o", "out"])
            #expect(r.status == 0, "\(r)")
            // 4.5 rounds to 5.
            let names = try FileManager.default.contentsOfDirectory(atPath: box.path("out")).sorted()
            #expect(names == (0..<5).map { "frame_0000\($0).png" }, "\(names)")
        }
    }

    @Test("--video: encoded by ffmpeg, or, where there is none, one line and nothing written")
    func video() throws {
        try withSandbox { box in
            try box.write("strip.png", try Self.strip())
            let r = try box.run(["zoomvideo", "strip.png", "--size", "32x18", "--frames", "4", "--video", "zoom.mp4"])
            if VideoProbe.hasFFmpeg {
                #expect(r.status == 0, "\(r)")
                #expect(r.stdoutLines.first?.hasPrefix("wrote zoom.mp4 (4 frames, 32x18, ") == true, "\(r)")
                #expect(box.listing() == ["strip.png", "zoom.mp4"])
            } else {
                expectCleanFailure(r, kind: .runtime, mentions: ["ffmpeg"])
                #expect(box.listing() == ["strip.png"])
            }
        }
    }

    /// A refused command line and what its one line names; the strip file as `setup` makes it.
    struct Refusal: Sendable, CustomTestStringConvertible {
        enum Strip: Sendable { case good, text, noRecord, badRecord(String), missing }
        let name: String
        let args: [String]
        var strip = Strip.good
        let status: Int32
        let mentions: [String]
        var testDescription: String { name }
    }

    static let goodRecord = ExpMapStrip.recordText(columns: 64, rows: 48, rowsPerOctave: 8, radius: 3.0, zoomStart: number("1"),
                                                   zoomEnd: number("32"), center: DeepComplex(re: 0, im: 0))

    static let refusals: [Refusal] = [
        Refusal(name: "not a PNG", args: [], strip: .text, status: 1, mentions: ["strip.png", "not a PNG"]),
        Refusal(name: "a PNG without a record", args: [], strip: .noRecord, status: 1, mentions: ["strip.png", "glint:expmap"]),
        Refusal(name: "a zero rows-per-octave", args: [], strip: .badRecord(goodRecord.replacingOccurrences(of: "rows-per-octave=8.0", with: "rows-per-octave=0")),
                status: 1, mentions: ["strip.png", "rows-per-octave"]),
        Refusal(name: "zoom-end below zoom-start", args: [], strip: .badRecord(goodRecord.replacingOccurrences(of: "zoom-end=32", with: "zoom-end=0.5")),
                status: 1, mentions: ["zoom-end"]),
        Refusal(name: "a record of another size", args: [], strip: .badRecord(goodRecord.replacingOccurrences(of: "rows=48", with: "rows=40")),
                status: 1, mentions: ["64x48", "64x40"]),
        Refusal(name: "a missing strip", args: [], strip: .missing, status: 1, mentions: ["strip.png"]),
        Refusal(name: "one frame", args: ["--frames", "1"], status: 2, mentions: ["--frames", "2"]),
        Refusal(name: "too few seconds", args: ["--seconds", "0.01"], status: 2, mentions: ["--seconds", "frames"]),
        Refusal(name: "a negative length", args: ["--seconds", "-3"], status: 2, mentions: ["--seconds"]),
        Refusal(name: "both lengths", args: ["--seconds", "2", "--frames", "3"], status: 2, mentions: ["--seconds", "--frames"]),
        Refusal(name: "no length", args: [], status: 2, mentions: ["--seconds", "--frames"]),
        Refusal(name: "a zero fps", args: ["--frames", "3", "--fps", "0"], status: 2, mentions: ["--fps"]),
        Refusal(name: "a bad size", args: ["--frames", "3", "--size", "0x5"], status: 2, mentions: ["--size"]),
        Refusal(name: "-o a file", args: ["--frames", "3", "-o", "strip.png"], status: 2, mentions: ["-o", "file"]),
        Refusal(name: "--video into a missing folder", args: ["--frames", "3", "--video", "nowhere/zoom.mp4"], status: 2, mentions: ["--video", "nowhere"]),
        Refusal(name: "no output", args: ["--frames", "3", "NO-OUTPUT"], status: 2, mentions: ["-o", "--video"]),
    ]

    @Test("refused with one line and a non-zero status, nothing left behind", arguments: refusals)
    func refused(_ refusal: Refusal) throws {
        try withSandbox { box in
            switch refusal.strip {
            case .good: try box.write("strip.png", try Self.strip())
            case .text: try box.write("strip.png", Array("not an image\n".utf8))
            case .noRecord: try box.write("strip.png", try PNG.encode(Image8(width: 64, height: 48), alpha: false))
            case .badRecord(let text): try box.write("strip.png", try Self.strip(record: text))
            case .missing: break
            }
            var args = ["zoomvideo", "strip.png", "--size", "32x18"] + refusal.args.filter { $0 != "NO-OUTPUT" }
            let hasLength = args.contains("--frames") || args.contains("--seconds")
            if !hasLength && refusal.status == 1 { args += ["--frames", "3"] }
            if !refusal.args.contains("NO-OUTPUT") && !args.contains("-o") && !args.contains("--video") { args += ["-o", "out"] }
            let before = box.listing()
            let r = try box.run(args)
            #expect(r.status == refusal.status, "\(r)")
            expectCleanFailure(r, kind: .runtime, mentions: refusal.mentions)
            #expect(box.listing() == before, "left behind: \(box.listing())")
        }
    }

    @Test("--help says what a strip is, how to make one and how many columns a frame needs")
    func help() throws {
        try withSandbox { box in
            let r = try box.run(["zoomvideo", "--help"])
            #expect(r.status == 0, "\(r)")
            for text in ["glint fractal mandelbrot", "--exp-map 1024", "--seconds 60 --video zoom.mp4", "6,900", "glint:expmap"] {
                #expect(r.stdout.contains(text), "help lacks \(text)")
            }
            let top = try box.run(["--help"])
            #expect(top.stdout.contains("zoomvideo"))
        }
    }
}

private enum VideoProbe {
    static let hasFFmpeg: Bool = {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/ffmpeg")
        }
    }()
}
