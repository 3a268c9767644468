import ArgumentParser
import GlintCL
import GlintCore
import GlintWorkloads
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// --device, shared by every workload.
struct DeviceOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Where to run: auto, cpu, opencl, opencl:N or gpu (default: $GLINT_DEVICE, else auto).",
        discussion: "auto picks the first OpenCL GPU; without one, the faster of the Swift CPU path and an OpenCL CPU device for this kind of job (glint devices shows the choice per kind)."))
    var device: String?

    /// The backend for a job of `kind` (which decides `auto` on machines without a GPU).
    /// `work`: one job's work in `GPUCalibration`'s units (pixels; samples for rtow), `repeats`
    /// jobs of it (frames), and the job's `variant` (blur's), which a GPU calibration weighs
    /// against the GPU's start-up.
    func backend(for kind: AutoKind, work: Double? = nil, repeats: Int = 1, variant: String? = nil) throws -> Backend {
        try Backend.resolve(try DeviceChoice.from(option: device), for: kind,
                            estimate: AutoEstimate(double: false, iterations: nil, work: work, repeats: Double(repeats), variant: variant))
    }

    /// The backend for a command that renders `job` (`frames` times, or a `share` of it for a
    /// shard): with `auto`, a calibration (glint devices --calibrate) and no GPU, the job's work
    /// is estimated first, so that OpenCL's start-up is weighed against the render.
    func backend(forFractal job: FractalJob, share: Double = 1, frames: Int = 1) async throws -> Backend {
        let choice = try DeviceChoice.from(option: device)
        let double = job.precision == .double
        let work = job.calibrationWork * share
        guard Backend.autoWantsEstimate(choice, for: job.autoKind, double: double) else {
            return try Backend.resolve(choice, for: job.autoKind,
                                       estimate: AutoEstimate(double: double, iterations: nil, work: work, repeats: Double(frames)))
        }
        let iterations = try await AutoCalibration.estimateIterations(job) * share * Double(frames)
        return try Backend.resolve(choice, for: job.autoKind,
                                   estimate: AutoEstimate(double: double, iterations: iterations, work: work, repeats: Double(frames)))
    }
}

/// --png-compression, shared by every command that writes PNG files.
struct PNGOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "PNG compression: auto, fast or default (default: auto).",
        discussion: "fast: no row filters and zlib's fastest level, the rows compressed in parts on every core at once (8-bit images; 16-bit ones use libpng's fast mode, level 3); default: libpng's own, the smallest files (level 6, a filter chosen per row); auto is fast from 4 megapixels on (a whole 4K fractal render: about 60 ms instead of 300 ms on two cores) and default below. The pixels are the same in every mode; with the same zlib, a file's bytes are the same on any machine."),
        transform: choice("--png-compression", PNG.Compression.allCases, name: { $0.rawValue }))
    var pngCompression = PNG.Compression.auto

    /// Makes this the compression of every PNG the command writes.
    func apply() { PNG.compression = pngCompression }
}

/// Ctrl-C: the first sets `requested`, which long work checks at its next safe point (a
/// checkpointed render after its pass, a sequence before its next frame); a second quits at once
/// with status 130.
enum Interrupt {
    private static let flag = Atomic<Bool>(false)
    static var requested: Bool { flag.load(ordering: .relaxed) }

    static func install() {
        signal(SIGINT) { _ in
            if Interrupt.flag.exchange(true, ordering: .relaxed) { _exit(130) }
        }
    }
}

/// --quiet / --verbose, shared by every command.
struct OutputOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Print nothing but errors; no progress bar.")
    var quiet = false
    @Flag(name: .shortAndLong, help: "Print details: device, timings, program builds and anything the OpenCL compiler said.")
    var verbose = false
}

/// `--bit-depth`: 8 or 16, checked while the command line is read (fractal, rtow, blur).
let bitDepthValue: @Sendable (String) throws -> Int = { text in
    let t = text[...].trimmingCharacters()
    guard let v = Int(t), v == 8 || v == 16 else {
        throw optionValueError("--bit-depth must be 8 or 16, got \(JSON.printable(t, limit: 40))")
    }
    return v
}

/// Runs a command body; any error becomes one line on stderr (`--verbose`: every line) and exit 1.
/// With `verbose`, what building OpenCL programs cost and said is printed after the body, success
/// or not: counts and time, cache notes, and the compiler's log of every program it said
/// anything about (warnings included; a failed build's log is part of its error). Commands whose
/// stdout may be data (`bench`, `devices --json`) pass `buildReport: false`.
func reportingErrors(verbose: Bool, buildReport: Bool = true, _ body: () async throws -> Void) async throws {
    defer { if verbose && buildReport { printBuildDiagnostics() } }
    do {
        try await body()
    } catch let error as ExitCode {
        throw error
    } catch let error as ValidationError {
        throw error
    } catch {
        let text = (error as? GlintError)?.flagged.message ?? "\(error)"
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if verbose || lines.count <= 1 {
            printError("error: \(text)")
        } else {
            printError("error: \(lines[0]) (run with --verbose for details)")
        }
        throw ExitCode.failure
    }
}

/// The --verbose report on program builds, per OpenCL context the command used (and when
/// `auto` needed no OpenCL driver at all).
func printBuildDiagnostics() {
    if let note = AutoDecision.note {
        print(note)
    } else if NoGPUMemo.decided, let path = NoGPUMemo.path {
        print("device: auto chose the Swift path without loading an OpenCL driver: no GPU here, as \(path) remembers (glint devices scans again; a GPU it finds removes the memo)")
    }
    for cc in ComputeContext.opened {
        let s = cc.buildStats
        guard s.compiled + s.fromDiskCache > 0 || !s.cacheNotes.isEmpty else { continue }
        print("programs: \(s.compiled) compiled, \(s.fromDiskCache) from the disk cache, \(fmt(s.seconds * 1000, 1)) ms (\(cc.deviceName))")
        for note in s.cacheNotes { print(note) }
        for log in s.buildLogs { print(log) }
    }
}

func printError(_ text: String) {
    var stderr = StandardError()
    print(text, to: &stderr)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) { writeStderr(string) }
}

/// Writes straight to file descriptor 2 (unbuffered, and free of C's global FILE state).
func writeStderr(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(2, bytes.baseAddress! + done, bytes.count - done)
            if n <= 0 { break }
            done += n
        }
    }
}

// MARK: Value parsing

/// `WxH`, e.g. 1920x1080: each side 1 to ImageLimits.maxSide, at most ImageLimits.maxPixels.
func parseSize(_ text: String, option: String = "--size") throws -> (Int, Int) {
    let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
    func isWhole(_ s: Substring) -> Bool {
        let digits = s.first == "-" || s.first == "+" ? s.dropFirst() : s
        return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }
    guard parts.count == 2, parts.allSatisfy(isWhole) else {
        throw ValidationError("\(option) must be WxH (e.g. 1920x1080), got \(text)")
    }
    // Sides too long for an Int are over the limit too.
    let side = { (s: Substring) -> Int in Int(s) ?? (s.hasPrefix("-") ? Int.min : Int.max) }
    let (w, h) = (side(parts[0]), side(parts[1]))
    guard w > 0, h > 0 else { throw ValidationError("\(option) must have a width and height of at least 1, got \(text)") }
    guard w <= ImageLimits.maxSide && h <= ImageLimits.maxSide else {
        throw ValidationError("\(option) \(text) is over the limit of \(ImageLimits.maxSide) pixels a side")
    }
    guard w * h <= ImageLimits.maxPixels else {
        throw ValidationError("\(option) \(text) is over the limit of \(ImageLimits.maxPixels) pixels")
    }
    return (w, h)
}

/// `X,Y`, e.g. -0.75,0.1.
func parsePair(_ text: String, name: String) throws -> (Double, Double) {
    let parts = text.split(separator: ",", omittingEmptySubsequences: false)
    guard parts.count == 2, let x = Double(parts[0].trimmingCharacters()), let y = Double(parts[1].trimmingCharacters()),
          x.isFinite, y.isFinite else {
        throw ValidationError("\(name) '\(text)' is not two finite numbers X,Y (e.g. -0.75,0.1)")
    }
    return (x, y)
}


/// The folder of `path` must exist and be writable, checked before any long work.
/// The folder a file path names its file in: "." for a bare name, "/" for one at the root.
func folderOf(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

func checkWritable(_ path: String, option: String) throws {
    let dir = folderOf(path)
    guard FileIO.isDirectory(dir) else { throw ValidationError("\(option) \(path): folder \(dir) does not exist") }
    guard access(dir, W_OK) == 0 else { throw ValidationError("\(option) \(path): folder \(dir) is not writable") }
    if FileIO.isDirectory(path) { throw ValidationError("\(option) \(path) is a folder; give a file name") }
    // A file its owner made read-only is kept as it is, as cp and mv -i keep it (by its mode
    // bits: root may write anything, so access() would not say).
    var st = stat()
    if lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && (st.st_mode & 0o222) == 0 {
        throw ValidationError("\(option) \(path) is read-only: glint does not replace it (make it writable, or give another name)")
    }
}

func hasSuffix(_ path: String, _ exts: [String]) -> Bool {
    let lower = path.lowercased()
    return exts.contains { lower.hasSuffix("." + $0) }
}

// MARK: Progress

/// The one progress display of every command, on stderr, only on a terminal and never with
/// --quiet: a bar with ETA for work of known length (`update`, drawn once the work has run for a
/// second, so short renders stay silent), a status line for open-ended work (`show`), and lines
/// above either (`note`). `finish` clears it.
final class ProgressBar: Sendable {
    private struct State { var lastDraw = 0.0; var drawn = false }
    private let start = Clock.now()
    private let label: String
    private let enabled: Bool
    private let state = Locked(State())

    init(_ label: String, quiet: Bool) {
        self.label = label
        enabled = !quiet && isatty(2) != 0
    }

    /// The bar at `fraction` done, with `detail` (rates, samples) before the ETA.
    func update(_ fraction: Double, detail: String? = nil) {
        guard enabled else { return }
        let now = Clock.now()
        let elapsed = now - start
        guard elapsed >= 1 else { return }
        state.withLock { s in
            guard now - s.lastDraw >= 0.1 || fraction >= 1 else { return }
            s.lastDraw = now
            s.drawn = true
            let f = min(max(fraction, 0), 1)
            // Narrower with details, so that the line fits 80 columns.
            let width = detail == nil ? 30 : 20
            let filled = Int(f * Double(width))
            let eta = f > 0 ? elapsed * (1 - f) / f : 0
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            writeStderr("\r\(label) [\(bar)] \(Int(f * 100))%  " + (detail.map { $0 + "  " } ?? "") + "ETA \(formatSeconds(eta))   ")
        }
    }

    /// A status line in place of the bar, drawn at once (cut to 100 characters).
    func show(_ text: String) {
        guard enabled else { return }
        let fitted = text.count > 100 ? String(text.prefix(99)) + "…" : text
        state.withLock { s in
            writeStderr("\r\u{1B}[K" + fitted)
            s.drawn = true
        }
    }

    /// A line above the bar (printed on stderr whatever the terminal).
    func note(_ text: String) {
        state.withLock { s in
            writeStderr((s.drawn ? "\r\u{1B}[K" : "") + text + "\n")
        }
    }

    func finish() {
        state.withLock { s in
            if s.drawn { writeStderr("\r\u{1B}[K") }
        }
    }
}

/// The line every command prints when its output is written:
/// `wrote TARGET (part, part, ..., backend, time, kernels ...)`.
struct RunSummary {
    private let target: String
    private var parts: [String] = []

    init(wrote target: String) { self.target = target }

    mutating func add(_ part: String) { parts.append(part) }

    /// The kernels' time where the backend is OpenCL (the Swift path has none).
    mutating func kernels(_ seconds: Double, on backend: Backend, places: Int = 1, suffix: String = "") {
        if backend.isOpenCL { parts.append("kernels \(fmt(seconds * 1000, places)) ms" + suffix) }
    }

    /// The image's size, or for a shard its rows of it.
    mutating func size(_ size: String, shard: StillShard?) {
        parts.append((shard.map { "shard \($0.shard): rows \($0.rows.lowerBound)-\($0.rows.upperBound - 1) of " } ?? "") + size)
    }

    /// Text joined to the last part (`; video out.mp4`).
    mutating func extend(_ text: String) {
        if parts.isEmpty { parts.append(text) } else { parts[parts.count - 1] += text }
    }

    var line: String { "wrote \(target) (" + parts.joined(separator: ", ") + ")" }
}

func formatSeconds(_ s: Double) -> String {
    if s < 60 { return "\(Int(s.rounded()))s" }
    return "\(Int(s) / 60)m\(Int(s) % 60)s"
}

/// Fixed-point formatting without Foundation.
func fmt(_ x: Double, _ digits: Int = 2) -> String { Format.fixed(x, digits) }
