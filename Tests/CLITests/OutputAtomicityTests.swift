// Output atomicity: a command that writes several files replaces all of them or none, and a
// sequence (mist, --frames) leaves the frames already in its folder untouched when it fails.
//
// A full disk is simulated without root by a file-size limit: `ulimit -f N` (512-byte blocks
// in /bin/sh) with SIGXFSZ ignored makes write() fail with EFBIG ("File too large") once a file
// passes N blocks, so a small first output fits and a larger second one does not. Each limit is
// chosen from a reference run's file sizes, so the test checks its own premise.

import Foundation
import GlintCore
import Testing

extension Sandbox {
    /// The child process for `glint args...` run through /bin/sh with a file-size limit of
    /// `blocks` 512-byte blocks (nil: none), in `work/`, with the environment `run` gives.
    func limitedProcess(_ args: [String], fileSizeBlocks blocks: Int?, env: [String: String] = [:]) throws -> Process {
        var extra: [String: String?] = env.mapValues { $0 }
        if blocks != nil, underThreadSanitizer, extra["TMPDIR"] == nil {
            // ThreadSanitizer's runtime writes a 512 KiB file to $TMPDIR before main
            // (tsan.rodata.PID) and maps it: under the limit the write is cut short and its first
            // read past the end is a SIGBUS. Where it cannot create the file it skips that
            // optional mapping. glint reads TMPDIR only for PoCL's cache; these runs use the CPU.
            extra["TMPDIR"] = root.appendingPathComponent("no-such-folder").path
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        let limit = blocks.map { "ulimit -f \($0); trap '' XFSZ; " } ?? ""
        process.arguments = ["-c", limit + "exec \"$0\" \"$@\"", try glintBinary.get().path] + args
        process.environment = childEnvironment(extra)
        process.currentDirectoryURL = work
        process.standardInput = FileHandle.nullDevice
        return process
    }

    /// Runs `glint args...` under a file-size limit of `blocks` 512-byte blocks.
    func run(_ args: [String], fileSizeBlocks blocks: Int?, env: [String: String] = [:], timeout: Double = 120) throws -> RunResult {
        try Self.collect(try limitedProcess(args, fileSizeBlocks: blocks, env: env), timeout: timeout)
    }

    /// Every entry of folder `name` in work/ (hidden ones included), sorted; empty when missing.
    func entries(_ name: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path(name))) ?? []).sorted()
    }

    /// Files whose bytes must survive a failed run: each gets distinct content now.
    func plant(_ names: [String]) throws -> [String: [UInt8]] {
        var planted: [String: [UInt8]] = [:]
        for name in names {
            let bytes = Array("an earlier \(name), which a failed run must leave alone\n".utf8)
            try write(name, bytes)
            planted[name] = bytes
        }
        return planted
    }

    /// Plants `names`, runs `glint args...` under a file-size limit of `blocks` 512-byte blocks and
    /// expects the planted files untouched and work/'s listing as before (`leftBehind` says what
    /// may not be left otherwise). Returns the run and that listing.
    func runPlanted(_ names: [String], _ args: [String], fileSizeBlocks blocks: Int?, env: [String: String] = [:],
                    leftBehind: String = "no temporary file may be left behind",
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> (RunResult, before: [String]) {
        let planted = try plant(names)
        let before = listing()
        let r = try run(args, fileSizeBlocks: blocks, env: env)
        expectUntouched(planted, r, sourceLocation: sourceLocation)
        #expect(listing() == before, "\(leftBehind): \(listing())", sourceLocation: sourceLocation)
        return (r, before)
    }

    /// Expects every planted file byte-identical.
    func expectUntouched(_ planted: [String: [UInt8]], _ r: RunResult, sourceLocation: SourceLocation = #_sourceLocation) {
        for (name, bytes) in planted.sorted(by: { $0.key < $1.key }) {
            #expect((try? self.bytes(name)) == bytes, "\(name) was changed by the failed run\n\(r)", sourceLocation: sourceLocation)
        }
    }
}

/// The smallest limit in 512-byte blocks that `small` bytes fit under, when `large` bytes
/// surely do not (under a 1024-byte block too, should /bin/sh count so).
private func limitBetween(small: Int, large: Int) throws -> Int {
    let blocks = (small + 511) / 512
    try #require(large > blocks * 1024, "the second output (\(large) bytes) must not fit where the first (\(small) bytes) does")
    return blocks
}

/// A failed run: exit status 1 and exactly one line on stderr, `error: ...` naming `mentions`.
private func expectOneLineFailure(_ r: RunResult, mentions: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(r.status == 1, "\(r)", sourceLocation: sourceLocation)
    #expect(r.stderrLines.count == 1 && r.stderr.hasPrefix("error: "), "one error line expected\n\(r)", sourceLocation: sourceLocation)
    for m in mentions { #expect(r.stderr.contains(m), "stderr should mention \(m)\n\(r)", sourceLocation: sourceLocation) }
}

/// A small opaque RGBA test image.
private func testImage(width: Int, height: Int, seed: Int) -> Image8 {
    var pixels = [UInt8](repeating: 255, count: width * height * 4)
    for y in 0..<height {
        for x in 0..<width {
            let i = (y * width + x) * 4
            pixels[i] = UInt8((x * 16 + seed * 40) & 255)
            pixels[i + 1] = UInt8((y * 20 + seed * 7) & 255)
            pixels[i + 2] = UInt8(((x ^ y) * 9 + seed) & 255)
        }
    }
    return Image8(width: width, height: height, pixels: pixels)
}

@Suite("output atomicity")
struct OutputAtomicityTests {
    // MARK: Several files from one command

    /// An output its owner made read-only is kept: refused in one line (even as root, who may
    /// write anything), its bytes and mode as they were; a writable one is replaced.
    @Test("a read-only output is refused, not replaced")
    func readOnlyOutputIsKept() throws {
        try withSandbox { box in
            try box.write("kept.png", [1, 2, 3])
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: box.path("kept.png"))
            for args in [["fractal", "julia", "--size", "8x6", "-o", "kept.png"], ["rtow", "--size", "8x6", "--spp", "1", "-o", "kept.png"]] {
                let r = try box.run(args + ["--device", "cpu"])
                #expect(r.status == 2 && r.stderrLines.count == 1 && r.stderr.contains("kept.png is read-only"), "\(r)")
            }
            #expect(try FileIO.read(box.path("kept.png")) == [1, 2, 3])
            let mode = try FileManager.default.attributesOfItem(atPath: box.path("kept.png"))[.posixPermissions] as? Int
            #expect(mode == 0o444)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: box.path("kept.png"))
            #expect(try box.run(["fractal", "julia", "--size", "8x6", "-o", "kept.png", "--device", "cpu", "-q"]).status == 0)
        }
    }

    /// An existing frame folder that cannot be written (/proc/1: not even root may write it) is
    /// refused before any work with the same one line and status for every sequence.
    @Test("an unwritable frame folder: one line, status 2, for fractal, rtow and mist alike")
    func unwritableFrameFolder() throws {
        try withSandbox { box in
            try box.write("in.png", PNG.encode(Image8(width: 4, height: 4), alpha: false))
            for args in [["fractal", "julia", "--size", "8x6", "--frames", "2"], ["rtow", "--size", "8x6", "--spp", "1", "--frames", "2"],
                         ["mist", "--input", "in.png", "--frames", "2"]] {
                let r = try box.run(args + ["-o", "/proc/1", "--device", "cpu"])
                #expect(r.status == 2 && r.stderrLines.count == 1 && r.stderr.contains("/proc/1: the folder is not writable"), "\(r)")
            }
        }
    }

    /// A run killed while its frames were staged leaves its staging folder; the next run into that
    /// folder removes it (its pid is no process), and leaves a live run's and another machine's.
    @Test("staging folders of killed runs are removed by the next run")
    func abandonedStagingIsRemoved() throws {
        try withSandbox { box in
            let host = StagedFolder.host
            let dead = "frames/.glint-staging-\(host)-4194301-1f", live = "frames/.glint-staging-\(host)-\(getpid())-2e"
            let other = "frames/.glint-staging-elsewhere.example-4194301-3d"
            for folder in [dead, live, other] {
                try FileIO.makeDirectories(box.path(folder))
                try box.write(folder + "/frame_00000.png", [1, 2, 3])
            }
            let r = try box.run(["fractal", "julia", "--size", "8x6", "--frames", "2", "-o", "frames", "--device", "cpu", "-q"])
            #expect(r.status == 0, "\(r)")
            #expect(!box.exists(dead) && box.exists(live) && box.exists(other))
            #expect(box.exists("frames/frame_00001.png"))
        }
    }

    @Test("rtow -o, --pfm and --checkpoint: a failed --pfm leaves all three as they were")
    func rtowImageAndPFM() throws {
        try withSandbox { s in
            let base = ["rtow", "--size", "32x16", "--spp", "1", "--depth", "4", "--device", "cpu", "-q"]
            let ref = try s.run(base + ["-o", "ref.png", "--pfm", "ref.pfm"])
            try #require(ref.status == 0, "\(ref)")
            let blocks = try limitBetween(small: try s.bytes("ref.png").count, large: try s.bytes("ref.pfm").count)

            let (r, before) = try s.runPlanted(["r.png", "r.pfm", "r.ckpt"],
                                               base + ["-o", "r.png", "--pfm", "r.pfm", "--checkpoint", "r.ckpt"],
                                               fileSizeBlocks: blocks)
            expectOneLineFailure(r, mentions: ["cannot write r.pfm", "File too large"])

            // With room for everything, all three are replaced and nothing else is left.
            let ok = try s.run(base + ["-o", "r.png", "--pfm", "r.pfm", "--checkpoint", "r.ckpt"])
            #expect(ok.status == 0, "\(ok)")
            #expect(try s.bytes("r.png") == s.bytes("ref.png"))
            #expect(try s.bytes("r.pfm") == s.bytes("ref.pfm"))
            #expect(s.listing() == before, "no temporary file may be left behind: \(s.listing())")
        }
    }

    @Test("fractal -o with --counts (8- and 16-bit): a failed --counts leaves the PNG as it was",
          arguments: [8, 16])
    func fractalImageAndCounts(bitDepth: Int) throws {
        try withSandbox { s in
            let base = ["fractal", "mandelbrot", "--size", "64x48", "--iterations", "64", "--bit-depth", String(bitDepth),
                        "--device", "cpu", "-q"]
            let ref = try s.run(base + ["-o", "ref.png", "--counts", "ref.pgm"])
            try #require(ref.status == 0, "\(ref)")
            let blocks = try limitBetween(small: try s.bytes("ref.png").count, large: try s.bytes("ref.pgm").count)

            let (r, _) = try s.runPlanted(["c.png", "c.pgm"], base + ["-o", "c.png", "--counts", "c.pgm"], fileSizeBlocks: blocks)
            expectOneLineFailure(r, mentions: ["cannot write c.pgm", "File too large"])
        }
    }

    @Test("compare --diff with --json: a failed --json leaves the heat map as it was")
    func compareDiffAndJSON() throws {
        try withSandbox { s in
            try s.write("a.png", try PNG.encode(testImage(width: 2, height: 2, seed: 1), alpha: false))
            try s.write("b.png", try PNG.encode(testImage(width: 2, height: 2, seed: 2), alpha: false))
            let args = ["compare", "--images", "a.png", "b.png", "-q"]
            let ref = try s.run(args + ["--diff", "ref-diff.png", "--json", "ref.json"])
            try #require(ref.status == 0 || ref.status == 1, "\(ref)")
            let blocks = try limitBetween(small: try s.bytes("ref-diff.png").count, large: try s.bytes("ref.json").count)

            let (r, _) = try s.runPlanted(["d.png", "c.json"], args + ["--diff", "d.png", "--json", "c.json"], fileSizeBlocks: blocks)
            #expect(r.status == 2, "compare exits 2 when no comparison could be written\n\(r)")
            #expect(r.stderrLines.count == 1 && r.stderr.contains("cannot write c.json: File too large"), "\(r)")
        }
    }

    // MARK: Sequences

    @Test("mist over an existing sequence: a damaged camera frame midway leaves every frame as it was")
    func mistCorruptInputFrame() throws {
        try withSandbox { s in
            try FileManager.default.createDirectory(atPath: s.path("cam"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: s.path("frames"), withIntermediateDirectories: true)
            for k in 1...4 {
                var bytes = try PNG.encode(testImage(width: 16, height: 12, seed: k), alpha: false)
                // The third frame keeps its header (the folder's sizes check out) but is cut short.
                if k == 3 { bytes = Array(bytes.prefix(60)) }
                try s.write("cam/00\(k).png", bytes)
            }
            let planted = try s.plant(["frames/frame_00000.png", "frames/frame_00001.png", "frames/notes.txt"])
            let r = try s.run(["mist", "--input", "cam", "-o", "frames", "--frames", "4", "--sigma", "2", "--drops", "3",
                               "--device", "cpu", "-q"])
            expectOneLineFailure(r, mentions: ["003.png"])
            s.expectUntouched(planted, r)
            #expect(s.entries("frames") == ["frame_00000.png", "frame_00001.png", "notes.txt"],
                    "no new frame and no staging folder: \(s.entries("frames"))")

            // A run that succeeds replaces the frames and leaves no staging folder.
            try s.write("cam/003.png", try PNG.encode(testImage(width: 16, height: 12, seed: 3), alpha: false))
            let ok = try s.run(["mist", "--input", "cam", "-o", "frames", "--frames", "4", "--sigma", "2", "--drops", "3",
                                "--device", "cpu", "-q"])
            #expect(ok.status == 0, "\(ok)")
            #expect(s.entries("frames") == ["frame_00000.png", "frame_00001.png", "frame_00002.png", "frame_00003.png", "notes.txt"],
                    "\(s.entries("frames"))")
            #expect(try s.bytes("frames/frame_00000.png") != planted["frames/frame_00000.png"], "frame 0 replaced")
        }
    }

    @Test("fractal --frames failing midway (a file too large) leaves an existing folder untouched, a new one not created")
    func fractalFramesFailMidway() throws {
        try withSandbox { s in
            // Frame 0 lies inside the main cardioid (one colour: a tiny PNG); the last frame
            // shows the seahorse valley (a larger PNG).
            let base = ["fractal", "mandelbrot", "--size", "64x64", "--iterations", "200", "--zoom", "50",
                        "--frames", "3", "--ramp", "center=-0.1,0:-0.7435669,0.1314023", "--device", "cpu", "-q"]
            let ref = try s.run(base + ["-o", "ref"])
            try #require(ref.status == 0, "\(ref)")
            let blocks = try limitBetween(small: try s.bytes("ref/frame_00000.png").count,
                                          large: try s.bytes("ref/frame_00002.png").count)

            try FileManager.default.createDirectory(atPath: s.path("seq"), withIntermediateDirectories: true)
            let planted = try s.plant(["seq/frame_00000.png", "seq/frame_00001.png", "seq/frame_00002.png"])
            let r = try s.run(base + ["-o", "seq"], fileSizeBlocks: blocks)
            expectOneLineFailure(r, mentions: ["cannot write seq/frame_00002.png", "File too large"])
            s.expectUntouched(planted, r)
            #expect(s.entries("seq") == ["frame_00000.png", "frame_00001.png", "frame_00002.png"],
                    "no staging folder may be left: \(s.entries("seq"))")

            // A folder the failed run created (with its parent) is removed again.
            let fresh = try s.run(base + ["-o", "new/seq"], fileSizeBlocks: blocks)
            expectOneLineFailure(fresh, mentions: ["cannot write new/seq/frame_00002.png"])
            #expect(!s.exists("new"), "the folders the failed run created must go: \(s.listing())")
        }
    }

    @Test("pulse --video with an ffmpeg that fails: the frames and the video already there stay as they were")
    func videoFailureLeavesSequence() throws {
        try withSandbox { s in
            // Fault injection: an ffmpeg on PATH that fails at once, as a real one does on a
            // full disk or an unknown container. (The video's success path needs a real ffmpeg,
            // which CI does not install; the staging it shares with the frames is tested below.)
            try FileManager.default.createDirectory(atPath: s.path("bin-fail"), withIntermediateDirectories: true)
            try s.write("bin-fail/ffmpeg", Array("#!/bin/sh\nexit 1\n".utf8))
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: s.path("bin-fail/ffmpeg"))
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            try FileManager.default.createDirectory(atPath: s.path("p"), withIntermediateDirectories: true)
            let args = ["pulse", "-o", "p", "--frames", "5", "--size", "8x8", "--video", "v.mp4", "--device", "cpu", "-q"]
            let (r, _) = try s.runPlanted(["p/frame_00000.png", "p/frame_00001.png", "v.mp4"], args, fileSizeBlocks: nil,
                                          env: ["PATH": s.path("bin-fail") + ":" + path], leftBehind: "nothing staged may be left behind")
            expectOneLineFailure(r, mentions: ["--video", "ffmpeg"])
        }
    }

    @Test("pulse and fractal --frames that succeed leave no staging folder and keep other files")
    func sequenceSuccessLeavesNoStaging() throws {
        try withSandbox { s in
            try FileManager.default.createDirectory(atPath: s.path("p"), withIntermediateDirectories: true)
            let planted = try s.plant(["p/frame_00000.png", "p/keep.txt"])
            let r = try s.run(["pulse", "-o", "p", "--frames", "3", "--size", "8x8", "--device", "cpu", "-q"])
            #expect(r.status == 0, "\(r)")
            #expect(s.entries("p") == ["frame_00000.png", "frame_00001.png", "frame_00002.png", "keep.txt"], "\(s.entries("p"))")
            #expect(try s.bytes("p/frame_00000.png") != planted["p/frame_00000.png"], "frame 0 replaced")
            #expect(try s.bytes("p/keep.txt") == planted["p/keep.txt"])
            #expect(pngHeader(try s.bytes("p/frame_00002.png"))?.width == 8)

            let f = try s.run(["fractal", "julia", "--size", "16x12", "--iterations", "32", "--frames", "2", "-o", "f/g",
                               "--device", "cpu", "-q"])
            #expect(f.status == 0, "\(f)")
            #expect(s.entries("f/g") == ["frame_00000.png", "frame_00001.png"], "\(s.entries("f/g"))")
        }
    }

    @Test("Ctrl-C during --frames: exit 130, the folder as it was, no staging folder")
    func sequenceInterrupted() throws {
        try withSandbox { s in
            try FileManager.default.createDirectory(atPath: s.path("seq"), withIntermediateDirectories: true)
            let planted = try s.plant(["seq/frame_00000.png"])
            let process = try s.limitedProcess(["fractal", "mandelbrot", "--size", "32x32", "--iterations", "32",
                                                "--frames", "1000000", "-o", "seq", "--device", "cpu", "-q"],
                                               fileSizeBlocks: nil)
            let errPipe = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errPipe
            try process.run()
            // Wait until frames are being staged, then interrupt.
            let deadline = Date().addingTimeInterval(30)
            var staging: String?
            while Date() < deadline, process.isRunning {
                if let dir = s.entries("seq").first(where: { $0.hasPrefix(".glint-staging-") }),
                   s.entries("seq/" + dir).count >= 2 {
                    staging = dir
                    break
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
            process.interrupt()
            let stderr = String(decoding: errPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let r = RunResult(status: process.terminationStatus, stdout: "", stderr: stderr, timedOut: false, seconds: 0)
            try #require(staging != nil, "frames were never staged\n\(r)")
            #expect(r.status == 130, "\(r)")
            #expect(r.stderrLines.count == 1 && r.stderr.contains("interrupted"), "\(r)")
            s.expectUntouched(planted, r)
            #expect(s.entries("seq") == ["frame_00000.png"], "\(s.entries("seq"))")
        }
    }
}
