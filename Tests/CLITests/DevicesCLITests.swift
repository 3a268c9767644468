// `glint devices`, the choice of device (--device, GLINT_DEVICE) and the program cache, in the
// "glint command line" suite (FractalCLITests.swift) whose renders they use.

import Foundation
import GlintCore
import GlintWorkloads
import Testing

extension CLITests {
    @Test("with no OpenCL driver, cpu still works and devices says what to install")
    func noOpenCLPlatform() throws {
        try withSandbox { box in
            // An empty vendors folder: the ICD loader finds no driver at all.
            let vendors = box.path("no-vendors")
            try FileManager.default.createDirectory(atPath: vendors, withIntermediateDirectories: true)
            let env: [String: String?] = ["OCL_ICD_VENDORS": vendors]
            let devices = try box.run(["devices"], env: env)
            #expect(devices.status == 0, "\(devices)")
            #expect(devices.stdout.contains("cpu"))
            #expect(!devices.stdout.contains("opencl:0"))
            #expect(devices.stdout.contains("no OpenCL platform") && devices.stdout.contains("pocl-opencl-icd"), "\(devices)")
            #expect(devices.stdout.contains("auto        -> cpu"))
            let cpu = try box.run(["fractal", "mandelbrot", "--size", "32x32", "-o", "a.png"], env: env)
            #expect(cpu.status == 0 && cpu.stdout.contains("cpu"), "auto without OpenCL should use the Swift path: \(cpu)")
            let cl = try box.run(["fractal", "mandelbrot", "--size", "32x32", "-o", "b.png", "--device", "opencl"], env: env)
            #expect(cl.status != 0 && cl.stderrLines.count == 1 && cl.stderr.contains("no OpenCL platform"), "\(cl)")
            #expect(!FileManager.default.fileExists(atPath: box.path("b.png")))
        }
    }

    @Test("glint devices lists cpu and opencl:0")
    func devicesText() throws {
        try withSandbox { box in
            let r = try box.run(["devices"])
            #expect(r.status == 0, "\(r)")
            #expect(r.stderr.isEmpty, "\(r)")
            let lines = r.stdoutLines
            #expect(lines.contains { $0.hasPrefix("cpu ") }, "no cpu line\n\(r)")
            #expect(lines.contains { $0.hasPrefix("opencl:0 ") }, "no opencl:0 line\n\(r)")
            #expect(lines.contains { $0.hasPrefix("auto") }, "no auto line\n\(r)")
        }
    }

    @Test("glint devices --peak measures each OpenCL device's FMA rate and bandwidth; --json gives the figures")
    func devicesPeak() throws {
        try withSandbox { box in
            let text = try box.run(["devices", "--peak"], timeout: 300)
            #expect(text.status == 0, "\(text)")
            #expect(text.stdout.contains("opencl:0") && text.stdout.contains("FLOP/s") && text.stdout.contains("B/s"), "\(text)")
            let r = try box.run(["devices", "--peak", "--json"], timeout: 300)
            #expect(r.status == 0, "\(r)")
            let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8))
            let devices = try #require((object as? [String: Any])?["devices"] as? [[String: Any]], "\(r)")
            #expect(!devices.isEmpty)
            for d in devices {
                let peak = try #require(d["peak"] as? [String: Any], "\(d)")
                #expect(((peak["fma_flops_per_second"] as? NSNumber)?.doubleValue ?? 0) > 1e6, "\(d)")
                #expect(((peak["copy_bytes_per_second"] as? NSNumber)?.doubleValue ?? 0) > 1e6, "\(d)")
            }
            let both = try box.run(["devices", "--peak", "--calibrate"])
            #expect(both.status == 2 && both.stderr.contains("--peak and --calibrate"), "\(both)")
        }
    }

    @Test("glint devices --json is JSON with an opencl array of described devices")
    func devicesJSON() throws {
        try withSandbox { box in
            let r = try box.run(["devices", "--json"])
            #expect(r.status == 0, "\(r)")
            let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8))
            let root = try #require(object as? [String: Any], "the JSON is not an object\n\(r)")
            let opencl = try #require(root["opencl"] as? [Any], "no \"opencl\" array\n\(r)")
            #expect(opencl.count >= 1, "no OpenCL device listed\n\(r)")
            for case let (i, entry) in opencl.enumerated() {
                let d = try #require(entry as? [String: Any], "device \(i) is not an object")
                #expect((d["name"] as? String)?.isEmpty == false, "device \(i): name")
                #expect((d["type"] as? String).map { ["gpu", "cpu", "accelerator", "other"].contains($0) } == true,
                        "device \(i): type \(String(describing: d["type"]))")
                #expect(((d["compute_units"] as? NSNumber)?.intValue ?? 0) >= 1, "device \(i): compute_units")
                #expect(d["fp64"] is Bool, "device \(i): fp64 \(String(describing: d["fp64"]))")
                #expect(d["driver_version"] is String, "device \(i): driver_version")
            }
            #expect(root["auto"] is String, "no \"auto\"")
        }
    }

    @Test("auto: the first GPU, else per kind of job the faster of the OpenCL CPU device and the Swift path")
    func autoPerKindOfJob() throws {
        try withSandbox { box in
            let r = try box.run(["devices", "--json"])
            #expect(r.status == 0, "\(r)")
            let root = try JSON.parse(r.stdout)
            let devices = root["opencl"]?.arrayValue ?? []
            let types = devices.map { $0["type"]?.stringValue ?? "" }
            func expected(_ kind: AutoKind) -> String {
                if let g = types.firstIndex(of: "gpu") { return "opencl:\(g)" }
                if let c = types.firstIndex(of: "cpu"), AutoChoice.prefersOpenCLCPU(kind) { return "opencl:\(c)" }
                return "cpu"
            }
            for kind in AutoKind.allCases {
                #expect(root["auto_by_kind"]?[kind.rawValue]?.stringValue == expected(kind), "\(kind.rawValue)\n\(r)")
            }
            // As measured, the Swift path takes every kind, whether PoCL compiles for AVX2 or AVX-512.
            #expect(!AutoKind.allCases.contains { AutoChoice.prefersOpenCLCPU($0) })
            // Renders follow it (no --device: auto), and so does GLINT_DEVICE=auto.
            let device = { (kind: AutoKind) in expected(kind) == "cpu" ? "cpu" : "opencl" }
            expectWrote(try box.run(smallRender([])), file: "out.png", device: device(.fractal))
            expectWrote(try box.run(smallRender(["--smooth"]), env: ["GLINT_DEVICE": "auto"]), file: "out.png",
                        device: device(.fractalSmooth))
            let blur = try box.run(["blur", "out.png", "--sigma", "2", "-o", "b.png"])
            #expect(blur.status == 0 && blur.stdout.contains(device(.blur) == "cpu" ? "cpu (Swift" : "opencl ("), "\(blur)")
            // glint devices says the same in words.
            let text = try box.run(["devices"])
            let line = try #require(text.stdoutLines.first { $0.hasPrefix("auto") }, "\(text)")
            #expect(line.contains(expected(.fractal)) && line.contains(expected(.blur)), "\(line)")
            // With --verbose, where the table decides (no GPU, an OpenCL CPU device), its reasons.
            if !types.contains("gpu") && types.contains("cpu") {
                let verbose = try box.run(["devices", "-v"])
                for kind in AutoKind.allCases {
                    let (path, why) = AutoChoice.withoutGPU(kind)
                    #expect(verbose.stdoutLines.contains { $0.contains(" \(kind.rawValue) ") && $0.hasSuffix("\(path.rawValue): \(why)") },
                            "\(kind.rawValue)\n\(verbose)")
                }
            }
        }
    }

    @Test("auto remembers a machine without a GPU: Swift-path kinds load no driver; a new driver is scanned again")
    func autoRemembersNoGPU() throws {
        try withSandbox { box in
            let memo = box.cache.appendingPathComponent("no-opencl-gpu").path
            func memoExists() -> Bool { FileManager.default.fileExists(atPath: memo) }
            try box.write("in.png", try PNG.encode(Image8(width: 24, height: 16, pixels: [UInt8](repeating: 128, count: 24 * 16 * 4))))
            // A vendors folder of this test's own, holding PoCL alone (whatever else this machine has).
            let vendors = box.path("vendors")
            try FileManager.default.createDirectory(atPath: vendors, withIntermediateDirectories: true)
            let pocl = try String(contentsOfFile: "/etc/OpenCL/vendors/pocl.icd", encoding: .utf8)
            try pocl.write(toFile: vendors + "/pocl.icd", atomically: true, encoding: .utf8)
            let env: [String: String?] = ["OCL_ICD_VENDORS": vendors]
            let blur = ["blur", "in.png", "--sigma", "3", "-o", "b.png", "-v"]
            let decided = "without loading an OpenCL driver"
            // The first auto job scans (PoCL: no GPU) and leaves the memo.
            let first = try box.run(blur, env: env)
            #expect(first.status == 0 && first.stdout.contains("cpu (Swift") && !first.stdout.contains(decided), "\(first)")
            let text = try String(contentsOfFile: memo, encoding: .utf8)
            // Its fourth line: PoCL's native float vector width.
            let memoLines = text.split(separator: "\n")
            #expect(text.hasPrefix("GLINT-NO-GPU 1\n") && memoLines.count == 4 && Int(memoLines[3]).map { $0 >= 1 } == true, "\(text)")
            // The next one takes the memo's word.
            let second = try box.run(blur, env: env)
            #expect(second.status == 0 && second.stdout.contains("cpu (Swift"), "\(second)")
            #expect(second.stdout.contains(decided) && second.stdout.contains(memo), "\(second)")
            // A kind that runs on the OpenCL CPU device still opens it; where the table sends it to
            // the Swift path, the memo decides that too.
            let fractal = try box.run(["fractal", "mandelbrot", "--size", "32x32", "-o", "f.png", "-v"], env: env)
            if AutoChoice.prefersOpenCLCPU(.fractal) {
                #expect(fractal.status == 0 && fractal.stdout.contains("opencl (") && !fractal.stdout.contains(decided), "\(fractal)")
            } else {
                #expect(fractal.status == 0 && fractal.stdout.contains("cpu (Swift") && fractal.stdout.contains(decided), "\(fractal)")
            }
            // A memo of an older glint (no fourth line, no vector width): where the table sends
            // plain fractals to an OpenCL CPU device, it answers for Swift-path kinds only and a
            // fractal scans again; where it sends them to the Swift path, it answers for fractals too.
            try (memoLines[0...2].joined(separator: "\n") + "\n").write(toFile: memo, atomically: true, encoding: .utf8)
            let old = try box.run(["fractal", "mandelbrot", "--size", "32x32", "-o", "f.png", "-v"], env: env)
            if AutoChoice.prefersOpenCLCPU(.fractal) {
                #expect(old.status == 0 && !old.stdout.contains(decided), "\(old)")
                #expect(try String(contentsOfFile: memo, encoding: .utf8).split(separator: "\n").count == 4, "the scan rewrote the memo")
            } else {
                #expect(old.status == 0 && old.stdout.contains("cpu (Swift") && old.stdout.contains(decided), "\(old)")
            }
            // A GPU driver added to the same folder (Oclgrind's simulated GPU) changes the
            // fingerprint: the memo is not taken, auto finds the GPU, and the scan removes the memo.
            let library = "/usr/lib/oclgrind/liboclgrind-rt-icd.so"
            #expect(FileManager.default.fileExists(atPath: library), "install Debian's oclgrind package")
            try (library + "\n").write(toFile: vendors + "/oclgrind.icd", atomically: true, encoding: .utf8)
            let gpu = try box.run(blur, env: env, timeout: 600)
            #expect(gpu.status == 0 && gpu.stdout.contains("Oclgrind") && !gpu.stdout.contains(decided), "\(gpu)")
            #expect(!memoExists(), "a scan that found a GPU left the memo")
            // Without it again, the next scan writes a new memo.
            try FileManager.default.removeItem(atPath: vendors + "/oclgrind.icd")
            #expect(try box.run(blur, env: env).status == 0)
            let again = try String(contentsOfFile: memo, encoding: .utf8)
            #expect(again.split(separator: "\n").first == "GLINT-NO-GPU 1")
            // A memo that is not whole, or past its age, is not taken.
            for stale in ["GLINT-NO-GPU 1\n", again.split(separator: "\n")[0...1].joined(separator: "\n") + "\n1\n"] {
                try stale.write(toFile: memo, atomically: true, encoding: .utf8)
                let r = try box.run(blur, env: env)
                #expect(r.status == 0 && !r.stdout.contains(decided), "\(stale): \(r)")
            }
            // With the program cache off there is no memo either.
            try? FileManager.default.removeItem(atPath: memo)
            for _ in 0..<2 {
                var off = env
                off["GLINT_KERNEL_CACHE"] = "off"
                let r = try box.run(blur, env: off)
                #expect(r.status == 0 && !r.stdout.contains(decided), "\(r)")
            }
            #expect(!memoExists())
        }
    }

    // GLINT_DEVICE.
    @Test("GLINT_DEVICE=cpu picks the CPU path")
    func glintDeviceEnvironment() throws {
        try withSandbox { box in
            let r = try box.run(smallRender([]), env: ["GLINT_DEVICE": "cpu"])
            #expect(r.status == 0, "\(r)")
            expectWrote(r, file: "out.png", device: "cpu")
            #expect(pngHeader(try box.bytes("out.png"))?.width == 64)
        }
    }

    @Test("GLINT_DEVICE=bogus fails with one clear error and writes nothing")
    func glintDeviceBogus() throws {
        try withSandbox { box in
            let r = try box.run(smallRender([]), env: ["GLINT_DEVICE": "bogus"])
            expectCleanFailure(r, kind: .runtime, mentions: ["bogus"])
            #expect(box.listing().isEmpty, "files left: \(box.listing())")
        }
    }

    @Test("--device wins over GLINT_DEVICE")
    func deviceOptionOverridesEnvironment() throws {
        try withSandbox { box in
            let r = try box.run(smallRender(["--device", "cpu"]), env: ["GLINT_DEVICE": "bogus"])
            #expect(r.status == 0, "\(r)")
            expectWrote(r, file: "out.png", device: "cpu")
        }
    }

    // Warm start from the program cache.
    @Test("a second OpenCL run loads its programs from the disk cache")
    func warmStart() throws {
        try withSandbox { box in
            let args = smallRender(["--device", "opencl", "--verbose"])
            let first = try box.run(args)
            #expect(first.status == 0, "\(first)")
            expectWrote(first, file: "out.png", device: "opencl")
            let s1 = try #require(buildStats(first.stdout), "no 'programs:' line in --verbose output\n\(first)")
            #expect(s1.compiled >= 1, "the first run should compile (cache empty)\n\(first)")
            let cached = (try? FileManager.default.contentsOfDirectory(
                atPath: box.cache.appendingPathComponent("programs").path)) ?? []
            #expect(cached.contains { $0.hasSuffix(".bin") }, "no program binary in GLINT_CACHE_DIR/programs: \(cached)")

            let second = try box.run(args)
            #expect(second.status == 0, "\(second)")
            let s2 = try #require(buildStats(second.stdout), "no 'programs:' line in --verbose output\n\(second)")
            #expect(s2.compiled == 0, "the second run compiled again\n\(second)")
            #expect(s2.fromDisk >= 1, "the second run did not use the disk cache\n\(second)")
            #expect(try box.bytes("out.png").prefix(8).elementsEqual(pngSignature))
        }
    }

    @Test("a PoCL code-generation variable keeps programs apart in the disk cache")
    func cacheKeyCoversCodeGeneration() throws {
        try withSandbox { box in
            let args = smallRender(["--device", "opencl", "--verbose"])
            // Each run gets a PoCL cache of its own, so that only Glint's cache could hand one
            // run's code to another.
            func run(_ name: String, _ cpu: String?) throws -> (compiled: Int, fromDisk: Int) {
                var env: [String: String?] = ["POCL_CACHE_DIR": box.path("pocl-" + name)]
                env["POCL_LLVM_CPU_NAME"] = .some(cpu)
                let r = try box.run(args, env: env)
                #expect(r.status == 0, "\(r)")
                return try #require(buildStats(r.stdout), "no 'programs:' line in --verbose output\n\(r)")
            }
            let native = try run("native", nil)
            #expect(native.compiled >= 1 && native.fromDisk == 0, "\(native)")
            // Another target processor, same device name: built anew, not the native binary.
            let haswell = try run("haswell", "haswell")
            #expect(haswell.compiled >= 1 && haswell.fromDisk == 0, "the haswell run took the native run's binary: \(haswell)")
            // Each setting then finds its own entry.
            let again = try run("again", "haswell")
            #expect(again.compiled == 0 && again.fromDisk >= 1, "\(again)")
            let back = try run("back", nil)
            #expect(back.compiled == 0 && back.fromDisk >= 1, "\(back)")
        }
    }

    @Test("GLINT_KERNEL_CACHE=off compiles every time and writes no cache")
    func kernelCacheOff() throws {
        try withSandbox { box in
            let args = smallRender(["--device", "opencl", "--verbose"])
            for run in 1...2 {
                let r = try box.run(args, env: ["GLINT_KERNEL_CACHE": "off"])
                #expect(r.status == 0, "\(r)")
                expectWrote(r, file: "out.png", device: "opencl")
                let s = try #require(buildStats(r.stdout), "no 'programs:' line in --verbose output\n\(r)")
                #expect(s.compiled >= 1 && s.fromDisk == 0, "run \(run) with the cache off\n\(r)")
            }
            let cacheContents = (try? FileManager.default.contentsOfDirectory(atPath: box.cache.path)) ?? []
            #expect(cacheContents.isEmpty, "the cache was written although it is off: \(cacheContents)")
        }
    }
}
