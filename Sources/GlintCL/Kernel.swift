import COpenCL

/// A value that can be passed to a kernel. Only fixed-width types conform: a bare `Int`
/// has no OpenCL C counterpart and would silently change size between host and device.
public protocol KernelArgument {
    func setArgument(_ kernel: cl_kernel, index: cl_uint) -> cl_int
}

/// Plain values are passed by copy.
public protocol KernelValue: KernelArgument {}
extension KernelValue {
    public func setArgument(_ kernel: cl_kernel, index: cl_uint) -> cl_int {
        withUnsafeBytes(of: self) { clSetKernelArg(kernel, index, $0.count, $0.baseAddress) }
    }
}
extension Int32: KernelValue {}
extension UInt32: KernelValue {}
extension Int64: KernelValue {}
extension UInt64: KernelValue {}
extension Float: KernelValue {}
extension Double: KernelValue {}
extension SIMD2: KernelArgument where Scalar: KernelValue {}
extension SIMD2: KernelValue where Scalar: KernelValue {}
extension SIMD4: KernelArgument where Scalar: KernelValue {}
extension SIMD4: KernelValue where Scalar: KernelValue {}

/// A struct shared with the kernels (Kernels/common/types.h), passed by value.
public struct StructArgument<T: BitwiseCopyable>: KernelArgument {
    public let value: T
    public init(_ value: T) { self.value = value }
    public func setArgument(_ kernel: cl_kernel, index: cl_uint) -> cl_int {
        withUnsafeBytes(of: value) { clSetKernelArg(kernel, index, $0.count, $0.baseAddress) }
    }
}

/// A kernel of a built program. Not for concurrent use: create one per job (it is cheap).
public final class Kernel: @unchecked Sendable {
    public let handle: cl_kernel
    public let name: String
    public let program: Program

    init(handle: cl_kernel, name: String, program: Program) {
        self.handle = handle
        self.name = name
        self.program = program
    }

    deinit { program.context.gate.pass { _ = clReleaseKernel(handle) } }

    /// Sets the arguments in order, from index 0.
    public func setArguments(_ arguments: any KernelArgument...) throws(CLError) {
        try setArguments(arguments)
    }

    /// `setArguments` with the arguments in an array (a list that depends on the build).
    public func setArguments(_ arguments: [any KernelArgument]) throws(CLError) {
        for (index, argument) in arguments.enumerated() {
            try check("clSetKernelArg", program.context.gate.pass { argument.setArgument(handle, index: cl_uint(index)) },
                      detail: "kernel \(name), argument \(index) (\(type(of: argument)))")
        }
    }

    /// `CL_KERNEL_WORK_GROUP_SIZE` for the program's device.
    public func workGroupSize() throws(CLError) -> Int {
        try infoValue("clGetKernelWorkGroupInfo", Int.self) { size, value, returned in
            program.context.gate.pass {
                clGetKernelWorkGroupInfo(handle, program.context.device.id,
                                         cl_kernel_work_group_info(CL_KERNEL_WORK_GROUP_SIZE), size, value, returned)
            }
        }
    }

    /// `CL_KERNEL_LOCAL_MEM_SIZE`: the local memory one work-group of this kernel uses on the
    /// program's device (its `__local` arrays and any local arguments set so far).
    public func localMemoryBytes() throws(CLError) -> UInt64 {
        try infoValue("clGetKernelWorkGroupInfo", cl_ulong.self) { size, value, returned in
            program.context.gate.pass {
                clGetKernelWorkGroupInfo(handle, program.context.device.id,
                                         cl_kernel_work_group_info(CL_KERNEL_LOCAL_MEM_SIZE), size, value, returned)
            }
        }
    }

    /// What the device allows a launch of this kernel, read on the first launch with an explicit
    /// work-group (a kernel's arguments are set before it; Glint passes no local-memory arguments).
    struct Limits {
        let workGroupSize: Int
        let localMemoryBytes: UInt64
    }
    private var limits: Limits?

    func launchLimits() throws(CLError) -> Limits {
        if let limits { return limits }
        let read = Limits(workGroupSize: try workGroupSize(), localMemoryBytes: try localMemoryBytes())
        limits = read
        return read
    }
}
