import COpenCL

/// An OpenCL device and the facts Glint needs about it.
public struct Device: Hashable, @unchecked Sendable {
    public let id: cl_device_id
    public let platform: Platform

    public enum Kind: String, Sendable {
        case gpu, cpu, accelerator, other
    }

    private func string(_ param: Int32) throws(CLError) -> String {
        try infoString("clGetDeviceInfo") { clGetDeviceInfo(id, cl_device_info(param), $0, $1, $2) }
    }
    private func value<T: BitwiseCopyable>(_ param: Int32, _ type: T.Type) throws(CLError) -> T {
        try infoValue("clGetDeviceInfo", type) { clGetDeviceInfo(id, cl_device_info(param), $0, $1, $2) }
    }

    public var name: String { get throws(CLError) { try string(CL_DEVICE_NAME) } }
    public var vendor: String { get throws(CLError) { try string(CL_DEVICE_VENDOR) } }
    public var driverVersion: String { get throws(CLError) { try string(CL_DRIVER_VERSION) } }
    /// The OpenCL version the device reports, e.g. `OpenCL 3.0 PoCL ...`.
    public var version: String { get throws(CLError) { try string(CL_DEVICE_VERSION) } }
    public var openCLCVersion: String { get throws(CLError) { try string(CL_DEVICE_OPENCL_C_VERSION) } }

    public var kind: Kind {
        get throws(CLError) {
            let type = try value(CL_DEVICE_TYPE, cl_device_type.self)
            if type & cl_device_type(CL_DEVICE_TYPE_GPU) != 0 { return .gpu }
            if type & cl_device_type(CL_DEVICE_TYPE_CPU) != 0 { return .cpu }
            if type & cl_device_type(CL_DEVICE_TYPE_ACCELERATOR) != 0 { return .accelerator }
            return .other
        }
    }
    public var computeUnits: Int { get throws(CLError) { Int(try value(CL_DEVICE_MAX_COMPUTE_UNITS, cl_uint.self)) } }
    public var maxClockMHz: Int { get throws(CLError) { Int(try value(CL_DEVICE_MAX_CLOCK_FREQUENCY, cl_uint.self)) } }
    public var globalMemoryBytes: UInt64 { get throws(CLError) { try value(CL_DEVICE_GLOBAL_MEM_SIZE, cl_ulong.self) } }
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE`: the largest single buffer the device allows.
    public var maxAllocationBytes: UInt64 { get throws(CLError) { try value(CL_DEVICE_MAX_MEM_ALLOC_SIZE, cl_ulong.self) } }
    public var localMemoryBytes: UInt64 { get throws(CLError) { try value(CL_DEVICE_LOCAL_MEM_SIZE, cl_ulong.self) } }
    /// The widest float (double) vector the device's ALUs run natively: 8 (4) with AVX2 on
    /// PoCL, 16 (8) with AVX-512, 1 on GPUs, which vectorise across work-items.
    public var nativeFloatVectorWidth: Int { get throws(CLError) { Int(try value(CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, cl_uint.self)) } }
    public var nativeDoubleVectorWidth: Int { get throws(CLError) { Int(try value(CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, cl_uint.self)) } }
    /// Whether the device works in the host's own memory (`CL_DEVICE_HOST_UNIFIED_MEMORY`, an
    /// OpenCL 1.2 query: CPU devices and integrated GPUs say yes).
    public var hostUnifiedMemory: Bool { get throws(CLError) { try value(CL_DEVICE_HOST_UNIFIED_MEMORY, cl_bool.self) != 0 } }
    /// `CL_DEVICE_MEM_BASE_ADDR_ALIGN` in bytes: the alignment of every buffer the device makes
    /// (PoCL: 128), which kernels may rely on for whole-vector loads and stores.
    public var baseAddressAlignment: Int { get throws(CLError) { Int(try value(CL_DEVICE_MEM_BASE_ADDR_ALIGN, cl_uint.self)) / 8 } }
    /// `CL_DEVICE_MAX_PARAMETER_SIZE`: the bytes of all a kernel's arguments together.
    public var maxParameterBytes: Int { get throws(CLError) { try value(CL_DEVICE_MAX_PARAMETER_SIZE, Int.self) } }

    /// Whether the device does double precision (a non-empty `CL_DEVICE_DOUBLE_FP_CONFIG`).
    public var supportsFP64: Bool {
        get throws(CLError) { try value(CL_DEVICE_DOUBLE_FP_CONFIG, cl_device_fp_config.self) != 0 }
    }

    /// Whether `-cl-fp32-correctly-rounded-divide-sqrt` may be passed to builds for this device.
    public var correctlyRoundedDivideSqrt: Bool {
        get throws(CLError) {
            let config = try value(CL_DEVICE_SINGLE_FP_CONFIG, cl_device_fp_config.self)
            return config & cl_device_fp_config(CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0
        }
    }

    /// Every device of every platform, in platform order: the index `opencl:N` uses.
    public static func all() throws(CLError) -> [Device] {
        var devices: [Device] = []
        for platform in try Platform.all() { devices += try platform.devices() }
        return devices
    }
}
