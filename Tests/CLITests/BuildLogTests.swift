// --verbose shows what the OpenCL compiler said about a program, even when the build succeeded.

import Foundation
import GlintCore
import Testing

@Suite("build logs", .serialized)
struct BuildLogTests {
    /// The repository's Kernels/ folder (this file is Tests/CLITests/BuildLogTests.swift).
    static let kernels = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Kernels")

    static let marker = "glint build-log check"

    /// A copy of Kernels/ in the sandbox whose every .cl file starts with a `#warning` directive:
    /// built through GLINT_KERNELS, each program builds, and its log holds the warning.
    static func warningKernels(_ s: Sandbox) throws -> [String: String?] {
        let copy = s.root.appendingPathComponent("kernels")
        try FileManager.default.copyItem(at: kernels, to: copy)
        for name in try FileManager.default.contentsOfDirectory(atPath: copy.path) where name.hasSuffix(".cl") {
            let file = copy.appendingPathComponent(name)
            let source = try String(contentsOf: file, encoding: .utf8)
            try ("#warning \"\(marker)\"\n" + source).write(to: file, atomically: true, encoding: .utf8)
        }
        // PoCL prints "N warnings generated." on stderr itself while compiling; a PoCL cache of
        // this sandbox's own keeps the shared one free of these programs.
        return ["GLINT_KERNELS": copy.path, "POCL_CACHE_DIR": s.root.appendingPathComponent("pocl").path]
    }

    /// Every command that builds kernels, fractal and rtow with and without `--then`.
    static let commands: [(name: String, args: [String], kernel: String)] = [
        ("fractal", ["fractal", "julia", "--smooth", "--size", "16x12", "-o", "f.png"], "fractal.cl"),
        ("fractal --then", ["fractal", "julia", "--size", "16x12", "-o", "c.png", "--then", "iso", "--depth", "4"], "isometric.cl"),
        ("rtow", ["rtow", "--size", "16x8", "--spp", "1", "-o", "r.png"], "raytrace.cl"),
        ("rtow --then", ["rtow", "--size", "16x8", "--spp", "1", "-o", "rc.png", "--then", "blur", "--sigma", "1"], "blur.cl"),
        ("blur", ["blur", "in.png", "-o", "b.png"], "blur.cl"),
        ("iso", ["iso", "in.png", "-o", "i.png"], "isometric.cl"),
        ("pulse", ["pulse", "--frames", "1", "--size", "16x16", "-o", "p"], "pulse.cl"),
        ("mist", ["mist", "--input", "in.png", "--frames", "1", "-o", "m"], "blur.cl"),
    ]

    @Test("--verbose prints the build log of a program the compiler warned about, for every command")
    func verboseShowsTheLogEverywhere() throws {
        try withSandbox { s in
            let env = try Self.warningKernels(s)
            let made = try s.run(["fractal", "mandelbrot", "--size", "16x16", "-o", "in.png", "--device", "cpu", "-q"])
            try #require(made.status == 0, "\(made)")
            for c in Self.commands {
                let r = try s.run(c.args + ["--device", "opencl", "--verbose"], env: env)
                #expect(r.status == 0, "\(c.name): \(r)")
                #expect(r.stdout.contains("build log of \(c.kernel) (options: "), "\(c.name): \(r)")
                #expect(r.stdout.contains(Self.marker), "\(c.name): \(r)")
            }
        }
    }

    @Test("without --verbose, and with -q, the build log is not printed")
    func logOnlyUnderVerbose() throws {
        try withSandbox { s in
            let env = try Self.warningKernels(s)
            let args = ["pulse", "--frames", "1", "--size", "8x8", "--device", "opencl"]
            // Built (and logged) first, so the runs below have the same log at hand.
            let verbose = try s.run(args + ["-o", "a", "--verbose"], env: env)
            #expect(verbose.status == 0, "\(verbose)")
            #expect(verbose.stdout.contains("build log of pulse.cl"), "\(verbose)")
            for extra in [[], ["-q"]] {
                let r = try s.run(args + ["-o", "b"] + extra, env: env)
                #expect(r.status == 0, "\(r)")
                #expect(!r.stdout.contains("build log") && !r.stdout.contains(Self.marker), "\(extra): \(r)")
                #expect(!r.stderr.contains(Self.marker), "\(extra): \(r)")
            }
        }
    }

    @Test("the shipped kernels build without a word: --verbose prints no build log")
    func shippedKernelsAreQuiet() throws {
        try withSandbox { s in
            let r = try s.run(["fractal", "julia", "--smooth", "--size", "8x8", "-o", "c.png", "--device", "opencl", "--verbose"])
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains("programs: "), "\(r)")
            #expect(!r.stdout.contains("build log"), "\(r)")
        }
    }
}
