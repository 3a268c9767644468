// `glint mist --input -`, black-box: raw RGBA frames piped into standard input, rendered as
// the same frames read from a folder of PNGs are, on the Swift path and on OpenCL; --frames,
// input that ends inside a frame or holds none, and the usage errors.

import Foundation
import GlintCore
import GlintTestSupport
import Testing

private let width = 48, height = 32
private let frameBytes = width * height * 4

/// Frame f of a gradient that moves a few pixels a frame, with a bright bar crossing it.
private func movingFrame(_ f: Int) -> Image8 {
    makeImage(width: width, height: height) { x, y in
        let u = x + 3 * f, v = y + 2 * f
        let bar = abs(x - 6 * f % width) < 3
        return SIMD4(UInt8(u * 5 % 256), UInt8(v * 7 % 256), bar ? 250 : UInt8((u + v) * 3 % 256), 255)
    }
}

extension Sandbox {
    /// Writes frames 0..<count as raw RGBA, back to back, to `name` (cut to `bytes` when given),
    /// and the same frames as PNGs into the folder `cam/`.
    func writeFrames(_ count: Int, raw name: String = "frames.rgba", bytes: Int? = nil) throws {
        var raw: [UInt8] = []
        try FileManager.default.createDirectory(at: work.appendingPathComponent("cam"), withIntermediateDirectories: true)
        for f in 0..<count {
            let image = movingFrame(f)
            raw += image.pixels
            try write("cam/\(1000 + f).png", try PNG.encode(image, alpha: false))
        }
        try write(name, bytes.map { Array(raw.prefix($0)) } ?? raw)
    }

    /// Runs `glint args...` with the file `input` (in work/) piped into its standard input by
    /// `dd` in blocks of `block` bytes, so that reads come back short and split frames, as from
    /// a camera pipe. The status is glint's.
    func runPiped(_ args: [String], from input: String, block: Int = 1000, timeout: Double = 120) throws -> RunResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "f=$1; shift; dd if=\"$f\" bs=\(block) status=none | \"$0\" \"$@\"",
                             try glintBinary.get().path, input] + args
        process.environment = childEnvironment()
        process.currentDirectoryURL = work
        process.standardInput = FileHandle.nullDevice
        return try Self.collect(process, timeout: timeout)
    }

    /// `glint mist --input - --size 48x32 -o OUTPUT --device DEVICE args...`, `input` piped in.
    func runLive(_ output: String, on device: String, _ args: [String], from input: String = "frames.rgba",
                 block: Int = 1000) throws -> RunResult {
        try runPiped(["mist", "--input", "-", "--size", "\(width)x\(height)", "-o", output, "--device", device] + args,
                     from: input, block: block)
    }

    func frame(_ folder: String, _ f: Int) throws -> Image8 {
        let name = "\(folder)/frame_0000\(f).png"
        return try PNG.decode(try bytes(name), name: name)
    }
}

private func frameNames(_ count: Int) -> [String] { (0..<count).map { "frame_0000\($0).png" } }

/// The mist options every run below shares: they must reach the live input as they reach a folder.
private let options = ["--sigma", "4", "--drops", "12", "--seed", "3", "--gravity", "0.3,1", "--fps", "30",
                       "--wipes", "wipes.json"]

/// A sandbox with five frames (raw and as PNGs) and the wipes file `options` names.
private func withFramesAndWipes(_ body: (Sandbox) throws -> Void) throws {
    try withSandbox { box in
        try box.writeFrames(5)
        try box.write("wipes.json", Array(#"[{"start": 2, "radius": 0.1, "points": [[0.2, 0.5], [0.5, 0.5], [0.8, 0.4]]}]"#.utf8))
        try body(box)
    }
}

@Suite("glint mist --input -", .serialized)
struct MistLiveInputCLITests {
    @Test("piped frames render as the same frames from a folder, byte for byte per device; cpu and opencl agree")
    func pipedFramesMatchFolder() throws {
        try withFramesAndWipes { box in
            for device in ["cpu", "opencl"] {
                let live = try box.runLive("live-\(device)", on: device, options)
                #expect(live.status == 0, "\(live)")
                let line = live.stdoutLines.first ?? ""
                #expect(line.hasPrefix("wrote 5 frames to live-\(device)/ (48x32 from standard input, sigma 4 "), "\(live)")
                #expect(line.contains(device == "cpu" ? ", cpu (Swift" : ", opencl ("), "\(live)")
                #expect(line.contains("frames/s rendered"), "\(live)")
                #expect(live.stderr.isEmpty, "\(live)")
                #expect(box.entries("live-\(device)") == frameNames(5), "exactly 5 complete frames, nothing else")

                let folder = try box.run(["mist", "--input", "cam", "--frames", "5", "-o", "cam-\(device)", "--device", device] + options)
                #expect(folder.status == 0, "\(folder)")
                for name in frameNames(5) {
                    #expect(try box.bytes("live-\(device)/" + name) == box.bytes("cam-\(device)/" + name),
                            "\(device): \(name) from standard input differs from the folder's")
                }
            }
            for f in 0..<5 {
                #expect(try maxDifference(box.frame("live-cpu", f), box.frame("live-opencl", f)) <= 1, "frame \(f): cpu and opencl")
            }
            // The options take effect: another seed moves other drops.
            let other = try box.runLive("seed4", on: "cpu", options + ["--seed", "4"])
            #expect(other.status == 0, "\(other)")
            #expect(try box.bytes("seed4/frame_00004.png") != box.bytes("live-cpu/frame_00004.png"), "--seed changed nothing")
        }
    }

    @Test("--frames 3 stops after three frames, the first three of the whole run")
    func framesStops() throws {
        try withFramesAndWipes { box in
            for device in ["cpu", "opencl"] {
                let whole = try box.runLive("all-\(device)", on: device, options)
                let three = try box.runLive("three-\(device)", on: device, ["--frames", "3", "-q"] + options, block: 65536)
                #expect(whole.status == 0 && three.status == 0, "\(whole)\n\(three)")
                #expect(three.stdout.isEmpty && three.stderr.isEmpty, "--quiet prints nothing\n\(three)")
                #expect(box.entries("three-\(device)") == frameNames(3))
                for name in frameNames(3) {
                    #expect(try box.bytes("three-\(device)/" + name) == box.bytes("all-\(device)/" + name), "\(device): \(name)")
                }
            }
        }
    }

    @Test("input that ends inside a frame: one line naming the frame and its bytes, exit 1, the frames before it kept")
    func truncatedInput() throws {
        try withSandbox { box in
            try box.writeFrames(5)
            try box.writeFrames(3, raw: "cut.rgba", bytes: 2 * frameBytes + 1000)
            for device in ["cpu", "opencl"] {
                let whole = try box.runLive("all-\(device)", on: device, ["--sigma", "4"])
                #expect(whole.status == 0, "\(whole)")
                let r = try box.runLive("cut-\(device)", on: device, ["--sigma", "4"], from: "cut.rgba")
                expectCleanFailure(r, kind: .runtime, mentions: ["frame 2", "1000 of \(frameBytes) bytes", "cut-\(device)/"])
                #expect(r.status == 1, "\(r)")
                #expect(box.entries("cut-\(device)") == frameNames(2), "frames 0 and 1 stay, complete; nothing else")
                for name in frameNames(2) {
                    #expect(try box.bytes("cut-\(device)/" + name) == box.bytes("all-\(device)/" + name), "\(device): \(name)")
                }
            }
            // Cut inside the first frame, and no input at all: an error, and no folder.
            try box.writeFrames(1, raw: "short.rgba", bytes: 100)
            let short = try box.runLive("short", on: "cpu", [], from: "short.rgba")
            expectCleanFailure(short, kind: .runtime, mentions: ["frame 0", "100 of \(frameBytes) bytes"])
            let empty = try box.run(["mist", "--input", "-", "--size", "48x32", "-o", "empty", "--device", "cpu"])
            expectCleanFailure(empty, kind: .runtime, mentions: ["no frames", "\(frameBytes) bytes a frame"])
            #expect(empty.status == 1, "\(empty)")
            #expect(!box.exists("short") && !box.exists("empty"), "a run with no frame creates no folder")
        }
    }

    @Test("a folder that already holds frames is refused before reading: the earlier sequence stays whole")
    func earlierSequenceIsNotMixed() throws {
        try withSandbox { box in
            try box.writeFrames(5)
            try box.writeFrames(2, raw: "two.rgba")
            let first = try box.runLive("keep", on: "cpu", ["--sigma", "4", "-q"])
            try #require(first.status == 0, "\(first)")
            let before = try frameNames(5).map { try box.bytes("keep/" + $0) }
            let again = try box.runLive("keep", on: "cpu", ["--sigma", "9"], from: "two.rgba")
            expectCleanFailure(again, kind: .validation, mentions: ["keep already holds frames", "new or empty folder"])
            #expect(again.status == 2, "\(again)")
            #expect(box.entries("keep") == frameNames(5))
            #expect(try frameNames(5).map { try box.bytes("keep/" + $0) } == before)
            // Other files in the folder are no sequence: the run goes ahead.
            try FileManager.default.createDirectory(at: box.work.appendingPathComponent("notes"), withIntermediateDirectories: true)
            try box.write("notes/readme.txt", Array("camera notes".utf8))
            #expect(try box.runLive("notes", on: "cpu", ["--sigma", "4", "-q"], from: "two.rgba").status == 0)
            #expect(box.entries("notes") == frameNames(2) + ["readme.txt"])
        }
    }

    /// Ctrl-C while the camera sends nothing: the run stops at once (it waits on the input a
    /// tenth of a second at a time), keeps the frames written and exits 130.
    @Test("Ctrl-C while the input is idle stops the run within a second, keeping its frames")
    func interruptWhileIdle() throws {
        try withSandbox { box in
            let process = Process()
            process.executableURL = try glintBinary.get()
            process.arguments = ["mist", "--input", "-", "--size", "\(width)x\(height)", "-o", "idle", "--device", "cpu", "--sigma", "4"]
            process.environment = box.childEnvironment()
            process.currentDirectoryURL = box.work
            let input = Pipe(), errors = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            // One frame, then silence with the pipe still open.
            input.fileHandleForWriting.write(Data(movingFrame(0).pixels))
            let deadline = Date().addingTimeInterval(60 * sanitizerSlowdown)
            while !box.exists("idle/frame_00000.png") && Date() < deadline && process.isRunning { usleep(20_000) }
            try #require(box.exists("idle/frame_00000.png"), "the first frame was never written")
            usleep(300_000)
            #expect(process.isRunning, "the run ended before the input did")
            let sent = Date()
            kill(process.processIdentifier, SIGINT)
            while process.isRunning && Date().timeIntervalSince(sent) < 10 * sanitizerSlowdown { usleep(10_000) }
            let took = Date().timeIntervalSince(sent)
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            try? input.fileHandleForWriting.close()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(took < 1 * sanitizerSlowdown, "Ctrl-C took \(took) s to stop an idle run")
            #expect(process.terminationReason == .exit && process.terminationStatus == 130, "\(process.terminationStatus): \(stderr)")
            #expect(stderr.contains("interrupted: stopped after 1 frame;"), "\(stderr)")
            #expect(box.entries("idle") == frameNames(1))
        }
    }

    @Test("usage errors: no --size, --shard, --size with a PNG input, compare of a pipe, a size over --max-pixels")
    func usageErrors() throws {
        try withSandbox { box in
            try box.writeFrames(2)
            let cases: [(args: [String], mentions: [String])] = [
                (["mist", "--input", "-", "-o", "out"], ["--size"]),
                (["mist", "--input", "-", "--size", "48x32", "-o", "out", "--shard", "1/2"], ["--shard", "replayed"]),
                (["mist", "--input", "cam", "--size", "48x32", "--frames", "2", "-o", "out"], ["--size"]),
                (["mist", "--input", "-", "--size", "48x0", "-o", "out"], ["--size"]),
                (["mist", "--input", "-", "--size", "48x32", "--max-pixels", "1000", "-o", "out"], ["--size", "limit"]),
                (["compare", "--a", "cpu", "--b", "opencl", "mist", "--input", "-", "--size", "48x32"], ["replayed"]),
            ]
            for c in cases {
                let r = try box.runPiped(c.args, from: "frames.rgba")
                expectCleanFailure(r, kind: .validation, mentions: c.mentions)
                #expect(r.status == 2, "\(r)")
                #expect(!box.exists("out"), "nothing written\n\(r)")
            }
        }
    }

    @Test("--help shows the live input with an ffmpeg example")
    func help() throws {
        try withSandbox { box in
            let r = try box.run(["mist", "--help"])
            #expect(r.status == 0)
            // Read as one line: the help wraps at the terminal's width.
            let text = r.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
            #expect(text.contains("--input - is a live camera"), "\(r)")
            #expect(text.contains("-pix_fmt rgba -f rawvideo - | glint mist --input - --size 640x360 -o live"), "\(r)")
            #expect(text.contains("the frames written before it stay, each a complete file"), "\(r)")
            #expect(text.contains("Without --frames a live run stops after an hour of frames at --fps"), "\(r)")
        }
    }
}
