import Foundation
import GlintCL
import GlintCore
import GlintKernels
import GlintTestSupport
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

    /// A damaged cache entry (truncated anywhere, a flipped bit, another program's entry under the
    /// key) never reaches the driver: the program is rebuilt from source and the entry replaced.
    @Test func damagedCacheEntriesAreRebuiltAndReplaced() throws {
        let cc = try openCLContext()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("glint-cache-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let source = "__kernel void k(__global int* o) { o[get_global_id(0)] = 7; }"
        let other = "__kernel void other(__global int* o) { o[get_global_id(0)] = 8; }"
        let key = ProgramCache.key(source: source, options: "", device: cc.device)
        let path = dir + "/" + key + ".bin"

        let (_, first, _) = try ProgramCache.program(source: source, options: "", context: cc.context, directory: dir)
        #expect(first == .compiled)
        let good = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let (_, second, note) = try ProgramCache.program(source: source, options: "", context: cc.context, directory: dir)
        #expect(second == .diskCache && note == nil)

        // The other program's entry, written under this key's name.
        _ = try ProgramCache.program(source: other, options: "", context: cc.context, directory: dir)
        let otherPath = dir + "/" + ProgramCache.key(source: other, options: "", device: cc.device) + ".bin"
        let foreign = [UInt8](try Data(contentsOf: URL(fileURLWithPath: otherPath)))

        var damaged: [(String, [UInt8])] = [("foreign", foreign), ("empty", [])]
        for cut in [1, 10, 50, good.count / 2, good.count - 1] { damaged.append(("cut at \(cut)", Array(good.prefix(cut)))) }
        for at in [5, 30, good.count / 3, good.count - 1] {
            var flipped = good
            flipped[at] ^= 0x10
            damaged.append(("bit flipped at \(at)", flipped))
        }
        for (what, bytes) in damaged {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let (program, origin, note) = try ProgramCache.program(source: source, options: "", context: cc.context, directory: dir)
            #expect(origin == .compiled, "\(what): a damaged entry was used")
            #expect(note?.contains("rebuilt from source") == true, "\(what): \(note ?? "no note")")
            _ = try program.kernel("k")
            let replaced = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(ProgramCache.binary(fromEntry: replaced, key: key) != nil, "\(what): the entry was not replaced")
        }
    }

    /// A cache folder that cannot be made costs only the cache, and says so.
    @Test func anUnusableCacheFolderRendersWithoutTheCache() throws {
        let cc = try openCLContext()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("glint-cache-file-\(UUID().uuidString)").path
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let source = "__kernel void k(__global int* o) { o[get_global_id(0)] = 7; }"
        let (program, origin, note) = try ProgramCache.program(source: source, options: "", context: cc.context,
                                                               directory: file + "/programs")
        #expect(origin == .compiled)
        #expect(note?.hasPrefix("program cache unusable") == true, "\(note ?? "no note")")
        _ = try program.kernel("k")
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
            // Headers without arithmetic (structs, a compiler note turned off) need no pragma.
            #expect(text.contains("#pragma OPENCL FP_CONTRACT OFF") || name.hasSuffix("types.h") || name.hasSuffix("lanes.h"),
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
        if case .opencl = try Backend.resolve(.opencl, for: .fractal) {} else { Issue.record("--device opencl did not give OpenCL") }
    }
}
