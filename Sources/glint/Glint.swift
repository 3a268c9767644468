import ArgumentParser

import GlintCore
import GlintKernels
import GlintWorkloads
#if canImport(Glibc)
import Glibc
#endif

@main
struct Glint: AsyncParsableCommand {
    /// Refuses clearly, before any SIMD code runs, on a CPU this build cannot use.
    static func main() async {
        if let reason = CPUFeatures.unsupportedReason {
            writeStderr("error: \(reason)\n")
            Glibc.exit(1)
        }
        // A video encoder that dies must give an error, not kill glint with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        var arguments = Array(CommandLine.arguments.dropFirst())
        do {
            let passes: [any ChainPass]
            do { (arguments, passes) = try Chain.split(arguments) } catch let e as ValidationError {
                writeStderr("error: \(e.message)\n")
                Glibc.exit(2)
            }
            // The passes are known while the render's options are checked and while it runs.
            try await Chain.$passes.withValue(passes) {
                var command = try parseAsRoot(arguments)
                if !passes.isEmpty && !(command is any PassSource) {
                    let sources = Workloads.all.filter { $0 is any PassSource.Type }.map { $0.workload.name }
                    writeStderr("error: --then passes follow a render: glint \(sources.joined(separator: " or ")) ... --then \(Chain.passNames.joined(separator: "|")) ...\n")
                    Glibc.exit(2)
                }
                if var asyncCommand = command as? AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
            }
        } catch {
            // Usage errors exit with 2 (as diff and cmp do), so scripts can tell them from a
            // failed job (1); compare's "outside tolerance" is also 1. A usage error is one line.
            if exitCode(for: error) == .validationFailure {
                writeStderr("error: " + usageMessage(for: error, type: Glint.self, help: helpHint(arguments)) + "\n")
                Glibc.exit(2)
            }
            exit(withError: error)
        }
    }

    /// `glint <command> --help` for the command named first in `arguments` (else `glint --help`).
    static func helpHint(_ arguments: [String]) -> String {
        let names = configuration.subcommands.map { $0._commandName }
        if let first = arguments.first, names.contains(first) { return "glint \(first) --help" }
        return "glint --help"
    }

    static let configuration = CommandConfiguration(
        commandName: "glint",
        abstract: "GPU rendering through OpenCL, with a Swift CPU path that gives matching output.",
        discussion: """
            Every workload runs on the Swift CPU path or on an OpenCL device, chosen with \
            --device (auto, cpu, opencl, opencl:N, gpu) or the GLINT_DEVICE environment variable. \
            `glint devices` lists what this machine has.

            Examples:
              glint devices
              glint fractal mandelbrot -o mandelbrot.png
              glint fractal julia --c -0.8,0.156 --palette ocean --smooth -o julia.png
              glint rtow --scene cover --spp 100 -o cover.png
              glint blur photo.png -o soft.png --sigma 4
              glint mist --input photo.png -o frames --frames 120
              glint iso card.png -o card-iso.png --depth 30 --corner-radius 24
              glint pulse -o pulse --frames 240 --ramp hue=0:1
              glint fractal julia --smooth --then blur --sigma 3 --then iso --depth 30 -o chain.png
              glint fractal mandelbrot --frames 120 --ramp zoom=1:1e4 -o zoom --video zoom.mp4
              glint zoomvideo strip.png --size 1920x1080 --seconds 60 --video zoom.mp4   (strip.png from glint fractal --exp-map)
              glint compare --a cpu --b opencl fractal julia --size 800x600
              glint bench --quick
              glint fractal mandelbrot --size 7680x4320 --shard auto -o tiles/part-{shard}.png   (one Slurm array task)
              glint merge tiles -o mandelbrot-8k.png

            Exit status: 0 success, 1 failure (or, for compare and bench, a result outside its \
            tolerance), 2 a usage error.
            """,
        version: "\(GlintBuild.version) (\(GlintBuild.commit.prefix(12)))",
        subcommands: [Devices.self] + Workloads.all.map { $0 as ParsableCommand.Type } + [Merge.self, Compare.self, Bench.self, Locate.self, ZoomVideo.self] + serveCommands)
}

#if Serve
let serveCommands: [ParsableCommand.Type] = [Serve.self]
#else
let serveCommands: [ParsableCommand.Type] = []
#endif
