import COpenCL

/// An OpenCL platform (one installed driver, as the ICD loader reports it).
public struct Platform: Hashable, @unchecked Sendable {
    public let id: cl_platform_id

    /// Every platform the ICD loader finds. No platform at all is not an error: it returns `[]`.
    public static func all() throws(CLError) -> [Platform] {
        var count: cl_uint = 0
        let status = clGetPlatformIDs(0, nil, &count)
        if status == CLStatus.platformNotFoundKHR.rawValue || (status == CL_SUCCESS && count == 0) { return [] }
        try check("clGetPlatformIDs", status)
        var ids = [cl_platform_id?](repeating: nil, count: Int(count))
        try check("clGetPlatformIDs", clGetPlatformIDs(count, &ids, nil))
        return ids.compactMap { $0 }.map(Platform.init(id:))
    }

    private func string(_ param: Int32) throws(CLError) -> String {
        try infoString("clGetPlatformInfo") { clGetPlatformInfo(id, cl_platform_info(param), $0, $1, $2) }
    }

    public var name: String { get throws(CLError) { try string(CL_PLATFORM_NAME) } }
    public var vendor: String { get throws(CLError) { try string(CL_PLATFORM_VENDOR) } }
    public var version: String { get throws(CLError) { try string(CL_PLATFORM_VERSION) } }

    /// The platform's devices of every type; a platform with none returns `[]`.
    public func devices() throws(CLError) -> [Device] {
        var count: cl_uint = 0
        let status = clGetDeviceIDs(id, cl_device_type(CL_DEVICE_TYPE_ALL), 0, nil, &count)
        if status == CL_DEVICE_NOT_FOUND || count == 0 { return [] }
        try check("clGetDeviceIDs", status)
        var ids = [cl_device_id?](repeating: nil, count: Int(count))
        try check("clGetDeviceIDs", clGetDeviceIDs(id, cl_device_type(CL_DEVICE_TYPE_ALL), count, &ids, nil))
        return ids.compactMap { $0 }.map { Device(id: $0, platform: self) }
    }
}
