// The simulated-GPU lane: every kernel of every workload runs on Oclgrind (Debian's `oclgrind`,
// an OpenCL device of type GPU that checks every memory access, work-group race, uninitialised
// value and API call) at small sizes, through the CLI, against the Swift CPU path.
//
// Each case is a child `glint` whose ICD loader sees only Oclgrind (OCL_ICD_VENDORS points at a
// vendors folder holding `oclgrind.icd`), so `--device gpu` is the simulator. A case passes when
// - the child exits 0: `glint compare` found the outputs within the workload's docs/DESIGN.md
//   tolerance against the Swift path (or, for a chain, the two PNGs within 1 level), and
// - its stderr holds no Oclgrind report (`oclgrindReports`): any report fails the case.
// PoCL runs the kernels as CPU code, where an out-of-bounds read can land in mapped memory and a
// work-group race can go unseen; this lane is where those show. It never skips: without the
// simulator it fails and says what to install.

import Foundation
import GlintWorkloads
import Testing

/// The vendors folder that makes Oclgrind the only OpenCL platform of a child process.
private let oclgrindVendors: Result<String, LocateError> = {
    let library = "/usr/lib/oclgrind/liboclgrind-rt-icd.so"
    guard FileManager.default.fileExists(atPath: library) else {
        return .failure(LocateError(message: "\(library) not found: install Debian's `oclgrind` package (the simulated-GPU lane needs it)"))
    }
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("glint-oclgrind-vendors-\(getpid())")
    do {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data((library + "\n").utf8).write(to: dir.appendingPathComponent("oclgrind.icd"))
    } catch {
        return .failure(LocateError(message: "cannot write the Oclgrind vendors folder \(dir.path): \(error)"))
    }
    return .success(dir.path)
}()

/// The child's environment: Oclgrind alone, with its memory-access, data-race and API checks
/// on, and its uninitialised-value checker when asked for.
///
/// That checker (OCLGRIND_UNINITIALIZED, experimental in Oclgrind 21.10) runs only in single-run
/// cases (`uninitializedCases`), for two faults of its own, both seen here:
/// - It keeps a released buffer's shadow size when the simulator hands the buffer's number to a
///   new, larger buffer, so a second render in one process reads "uninitialised" memory that its
///   first kernel wrote: `glint blur --repeat-runs 1` of a 4x2 image reported every load of the
///   intermediate image past byte 40 in blur_exact_cols, and 40 bytes is exactly the size of the
///   column map the first blur had released. `glint compare` renders twice, so its cases run
///   without the checker (some of them crashed in it instead).
/// - It crashes the process (SIGSEGV in `Uninitialized::instructionExecuted`, a memcpy) at the
///   first `shufflevector` whose mask has undefined lanes, which Clang makes of a float3 widened
///   to float4 (`<4 x i32> <i32 0, i32 1, i32 2, i32 undef>`): the ray tracer, the isometric
///   kernel and fractal_color (the colour pass of smooth and supersampled renders).
private func oclgrindEnvironment(uninitialized: Bool = false) throws -> [String: String?] {
    [
        "OCL_ICD_VENDORS": try oclgrindVendors.get(),
        "OCL_ICD_FILENAMES": nil,
        "OCLGRIND_CHECK_API": "1",
        "OCLGRIND_DATA_RACES": "1",
        "OCLGRIND_UNINITIALIZED": uninitialized ? "1" : nil,
        // Memory access checks are always on; keep the simulator's other options at their defaults.
        "OCLGRIND_QUICK": nil,
        "OCLGRIND_PLUGINS": nil,
    ]
}

/// Oclgrind's diagnostics in a child's stderr, one string per distinct report (its headline
/// without the address, its kernel and its instruction) with how often it came. Every report of
/// the simulator (invalid access, data race, uninitialised value, work-group divergence, API
/// error) carries a `Kernel:` line or the runtime's "Oclgrind" banner.
func oclgrindReports(_ stderr: String) -> [String] {
    let lines = RunResult.lines(stderr).map { $0.trimmingCharacters(in: .whitespaces) }
    var counts: [String: Int] = [:]
    var order: [String] = []
    for (i, line) in lines.enumerated() where line.hasPrefix("Kernel: ") || line.contains("Oclgrind") {
        let headline = lines[..<i].last { !$0.isEmpty } ?? ""
        let general = headline.replacing(/0x[0-9a-fA-F]+/, with: "ADDR")
        // The instruction follows the Entity: line, when the report names one.
        let after = Array(lines[(i + 1)...].prefix(2))
        let instruction = after.first?.hasPrefix("Entity:") == true && after.count > 1 ? after[1] : ""
        let key = "\(general) | \(line) | \(instruction.prefix(120))"
        if counts[key] == nil { order.append(key) }
        counts[key, default: 0] += 1
    }
    return order.map { "\($0) (x\(counts[$0]!))" }
}

/// One case of the lane: the arguments after `glint compare --a cpu --b gpu`, a name, and
/// variables added to the child's environment.
struct OclgrindCase: CustomTestStringConvertible, Sendable {
    let name: String
    let args: [String]
    var env: [String: String] = [:]
    var testDescription: String { name }
}

private let fractalFormulas = ["mandelbrot", "julia", "burning-ship", "sierpinski-julia"]

/// Every formula but image-julia, in float and in double; `extra` ends each command line.
private func fractalPrecisionCases(_ extra: [String] = []) -> [OclgrindCase] {
    fractalFormulas.flatMap { formula in
        ["float", "double"].map { precision in
            OclgrindCase(name: "fractal \(formula) \(precision)",
                         args: ["fractal", formula, "--size", "24x16", "--iterations", "64", "--precision", precision] + extra)
        }
    }
}

/// Blur by `method`: an 8-bit image with every border mode, then a float image; `png` and `pfm`
/// end the command lines of each.
private func blurCases(_ method: String, png: [String] = [], pfm: [String] = []) -> [OclgrindCase] {
    ["reflect101", "clamp", "wrap", "zero"].map { border in
        OclgrindCase(name: "blur \(method) \(border) 8-bit",
                     args: ["blur", "in.png", "--sigma", "1.5", "--method", method, "--border", border] + png)
    } + [OclgrindCase(name: "blur \(method) float", args: ["blur", "in.pfm", "--sigma", "1.5", "--method", method] + pfm)]
}

private let fractalCases: [OclgrindCase] = fractalPrecisionCases() + fractalFormulas.map { formula in
    OclgrindCase(name: "fractal \(formula) smooth ss2",
                 args: ["fractal", formula, "--size", "16x12", "--iterations", "48", "--smooth", "--palette", "fire", "--ss", "2"])
} + [
    OclgrindCase(name: "fractal mandelbrot double smooth no-skip",
                 args: ["fractal", "mandelbrot", "--size", "16x12", "--iterations", "48", "--precision", "double", "--smooth",
                        "--no-skip"]),
    OclgrindCase(name: "fractal mandelbrot perturbation 1e30", args: perturbationArgs),
    // 1e1000: the deltas' tiny phase (mantissa and exponent) and the BLA table's long steps.
    OclgrindCase(name: "fractal mandelbrot perturbation 1e1000",
                 args: ["fractal", "mandelbrot", "--size", "12x8", "--iterations", "9000", "--zoom", "1e1000",
                        "--center", DeepLocations.misiurewicz41.re + "," + DeepLocations.misiurewicz41.im]),
    OclgrindCase(name: "fractal julia perturbation 1e20 (interior)", args: juliaPerturbationArgs),
    OclgrindCase(name: "fractal burning-ship perturbation 1e100 ss2", args: burningShipPerturbationArgs),
    // The power step and the derivative (distance and slope colouring), plain (the GPU form: one
    // sample a work-item, float escape blocks) and perturbed.
    OclgrindCase(name: "fractal power 5 slope", args: ["fractal", "mandelbrot", "--power", "5", "--center", "0,0", "--size", "16x12",
                                                       "--iterations", "48", "--color", "slope", "--smooth"]),
    OclgrindCase(name: "fractal julia double de ss2", args: ["fractal", "julia", "--size", "12x8", "--iterations", "60",
                                                             "--precision", "double", "--color", "de", "--ss", "2"]),
    OclgrindCase(name: "fractal power 3 perturbation 1e1000 de",
                 args: ["fractal", "mandelbrot", "--power", "3", "--size", "12x8", "--iterations", "3000", "--zoom", "1e1000",
                        "--color", "de", "--center",
                        DeepLocations.multibrotMisiurewicz[0].re + "," + DeepLocations.multibrotMisiurewicz[0].im]),
    OclgrindCase(name: "fractal exp-map strip to 1e30",
                 args: ["fractal", "mandelbrot", "--exp-map", "8", "--iterations", "300", "--zoom", "1e30",
                        "--center", DeepLocations.misiurewicz41.re + "," + DeepLocations.misiurewicz41.im]),
    // A strip's derivative in each row's own pixels (the row's radius times 2π/columns).
    OclgrindCase(name: "fractal exp-map strip to 1e30 de",
                 args: ["fractal", "mandelbrot", "--exp-map", "8", "--iterations", "300", "--zoom", "1e30", "--color", "de",
                        "--center", DeepLocations.misiurewicz41.re + "," + DeepLocations.misiurewicz41.im]),
    OclgrindCase(name: "fractal mandelbrot perturbation 1e300 slope without BLA",
                 args: ["fractal", "mandelbrot", "--size", "12x8", "--iterations", "4000", "--zoom", "1e300", "--color", "slope",
                        "--no-bla", "--center", DeepLocations.misiurewicz41.re + "," + DeepLocations.misiurewicz41.im]),
] + cpuFormFractalCases

/// The fractal kernels' CPU forms (what PoCL runs: LANES samples or pixels per work-item) on the
/// simulator, by GLINT_KERNEL_LANES: 16 and 4 lanes, the escape loop in float and double and the
/// colour pass's CPU form (each palette but the default evaluated per sample in smooth renders,
/// supersampled and not, a 16-bit image's float colours, and a table's colours), on widths that
/// leave a last vector short of the row.
private let cpuFormFractalCases: [OclgrindCase] = ["16", "4"].flatMap { lanes in
    [
        OclgrindCase(name: "fractal \(lanes) lanes smooth rainbow ss2",
                     args: ["fractal", "mandelbrot", "--size", "23x11", "--iterations", "60", "--smooth", "--palette", "rainbow", "--ss", "2"],
                     env: ["GLINT_KERNEL_LANES": lanes]),
        OclgrindCase(name: "fractal \(lanes) lanes double smooth ocean",
                     args: ["fractal", "julia", "--size", "19x9", "--iterations", "80", "--precision", "double", "--smooth",
                            "--palette", "ocean"], env: ["GLINT_KERNEL_LANES": lanes]),
        OclgrindCase(name: "fractal \(lanes) lanes smooth ss3 fire",
                     args: ["fractal", "burning-ship", "--size", "21x9", "--iterations", "50", "--smooth", "--ss", "3", "--palette", "fire"],
                     env: ["GLINT_KERNEL_LANES": lanes]),
        OclgrindCase(name: "fractal \(lanes) lanes ss2 table",
                     args: ["fractal", "julia", "--size", "21x9", "--iterations", "50", "--ss", "2", "--palette", "tutorial"],
                     env: ["GLINT_KERNEL_LANES": lanes]),
        OclgrindCase(name: "fractal \(lanes) lanes de",
                     args: ["fractal", "mandelbrot", "--size", "21x9", "--iterations", "60", "--color", "de"],
                     env: ["GLINT_KERNEL_LANES": lanes]),
        OclgrindCase(name: "fractal \(lanes) lanes smooth 16-bit grey",
                     args: ["fractal", "mandelbrot", "--size", "21x9", "--iterations", "60", "--smooth", "--palette", "grey",
                            "--bit-depth", "16"], env: ["GLINT_KERNEL_LANES": lanes]),
    ]
}

/// A deep view (1e30 by the seahorse point) rendered by perturbation: perturb_escape (then
/// fractal_color, so not among the uninitialised-value cases).
private let perturbationArgs = ["fractal", "mandelbrot", "--size", "12x8", "--iterations", "200", "--precision", "perturbation",
                                "--center", "-0.743643887037158704752191506114774,0.131825904205311970493132056385139",
                                "--zoom", "1e30", "--smooth", "--palette", "fire"]

/// Julia by perturbation (perturb_julia_escape): the rabbit at its alpha fixed point, 1e20, where
/// interior samples meet escaping ones (DeepZoomFormulaCLITests has the digits).
private let juliaPerturbationArgs = ["fractal", "julia", "--size", "12x8", "--iterations", "600", "--precision", "perturbation",
                                     "--c", DeepZoomFormulaCLITests.rabbitC, "--center", DeepZoomFormulaCLITests.rabbitAlpha,
                                     "--zoom", "1e20"]

/// Burning Ship by perturbation (perturb_burning_ship_escape): below the armada's largest ship,
/// 1e100, supersampled.
private let burningShipPerturbationArgs = ["fractal", "burning-ship", "--size", "12x8", "--iterations", "400",
                                           "--precision", "perturbation", "--center", DeepZoomFormulaCLITests.armadaShip,
                                           "--zoom", "1e100", "--ss", "2"]

private let rtowCases: [OclgrindCase] = ["ch8", "ch10", "cover"].map { scene in
    OclgrindCase(name: "rtow \(scene)",
                 args: ["rtow", "--scene", scene, "--size", "24x16", "--spp", "2", "--depth", "8"])
}

private let imageCases: [OclgrindCase] = ["exact", "recursive"].flatMap { method in
    // A wide kernel too: the exact column tile shrinks to fit 32 KiB of local memory.
    blurCases(method) + [OclgrindCase(name: "blur \(method) sigma 12", args: ["blur", "in.png", "--sigma", "12", "--method", method])]
} + [
    OclgrindCase(name: "mist", args: ["mist", "--input", "in.png", "--frames", "2", "--sigma", "2", "--drops", "6"]),
    OclgrindCase(name: "iso square", args: ["iso", "in.png", "--depth", "4"]),
    OclgrindCase(name: "iso rounded", args: ["iso", "in.png", "--depth", "4", "--corner-radius", "3", "--ss", "2"]),
    OclgrindCase(name: "pulse", args: ["pulse", "--frames", "3", "--size", "20x12"]),
] + cpuFormBlurCases

/// The blur kernels' CPU forms (what PoCL runs: LANES values per vector) on the simulator, by
/// GLINT_KERNEL_LANES: 16 and 4 lanes, both methods, 8-bit and float, a kernel wider than the
/// 20x14 image, a 19x7 image (a row's last vector overlapping the one before), a 7x3 image (rows
/// shorter than the exact 8-bit kernel's step of 2 x 16 bytes, value by value), and the mist's
/// compose (a row per work-item, its last pixels short of a vector one by one) with its recursive
/// blur at sigma 5.
private let cpuFormBlurCases: [OclgrindCase] = ["16", "4"].flatMap { lanes in
    ["exact", "recursive"].flatMap { method in
        [
            OclgrindCase(name: "blur \(method) \(lanes) lanes 8-bit", args: ["blur", "in.png", "--sigma", "1.5", "--method", method,
                                                                          "--border", "wrap"], env: ["GLINT_KERNEL_LANES": lanes]),
            OclgrindCase(name: "blur \(method) \(lanes) lanes 8-bit, 19x7", args: ["blur", "odd.png", "--sigma", "1.2", "--method", method],
                         env: ["GLINT_KERNEL_LANES": lanes]),
            OclgrindCase(name: "blur \(method) \(lanes) lanes 8-bit, 7x3", args: ["blur", "tiny.png", "--sigma", "1.5", "--method", method,
                                                                                 "--border", "reflect101"], env: ["GLINT_KERNEL_LANES": lanes]),
            OclgrindCase(name: "blur \(method) \(lanes) lanes float", args: ["blur", "in.pfm", "--sigma", "1.5", "--method", method,
                                                                         "--border", "zero"], env: ["GLINT_KERNEL_LANES": lanes]),
            OclgrindCase(name: "blur \(method) \(lanes) lanes sigma 12", args: ["blur", "in.png", "--sigma", "12", "--method", method],
                         env: ["GLINT_KERNEL_LANES": lanes]),
        ]
    }
} + ["16", "4"].map { lanes in
    OclgrindCase(name: "mist \(lanes) lanes", args: ["mist", "--input", "in.png", "--frames", "2", "--sigma", "5", "--drops", "6"],
                 env: ["GLINT_KERNEL_LANES": lanes])
}

/// Single renders on the device with the uninitialised-value checker on (see `oclgrindEnvironment`
/// for the kernels it cannot run): every kernel but rt_trace, iso_render and fractal_color. Arguments after `glint`, without --device.
private let uninitializedCases: [OclgrindCase] = fractalPrecisionCases(["-o", "out.png"])
    + ["exact", "recursive"].flatMap { blurCases($0, png: ["-o", "out.png"], pfm: ["-o", "out.pfm"]) } + [
        OclgrindCase(name: "mist", args: ["mist", "--input", "in.png", "--frames", "2", "--sigma", "2", "--drops", "6",
                                          "-o", "mist-out"]),
        OclgrindCase(name: "pulse", args: ["pulse", "--frames", "2", "--size", "20x12", "-o", "pulse-out"]),
    ]

@Suite("Oclgrind lane (simulated GPU)")
struct OclgrindLaneTests {
    /// The inputs the image workloads read: small PNGs and a PFM made by the Swift path.
    private func makeInputs(_ s: Sandbox) throws {
        let png = try s.run(["fractal", "julia", "--size", "20x14", "--iterations", "40", "--smooth",
                             "--device", "cpu", "-o", "in.png", "-q"])
        try #require(png.status == 0, "making in.png: \(png)")
        let pfm = try s.run(["rtow", "--scene", "ch10", "--size", "20x14", "--spp", "2", "--depth", "4",
                             "--device", "cpu", "-o", "in-rt.png", "--pfm", "in.pfm", "-q"])
        try #require(pfm.status == 0, "making in.pfm: \(pfm)")
        let odd = try s.run(["fractal", "julia", "--size", "19x7", "--iterations", "40", "--device", "cpu", "-o", "odd.png", "-q"])
        try #require(odd.status == 0, "making odd.png: \(odd)")
        let tiny = try s.run(["fractal", "julia", "--size", "7x3", "--iterations", "40", "--device", "cpu", "-o", "tiny.png", "-q"])
        try #require(tiny.status == 0, "making tiny.png: \(tiny)")
    }

    /// Runs `glint compare --a cpu --b gpu ARGS` with Oclgrind as the only device.
    private func check(_ c: OclgrindCase) throws {
        try withSandbox { s in
            try makeInputs(s)
            let r = try s.run(["compare", "--a", "cpu", "--b", "gpu", "--runs", "1", "--json", "cmp.json"] + c.args,
                              env: try oclgrindEnvironment().merging(c.env.mapValues { $0 }) { $1 }, timeout: 600)
            let reports = oclgrindReports(r.stderr)
            #expect(reports.isEmpty, "\(c.name): Oclgrind reported:\n\(reports.joined(separator: "\n"))\n\(r.status)")
            #expect(r.status == 0, "\(c.name): outside the parity tolerance or failed on Oclgrind\n\(String(r.description.suffix(3000)))")
            // The comparison really ran on the simulator.
            let json = (try? String(contentsOf: s.work.appendingPathComponent("cmp.json"), encoding: .utf8)) ?? ""
            #expect(json.contains("Oclgrind"), "\(c.name): the report does not name the Oclgrind device:\n\(json.prefix(400))")
        }
    }

    @Test("uninitialised values on Oclgrind", arguments: uninitializedCases)
    func uninitialized(_ c: OclgrindCase) throws {
        try withSandbox { s in
            try makeInputs(s)
            let r = try s.run(c.args + ["--device", "gpu", "-q"], env: try oclgrindEnvironment(uninitialized: true), timeout: 600)
            let reports = oclgrindReports(r.stderr)
            #expect(reports.isEmpty, "\(c.name): Oclgrind reported:\n\(reports.joined(separator: "\n"))\n\(r.status)")
            #expect(r.status == 0, "\(c.name): failed on Oclgrind\n\(String(r.description.suffix(3000)))")
        }
    }

    @Test("fractal on Oclgrind", arguments: fractalCases)
    func fractal(_ c: OclgrindCase) throws { try check(c) }

    @Test("rtow on Oclgrind", arguments: rtowCases)
    func rtow(_ c: OclgrindCase) throws { try check(c) }

    @Test("blur, mist, iso, pulse on Oclgrind", arguments: imageCases)
    func images(_ c: OclgrindCase) throws { try check(c) }

    /// A render with chained passes stays on the device; its PNG matches the Swift path's.
    @Test func chainOnOclgrind() throws {
        try withSandbox { s in
            let args = ["fractal", "julia", "--size", "24x16", "--iterations", "48", "--smooth",
                        "--then", "blur", "--sigma", "1.5", "--then", "iso", "--depth", "3", "-q"]
            let cpu = try s.run(args + ["--device", "cpu", "-o", "cpu.png"])
            try #require(cpu.status == 0, "\(cpu)")
            let gpu = try s.run(args + ["--device", "gpu", "-o", "gpu.png"], env: try oclgrindEnvironment(), timeout: 600)
            #expect(oclgrindReports(gpu.stderr).isEmpty, "\(oclgrindReports(gpu.stderr))\n\(gpu.status)")
            try #require(gpu.status == 0, "\(gpu)")
            let cmp = try s.run(["compare", "--images", "cpu.png", "gpu.png", "--tolerance", "1"])
            #expect(cmp.status == 0, "\(cmp)")
        }
    }

    /// GLINT_KERNEL_LANES picks the blur kernels' form on the simulator (a GPU, whose own form is
    /// the GPU one), which is what makes `cpuFormBlurCases` check the CPU forms.
    @Test func blurLanesPickTheKernelForm() throws {
        try withSandbox { s in
            try makeInputs(s)
            for (lanes, method, form) in [("16", "exact", "exact, CPU form (16 16-bit lanes per vector, both passes in one kernel)"),
                                          ("4", "recursive", "recursive, CPU form (4 values per vector, 4 per column work-item)"),
                                          (nil, "exact", "exact, GPU form (local-memory tiles)"),
                                          (nil, "recursive", "recursive, GPU form (one value per work-item)")] {
                let env = try oclgrindEnvironment().merging(["GLINT_KERNEL_LANES": lanes]) { $1 }
                let r = try s.run(["blur", "in.png", "--sigma", "1.5", "--method", method, "--device", "gpu", "--verbose",
                                   "-o", "out.png"], env: env, timeout: 600)
                #expect(r.status == 0 && r.stdout.contains("blur kernels: \(form)"), "\(lanes ?? "-") \(method): \(r)")
            }
        }
    }

    /// `glint devices --calibrate` with a GPU measures each kind on both paths; on the simulator,
    /// slower than the Swift path at everything, `auto` then sends every measured kind there and
    /// says why, and deep zooms, without a figure, still go to the GPU.
    @Test func gpuCalibrationWeighsTheGPU() throws {
        try withSandbox { s in
            let env = try oclgrindEnvironment()
            let cal = try s.run(["devices", "--calibrate", "--size", "16x12"], env: env, timeout: 600)
            #expect(cal.status == 0, "\(cal)")
            #expect(cal.stdout.contains("GPU start-up:") && cal.stdout.contains("blur") && cal.stdout.contains("auto takes the Swift path"), "\(cal)")
            let devices = try s.run(["devices", "--json"], env: env)
            let object = try JSONSerialization.jsonObject(with: Data(devices.stdout.utf8)) as? [String: Any]
            let byKind = try #require(object?["auto_by_kind"] as? [String: String], "\(devices)")
            for kind in ["fractal", "fractal-smooth", "rtow", "blur", "mist", "iso", "pulse"] {
                #expect(byKind[kind] == "cpu", "\(kind): \(byKind)")
            }
            #expect(byKind["fractal-deep"] == "opencl:0", "\(byKind)")
            try makeInputs(s)
            let blur = try s.run(["blur", "in.png", "--sigma", "1.5", "--verbose", "-o", "out.png"], env: env, timeout: 600)
            #expect(blur.status == 0 && blur.stdout.contains("cpu (Swift"), "\(blur)")
            #expect((blur.stdout + blur.stderr).contains("auto chose the Swift path for this blur (u8-exact) job by this machine's calibration"), "\(blur)")
        }
    }

    /// `glint devices` lists the simulator as a GPU, and `auto` picks it.
    @Test func devicesSeeOclgrindAsGPU() throws {
        try withSandbox { s in
            let r = try s.run(["devices"], env: try oclgrindEnvironment())
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains("Oclgrind") && r.stdout.contains("type gpu"), "\(r)")
            #expect(r.stdout.contains("auto        -> opencl:0"), "\(r)")
        }
    }

    /// The report filter itself: a real Oclgrind report is caught, ordinary output is not.
    @Test func reportFilterCatchesOclgrindReports() {
        let report = """
            Invalid read of size 4 at global memory address 0x1000000000040
            \tKernel: blur_exact_rows
            \tEntity: Global(3,0,0) Local(3,0,0) Group(0,0,0)
            \t  %12 = load i32, i32 addrspace(1)* %arrayidx, align 4
            """
        let other = report.replacingOccurrences(of: "0x1000000000040", with: "0x1000000000044")
        #expect(oclgrindReports(report + "\n" + other).count == 1)
        #expect(oclgrindReports(report).first?.hasPrefix("Invalid read of size 4 at global memory address ADDR") == true)
        #expect(oclgrindReports(report + "\n" + other).first?.hasSuffix("(x2)") == true)
        #expect(oclgrindReports("Oclgrind - OpenCL runtime error detected\n").count == 1)
        #expect(oclgrindReports("overall  0  0  0  inf  0  0.000%\nwithin tolerance (exact)\n").isEmpty)
    }
}
