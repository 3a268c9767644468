import ArgumentParser
import GlintCore
import GlintCL
import GlintWorkloads

/// `--then PASS [options]`: chain passes (`ChainPass`) that follow a render in the same process, on the same
/// device and context, handing device buffers on without a host round trip.
enum Chain {
    /// The passes named on the command line, in order, while the render command runs
    /// (`Chain.$passes.withValue(...)`).
    @TaskLocal static var passes: [any ChainPass] = []

    static var passNames: [String] { Workloads.passes.map { $0.workload.name } }

    /// The passes for a run summary: `blur sigma 3, then iso`.
    static var summary: String { passes.map(\.summary).joined(separator: ", then ") }

    /// Splits `args` (without the program name) at each `--then`: returns the render command's
    /// arguments and the passes. An `-o`/`--output` given after a pass is the render's output.
    static func split(_ args: [String]) throws -> (command: [String], passes: [any ChainPass]) {
        guard let first = args.firstIndex(of: "--then") else { return (args, []) }
        var command = Array(args[..<first])
        var segments: [[String]] = []
        for arg in args[first...] {
            if arg == "--then" { segments.append([]) } else { segments[segments.count - 1].append(arg) }
        }
        var parsed: [any ChainPass] = []
        for var segment in segments {
            // The render's own options (output, device, PNG compression, quiet, verbose) may come
            // after a pass.
            var i = 0
            while i < segment.count {
                let arg = segment[i]
                if ["-o", "--output", "--device", "--png-compression"].contains(arg), i + 1 < segment.count {
                    command += [arg, segment[i + 1]]
                    segment.removeSubrange(i...(i + 1))
                } else if arg.hasPrefix("--output=") || arg.hasPrefix("--device=") || arg.hasPrefix("--png-compression=") || ["-q", "--quiet", "-v", "--verbose"].contains(arg) {
                    command.append(segment.remove(at: i))
                } else {
                    i += 1
                }
            }
            guard let name = segment.first else { throw ValidationError("--then needs a pass: \(passNames.joined(separator: ", "))") }
            guard let pass = Workloads.passes.first(where: { $0.workload.name == name }) else {
                throw ValidationError("--then \(name): unknown pass (passes: \(passNames.joined(separator: ", ")))")
            }
            parsed.append(try pass.pass(Array(segment.dropFirst())))
        }
        return (command, parsed)
    }

    /// Parses a pass's options as `type`; a usage error names the pass.
    static func parse<Options: ParsableArguments>(_ options: [String], as type: Options.Type, pass name: String) throws -> Options {
        do { return try Options.parse(options) } catch {
            throw ValidationError("--then \(name): " + usageMessage(for: error, type: Options.self, help: nil))
        }
    }

    /// Renders a chain's first image on `backend` (on the Swift path by `host`; on OpenCL into a
    /// device buffer by `device`, which stays there for the passes), runs the passes on it, and
    /// returns the final pixels and the kernel time of all.
    static func run(width: Int, height: Int, on backend: Backend, host: () async throws -> Image8,
                    device: (ComputeContext) throws -> (image: Buffer<UInt8>, kernelSeconds: Double)) async throws -> (Image8, Double) {
        let first: StageImage, seconds: Double
        switch backend {
        case .cpu:
            (first, seconds) = (.host(try await host()), 0)
        case .opencl(let cc):
            let r = try device(cc)
            (first, seconds) = (.device(r.image, width: width, height: height), r.kernelSeconds)
        }
        let (image, passSeconds) = try await run(first, on: backend)
        return (image, seconds + passSeconds)
    }

    /// Runs the passes on `image` (on `backend`) and returns the final pixels and the passes' kernel time.
    static func run(_ image: StageImage, on backend: Backend) async throws -> (Image8, Double) {
        var current = image
        var kernels = 0.0
        for pass in passes {
            let (next, seconds) = try await pass.apply(current, on: backend)
            current = next
            kernels += seconds
        }
        let queue: CommandQueue? = if case .opencl(let cc) = backend { cc.queue } else { nil }
        return (try current.hostImage(queue: queue), kernels)
    }
}

/// The isometric pass's options: `glint iso` and `--then iso` share them.
struct IsoStage: ParsableArguments {
    @Option(parsing: .unconditional, help: "Extrusion depth in output pixels, straight down (0 to 4096). (default: 20)",
            transform: number("--depth", Limits.isoDepth))
    var depth = 20.0
    @Option(name: .customLong("corner-radius"), parsing: .unconditional,
            help: "Corner radius in input pixels (0: square corners; at most half the image's shorter side). (default: 0)",
            transform: number("--corner-radius", Limits.cornerRadius))
    var cornerRadius = 0.0
    @Option(name: .customLong("ss"), parsing: .unconditional, help: "Anti-aliasing: N x N samples per output pixel (1 to 8). (default: 4)",
            transform: wholeNumber("--ss", Limits.isoSupersampling))
    var supersampling = 4

    /// The options as a job's settings (the source comes later).
    var settings: IsoJob {
        var job = IsoJob(sourceWidth: 1, sourceHeight: 1)
        job.depth = depth
        job.cornerRadius = cornerRadius
        job.supersampling = supersampling
        return job
    }
}

/// The blur pass's options: `glint blur` and `--then blur` share them.
struct BlurStage: ParsableArguments {
    @Option(parsing: .unconditional, help: "Standard deviation of the Gaussian, in pixels (above 0, at most \(Format.short(BlurJob.maxSigma))). (default: 2)",
            transform: number("--sigma", Limits.sigma))
    var sigma: Double = 2
    @Option(help: "exact, recursive or auto. (default: auto)", transform: choice("--method", BlurMethod.allCases, name: { $0.rawValue }))
    var method = BlurMethod.auto
    @Option(help: "What lies past the edges: reflect101, clamp, wrap or zero. (default: reflect101)",
            transform: choice("--border", BorderMode.allCases, name: { $0.rawValue }))
    var border = BorderMode.reflect101

    var job: BlurJob { BlurJob(sigma: sigma, method: method, border: border) }

    func validate() throws {
        do { try job.validate() } catch { throw error.usage }
    }
}
