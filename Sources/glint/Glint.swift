import ArgumentParser

@main
struct Glint: AsyncParsableCommand {
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
        subcommands: [Devices.self, Fractal.self, Bench.self])
}

enum GlintVersion {
    static let string = "0.1.0"
}
