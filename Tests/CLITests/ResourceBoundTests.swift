// Resource bounds: what a file's header claims never becomes an allocation or a read without
// end; images over the input limit are refused up front, with the way to raise it; and the
// OpenCL driver's needs (PoCL's kernel cache) are met or named when the home folder is unusable.

import Foundation
import GlintCore
import GlintTestSupport
import Testing

@Suite("resource bounds")
struct ResourceBoundTests {
    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)] }

    /// A PNG chunk: length, type, data, CRC-32.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(UInt32(data.count)) + body + be32(chunkCRC(body))
    }

    /// A PNG whose IHDR claims `width` x `height` (8-bit RGBA) but whose IDAT holds a few bytes.
    static func forgedPNG(width: UInt32, height: UInt32) -> [UInt8] {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let ihdr = be32(width) + be32(height) + [8, 6, 0, 0, 0]
        // A zlib stream of a stored empty block: valid, and nearly all the data missing.
        let idat: [UInt8] = [0x78, 0x01, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01]
        return signature + chunk("IHDR", ihdr) + chunk("IDAT", idat) + chunk("IEND", [])
    }

    /// A failed run: exit 1, one line on stderr that contains every fragment, nothing on stdout.
    func expectOneLineFailure(_ r: RunResult, _ fragments: [String], status: Int32 = 1,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.status == status, "\(r)", sourceLocation: sourceLocation)
        #expect(r.stderrLines.count == 1, "not one line:\n\(r)", sourceLocation: sourceLocation)
        for f in fragments {
            #expect(r.stderr.contains(f), "no \"\(f)\" in:\n\(r)", sourceLocation: sourceLocation)
        }
        #expect(!r.timedOut, sourceLocation: sourceLocation)
    }

    /// A 113-byte PNG claiming 16384 x 16384: refused by the input limit; with the limit raised,
    /// refused because the file is far too small to hold that image (before libpng allocates it).
    @Test func forgedPNGHeaderIsRefusedBeforeAllocation() throws {
        try withSandbox { s in
            try s.write("forged.png", Self.forgedPNG(width: 16384, height: 16384))
            let byLimit = try s.run(["blur", "forged.png", "-o", "out.png", "--device", "cpu"])
            expectOneLineFailure(byLimit, ["forged.png", "16384x16384", "over the input limit of 67108864", "--max-pixels"])
            let raised = try s.run(["blur", "forged.png", "-o", "out.png", "--device", "cpu", "--max-pixels", "268435456"])
            expectOneLineFailure(raised, ["forged.png", "corrupt or truncated PNG", "its header claims 16384x16384"])
            #expect(!s.exists("out.png"))
        }
    }

    /// Images over the input limit are refused with how to raise it: --max-pixels and
    /// GLINT_MAX_PIXELS; a bad value of either is a usage error.
    @Test func inputPixelLimitAndItsOverrides() throws {
        try withSandbox { s in
            let made = try s.run(["fractal", "mandelbrot", "--size", "16x16", "-o", "in.png", "--device", "cpu", "-q"])
            try #require(made.status == 0, "\(made)")
            expectOneLineFailure(try s.run(["blur", "in.png", "-o", "b.png", "--device", "cpu", "--max-pixels", "255"]),
                                 ["in.png", "256 pixels, over the input limit of 255", "--max-pixels"])
            expectOneLineFailure(try s.run(["iso", "in.png", "-o", "b.png", "--device", "cpu"], env: ["GLINT_MAX_PIXELS": "100"]),
                                 ["in.png", "over the input limit of 100"])
            expectOneLineFailure(try s.run(["compare", "--images", "in.png", "in.png", "--max-pixels", "200"]),
                                 ["over the input limit of 200"], status: 2)
            expectOneLineFailure(try s.run(["mist", "--input", "in.png", "--frames", "1", "-o", "m", "--device", "cpu", "--max-pixels", "10"]),
                                 ["over the input limit of 10"])
            expectOneLineFailure(try s.run(["blur", "in.png", "-o", "b.png", "--max-pixels", "0"]), ["--max-pixels"], status: 2)
            expectOneLineFailure(try s.run(["blur", "in.png", "-o", "b.png"], env: ["GLINT_MAX_PIXELS": "lots"]),
                                 ["GLINT_MAX_PIXELS must be a whole number"], status: 2)
            #expect(!s.exists("b.png") && !s.exists("m"))
            let ok = try s.run(["blur", "in.png", "-o", "b.png", "--device", "cpu", "--max-pixels", "256", "-q"])
            #expect(ok.status == 0 && s.exists("b.png"), "\(ok)")
        }
    }

    /// Streams named like inputs (/dev/zero behind .png, .pfm and checkpoint names) are refused
    /// at open, before a byte is read.
    @Test func devicesAreRefusedAtOpen() throws {
        try withSandbox { s in
            for name in ["zero.png", "zero.pfm", "zero.ckpt"] {
                try FileManager.default.createSymbolicLink(atPath: s.path(name), withDestinationPath: "/dev/zero")
            }
            expectOneLineFailure(try s.run(["blur", "zero.png", "-o", "o.png", "--device", "cpu"]), ["zero.png is a device, not a regular file"])
            expectOneLineFailure(try s.run(["blur", "zero.pfm", "-o", "o.pfm", "--device", "cpu"]), ["zero.pfm is a device, not a regular file"])
            expectOneLineFailure(try s.run(["rtow", "--size", "8x8", "--spp", "1", "--resume", "zero.ckpt", "-o", "o.png", "--device", "cpu"]),
                                 ["zero.ckpt is a device, not a regular file"])
            #expect(!s.exists("o.png") && !s.exists("o.pfm"))
        }
    }

    /// A valid header followed by more data than it promises: refused by the file's size before
    /// its body is read.
    @Test func dataPastWhatTheHeaderPromisesIsRefused() throws {
        try withSandbox { s in
            let header = Array("PF\n4 2\n-1\n".utf8)
            try s.write("padded.pfm", header + [UInt8](repeating: 0, count: 4 * 2 * 12 + 10_000_000))
            expectOneLineFailure(try s.run(["blur", "padded.pfm", "-o", "o.pfm", "--device", "cpu"]),
                                 ["padded.pfm is 10000106 bytes, over the", "limit its header allows"])
            #expect(!s.exists("o.pfm"))
        }
    }

    /// A FIFO as any input, with no writer: its open would wait for ever. Every reader refuses it
    /// at once in one line (opened without blocking, refused as not a regular file), and a FIFO in
    /// the program cache costs a rebuild, not a hang.
    @Test func fifosAreRefusedAtOnce() throws {
        try withSandbox { s in
            try s.write("good.png", PNG.encode(Image8(width: 8, height: 6), alpha: false))
            try FileIO.makeDirectories(s.path("tiles"))
            let made = try s.run(["fractal", "julia", "--size", "8x6", "-o", "tiles/j.png", "--shard", "1/2", "--device", "cpu", "-q"])
            try #require(made.status == 0, "\(made)")
            try FileIO.makeDirectories(s.path("frames"))
            for name in ["in.png", "in.pfm", "view.kfr", "scene.json", "run.ckpt", "wipes.json", "tiles/k.png", "frames/f.png"] {
                try #require(mkfifo(s.path(name), 0o600) == 0, "mkfifo \(name)")
            }
            let cpu = ["--device", "cpu"]
            let cases: [([String], String)] = [
                (["blur", "in.png", "-o", "o.png"] + cpu, "in.png"),
                (["blur", "in.pfm", "-o", "o.pfm"] + cpu, "in.pfm"),
                (["iso", "in.png", "-o", "o.png"] + cpu, "in.png"),
                (["compare", "--images", "in.png", "good.png"], "in.png"),
                (["fractal", "--location", "view.kfr", "-o", "o.png"] + cpu, "view.kfr"),
                (["fractal", "image-julia", "--texture", "in.png", "--size", "8x6", "-o", "o.png"] + cpu, "in.png"),
                (["rtow", "--scene", "scene.json", "--size", "8x8", "-o", "o.png"] + cpu, "scene.json"),
                (["rtow", "--resume", "run.ckpt", "--size", "8x8", "-o", "o.png"] + cpu, "run.ckpt"),
                (["mist", "--input", "good.png", "--wipes", "wipes.json", "--frames", "2", "-o", "m"] + cpu, "wipes.json"),
                (["mist", "--input", "frames", "--frames", "2", "-o", "m"] + cpu, "f.png"),
                (["merge", "tiles", "-o", "o.png"], "k.png"),
            ]
            for (args, name) in cases {
                // compare reads its images while checking its options: a usage error's status.
                expectOneLineFailure(try s.run(args, timeout: 30), [name, "is a FIFO, not a regular file"],
                                     status: args[0] == "compare" ? 2 : 1)
            }
            #expect(!s.exists("o.png") && !s.exists("o.pfm") && !s.exists("m"))
            // The program cache: an entry replaced by a FIFO is rebuilt (and replaced by a file).
            let cache = ["GLINT_CACHE_DIR": s.path("cache")]
            let first = try s.run(["fractal", "julia", "--size", "8x6", "-o", "a.png", "--device", "opencl", "-q"], env: cache)
            try #require(first.status == 0, "\(first)")
            let entries = try FileIO.folderEntries(s.path("cache/programs")).filter { $0.hasSuffix(".bin") }
            try #require(!entries.isEmpty)
            for e in entries {
                try #require(unlink(s.path("cache/programs/" + e)) == 0 && mkfifo(s.path("cache/programs/" + e), 0o600) == 0)
            }
            let again = try s.run(["fractal", "julia", "--size", "8x6", "-o", "b.png", "--device", "opencl", "-q"], env: cache, timeout: 60)
            #expect(again.status == 0, "\(again)")
            #expect(try FileIO.read(s.path("a.png")) == FileIO.read(s.path("b.png")))
        }
    }

    /// A home folder where nothing can be created: PoCL would give up its devices (it cannot make
    /// its kernel cache) and OpenCL would report none. Glint points PoCL at a private fallback
    /// folder and says so; when even that is impossible, the error names the cache, not the driver.
    @Test func unusableHomeStillFindsPoCL() throws {
        try withSandbox { s in
            let env: [String: String?] = ["HOME": "/proc/1", "XDG_CACHE_HOME": nil, "POCL_CACHE_DIR": nil]
            let devices = try s.run(["devices"], env: env)
            #expect(devices.status == 0, "\(devices)")
            #expect(devices.stdout.contains("note: PoCL's kernel cache folder /proc/1/.cache/pocl/kcache is not writable: POCL_CACHE_DIR set to"), "\(devices)")
            #expect(devices.stdout.contains("opencl:0"), "\(devices)")
            let render = try s.run(["fractal", "julia", "--size", "16x16", "-o", "j.png", "--device", "opencl", "--verbose"], env: env)
            #expect(render.status == 0, "\(render)")
            #expect(render.stdout.contains("POCL_CACHE_DIR set to"), "\(render)")

            var worse = env
            worse["TMPDIR"] = "/proc/1"
            let none = try s.run(["fractal", "julia", "--size", "16x16", "-o", "k.png", "--device", "opencl"], env: worse)
            expectOneLineFailure(none, ["report no devices", "PoCL's kernel cache folder", "set POCL_CACHE_DIR to a writable folder"])
            #expect(!none.stderr.contains("install an OpenCL driver"), "\(none)")
            #expect(!s.exists("k.png"))

            // The user's own POCL_CACHE_DIR, unwritable: named as the cause, not the driver.
            let own = try s.run(["fractal", "julia", "--size", "16x16", "-o", "k.png", "--device", "opencl"],
                                env: ["POCL_CACHE_DIR": "/proc/1/kcache"])
            expectOneLineFailure(own, ["report no devices", "POCL_CACHE_DIR=/proc/1/kcache", "unset it"])
            #expect(!own.stderr.contains("install an OpenCL driver"), "\(own)")
            #expect(!s.exists("k.png"))
        }
    }

    /// PoCL ends the process when it cannot write a compiled kernel: a file-size limit too small
    /// for its cache is refused before the device is opened, in one line, nothing written.
    /// Not under ThreadSanitizer: its runtime faults (SIGBUS in its shadow of a memcpy inside the
    /// Swift runtime) under a small file-size limit before any of glint's code runs, as `--version` shows.
    @Test(.disabled(if: underThreadSanitizer, "ThreadSanitizer's runtime cannot start under ulimit -f 8"))
    func smallFileSizeLimitIsRefusedBeforePoCL() throws {
        try withSandbox { box in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -f 8; exec \"$0\" \"$@\"", try glintBinary.get().path,
                                 "fractal", "mandelbrot", "--size", "100x70", "--device", "opencl", "-o", "y.png"]
            process.environment = box.childEnvironment()
            process.currentDirectoryURL = box.work
            let r = try Sandbox.collect(process, timeout: 60)
            expectOneLineFailure(r, ["ulimit -f", " KiB", "PoCL"])
            #expect(!box.exists("y.png"))
        }
    }

    /// An abort once a device is open (as PoCL's when a kernel cannot be written): one line says
    /// what ended glint before the process ends by the signal, as the abort would have ended it.
    @Test func driverAbortSaysWhatHappened() throws {
        try withSandbox { box in
            let process = Process()
            process.executableURL = try glintBinary.get()
            process.arguments = ["fractal", "mandelbrot", "--size", "4000x3000", "--iterations", "200000", "--device", "opencl", "-o", "big.png"]
            process.environment = box.childEnvironment()
            process.currentDirectoryURL = box.work
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            // PoCL is loaded when the device list is read; the device opens a moment later.
            let deadline = Date().addingTimeInterval(60 * sanitizerSlowdown)
            // (procfs files report a size of 0: read to the end rather than by size.)
            func loaded() -> Bool {
                guard let maps = FileHandle(forReadingAtPath: "/proc/\(process.processIdentifier)/maps") else { return false }
                defer { try? maps.close() }
                return String(decoding: maps.readDataToEndOfFile(), as: UTF8.self).contains("libpocl")
            }
            while process.isRunning && !loaded() && Date() < deadline { usleep(20_000) }
            usleep(useconds_t(1_000_000 * sanitizerSlowdown))
            try #require(process.isRunning, "the render ended before it could be aborted")
            kill(process.processIdentifier, SIGABRT)
            process.waitUntilExit()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGABRT, "\(process.terminationStatus): \(stderr)")
            #expect(stderr.contains("error: glint was aborted (SIGABRT) while the OpenCL device"), "\(stderr)")
            #expect(stderr.contains("POCL_CACHE_DIR"), "\(stderr)")
            #expect(!box.exists("big.png"))
        }
    }

    /// With -q, a first build of every workload's kernels on a cold PoCL cache prints nothing:
    /// no compiler chatter ("N warnings generated.") reaches the terminal.
    @Test func coldKernelBuildsPrintNothingUnderQuiet() throws {
        try withSandbox { s in
            let made = try s.run(["fractal", "mandelbrot", "--size", "16x16", "-o", "in.png", "--device", "cpu", "-q"])
            try #require(made.status == 0, "\(made)")
            let cold = s.root.appendingPathComponent("pocl-cold").path
            let jobs: [[String]] = [
                ["fractal", "mandelbrot", "--size", "16x16", "-o", "f1.png"],
                ["fractal", "julia", "--smooth", "--size", "16x16", "-o", "f2.png"],
                ["fractal", "burning-ship", "--precision", "double", "--size", "16x16", "-o", "f3.png"],
                ["rtow", "--size", "16x8", "--spp", "1", "-o", "r.png"],
                ["blur", "in.png", "-o", "b.png"],
                ["iso", "in.png", "-o", "i.png"],
                ["pulse", "--frames", "1", "--size", "16x16", "-o", "p"],
                ["mist", "--input", "in.png", "--frames", "1", "-o", "m"],
            ]
            for job in jobs {
                let r = try s.run(job + ["--device", "opencl", "-q"], env: ["POCL_CACHE_DIR": cold])
                #expect(r.status == 0, "\(job.joined(separator: " ")): \(r)")
                #expect(r.stderr.isEmpty && r.stdout.isEmpty, "\(job.joined(separator: " ")) printed under -q:\n\(r)")
            }
        }
    }
}
