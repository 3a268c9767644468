import COpenCL

// Every raw OpenCL call in Glint goes through the helpers in this file, which turn a status
// code into a `CLError` naming the routine. Keeping them in one place keeps the wrapper auditable.

/// Throws `CLError(routine, status)` unless `status` is `CL_SUCCESS`.
@inline(__always)
func check(_ routine: StaticString, _ status: cl_int, detail: @autoclosure () -> String? = nil) throws(CLError) {
    if status != CL_SUCCESS {
        throw CLError("\(routine)", CLStatus(rawValue: status), detail: detail())
    }
}

/// Calls a `clCreate*` routine that reports its status through an out-parameter.
@inline(__always)
func create<T>(_ routine: StaticString, _ body: (UnsafeMutablePointer<cl_int>) -> T?) throws(CLError) -> T {
    var status: cl_int = CL_SUCCESS
    let handle = body(&status)
    try check(routine, status)
    guard let handle else { throw CLError("\(routine)", .invalidValue, detail: "returned a null handle") }
    return handle
}

/// Reads a variable-size info value (`clGet*Info` pattern: ask the size, then the bytes).
func infoBytes(_ routine: StaticString,
               _ query: (Int, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?) -> cl_int) throws(CLError) -> [UInt8] {
    var size = 0
    try check(routine, query(0, nil, &size))
    if size == 0 { return [] }
    var bytes = [UInt8](repeating: 0, count: size)
    let status = bytes.withUnsafeMutableBytes { query(size, $0.baseAddress, nil) }
    try check(routine, status)
    return bytes
}

/// Reads a NUL-terminated string info value.
func infoString(_ routine: StaticString,
                _ query: (Int, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?) -> cl_int) throws(CLError) -> String {
    var bytes = try infoBytes(routine, query)
    while let last = bytes.last, last == 0 { bytes.removeLast() }
    return String(decoding: bytes, as: UTF8.self).trimmingSpaces()
}

/// Reads a fixed-size info value.
func infoValue<T: BitwiseCopyable>(_ routine: StaticString, _ type: T.Type,
                                   _ query: (Int, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?) -> cl_int) throws(CLError) -> T {
    let value = UnsafeMutablePointer<T>.allocate(capacity: 1)
    defer { value.deallocate() }
    try check(routine, query(MemoryLayout<T>.size, UnsafeMutableRawPointer(value), nil))
    return value.pointee
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\n" || f == "\t" || f == "\r" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\n" || l == "\t" || l == "\r" { s.removeLast() }
        return String(s)
    }
}
