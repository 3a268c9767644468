import ArgumentParser
import GlintCore
import GlintCL
import GlintWorkloads

/// `--then PASS [options]`: chain passes (`ChainPass`) that follow a render in the same process, on the same
/// device and context, handing device buffers on without a host round trip.
enum Chain {
    /// The passes named on the command line, in order (set once, before the command runs).
    nonisolated(unsafe) static var passes: [any ChainPass] = []

    static let passNames = ["blur", "iso"]

    /// Splits `args` (without the program name) at each `--then`: returns the render command's
    /// arguments and sets `passes`. An `-o`/`--output` given after a pass is the render's output.
    static func split(_ args: [String]) throws -> [String] {
        guard let first = args.firstIndex(of: "--then") else { return args }
        var command = Array(args[..<first])
        var segments: [[String]] = []
        for arg in args[first...] {
            if arg == "--then" { segments.append([]) } else { segments[segments.count - 1].append(arg) }
        }
        var parsed: [any ChainPass] = []
        for var segment in segments {
            // The render's own options (output, device, quiet, verbose) may come after a pass.
            var i = 0
            while i < segment.count {
                let arg = segment[i]
                if ["-o", "--output", "--device"].contains(arg), i + 1 < segment.count {
                    command += [arg, segment[i + 1]]
                    segment.removeSubrange(i...(i + 1))
                } else if arg.hasPrefix("--output=") || arg.hasPrefix("--device=") || ["-q", "--quiet", "-v", "--verbose"].contains(arg) {
                    command.append(segment.remove(at: i))
                } else {
                    i += 1
                }
            }
            guard let name = segment.first else { throw ValidationError("--then needs a pass: \(passNames.joined(separator: ", "))") }
            let options = Array(segment.dropFirst())
            switch name {
            case "iso":
                let stage: IsoStage
                do { stage = try IsoStage.parse(options) } catch { throw ValidationError("--then iso: " + usageMessage(for: error, type: IsoStage.self, help: nil)) }
                parsed.append(IsoPass(depth: stage.depth, cornerRadius: stage.cornerRadius, supersampling: stage.supersampling))
            case "blur":
                let stage: BlurStage
                do { stage = try BlurStage.parse(options) } catch { throw ValidationError("--then blur: " + usageMessage(for: error, type: BlurStage.self, help: nil)) }
                parsed.append(BlurPass(job: try stage.job()))
            default:
                throw ValidationError("--then \(name): unknown pass (passes: \(passNames.joined(separator: ", ")))")
            }
        }
        passes = parsed
        return command
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

    func validate() throws {
        guard depth.isFinite && depth >= 0 && depth <= 4096 else { throw ValidationError("--depth must be in [0, 4096] (got \(depth))") }
        guard cornerRadius.isFinite && cornerRadius >= 0 else { throw ValidationError("--corner-radius must be 0 or more (got \(cornerRadius))") }
        guard (1...8).contains(supersampling) else { throw ValidationError("--ss must be 1 to 8 (got \(supersampling))") }
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

    func job() throws -> BlurJob {
        let job = BlurJob(sigma: sigma, method: method, border: border)
        do { try job.validate() } catch { throw ValidationError(error.message) }
        return job
    }

    func validate() throws { _ = try job() }
}
