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

    /// The environment a child runs with: this process's, minus any GLINT_* setting (or a
    /// scheduler's shard variables) that would change the outcome, plus GLINT_CACHE_DIR, the shared PoCL cache and `env` (a nil value
    /// removes the variable).
    func childEnvironment(_ env: [String: String?] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in ["GLINT_DEVICE", "GLINT_KERNEL_CACHE", "GLINT_KERNELS", "GLINT_CACHE_DIR", "GLINT_MAX_PIXELS", "GLINT_SHARD_COUNT",
                    "GLINT_KERNEL_LANES", "GLINT_ZERO_COPY",
                    "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "JOB_COMPLETION_INDEX"] {
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

/// Whether the `glint` beside this test bundle is built with any sanitizer: its resident memory
/// then includes the sanitizer's shadow memory and says nothing about Glint's own.
let underSanitizer = underThreadSanitizer || dlsym(nil, "__asan_init") != nil

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

// MARK: - Failures and successes

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
