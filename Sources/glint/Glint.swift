import ArgumentParser

import GlintCore
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
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
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
              glint bench fractal
            """,
        version: GlintVersion.string,
        subcommands: [Devices.self, Fractal.self, RTOW.self, Bench.self])
}

enum GlintVersion {
    static let string = "0.1.0"
}
