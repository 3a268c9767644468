import Foundation
import GlintCL
import GlintCore
import GlintKernels
import GlintWorkloads
import Testing

@Suite struct ProgramTests {
    @Test func buildFailureCarriesOptionsAndBuildLog() throws {
        let cc = try openCLContext()
        let source = "__kernel void broken(__global int* out) { out[0] = no_such_function(1); }"
        do {
            _ = try Program.build(source: source, context: cc.context, options: "-DGLINT_TEST=1")
            Issue.record("a kernel calling an undefined function built")
        } catch {
            #expect(error.status == .buildProgramFailure)
            #expect(error.routine == "clBuildProgram")
            let detail = error.detail ?? ""
            #expect(detail.contains("-DGLINT_TEST=1"), "options missing from: \(detail)")
            #expect(detail.contains("no_such_function"), "build log missing from: \(detail)")
        }
    }

    @Test func programsAreBuiltOncePerContext() throws {
        let cc = try openCLContext()
        let a = try cc.program("fractal.cl", defines: ["FORMULA=0", "DOUBLE=0", "LANES=1", "SKIP=0"])
        let before = cc.buildStats
        let b = try cc.program("fractal.cl", defines: ["FORMULA=0", "DOUBLE=0", "LANES=1", "SKIP=0"])
        #expect(a === b)
        #expect(cc.buildStats.compiled == before.compiled && cc.buildStats.fromDiskCache == before.fromDiskCache)
        #expect(try ComputeContext.shared(for: cc.device) === cc)
    }

    @Test func diskCacheKeyCoversSourceOptionsAndDevice() throws {
        let cc = try openCLContext()
        let k = ProgramCache.key(source: "a", options: "-DX=1", device: cc.device)
        #expect(k.count == 32)
        #expect(k == ProgramCache.key(source: "a", options: "-DX=1", device: cc.device))
        #expect(k != ProgramCache.key(source: "b", options: "-DX=1", device: cc.device))
        #expect(k != ProgramCache.key(source: "a", options: "-DX=2", device: cc.device))
    }

    @Test func kernelSourcesInlineTheirHeadersOnceWithLineMarkers() throws {
        let source = try KernelLibrary.source("fractal.cl")
        #expect(source.contains("#line 1 \"common/types.h\""))
        #expect(source.components(separatedBy: "typedef struct GlintFractalParams").count == 2)
        for name in EmbeddedKernels.files.keys {
            let text = try KernelLibrary.file(name)
            #expect(text.contains("#pragma OPENCL FP_CONTRACT OFF") || name.hasSuffix("types.h"),
                    "\(name) lacks FP_CONTRACT OFF")
            #expect(!text.contains("native_") && !text.contains("fast-relaxed-math"), "\(name) uses relaxed maths")
        }
    }

    @Test func deviceChoicesParse() throws {
        #expect(try DeviceChoice(parsing: "auto") == .auto)
        #expect(try DeviceChoice(parsing: "CPU") == .cpu)
        #expect(try DeviceChoice(parsing: "opencl") == .opencl)
        #expect(try DeviceChoice(parsing: "opencl:3") == .openclIndex(3))
        #expect(try DeviceChoice(parsing: "gpu") == .gpu)
        for bad in ["", "opencl:", "opencl:-1", "opencl:x", "cuda"] {
            #expect(throws: GlintError.self) { try DeviceChoice(parsing: bad) }
        }
    }

    @Test func theOpenCLDeviceIsFoundAndDescribed() throws {
        let inventory = DeviceInventory.scan()
        #expect(inventory.problem == nil)
        let device = try #require(inventory.devices.first)
        #expect(try device.computeUnits >= 1)
        #expect(try !device.name.isEmpty)
        #expect(try device.globalMemoryBytes > 0)
        if case .opencl = try Backend.resolve(.opencl) {} else { Issue.record("--device opencl did not give OpenCL") }
    }
}
