import COpenCL

/// An OpenCL status code (`cl_int`), with its specification name.
///
/// Each static names one status of the OpenCL 1.2 specification (plus the ICD loader's
/// `CL_PLATFORM_NOT_FOUND_KHR`); `CLStatusTests` checks every value against the C header.
public struct CLStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The corresponding C status is `CL_SUCCESS`.
    public static let success = CLStatus(rawValue: 0)
    /// The corresponding C status is `CL_DEVICE_NOT_FOUND`.
    public static let deviceNotFound = CLStatus(rawValue: -1)
    /// The corresponding C status is `CL_DEVICE_NOT_AVAILABLE`.
    public static let deviceNotAvailable = CLStatus(rawValue: -2)
    /// The corresponding C status is `CL_COMPILER_NOT_AVAILABLE`.
    public static let compilerNotAvailable = CLStatus(rawValue: -3)
    /// The corresponding C status is `CL_MEM_OBJECT_ALLOCATION_FAILURE`.
    public static let memObjectAllocationFailure = CLStatus(rawValue: -4)
    /// The corresponding C status is `CL_OUT_OF_RESOURCES`.
    public static let outOfResources = CLStatus(rawValue: -5)
    /// The corresponding C status is `CL_OUT_OF_HOST_MEMORY`.
    public static let outOfHostMemory = CLStatus(rawValue: -6)
    /// The corresponding C status is `CL_PROFILING_INFO_NOT_AVAILABLE`.
    public static let profilingInfoNotAvailable = CLStatus(rawValue: -7)
    /// The corresponding C status is `CL_MEM_COPY_OVERLAP`.
    public static let memCopyOverlap = CLStatus(rawValue: -8)
    /// The corresponding C status is `CL_IMAGE_FORMAT_MISMATCH`.
    public static let imageFormatMismatch = CLStatus(rawValue: -9)
    /// The corresponding C status is `CL_IMAGE_FORMAT_NOT_SUPPORTED`.
    public static let imageFormatNotSupported = CLStatus(rawValue: -10)
    /// The corresponding C status is `CL_BUILD_PROGRAM_FAILURE`.
    public static let buildProgramFailure = CLStatus(rawValue: -11)
    /// The corresponding C status is `CL_MAP_FAILURE`.
    public static let mapFailure = CLStatus(rawValue: -12)
    /// The corresponding C status is `CL_MISALIGNED_SUB_BUFFER_OFFSET`.
    public static let misalignedSubBufferOffset = CLStatus(rawValue: -13)
    /// The corresponding C status is `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST`.
    public static let execStatusErrorForEventsInWaitList = CLStatus(rawValue: -14)
    /// The corresponding C status is `CL_COMPILE_PROGRAM_FAILURE`.
    public static let compileProgramFailure = CLStatus(rawValue: -15)
    /// The corresponding C status is `CL_LINKER_NOT_AVAILABLE`.
    public static let linkerNotAvailable = CLStatus(rawValue: -16)
    /// The corresponding C status is `CL_LINK_PROGRAM_FAILURE`.
    public static let linkProgramFailure = CLStatus(rawValue: -17)
    /// The corresponding C status is `CL_DEVICE_PARTITION_FAILED`.
    public static let devicePartitionFailed = CLStatus(rawValue: -18)
    /// The corresponding C status is `CL_KERNEL_ARG_INFO_NOT_AVAILABLE`.
    public static let kernelArgInfoNotAvailable = CLStatus(rawValue: -19)
    /// The corresponding C status is `CL_INVALID_VALUE`.
    public static let invalidValue = CLStatus(rawValue: -30)
    /// The corresponding C status is `CL_INVALID_DEVICE_TYPE`.
    public static let invalidDeviceType = CLStatus(rawValue: -31)
    /// The corresponding C status is `CL_INVALID_PLATFORM`.
    public static let invalidPlatform = CLStatus(rawValue: -32)
    /// The corresponding C status is `CL_INVALID_DEVICE`.
    public static let invalidDevice = CLStatus(rawValue: -33)
    /// The corresponding C status is `CL_INVALID_CONTEXT`.
    public static let invalidContext = CLStatus(rawValue: -34)
    /// The corresponding C status is `CL_INVALID_QUEUE_PROPERTIES`.
    public static let invalidQueueProperties = CLStatus(rawValue: -35)
    /// The corresponding C status is `CL_INVALID_COMMAND_QUEUE`.
    public static let invalidCommandQueue = CLStatus(rawValue: -36)
    /// The corresponding C status is `CL_INVALID_HOST_PTR`.
    public static let invalidHostPtr = CLStatus(rawValue: -37)
    /// The corresponding C status is `CL_INVALID_MEM_OBJECT`.
    public static let invalidMemObject = CLStatus(rawValue: -38)
    /// The corresponding C status is `CL_INVALID_IMAGE_FORMAT_DESCRIPTOR`.
    public static let invalidImageFormatDescriptor = CLStatus(rawValue: -39)
    /// The corresponding C status is `CL_INVALID_IMAGE_SIZE`.
    public static let invalidImageSize = CLStatus(rawValue: -40)
    /// The corresponding C status is `CL_INVALID_SAMPLER`.
    public static let invalidSampler = CLStatus(rawValue: -41)
    /// The corresponding C status is `CL_INVALID_BINARY`.
    public static let invalidBinary = CLStatus(rawValue: -42)
    /// The corresponding C status is `CL_INVALID_BUILD_OPTIONS`.
    public static let invalidBuildOptions = CLStatus(rawValue: -43)
    /// The corresponding C status is `CL_INVALID_PROGRAM`.
    public static let invalidProgram = CLStatus(rawValue: -44)
    /// The corresponding C status is `CL_INVALID_PROGRAM_EXECUTABLE`.
    public static let invalidProgramExecutable = CLStatus(rawValue: -45)
    /// The corresponding C status is `CL_INVALID_KERNEL_NAME`.
    public static let invalidKernelName = CLStatus(rawValue: -46)
    /// The corresponding C status is `CL_INVALID_KERNEL_DEFINITION`.
    public static let invalidKernelDefinition = CLStatus(rawValue: -47)
    /// The corresponding C status is `CL_INVALID_KERNEL`.
    public static let invalidKernel = CLStatus(rawValue: -48)
    /// The corresponding C status is `CL_INVALID_ARG_INDEX`.
    public static let invalidArgIndex = CLStatus(rawValue: -49)
    /// The corresponding C status is `CL_INVALID_ARG_VALUE`.
    public static let invalidArgValue = CLStatus(rawValue: -50)
    /// The corresponding C status is `CL_INVALID_ARG_SIZE`.
    public static let invalidArgSize = CLStatus(rawValue: -51)
    /// The corresponding C status is `CL_INVALID_KERNEL_ARGS`.
    public static let invalidKernelArgs = CLStatus(rawValue: -52)
    /// The corresponding C status is `CL_INVALID_WORK_DIMENSION`.
    public static let invalidWorkDimension = CLStatus(rawValue: -53)
    /// The corresponding C status is `CL_INVALID_WORK_GROUP_SIZE`.
    public static let invalidWorkGroupSize = CLStatus(rawValue: -54)
    /// The corresponding C status is `CL_INVALID_WORK_ITEM_SIZE`.
    public static let invalidWorkItemSize = CLStatus(rawValue: -55)
    /// The corresponding C status is `CL_INVALID_GLOBAL_OFFSET`.
    public static let invalidGlobalOffset = CLStatus(rawValue: -56)
    /// The corresponding C status is `CL_INVALID_EVENT_WAIT_LIST`.
    public static let invalidEventWaitList = CLStatus(rawValue: -57)
    /// The corresponding C status is `CL_INVALID_EVENT`.
    public static let invalidEvent = CLStatus(rawValue: -58)
    /// The corresponding C status is `CL_INVALID_OPERATION`.
    public static let invalidOperation = CLStatus(rawValue: -59)
    /// The corresponding C status is `CL_INVALID_GL_OBJECT`.
    public static let invalidGLObject = CLStatus(rawValue: -60)
    /// The corresponding C status is `CL_INVALID_BUFFER_SIZE`.
    public static let invalidBufferSize = CLStatus(rawValue: -61)
    /// The corresponding C status is `CL_INVALID_MIP_LEVEL`.
    public static let invalidMipLevel = CLStatus(rawValue: -62)
    /// The corresponding C status is `CL_INVALID_GLOBAL_WORK_SIZE`.
    public static let invalidGlobalWorkSize = CLStatus(rawValue: -63)
    /// The corresponding C status is `CL_INVALID_PROPERTY`.
    public static let invalidProperty = CLStatus(rawValue: -64)
    /// The corresponding C status is `CL_INVALID_IMAGE_DESCRIPTOR`.
    public static let invalidImageDescriptor = CLStatus(rawValue: -65)
    /// The corresponding C status is `CL_INVALID_COMPILER_OPTIONS`.
    public static let invalidCompilerOptions = CLStatus(rawValue: -66)
    /// The corresponding C status is `CL_INVALID_LINKER_OPTIONS`.
    public static let invalidLinkerOptions = CLStatus(rawValue: -67)
    /// The corresponding C status is `CL_INVALID_DEVICE_PARTITION_COUNT`.
    public static let invalidDevicePartitionCount = CLStatus(rawValue: -68)
    /// The corresponding C status is `CL_PLATFORM_NOT_FOUND_KHR` (ICD loader: no vendor driver installed).
    public static let platformNotFoundKHR = CLStatus(rawValue: -1001)

    /// Every named status, for look-up by value.
    public static let all: [CLStatus] = [
        .success, .deviceNotFound, .deviceNotAvailable, .compilerNotAvailable, .memObjectAllocationFailure,
        .outOfResources, .outOfHostMemory, .profilingInfoNotAvailable, .memCopyOverlap, .imageFormatMismatch,
        .imageFormatNotSupported, .buildProgramFailure, .mapFailure, .misalignedSubBufferOffset,
        .execStatusErrorForEventsInWaitList, .compileProgramFailure, .linkerNotAvailable, .linkProgramFailure,
        .devicePartitionFailed, .kernelArgInfoNotAvailable, .invalidValue, .invalidDeviceType, .invalidPlatform,
        .invalidDevice, .invalidContext, .invalidQueueProperties, .invalidCommandQueue, .invalidHostPtr,
        .invalidMemObject, .invalidImageFormatDescriptor, .invalidImageSize, .invalidSampler, .invalidBinary,
        .invalidBuildOptions, .invalidProgram, .invalidProgramExecutable, .invalidKernelName,
        .invalidKernelDefinition, .invalidKernel, .invalidArgIndex, .invalidArgValue, .invalidArgSize,
        .invalidKernelArgs, .invalidWorkDimension, .invalidWorkGroupSize, .invalidWorkItemSize,
        .invalidGlobalOffset, .invalidEventWaitList, .invalidEvent, .invalidOperation, .invalidGLObject,
        .invalidBufferSize, .invalidMipLevel, .invalidGlobalWorkSize, .invalidProperty,
        .invalidImageDescriptor, .invalidCompilerOptions, .invalidLinkerOptions,
        .invalidDevicePartitionCount, .platformNotFoundKHR,
    ]

    /// The specification's name, e.g. `CL_OUT_OF_RESOURCES`; unknown codes read `CL_STATUS(-n)`.
    public var name: String { Self.names[rawValue] ?? "CL_STATUS(\(rawValue))" }
    public var description: String { name }

    private static let names: [Int32: String] = [
        0: "CL_SUCCESS", -1: "CL_DEVICE_NOT_FOUND", -2: "CL_DEVICE_NOT_AVAILABLE",
        -3: "CL_COMPILER_NOT_AVAILABLE", -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE", -5: "CL_OUT_OF_RESOURCES",
        -6: "CL_OUT_OF_HOST_MEMORY", -7: "CL_PROFILING_INFO_NOT_AVAILABLE", -8: "CL_MEM_COPY_OVERLAP",
        -9: "CL_IMAGE_FORMAT_MISMATCH", -10: "CL_IMAGE_FORMAT_NOT_SUPPORTED", -11: "CL_BUILD_PROGRAM_FAILURE",
        -12: "CL_MAP_FAILURE", -13: "CL_MISALIGNED_SUB_BUFFER_OFFSET",
        -14: "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST", -15: "CL_COMPILE_PROGRAM_FAILURE",
        -16: "CL_LINKER_NOT_AVAILABLE", -17: "CL_LINK_PROGRAM_FAILURE", -18: "CL_DEVICE_PARTITION_FAILED",
        -19: "CL_KERNEL_ARG_INFO_NOT_AVAILABLE", -30: "CL_INVALID_VALUE", -31: "CL_INVALID_DEVICE_TYPE",
        -32: "CL_INVALID_PLATFORM", -33: "CL_INVALID_DEVICE", -34: "CL_INVALID_CONTEXT",
        -35: "CL_INVALID_QUEUE_PROPERTIES", -36: "CL_INVALID_COMMAND_QUEUE", -37: "CL_INVALID_HOST_PTR",
        -38: "CL_INVALID_MEM_OBJECT", -39: "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR", -40: "CL_INVALID_IMAGE_SIZE",
        -41: "CL_INVALID_SAMPLER", -42: "CL_INVALID_BINARY", -43: "CL_INVALID_BUILD_OPTIONS",
        -44: "CL_INVALID_PROGRAM", -45: "CL_INVALID_PROGRAM_EXECUTABLE", -46: "CL_INVALID_KERNEL_NAME",
        -47: "CL_INVALID_KERNEL_DEFINITION", -48: "CL_INVALID_KERNEL", -49: "CL_INVALID_ARG_INDEX",
        -50: "CL_INVALID_ARG_VALUE", -51: "CL_INVALID_ARG_SIZE", -52: "CL_INVALID_KERNEL_ARGS",
        -53: "CL_INVALID_WORK_DIMENSION", -54: "CL_INVALID_WORK_GROUP_SIZE", -55: "CL_INVALID_WORK_ITEM_SIZE",
        -56: "CL_INVALID_GLOBAL_OFFSET", -57: "CL_INVALID_EVENT_WAIT_LIST", -58: "CL_INVALID_EVENT",
        -59: "CL_INVALID_OPERATION", -60: "CL_INVALID_GL_OBJECT", -61: "CL_INVALID_BUFFER_SIZE",
        -62: "CL_INVALID_MIP_LEVEL", -63: "CL_INVALID_GLOBAL_WORK_SIZE", -64: "CL_INVALID_PROPERTY",
        -65: "CL_INVALID_IMAGE_DESCRIPTOR", -66: "CL_INVALID_COMPILER_OPTIONS", -67: "CL_INVALID_LINKER_OPTIONS",
        -68: "CL_INVALID_DEVICE_PARTITION_COUNT", -1001: "CL_PLATFORM_NOT_FOUND_KHR",
    ]
}

/// A failed OpenCL call: the routine, its status and, for builds, the options and each device's log.
public struct CLError: Error, Sendable, CustomStringConvertible {
    public let routine: String
    public let status: CLStatus
    /// Extra context, e.g. the build options and build log, or the kernel name.
    public let detail: String?

    public init(_ routine: String, _ status: CLStatus, detail: String? = nil) {
        self.routine = routine
        self.status = status
        self.detail = detail
    }

    /// `clBuildProgram: CL_BUILD_PROGRAM_FAILURE`, then the detail on following lines.
    public var description: String {
        let head = "\(routine): \(status.name)"
        guard let detail, !detail.isEmpty else { return head }
        return head + "\n" + detail
    }
}

extension CLStatus {
    /// Lets callers write `catch CLStatus.outOfResources`.
    public static func ~= (status: CLStatus, error: any Error) -> Bool {
        (error as? CLError)?.status == status
    }
}
