// OpenCL for tests. Tests never skip OpenCL: with PoCL installed (as in CI) a missing device is a
// failure, with the inventory's reason in the message, reported at the caller's line.

import GlintCL
import GlintCore
import GlintKernels
import GlintWorkloads
import Testing

/// The first OpenCL device; records an issue and throws when there is none.
public func openCLDevice(sourceLocation: SourceLocation = #_sourceLocation) throws -> Device {
    let inventory = DeviceInventory.scan()
    return try #require(inventory.devices.first, "no OpenCL device: \(inventory.problem ?? "?")",
                        sourceLocation: sourceLocation)
}

/// The first OpenCL device's shared context.
public func openCLContext(sourceLocation: SourceLocation = #_sourceLocation) throws -> ComputeContext {
    try ComputeContext.shared(for: try openCLDevice(sourceLocation: sourceLocation))
}

/// The first OpenCL device as a backend.
public func openCL(sourceLocation: SourceLocation = #_sourceLocation) throws -> Backend {
    .opencl(try openCLContext(sourceLocation: sourceLocation))
}

/// `.cpu` for "cpu", else the first OpenCL device: for tests run on both paths by name.
public func backend(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Backend {
    name == "cpu" ? .cpu : try openCL(sourceLocation: sourceLocation)
}

/// Runs a one-work-item probe kernel, `body` being the statements of
/// `__kernel void probe(__global ulong* out)` (with Kernels/common/types.h and rng.h included),
/// on the first OpenCL device, and returns the `count` ulongs it wrote.
public func runProbe(_ body: String, count: Int, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt64] {
    let cc = try openCLContext(sourceLocation: sourceLocation)
    let source = try KernelLibrary.source(text: """
        #include "common/types.h"
        #include "common/rng.h"
        __kernel void probe(__global ulong* out) {
        \(body)
        }
        """, name: "probe.cl")
    let program = try Program.build(source: source, context: cc.context, options: cc.baseOptions)
    let kernel = try program.kernel("probe")
    let out = try Buffer<UInt64>(context: cc.context, count: count)
    try kernel.setArguments(out)
    try cc.queue.enqueue(kernel, global: [1]).wait()
    return try out.read(queue: cc.queue)
}

/// Checks that the C struct `cName` (Kernels/common/types.h) has, on the device, the size and
/// field offsets Swift sees for `T`, and that it is `size` bytes, a multiple of 8.
public func expectDeviceLayout<T>(_ type: T.Type, _ cName: String, size: Int, _ fields: [(String, PartialKeyPath<T>)],
                                  sourceLocation: SourceLocation = #_sourceLocation) throws {
    var body = "out[0] = sizeof(\(cName));\n"
    for (i, (name, _)) in fields.enumerated() {
        body += "out[\(i + 1)] = __builtin_offsetof(\(cName), \(name));\n"
    }
    let device = try runProbe(body, count: fields.count + 1, sourceLocation: sourceLocation)
    #expect(device[0] == UInt64(MemoryLayout<T>.size), "sizeof(\(cName))", sourceLocation: sourceLocation)
    #expect(MemoryLayout<T>.size == size && size % 8 == 0, "\(cName) is \(MemoryLayout<T>.size) bytes",
            sourceLocation: sourceLocation)
    for (i, (name, path)) in fields.enumerated() {
        #expect(device[i + 1] == UInt64(MemoryLayout<T>.offset(of: path)!), "offset of \(cName).\(name)",
                sourceLocation: sourceLocation)
    }
}
