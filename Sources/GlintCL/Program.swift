import COpenCL

/// A built OpenCL program for one device.
public final class Program: @unchecked Sendable {
    public let handle: cl_program
    public let context: Context
    public let options: String
    /// The compiler's output when the build succeeded with warnings (empty when quiet).
    public private(set) var buildLog: String = ""

    private init(handle: cl_program, context: Context, options: String) {
        self.handle = handle
        self.context = context
        self.options = options
    }

    deinit { context.gate.pass { _ = clReleaseProgram(handle) } }

    /// Compiles OpenCL C source. A failure carries the options and the device's build log.
    public static func build(source: String, context: Context, options: String) throws(CLError) -> Program {
        var status: cl_int = CL_SUCCESS
        let created: cl_program? = source.withCString { text in
            var strings: UnsafePointer<CChar>? = text
            var length = strlenOf(text)
            return context.gate.pass { clCreateProgramWithSource(context.handle, 1, &strings, &length, &status) }
        }
        try check("clCreateProgramWithSource", status)
        guard let handle = created else { throw CLError("clCreateProgramWithSource", .invalidValue, detail: "returned a null handle") }
        let program = Program(handle: handle, context: context, options: options)
        try program.buildForDevice(routine: "clBuildProgram")
        return program
    }

    /// Loads a program from a device binary (the on-disk cache). Throws if the driver rejects it.
    public static func load(binary: [UInt8], context: Context, options: String) throws(CLError) -> Program {
        var deviceID: cl_device_id? = context.device.id
        var length = binary.count
        var binaryStatus: cl_int = CL_SUCCESS
        var status: cl_int = CL_SUCCESS
        let created: cl_program? = binary.withUnsafeBufferPointer { bytes in
            var pointer: UnsafePointer<UInt8>? = bytes.baseAddress
            return context.gate.pass {
                clCreateProgramWithBinary(context.handle, 1, &deviceID, &length, &pointer, &binaryStatus, &status)
            }
        }
        try check("clCreateProgramWithBinary", status)
        guard let handle = created else { throw CLError("clCreateProgramWithBinary", .invalidValue, detail: "returned a null handle") }
        let program = Program(handle: handle, context: context, options: options)
        try check("clCreateProgramWithBinary", binaryStatus)
        try program.buildForDevice(routine: "clBuildProgram")
        return program
    }

    private func buildForDevice(routine: StaticString) throws(CLError) {
        var deviceID: cl_device_id? = context.device.id
        let gate = context.gate
        let status = gate.pass { clBuildProgram(handle, 1, &deviceID, options, nil, nil) }
        let log = (try? infoString("clGetProgramBuildInfo") { size, value, returned in
            gate.pass { clGetProgramBuildInfo(handle, context.device.id, cl_program_build_info(CL_PROGRAM_BUILD_LOG), size, value, returned) }
        }) ?? ""
        if status != CL_SUCCESS {
            let deviceName = (try? context.device.name) ?? "device"
            throw CLError("\(routine)", CLStatus(rawValue: status),
                          detail: "options: \(options.isEmpty ? "(none)" : options)\nbuild log (\(deviceName)):\n\(log.isEmpty ? "(empty)" : log)")
        }
        buildLog = log
    }

    /// The device binary, for the on-disk cache.
    ///
    /// The size and the bytes are read in one pass of the gate. Oclgrind serialises the module
    /// anew for each of the two queries, and the bitcode carries state of the LLVM context that
    /// every program of the cl_context shares (a build of another program adds to it); it then
    /// copies the whole bitcode into the caller's buffer without a bound. With a build on another
    /// thread between the two queries, the binary came out longer than the size just reported and
    /// overran this array (heap corruption: `free(): invalid next size`, `double free or
    /// corruption` in ConcurrentUseTests' Oclgrind child). Within one pass nothing can change it.
    public func binary() throws(CLError) -> [UInt8] {
        let (status, bytes): (cl_int, [UInt8]) = context.gate.pass {
            var size = 0
            let sized = clGetProgramInfo(handle, cl_program_info(CL_PROGRAM_BINARY_SIZES), MemoryLayout<Int>.size, &size, nil)
            guard sized == CL_SUCCESS, size > 0 else { return (sized, []) }
            var bytes = [UInt8](repeating: 0, count: size)
            let status: cl_int = bytes.withUnsafeMutableBufferPointer { buffer in
                var pointer: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
                return clGetProgramInfo(handle, cl_program_info(CL_PROGRAM_BINARIES),
                                        MemoryLayout<UnsafeMutablePointer<UInt8>?>.size, &pointer, nil)
            }
            return (status, bytes)
        }
        try check("clGetProgramInfo", status)
        return bytes
    }

    public func kernel(_ name: String) throws(CLError) -> Kernel {
        let handle = try create("clCreateKernel") { status in
            context.gate.pass { clCreateKernel(self.handle, name, status) }
        }
        return Kernel(handle: handle, name: name, program: self)
    }
}

private func strlenOf(_ s: UnsafePointer<CChar>) -> Int {
    var n = 0
    while s[n] != 0 { n += 1 }
    return n
}
