#ifndef GLINT_COPENCL_SHIM_H
#define GLINT_COPENCL_SHIM_H
// Glint targets the OpenCL 1.2 host API, which every ICD loader and driver in use provides
// (PoCL, NVIDIA, AMD, Intel). Newer entry points are not used.
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#endif
