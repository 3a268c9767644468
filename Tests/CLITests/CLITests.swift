// Command-line tests: run the built `glint` executable as a child process and check its exit
// status, its stdout/stderr and the files it writes (or must not write).
//
// Every test gets its own temporary folder: `work/` is the child's current directory (outputs
// go there) and `cache/` is its GLINT_CACHE_DIR, so nothing is written to the user's home.

import Foundation
import GlintCore
import Testing

// MARK: - Locating and running the binary

/// The `glint` executable built beside this test bundle (searching upward from the test
/// runner's path, e.g. .build/debug/GlintPackageTests.xctest -> .build/debug/glint).
let glintBinary: Result<URL, LocateError> = {
    let fm = FileManager.default
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var tried: [String] = []
    for _ in 0..<8 {
        dir = dir.deletingLastPathComponent()
        let candidate = dir.appendingPathComponent("glint")
        tried.append(candidate.path)
        var isDir: ObjCBool = false
        if fm.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue,
           fm.isExecutableFile(atPath: candidate.path) {
            return .success(candidate)
        }
        if dir.path == "/" { break }
    }
    return .failure(LocateError(message: "no executable `glint` found beside the test bundle; looked at: "
                                + tried.joined(separator: ", ") + " (build it with `swift build` first)"))
}()

struct LocateError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// What one run of the child produced.
struct RunResult: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String
    let timedOut: Bool
    let seconds: Double

    /// stderr split into lines, without the empty piece after the final newline.
    var stderrLines: [String] { Self.lines(stderr) }
    var stdoutLines: [String] { Self.lines(stdout) }

    static func lines(_ text: String) -> [String] {
        var parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if parts.last == "" { parts.removeLast() }
        return parts
    }

    var description: String {
        "exit \(status)\(timedOut ? " (timed out)" : "")\n--- stdout ---\n\(stdout)--- stderr ---\n\(stderr)"
    }
}

/// A per-test temporary folder: `work/` (the child's current directory) and `cache/`
/// (its GLINT_CACHE_DIR). Removed by `withSandbox` when the test ends.
struct Sandbox {
    let root: URL
    var work: URL { root.appendingPathComponent("work") }
    var cache: URL { root.appendingPathComponent("cache") }

    init() throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("glint-cli-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("work"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("cache"), withIntermediateDirectories: true)
    }

    /// A path inside `work/`.
    func path(_ name: String) -> String { work.appendingPathComponent(name).path }

    func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path(name)) }

    func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: work.appendingPathComponent(name))) }

    func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: work.appendingPathComponent(name))
    }

    /// Every file and folder under `work/`, relative, sorted.
    func listing() -> [String] {
        let fm = FileManager.default
        guard let e = fm.enumerator(atPath: work.path) else { return [] }
        return (e.allObjects as? [String] ?? []).sorted()
    }

    /// The environment a child runs with: this process's, minus any GLINT_* setting that would
    /// change the outcome, plus GLINT_CACHE_DIR, the shared PoCL cache and `env` (a nil value
    /// removes the variable).
    func childEnvironment(_ env: [String: String?] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in ["GLINT_DEVICE", "GLINT_KERNEL_CACHE", "GLINT_KERNELS", "GLINT_CACHE_DIR", "GLINT_MAX_PIXELS"] {
            environment[key] = nil
        }
        environment["GLINT_CACHE_DIR"] = cache.path
        // PoCL keeps its own compiled-kernel cache, by default under ~/.cache/pocl: keep it
        // in the temporary folder too (shared between tests so PoCL's own compiles stay warm).
        environment["POCL_CACHE_DIR"] = sharedPoclCache
        for (k, v) in env { environment[k] = v }
        return environment
    }

    /// Runs `glint args...` in `work/` with `childEnvironment(env)`.
    func run(_ args: [String], env: [String: String?] = [:], timeout: Double = 120) throws -> RunResult {
        let process = Process()
        process.executableURL = try glintBinary.get()
        process.arguments = args
        process.environment = childEnvironment(env)
        process.currentDirectoryURL = work
        process.standardInput = FileHandle.nullDevice
        return try Self.collect(process, timeout: timeout)
    }

    /// Starts `process`, drains its stdout and stderr concurrently (so a chatty child can never
    /// block on a full pipe) and waits for it, terminating it after `timeout` seconds (scaled
    /// under a sanitizer).
    static func collect(_ process: Process, timeout: Double) throws -> RunResult {
        let outPipe = Pipe(), errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        let out = DataBox(), err = DataBox()
        let group = DispatchGroup()
        let start = Date()
        try process.run()
        DispatchQueue.global().async(group: group) { out.data = outPipe.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { err.data = errPipe.fileHandleForReading.readDataToEndOfFile() }
        var timedOut = false
        if group.wait(timeout: .now() + timeout * sanitizerSlowdown) == .timedOut {
            timedOut = true
            process.terminate()
            group.wait()
        }
        process.waitUntilExit()
        return RunResult(status: process.terminationStatus,
                         stdout: String(decoding: out.data, as: UTF8.self),
                         stderr: String(decoding: err.data, as: UTF8.self),
                         timedOut: timedOut,
                         seconds: Date().timeIntervalSince(start))
    }
}

/// How much longer a child may run when the tests run under a sanitizer
/// (`swift test --sanitize=thread` or `=address`, as `.ci/run` does): the `glint` built beside this
/// test bundle is then instrumented too, and runs several times slower (ThreadSanitizer most:
/// `bench --quick` takes minutes), so each test's timeout is multiplied rather than raised for
/// every run. The sanitizer is found by its runtime's entry point, which the instrumented test
/// binary exports; GLINT_TEST_TIMEOUT_SCALE, if set, overrides the factor.
let sanitizerSlowdown: Double = {
    if let text = ProcessInfo.processInfo.environment["GLINT_TEST_TIMEOUT_SCALE"],
       let scale = Double(text), scale.isFinite, scale > 0 { return scale }
    if underThreadSanitizer { return 5 }
    if dlsym(nil, "__asan_init") != nil { return 3 }
    return 1
}()

/// Whether this test binary, and so the `glint` beside it, is built with ThreadSanitizer.
let underThreadSanitizer = dlsym(nil, "__tsan_init") != nil

private let sharedPoclCache: String = {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("glint-cli-tests-pocl-cache").path
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}()

final class DataBox: @unchecked Sendable {
    var data = Data()
}

/// Runs `body` with a fresh sandbox and removes it afterwards, whatever happens.
func withSandbox(_ body: (Sandbox) throws -> Void) throws {
    let sandbox = try Sandbox()
    defer { try? FileManager.default.removeItem(at: sandbox.root) }
    try body(sandbox)
}

// MARK: - File checks

struct PNGHeader: Equatable {
    let width: Int
    let height: Int
    let bitDepth: Int
    let colorType: Int
}

let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

/// The IHDR fields, read straight from the bytes (signature, then the IHDR chunk first).
func pngHeader(_ bytes: [UInt8]) -> PNGHeader? {
    guard bytes.count >= 33, Array(bytes[0..<8]) == pngSignature,
          Array(bytes[8..<12]) == [0, 0, 0, 13], Array(bytes[12..<16]) == Array("IHDR".utf8) else { return nil }
    func be32(_ i: Int) -> Int { bytes[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) } }
    return PNGHeader(width: be32(16), height: be32(20), bitDepth: Int(bytes[24]), colorType: Int(bytes[25]))
}

/// The largest difference of any one byte between two same-size images.
func maxPixelDifference(_ a: Image8, _ b: Image8) -> Int {
    zip(a.pixels, b.pixels).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
}

/// How many different RGB colours an image has.
func distinctColours(_ image: Image8) -> Int {
    var seen = Set<UInt32>()
    let p = image.pixels
    for i in stride(from: 0, to: p.count, by: 4) {
        let rgb = UInt32(p[i]) << 16 | UInt32(p[i + 1]) << 8 | UInt32(p[i + 2])
        seen.insert(rgb)
    }
    return seen.count
}

/// `programs: N compiled, M from the disk cache, ...` from a --verbose OpenCL render.
func buildStats(_ stdout: String) -> (compiled: Int, fromDisk: Int)? {
    for line in RunResult.lines(stdout) where line.hasPrefix("programs: ") {
        let words = line.dropFirst("programs: ".count).split(separator: " ")
        guard words.count >= 4, let compiled = Int(words[0]), words[1].hasPrefix("compiled"),
              let disk = Int(words[2]) else { return nil }
        guard line.contains("from the disk cache") else { return nil }
        return (compiled, disk)
    }
    return nil
}

let allFormulas = ["mandelbrot", "julia", "burning-ship", "sierpinski-julia", "image-julia"]

/// A small, quick render: `glint fractal <formula> --size 64x48 --iterations 64 -o <output>` + extra.
func smallRenderArgs(formula: String, output: String, extra: [String]) -> [String] {
    ["fractal", formula, "--size", "64x48", "--iterations", "64", "-o", output] + extra
}
func smallRender(_ extra: [String]) -> [String] { smallRenderArgs(formula: "mandelbrot", output: "out.png", extra: extra) }
func smallRender(_ formula: String, _ extra: [String]) -> [String] { smallRenderArgs(formula: formula, output: "out.png", extra: extra) }
func smallRender(output: String, _ extra: [String]) -> [String] { smallRenderArgs(formula: "mandelbrot", output: output, extra: extra) }

// MARK: - Bad input

/// One bad command line and what its error must look like.
struct BadInput: Sendable, CustomTestStringConvertible {
    enum Kind: Sendable {
        /// ArgumentParser validation: first line "Error: ..." (a usage line may follow).
        case validation
        /// From `reportingErrors`: exactly one line "error: ...".
        case runtime
    }
    enum Setup: Sendable {
        case none
        /// `x.png` holding text.
        case corruptTexture
        /// `half.png`: a real glint PNG cut in half.
        case truncatedTexture
    }

    let name: String
    let args: [String]
    let kind: Kind
    /// Each must appear in the (first) error line.
    let mentions: [String]
    /// The output the command names (relative to work/); must not exist afterwards.
    var output = "out.png"
    var setup = Setup.none

    var testDescription: String { name }
}

let badInputs: [BadInput] = [
    BadInput(name: "--size=-5x10", args: ["fractal", "mandelbrot", "--size=-5x10", "-o", "out.png", "--device", "cpu"],
             kind: .validation, mentions: ["-5x10"]),
    BadInput(name: "--size 0x10", args: ["fractal", "mandelbrot", "--size", "0x10", "-o", "out.png", "--device", "cpu"],
             kind: .validation, mentions: ["0x10"]),
    BadInput(name: "--size 100000x100000",
             args: ["fractal", "mandelbrot", "--size", "100000x100000", "-o", "out.png", "--device", "cpu"],
             kind: .validation, mentions: ["100000x100000", "limit"]),
    BadInput(name: "--size abc", args: ["fractal", "mandelbrot", "--size", "abc", "-o", "out.png", "--device", "cpu"],
             kind: .validation, mentions: ["abc"]),
    BadInput(name: "--zoom 0", args: smallRender(["--zoom", "0", "--device", "cpu"]),
             kind: .validation, mentions: ["--zoom"]),
    BadInput(name: "--zoom -1", args: smallRender(["--zoom", "-1", "--device", "cpu"]),
             kind: .validation, mentions: ["--zoom"]),
    BadInput(name: "--zoom=-1", args: smallRender(["--zoom=-1", "--device", "cpu"]),
             kind: .validation, mentions: ["--zoom", "-1"]),
    BadInput(name: "--device bogus", args: smallRender(["--device", "bogus"]),
             kind: .runtime, mentions: ["bogus"]),
    BadInput(name: "--device opencl:99", args: smallRender(["--device", "opencl:99"]),
             kind: .runtime, mentions: ["opencl:99"]),
    BadInput(name: "--device gpu (no GPU here)", args: smallRender(["--device", "gpu"]),
             kind: .runtime, mentions: ["GPU"]),
    BadInput(name: "image-julia, missing texture",
             args: smallRender("image-julia", ["--texture", "missing.png", "--device", "cpu"]),
             kind: .runtime, mentions: ["missing.png"]),
    BadInput(name: "image-julia, corrupt texture",
             args: smallRender("image-julia", ["--texture", "x.png", "--device", "cpu"]),
             kind: .runtime, mentions: ["x.png"], setup: .corruptTexture),
    BadInput(name: "image-julia, truncated texture",
             args: smallRender("image-julia", ["--texture", "half.png", "--device", "cpu"]),
             kind: .runtime, mentions: ["half.png"], setup: .truncatedTexture),
    BadInput(name: "image-julia without --texture", args: smallRender("image-julia", ["--device", "cpu"]),
             kind: .validation, mentions: ["--texture"]),
    BadInput(name: "unknown formula", args: smallRender("mandelbrat", ["--device", "cpu"]),
             kind: .validation, mentions: ["mandelbrat"]),
    BadInput(name: "unknown palette", args: smallRender(["--palette", "neon", "--device", "cpu"]),
             kind: .validation, mentions: ["neon"]),
    BadInput(name: "--iterations 0", args: ["fractal", "mandelbrot", "--size", "64x48", "--iterations", "0",
                                            "-o", "out.png", "--device", "cpu"],
             kind: .runtime, mentions: ["--iterations"]),
    BadInput(name: "--bailout 0.5", args: smallRender(["--bailout", "0.5", "--device", "cpu"]),
             kind: .runtime, mentions: ["--bailout"]),
    BadInput(name: "--ss 0", args: smallRender(["--ss", "0", "--device", "cpu"]),
             kind: .runtime, mentions: ["--ss"]),
    BadInput(name: "--precision half", args: smallRender(["--precision", "half", "--device", "cpu"]),
             kind: .validation, mentions: ["--precision", "half"]),
    BadInput(name: "-o into a missing folder", args: smallRender(output: "nope/out.png", ["--device", "cpu"]),
             kind: .validation, mentions: ["nope"], output: "nope/out.png"),
    BadInput(name: "-o with a .jpg extension", args: smallRender(output: "out.jpg", ["--device", "cpu"]),
             kind: .validation, mentions: ["out.jpg"], output: "out.jpg"),
]

/// Checks a failed run: non-zero exit, nothing on stdout, the error's shape by kind, and each
/// of `mentions` in the error line.
func expectCleanFailure(_ r: RunResult, kind: BadInput.Kind, mentions: [String],
                        sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(!r.timedOut, "the command timed out\n\(r)", sourceLocation: sourceLocation)
    #expect(r.status != 0, "a bad command line must exit non-zero\n\(r)", sourceLocation: sourceLocation)
    #expect(r.status != 0 && r.status < 128, "must exit cleanly, not crash on a signal\n\(r)", sourceLocation: sourceLocation)
    #expect(r.stdout.isEmpty, "nothing should be printed on stdout\n\(r)", sourceLocation: sourceLocation)
    let lines = r.stderrLines
    guard let first = lines.first, !first.isEmpty else {
        Issue.record("no error message on stderr\n\(r)", sourceLocation: sourceLocation)
        return
    }
    switch kind {
    case .validation:
        #expect(first.hasPrefix("Error:") || first.hasPrefix("error:"),
                "the first stderr line must start with 'Error:'\n\(r)", sourceLocation: sourceLocation)
    case .runtime:
        #expect(lines.count == 1, "a runtime error must be exactly one line on stderr\n\(r)", sourceLocation: sourceLocation)
        #expect(first.hasPrefix("error: "), "the error line must start with 'error: '\n\(r)", sourceLocation: sourceLocation)
        #expect(first.count > "error: ".count + 10, "the error line says too little\n\(r)", sourceLocation: sourceLocation)
    }
    for m in mentions {
        #expect(first.contains(m), "the error line should mention '\(m)'\n\(r)", sourceLocation: sourceLocation)
    }
    #expect(!r.stderr.contains("Fatal error") && !r.stderr.contains("Stack dump"),
            "crash output on stderr\n\(r)", sourceLocation: sourceLocation)
}

/// Checks a successful render's stdout: its first line is
/// `wrote <file> (64x48, <formula>, <backend label>, ...)`, the label being `cpu (Swift, ...)`
/// or `opencl (<device name>)`.
func expectWrote(_ r: RunResult, file: String, device: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(r.status == 0, "the render failed\n\(r)", sourceLocation: sourceLocation)
    let line = r.stdoutLines.first ?? ""
    #expect(line.hasPrefix("wrote \(file) (64x48, "), "expected 'wrote \(file) (64x48, ...'\n\(r)",
            sourceLocation: sourceLocation)
    let label = device == "cpu" ? ", cpu (Swift" : ", opencl ("
    #expect(line.contains(label), "the 'wrote' line should name the \(device) backend ('\(label)')\n\(r)",
            sourceLocation: sourceLocation)
}

// MARK: - The tests

@Suite("glint command line", .serialized)
struct CLITests {
    @Test("the glint binary is found beside the test bundle")
    func binaryIsFound() throws {
        let url = try glintBinary.get()
        #expect(FileManager.default.isExecutableFile(atPath: url.path))
    }

    // 1. Bad input.
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

    // 2. Successful renders on both backends.
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
                let diff = maxPixelDifference(cpu, cl)
                #expect(diff <= 1, "cpu and opencl pixels differ by up to \(diff) (at most 1 allowed)")
            }
            #expect(box.listing() == ["cpu.png", "opencl.png"], "unexpected files: \(box.listing())")
        }
    }

    // 3. Escape counts and 16-bit PNGs.
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

    // 4. Devices.
    @Test("with no OpenCL driver, cpu still works and devices says what to install")
    func noOpenCLPlatform() throws {
        try withSandbox { box in
            // An empty vendors folder: the ICD loader finds no driver at all.
            let vendors = box.path("no-vendors")
            try FileManager.default.createDirectory(atPath: vendors, withIntermediateDirectories: true)
            let env: [String: String?] = ["OCL_ICD_VENDORS": vendors]
            let devices = try box.run(["devices"], env: env)
            #expect(devices.status == 0, "\(devices)")
            #expect(devices.stdout.contains("cpu"))
            #expect(!devices.stdout.contains("opencl:0"))
            #expect(devices.stdout.contains("no OpenCL platform") && devices.stdout.contains("pocl-opencl-icd"), "\(devices)")
            #expect(devices.stdout.contains("auto        -> cpu"))
            let cpu = try box.run(["fractal", "mandelbrot", "--size", "32x32", "-o", "a.png"], env: env)
            #expect(cpu.status == 0 && cpu.stdout.contains("cpu"), "auto without OpenCL should use the Swift path: \(cpu)")
            let cl = try box.run(["fractal", "mandelbrot", "--size", "32x32", "-o", "b.png", "--device", "opencl"], env: env)
            #expect(cl.status != 0 && cl.stderrLines.count == 1 && cl.stderr.contains("no OpenCL platform"), "\(cl)")
            #expect(!FileManager.default.fileExists(atPath: box.path("b.png")))
        }
    }

    @Test("glint devices lists cpu and opencl:0")
    func devicesText() throws {
        try withSandbox { box in
            let r = try box.run(["devices"])
            #expect(r.status == 0, "\(r)")
            #expect(r.stderr.isEmpty, "\(r)")
            let lines = r.stdoutLines
            #expect(lines.contains { $0.hasPrefix("cpu ") }, "no cpu line\n\(r)")
            #expect(lines.contains { $0.hasPrefix("opencl:0 ") }, "no opencl:0 line\n\(r)")
            #expect(lines.contains { $0.hasPrefix("auto") }, "no auto line\n\(r)")
        }
    }

    @Test("glint devices --json is JSON with an opencl array of described devices")
    func devicesJSON() throws {
        try withSandbox { box in
            let r = try box.run(["devices", "--json"])
            #expect(r.status == 0, "\(r)")
            let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8))
            let root = try #require(object as? [String: Any], "the JSON is not an object\n\(r)")
            let opencl = try #require(root["opencl"] as? [Any], "no \"opencl\" array\n\(r)")
            #expect(opencl.count >= 1, "no OpenCL device listed\n\(r)")
            for case let (i, entry) in opencl.enumerated() {
                let d = try #require(entry as? [String: Any], "device \(i) is not an object")
                #expect((d["name"] as? String)?.isEmpty == false, "device \(i): name")
                #expect((d["type"] as? String).map { ["gpu", "cpu", "accelerator", "other"].contains($0) } == true,
                        "device \(i): type \(String(describing: d["type"]))")
                #expect(((d["compute_units"] as? NSNumber)?.intValue ?? 0) >= 1, "device \(i): compute_units")
                #expect(d["fp64"] is Bool, "device \(i): fp64 \(String(describing: d["fp64"]))")
                #expect(d["driver_version"] is String, "device \(i): driver_version")
            }
            #expect(root["auto"] is String, "no \"auto\"")
        }
    }

    // 5. Help.
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
                .map { unknown.stderrLines[0][$0...].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            let known = try #require(listed, "the unknown-formula error lists no formulas\n\(unknown)")
            #expect(Set(known) == Set(allFormulas), "the CLI knows \(known)")
            for name in known {
                #expect(r.stdout.contains(name), "--help does not mention \(name)")
            }
        }
    }

    // 6. GLINT_DEVICE.
    @Test("GLINT_DEVICE=cpu picks the CPU path")
    func glintDeviceEnvironment() throws {
        try withSandbox { box in
            let r = try box.run(smallRender([]), env: ["GLINT_DEVICE": "cpu"])
            #expect(r.status == 0, "\(r)")
            expectWrote(r, file: "out.png", device: "cpu")
            #expect(pngHeader(try box.bytes("out.png"))?.width == 64)
        }
    }

    @Test("GLINT_DEVICE=bogus fails with one clear error and writes nothing")
    func glintDeviceBogus() throws {
        try withSandbox { box in
            let r = try box.run(smallRender([]), env: ["GLINT_DEVICE": "bogus"])
            expectCleanFailure(r, kind: .runtime, mentions: ["bogus"])
            #expect(box.listing().isEmpty, "files left: \(box.listing())")
        }
    }

    @Test("--device wins over GLINT_DEVICE")
    func deviceOptionOverridesEnvironment() throws {
        try withSandbox { box in
            let r = try box.run(smallRender(["--device", "cpu"]), env: ["GLINT_DEVICE": "bogus"])
            #expect(r.status == 0, "\(r)")
            expectWrote(r, file: "out.png", device: "cpu")
        }
    }

    // 7. Warm start from the program cache.
    @Test("a second OpenCL run loads its programs from the disk cache")
    func warmStart() throws {
        try withSandbox { box in
            let args = smallRender(["--device", "opencl", "--verbose"])
            let first = try box.run(args)
            #expect(first.status == 0, "\(first)")
            expectWrote(first, file: "out.png", device: "opencl")
            let s1 = try #require(buildStats(first.stdout), "no 'programs:' line in --verbose output\n\(first)")
            #expect(s1.compiled >= 1, "the first run should compile (cache empty)\n\(first)")
            let cached = (try? FileManager.default.contentsOfDirectory(
                atPath: box.cache.appendingPathComponent("programs").path)) ?? []
            #expect(cached.contains { $0.hasSuffix(".bin") }, "no program binary in GLINT_CACHE_DIR/programs: \(cached)")

            let second = try box.run(args)
            #expect(second.status == 0, "\(second)")
            let s2 = try #require(buildStats(second.stdout), "no 'programs:' line in --verbose output\n\(second)")
            #expect(s2.compiled == 0, "the second run compiled again\n\(second)")
            #expect(s2.fromDisk >= 1, "the second run did not use the disk cache\n\(second)")
            #expect(try box.bytes("out.png").prefix(8).elementsEqual(pngSignature))
        }
    }

    @Test("GLINT_KERNEL_CACHE=off compiles every time and writes no cache")
    func kernelCacheOff() throws {
        try withSandbox { box in
            let args = smallRender(["--device", "opencl", "--verbose"])
            for run in 1...2 {
                let r = try box.run(args, env: ["GLINT_KERNEL_CACHE": "off"])
                #expect(r.status == 0, "\(r)")
                expectWrote(r, file: "out.png", device: "opencl")
                let s = try #require(buildStats(r.stdout), "no 'programs:' line in --verbose output\n\(r)")
                #expect(s.compiled >= 1 && s.fromDisk == 0, "run \(run) with the cache off\n\(r)")
            }
            let cacheContents = (try? FileManager.default.contentsOfDirectory(atPath: box.cache.path)) ?? []
            #expect(cacheContents.isEmpty, "the cache was written although it is off: \(cacheContents)")
        }
    }
}

// MARK: - glint rtow

/// A small, quick ray-traced render: 64x48 (as `expectWrote` wants), few samples, shallow paths.
func smallRTOW(_ extra: [String], output: String = "out.png") -> [String] {
    ["rtow", "--size", "64x48", "--spp", "2", "--depth", "8", "-o", output] + extra
}

let rtowBadInputs: [BadInput] = [
    BadInput(name: "rtow: unknown scene", args: smallRTOW(["--scene", "ch9", "--device", "cpu"]),
             kind: .validation, mentions: ["ch9"]),
    BadInput(name: "rtow: --spp 0", args: smallRTOW(["--spp", "0", "--device", "cpu"]),
             kind: .validation, mentions: ["--spp"]),
    BadInput(name: "rtow: --depth 0", args: smallRTOW(["--depth", "0", "--device", "cpu"]),
             kind: .validation, mentions: ["--depth"]),
    BadInput(name: "rtow: --roll 90", args: smallRTOW(["--roll", "90", "--device", "cpu"]),
             kind: .validation, mentions: ["--roll", "63"]),
    BadInput(name: "rtow: --vfov 180", args: smallRTOW(["--vfov", "180", "--device", "cpu"]),
             kind: .validation, mentions: ["--vfov"]),
    BadInput(name: "rtow: --orbit abc", args: smallRTOW(["--orbit", "abc", "--device", "cpu"]),
             kind: .validation, mentions: ["--orbit", "abc"]),
    BadInput(name: "rtow: --lookfrom 1,2", args: smallRTOW(["--lookfrom", "1,2", "--device", "cpu"]),
             kind: .validation, mentions: ["--lookfrom"]),
    BadInput(name: "rtow: --distance 0", args: smallRTOW(["--distance", "0", "--device", "cpu"]),
             kind: .validation, mentions: ["--distance"]),
    BadInput(name: "rtow: --vup along the view", args: smallRTOW(["--vup", "13,2,3", "--device", "cpu"]),
             kind: .runtime, mentions: ["vup"]),
    BadInput(name: "rtow: missing scene file", args: smallRTOW(["--scene", "missing.json", "--device", "cpu"]),
             kind: .runtime, mentions: ["missing.json"]),
    BadInput(name: "rtow: missing checkpoint", args: smallRTOW(["--resume", "nope.ckpt", "--device", "cpu"]),
             kind: .runtime, mentions: ["nope.ckpt"]),
    BadInput(name: "rtow: -o into a missing folder", args: smallRTOW(["--device", "cpu"], output: "nope/out.png"),
             kind: .validation, mentions: ["nope"], output: "nope/out.png"),
    BadInput(name: "rtow: --pfm with a .png name", args: smallRTOW(["--pfm", "x.png", "--device", "cpu"]),
             kind: .validation, mentions: ["--pfm"]),
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
            let diff = zip(images[0].pixels, images[1].pixels).map { abs(Int($0) - Int($1)) }
            #expect(Double(diff.reduce(0, +)) / Double(diff.count) / 255 < 0.005)
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
