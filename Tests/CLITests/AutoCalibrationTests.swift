// `glint devices --calibrate` and the choices `auto` makes from a calibration, in the
// "glint command line" suite (FractalCLITests.swift) whose sandboxes they use.

import Foundation
import GlintCore
@testable import GlintWorkloads
import Testing

extension CLITests {
    static let sampleCalibration = AutoCalibration(swiftFloat: 10e9, openCLFloat: 20e9, swiftDouble: 6e9, openCLDouble: 5e9,
                                                   openCLStartMs: 50, device: "a CPU device", written: 1_800_000_000)

    @Test("a GPU calibration's file reads back whole, only with its fingerprint; auto reads a job's time off two sizes and weighs start-up")
    func gpuCalibrationFileAndChoice() throws {
        // Blur, 8-bit recursive: the GPU 10x faster once open, but 300 ms to start. 8-bit exact:
        // the Swift path faster at 1080p, the GPU at 4K. Pulse: the Swift path always.
        let hd = 2_073_600.0, uhd = 4 * 2_073_600.0
        let c = GPUCalibration(entries: [
            "blur/u8-recursive": .init([.init(work: hd, swiftSeconds: 0.004, gpuSeconds: 0.0004), .init(work: uhd, swiftSeconds: 0.016, gpuSeconds: 0.0016)]),
            "blur/u8-exact": .init([.init(work: uhd, swiftSeconds: 0.040, gpuSeconds: 0.010), .init(work: hd, swiftSeconds: 0.002, gpuSeconds: 0.004)]),
            "pulse": .init([.init(work: hd, swiftSeconds: 0.0005, gpuSeconds: 0.001), .init(work: uhd, swiftSeconds: 0.002, gpuSeconds: 0.004)]),
        ], startMs: 300, device: "a GPU", written: 1_800_000_000)
        let text = c.text(fingerprint: "f1")
        #expect(GPUCalibration.parse(text, fingerprint: "f1") == c)
        #expect(GPUCalibration.parse(text, fingerprint: "f2") == nil)
        let lines = text.split(separator: "\n").map(String.init)
        for k in 2..<lines.count where !lines[k].hasPrefix("kind") {
            var damaged = lines
            damaged.remove(at: k)
            #expect(GPUCalibration.parse(damaged.joined(separator: "\n"), fingerprint: "f1") == nil, "without line \(k)")
        }
        for bad in ["kind pulse 0 0.004 0.0004", "kind pulse 2073600 nan 0.0004", "kind pulse 2073600 0.004", "kind warp 1 1 1",
                    "kind pulse 2073600 0.004 0.0004 2073600 0.005 0.0005", "start-ms -5"] {
            // Each replaces the pulse line, or the line of its own key.
            let key = bad.hasPrefix("kind") ? "kind pulse" : String(bad.split(separator: " ")[0])
            let damaged = lines.map { $0.hasPrefix(key) ? bad : $0 }
            #expect(GPUCalibration.parse(damaged.joined(separator: "\n"), fingerprint: "f1") == nil, "\(bad)")
        }
        // An older file's format is not read.
        #expect(GPUCalibration.parse(text.replacingOccurrences(of: "CALIBRATION 2", with: "CALIBRATION 1"), fingerprint: "f1") == nil)
        // Open, or the work unknown: the faster path. A single command: start-up counts, so a 1080p
        // blur (4 ms on the Swift path against 0.4 + 300 on the GPU) goes to the Swift path and
        // one of 100 times the pixels (400 against 340 ms) to the GPU, as do 100 such frames.
        #expect(c.prefersGPU(.blur, variant: "u8-recursive", work: hd, gpuOpen: true))
        #expect(c.prefersGPU(.blur, variant: "u8-recursive", work: nil, gpuOpen: false))
        #expect(!c.prefersGPU(.blur, variant: "u8-recursive", work: hd, gpuOpen: false))
        #expect(c.prefersGPU(.blur, variant: "u8-recursive", work: hd * 100, gpuOpen: false))
        #expect(c.prefersGPU(.blur, variant: "u8-recursive", work: hd, repeats: 100, gpuOpen: false))
        #expect(!c.prefersGPU(.pulse, work: nil, gpuOpen: true))
        // The exact blur's time is read off both sizes: the Swift path below about 1.19x 1080p
        // (where the lines cross: 2 + 38 t = 4 + 6 t at t = 1/16 of the way to 4K), the GPU above;
        // proportional outside them.
        #expect(!c.prefersGPU(.blur, variant: "u8-exact", work: hd, gpuOpen: true))
        #expect(!c.prefersGPU(.blur, variant: "u8-exact", work: hd * 1.1, gpuOpen: true))
        #expect(c.prefersGPU(.blur, variant: "u8-exact", work: hd * 1.3, gpuOpen: true))
        #expect(c.prefersGPU(.blur, variant: "u8-exact", work: uhd * 4, gpuOpen: true))
        #expect(!c.prefersGPU(.blur, variant: "u8-exact", work: hd / 4, gpuOpen: true))
        let t = try #require(c.seconds(.blur, variant: "u8-exact", work: uhd * 2, gpuOpen: true))
        #expect(abs(t.swift - 0.080) < 1e-12 && abs(t.gpu - 0.020) < 1e-12, "\(t)")
        // Below the first point the line through the first two holds, not proportion: a GPU's
        // launches and copies stay. Proportion would make a tiny job 0.2 against 0.15 ms and
        // send it to the GPU; the line says 0.8 against 1.05 ms.
        let f = GPUCalibration(entries: ["fractal": .init([.init(work: 100, swiftSeconds: 0.002, gpuSeconds: 0.0015),
                                                           .init(work: 400, swiftSeconds: 0.006, gpuSeconds: 0.003)])],
                               startMs: 0, device: "a GPU", written: 1)
        #expect(!f.prefersGPU(.fractal, work: 10, gpuOpen: true))
        #expect(f.prefersGPU(.fractal, work: 100, gpuOpen: true))
        let tiny = try #require(f.seconds(.fractal, work: 10, gpuOpen: true))
        #expect(abs(tiny.swift - 0.0008) < 1e-12 && abs(tiny.gpu - 0.00105) < 1e-12, "\(tiny)")
        // A variant not measured takes its kind's first measured one; a blur with none, too.
        #expect(c.entry(.blur, variant: "f32-exact") == c.entries["blur/u8-recursive"])
        #expect(c.entry(.blur) == c.entries["blur/u8-recursive"])
        // Kinds without a figure stay on the GPU.
        #expect(c.prefersGPU(.mist, work: 1e12, gpuOpen: false) && c.prefersGPU(.fractalDeep, work: nil, gpuOpen: true))
    }

    @Test("a calibration's file reads back whole, and only with its fingerprint and every field sane")
    func calibrationFile() throws {
        let c = Self.sampleCalibration
        let text = c.text(fingerprint: "f1")
        #expect(AutoCalibration.parse(text, fingerprint: "f1") == c)
        #expect(AutoCalibration.parse(text, fingerprint: "f2") == nil, "another machine's or build's calibration was taken")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // Each line missing, and each rate made unusable, spoils the file.
        for k in 2..<(lines.count - 1) {
            var damaged = lines
            damaged.remove(at: k)
            #expect(AutoCalibration.parse(damaged.joined(separator: "\n"), fingerprint: "f1") == nil, "without line \(k)")
        }
        for bad in ["swift-float 0", "opencl-float -3", "swift-double nan", "opencl-double inf", "opencl-start-ms -1"] {
            let key = bad.split(separator: " ")[0]
            let damaged = lines.map { $0.hasPrefix(key + " ") ? bad : $0 }
            #expect(AutoCalibration.parse(damaged.joined(separator: "\n"), fingerprint: "f1") == nil, "\(bad)")
        }
        #expect(AutoCalibration.parse("GLINT-NO-GPU 1\nf1\n1\n", fingerprint: "f1") == nil)
    }

    @Test("a calibration weighs OpenCL's start-up against the render for a single command, and rates alone inside a process")
    func calibrationDecisions() {
        let c = Self.sampleCalibration   // float: OpenCL twice the Swift path's rate, 50 ms to start
        // Inside a process that has OpenCL open, or with the work unknown: the higher rate.
        #expect(c.prefersOpenCL(double: false, iterations: nil, openCLLoaded: false))
        #expect(c.prefersOpenCL(double: false, iterations: 1e6, openCLLoaded: true))
        #expect(!c.prefersOpenCL(double: true, iterations: nil, openCLLoaded: true), "double: the Swift path's rate is higher")
        // A single command: 1e8 counts take 10 ms on the Swift path against 50 + 5 ms; 1e10 take
        // 1000 ms against 50 + 500 ms. The break-even is at 1e9 (100 ms against 50 + 50).
        #expect(!c.prefersOpenCL(double: false, iterations: 1e8, openCLLoaded: false))
        #expect(c.prefersOpenCL(double: false, iterations: 1e10, openCLLoaded: false))
        #expect(!c.prefersOpenCL(double: false, iterations: 0.9e9, openCLLoaded: false))
        #expect(c.prefersOpenCL(double: false, iterations: 1.1e9, openCLLoaded: false))
        // Where OpenCL's rate is lower, never.
        #expect(!c.prefersOpenCL(double: true, iterations: 1e12, openCLLoaded: false))
        let t = c.seconds(iterations: 1e9, double: false, startUp: true)
        #expect(abs(t.swift - 0.1) < 1e-12 && abs(t.openCL - 0.1) < 1e-12)
    }

    @Test("a fractal job's work is estimated from a render at one eighth of its size")
    func calibrationEstimate() async throws {
        for formula in [FractalFormula.mandelbrot, .julia, .burningShip] {
            var job = FractalJob(formula: formula)
            job.width = 320
            job.height = 240
            job.maxIterations = 300
            let full = try await FractalRenderer.render(job, on: .cpu, outputs: FractalRenderer.Outputs(iterations: true))
            let actual = Double(try #require(full.iterations))
            let estimate = try await AutoCalibration.estimateIterations(job)
            #expect(abs(estimate / actual - 1) < 0.2, "\(formula): estimated \(estimate), rendered \(actual)")
        }
    }

    @Test("glint devices --calibrate measures both paths, and auto follows it for fractals (--verbose says why)")
    func calibrateCommand() throws {
        try withSandbox { box in
            let file = box.cache.appendingPathComponent("auto-calibration").path
            let r = try box.run(["devices", "--calibrate", "--size", "96x64"], timeout: 600)
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains("float:  Swift path") && r.stdout.contains("OpenCL start-up:") && r.stdout.contains(file), "\(r)")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let lines = text.split(separator: "\n").map(String.init)
            #expect(lines.first == "GLINT-AUTO-CALIBRATION 1", "\(text)")
            func value(_ key: String) throws -> Double {
                try #require(lines.first { $0.hasPrefix(key + " ") }.flatMap { Double($0.dropFirst(key.count + 1)) }, "\(key) in\n\(text)")
            }
            let calibration = AutoCalibration(swiftFloat: try value("swift-float"), openCLFloat: try value("opencl-float"),
                                              swiftDouble: try value("swift-double"), openCLDouble: try value("opencl-double"),
                                              openCLStartMs: try value("opencl-start-ms"), device: "", written: 0)
            #expect(calibration.swiftFloat > 0 && calibration.openCLStartMs >= 0, "\(text)")
            // glint devices leaves the no-GPU memo; then a single fractal command estimates its
            // work and runs where the calibration says it finishes sooner.
            #expect(try box.run(["devices"]).status == 0)
            let job = ["fractal", "mandelbrot", "--size", "64x48", "-o", "f.png", "-v"]
            let f = try box.run(job)
            #expect(f.status == 0 && f.stdout.contains("by this machine's calibration"), "\(f)")
            let swift = f.stdout.contains("auto chose the Swift path")
            #expect(swift == f.stdout.contains("cpu (Swift"), "the line and the backend disagree: \(f)")
            // The same job with a calibration whose OpenCL device is far faster and starts at once
            // goes to OpenCL; one whose OpenCL start-up is a minute stays on the Swift path.
            let fingerprint = lines[1]
            var fast = calibration
            (fast.openCLFloat, fast.openCLStartMs) = (calibration.swiftFloat * 1000, 0)
            try fast.text(fingerprint: fingerprint).write(toFile: file, atomically: true, encoding: .utf8)
            let onCL = try box.run(job)
            #expect(onCL.status == 0 && onCL.stdout.contains("auto chose the OpenCL CPU device") && onCL.stdout.contains("opencl ("), "\(onCL)")
            var slow = calibration
            (slow.openCLFloat, slow.openCLStartMs) = (calibration.swiftFloat * 2, 59_000)
            try slow.text(fingerprint: fingerprint).write(toFile: file, atomically: true, encoding: .utf8)
            let onSwift = try box.run(job)
            #expect(onSwift.status == 0 && onSwift.stdout.contains("auto chose the Swift path") && onSwift.stdout.contains("cpu (Swift")
                    && onSwift.stdout.contains("million escape counts"), "the estimate decided: \(onSwift)")
            // Where the Swift path's rate is the higher, no estimate is made: the rates decide, and
            // double jobs go by the double rates.
            var swiftFaster = calibration
            (swiftFaster.swiftFloat, swiftFaster.openCLFloat) = (2e9, 1e9)
            (swiftFaster.swiftDouble, swiftFaster.openCLDouble, swiftFaster.openCLStartMs) = (1e9, 1e12, 0)
            try swiftFaster.text(fingerprint: fingerprint).write(toFile: file, atomically: true, encoding: .utf8)
            let byRate = try box.run(job)
            #expect(byRate.status == 0 && byRate.stdout.contains("auto chose the Swift path") && byRate.stdout.contains("Giter/s")
                    && !byRate.stdout.contains("escape counts"), "\(byRate)")
            let double = try box.run(job + ["--precision", "double"])
            #expect(double.status == 0 && double.stdout.contains("auto chose the OpenCL CPU device") && double.stdout.contains("opencl ("), "\(double)")
            // Other kinds keep the table; --device cpu is never second-guessed.
            let pinned = try box.run(job + ["--device", "cpu"])
            #expect(pinned.status == 0 && !pinned.stdout.contains("calibration"), "\(pinned)")
            // A calibration of another machine or build (another fingerprint) is not used.
            try slow.text(fingerprint: "another").write(toFile: file, atomically: true, encoding: .utf8)
            let other = try box.run(job)
            #expect(other.status == 0 && !other.stdout.contains("calibration"), "\(other)")
            // --size goes with --calibrate only, --json not with it; without a cache folder there is
            // nowhere to keep a calibration, which is said before anything is measured.
            let misuse = try box.run(["devices", "--size", "64x64"])
            #expect(misuse.status != 0 && misuse.stderr.contains("--size goes with --calibrate"), "\(misuse)")
            let json = try box.run(["devices", "--calibrate", "--json"])
            #expect(json.status != 0 && json.stderr.contains("--json"), "\(json)")
            let off = try box.run(["devices", "--calibrate", "--size", "96x64"], env: ["GLINT_KERNEL_CACHE": "off"])
            #expect(off.status != 0 && off.stderrLines.count == 1 && off.stderr.contains("GLINT_CACHE_DIR") && !off.stdout.contains("float:"), "\(off)")
            // No temporary folder of the start-up measurement is left behind.
            let left = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("glint-calibrate-") }
            #expect(left.isEmpty, "\(left)")
        }
    }
}
