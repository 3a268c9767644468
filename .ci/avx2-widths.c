/* An LD_PRELOAD library for the AVX2 lane of .ci/run: an OpenCL CPU device answers the vector-width
   queries as PoCL answers them on a processor with AVX2 and no AVX-512 (32-byte vectors: 16 chars
   and shorts, 8 ints and floats, 4 longs and doubles; a type the device lacks stays 0). PoCL reads
   these widths from the host's CPUID, which no variable overrides; the compile target is set by
   POCL_KERNELLIB_NAME and POCL_LLVM_CPU_NAME beside this. Every other query (half's widths
   included: they do not depend on AVX-512), and every query about another kind of device, goes to
   the ICD loader unchanged. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <string.h>

typedef cl_int (*GetDeviceInfo)(cl_device_id, cl_device_info, size_t, void*, size_t*);

static cl_uint avx2_width(cl_device_info param, int* known) {
    *known = 1;
    switch (param) {
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR: case CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT: case CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT: return 16;
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT: case CL_DEVICE_NATIVE_VECTOR_WIDTH_INT:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT: case CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: return 8;
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG: case CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE: case CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE: return 4;
    default: *known = 0; return 0;
    }
}

static GetDeviceInfo next;

/* Looked up once, before any thread of the program can query a device. */
__attribute__((constructor)) static void find_next(void) { next = (GetDeviceInfo)dlsym(RTLD_NEXT, "clGetDeviceInfo"); }

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id device, cl_device_info param, size_t size,
                                               void* value, size_t* size_ret) {
    if (!next) return CL_INVALID_DEVICE;
    int known;
    cl_uint width = avx2_width(param, &known);
    cl_device_type type = 0;
    if (!known || next(device, CL_DEVICE_TYPE, sizeof type, &type, NULL) != CL_SUCCESS || !(type & CL_DEVICE_TYPE_CPU))
        return next(device, param, size, value, size_ret);
    /* Keep the driver's errors (a bad device, a short buffer) and a width of 0 (a type it lacks). */
    cl_uint actual = 0;
    cl_int status = next(device, param, sizeof actual, &actual, NULL);
    if (status != CL_SUCCESS) return status;
    if (value && size < sizeof(cl_uint)) return CL_INVALID_VALUE;
    if (actual == 0) width = 0;
    if (value) memcpy(value, &width, sizeof width);
    if (size_ret) *size_ret = sizeof width;
    return CL_SUCCESS;
}
