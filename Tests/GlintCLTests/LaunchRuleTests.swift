// The GPU launch rules, checked on every device (PoCL here; Oclgrind, a device of type GPU, runs
// every workload's launches in the CLI lane, OclgrindLaneTests): whole work-groups only, groups
// within the kernel's limit, local memory within the device's, the OpenCL C version the device's
// compiler reports, and x86-only builtins only behind their guard.

import CGlintTypes
import GlintCL
import GlintCore
import GlintKernels
import GlintTestSupport
@testable import GlintWorkloads
import Testing

@Suite struct LaunchRuleTests {
    private let source = """
        __kernel void fill(__global int* out, int n) {
            int i = get_global_id(0);
            if (i < n) out[i] = i;
        }
        __kernel void big_local(__global float* out) {
            __local float tile[LOCAL_FLOATS];
            tile[get_local_id(0)] = 1.0f;
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = tile[0];
        }
        """

    /// The `fill` kernel set to write `count` items into a fresh buffer.
    private func fillKernel(_ cc: ComputeContext, count: Int) throws -> (Kernel, Buffer<Int32>) {
        let program = try Program.build(source: source, context: cc.context, options: "-DLOCAL_FLOATS=16")
        let kernel = try program.kernel("fill")
        let out = try Buffer<Int32>(context: cc.context, count: count)
        try kernel.setArguments(out, Int32(count))
        return (kernel, out)
    }

    /// A partial work-group is refused before the driver sees it: PoCL (OpenCL 3.0) would run it,
    /// NVIDIA's drivers (OpenCL 1.2) would not.
    @Test func aGlobalSizeNotAWholeNumberOfGroupsIsRefused() throws {
        let cc = try openCLContext()
        let (kernel, out) = try fillKernel(cc, count: 100)
        do {
            try cc.queue.enqueue(kernel, global: [100], local: [16])
            Issue.record("a launch of 100 items in groups of 16 was accepted")
        } catch {
            #expect(error.status == .invalidWorkGroupSize)
            #expect(error.routine == "clEnqueueNDRangeKernel")
            #expect((error.detail ?? "").contains("[100]") && (error.detail ?? "").contains("[16]"), "\(error)")
        }
        // The same launch rounded up to whole groups runs, the kernel skipping the items past n.
        try cc.queue.enqueue(kernel, global: [112], local: [16]).wait()
        #expect(try out.read(queue: cc.queue) == (0..<100).map { Int32($0) })
    }

    @Test func aGroupLargerThanTheKernelAllowsIsRefused() throws {
        let cc = try openCLContext()
        let (kernel, out) = try fillKernel(cc, count: 16)
        let limit = try kernel.workGroupSize()
        let group = limit * 2
        do {
            try cc.queue.enqueue(kernel, global: [group], local: [group])
            Issue.record("a group of \(group) items was accepted; the kernel allows \(limit)")
        } catch {
            #expect(error.status == .invalidWorkGroupSize)
        }
        withExtendedLifetime(out) {}  // the kernel's argument stays allocated throughout
    }

    @Test func aKernelNeedingMoreLocalMemoryThanTheDeviceHasIsRefused() throws {
        let cc = try openCLContext()
        let deviceLocal = Int(try cc.device.localMemoryBytes)
        let floats = deviceLocal / 4 * 2
        let program: Program
        do {
            program = try Program.build(source: source, context: cc.context, options: "-DLOCAL_FLOATS=\(floats)")
        } catch {
            // A compiler that refuses the array at build time honours the rule too.
            #expect(error.routine == "clBuildProgram")
            return
        }
        let kernel = try program.kernel("big_local")
        let out = try Buffer<Float>(context: cc.context, count: 16)
        try kernel.setArguments(out)
        do {
            try cc.queue.enqueue(kernel, global: [16], local: [16])
            Issue.record("a kernel with \(floats * 4) bytes of local memory was launched on a device with \(deviceLocal)")
        } catch {
            #expect(error.status == .outOfResources || error.status == .invalidWorkGroupSize, "\(error)")
        }
    }

    /// GPU launches: explicit groups, the global size rounded up to whole groups.
    @Test func launchShapesFollowTheDeviceKind() throws {
        let cc = try openCLContext()
        if cc.kind == .gpu {
            #expect(cc.workGroup(forDimensions: 1) == [64])
            #expect(cc.workGroup(forDimensions: 2) == [16, 8])
            #expect(cc.workGroup(forDimensions: 2, gpuGroup: [64, 1]) == [64, 1])
        } else {
            #expect(cc.workGroup(forDimensions: 1) == nil)
            #expect(cc.workGroup(forDimensions: 2, gpuGroup: [64, 1]) == nil)
        }
        // Whatever the shape, a launch of an awkward size covers exactly its items.
        let (kernel, out) = try fillKernel(cc, count: 97)
        try cc.launch(kernel, items: [97]).wait()
        #expect(try out.read(queue: cc.queue) == (0..<97).map { Int32($0) })
    }

    @Test func theLanguageVersionIsTheDeviceCompilers() throws {
        #expect(ComputeContext.openCLCVersion("OpenCL C 1.2 ") ?? (0, 0) == (1, 2))
        #expect(ComputeContext.openCLCVersion("OpenCL C 3.0 PoCL") ?? (0, 0) == (3, 0))
        #expect(ComputeContext.openCLCVersion("OpenCL C 1.1") ?? (0, 0) == (1, 1))
        #expect(ComputeContext.openCLCVersion("garbage") == nil)
        let cc = try openCLContext()
        let version = try #require(ComputeContext.openCLCVersion(try cc.device.openCLCVersion))
        #expect(cc.baseOptions.contains("-cl-std=CL1.2") == (version >= (1, 2)), "\(cc.baseOptions)")
        #expect(cc.baseOptions.contains("-cl-fp32-correctly-rounded-divide-sqrt")
                == (try cc.device.correctlyRoundedDivideSqrt), "\(cc.baseOptions)")
    }

    /// The kernels use no `__constant` memory (NVIDIA's is 64 KiB in at most 9 arguments), and
    /// their by-value arguments fit CL_DEVICE_MAX_PARAMETER_SIZE's floor of 1024 bytes (OpenCL 1.2,
    /// full profile): each kernel takes one parameter struct and a few scalars.
    @Test func kernelArgumentsFitEveryDevice() throws {
        for name in EmbeddedKernels.files.keys {
            #expect(!(try KernelLibrary.file(name)).contains("__constant"), "\(name) uses constant memory")
        }
        let structs = [MemoryLayout<GlintFractalParams>.size, MemoryLayout<GlintIsoParams>.size,
                       MemoryLayout<GlintRTParams>.size, MemoryLayout<GlintMistParams>.size]
        for size in structs { #expect(size + 64 <= 1024, "a parameter struct of \(size) bytes") }
        let cc = try openCLContext()
        #expect(try cc.device.maxParameterBytes >= 1024)
    }

    /// x86 builtins appear in the kernels only inside `#ifdef RT_X86_AVX` (defined for x86 AVX
    /// devices under Clang, never on a GPU), so a GPU compiler never sees them.
    @Test func x86BuiltinsStayBehindTheirGuard() throws {
        for name in EmbeddedKernels.files.keys {
            let text = try KernelLibrary.file(name)
            var stack: [Bool] = []  // per open #if: whether it is the x86 guard
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let t = line.trimmingCharacters(in: .whitespaces)
                if t.hasPrefix("#if") { stack.append(t == "#ifdef RT_X86_AVX" || t.hasPrefix("#if defined(__x86_64__)")) }
                else if t.hasPrefix("#else") || t.hasPrefix("#elif") { if !stack.isEmpty { stack[stack.count - 1] = false } }
                else if t.hasPrefix("#endif") { _ = stack.popLast() }
                else if t.contains("__builtin_ia32") {
                    #expect(stack.contains(true), "\(name):\(n + 1) uses an x86 builtin outside its guard")
                }
            }
        }
    }
}
