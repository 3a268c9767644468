/* Host <-> device copy rates of the first OpenCL GPU (or CPU device with --cpu), the figures behind
   docs/GPU.md's "Where the time goes": blocking clEnqueueWriteBuffer / clEnqueueReadBuffer of 8 MiB,
   33 MB (a 1080p float RGBA image) and 133 MB (the same at 4K), each the median of 9, from and into
     - pageable memory already mapped (malloc'd and written once),
     - pageable memory never touched (a fresh anonymous mapping, one per repetition: its page
       faults happen inside the driver's copy),
     - pinned memory (a CL_MEM_ALLOC_HOST_PTR buffer, mapped),
     - a fresh anonymous mapping written just before (a new image's pixels: mapped, but in pages
       the driver has not seen),
   and a plain memcpy from the pinned to the mapped pageable memory, for scale.

   Build: gcc -O2 scripts/bench/peers/cl-transfer.c -o cl-transfer -lOpenCL
   Run:   ./cl-transfer [--cpu]        (OCL_ICD_VENDORS picks the drivers, as for glint) */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "peer-timing.h"

static void check(cl_int status, const char *what) {
    if (status != CL_SUCCESS) {
        fprintf(stderr, "cl-transfer: %s failed with status %d\n", what, status);
        exit(1);
    }
}

enum { REPS = 9, MODES = 7 };
static const char *mode_names[MODES] = {
    "write from mapped pageable", "read into mapped pageable", "read into untouched pageable",
    "write from pinned", "read into pinned", "memcpy pinned -> pageable", "write from fresh pageable",
};

int main(int argc, char **argv) {
    cl_device_type type = argc > 1 && strcmp(argv[1], "--cpu") == 0 ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU;
    cl_platform_id platforms[16];
    cl_uint np = 0;
    check(clGetPlatformIDs(16, platforms, &np), "clGetPlatformIDs");
    cl_device_id device = NULL;
    if (np > 16) np = 16;
    for (cl_uint i = 0; i < np && !device; i++)
        if (clGetDeviceIDs(platforms[i], type, 1, &device, NULL) != CL_SUCCESS) device = NULL;
    if (!device) {
        fprintf(stderr, "cl-transfer: no OpenCL %s device\n", type == CL_DEVICE_TYPE_GPU ? "GPU" : "CPU");
        return 1;
    }
    char name[256] = "";
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL);
    printf("device: %s\n", name);
    cl_int status;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
    check(status, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
    check(status, "clCreateCommandQueue");

    const size_t sizes[] = {8u << 20, 1920u * 1080 * 16, 3840u * 2160 * 16};
    for (int s = 0; s < 3; s++) {
        size_t n = sizes[s];
        cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, n, NULL, &status);
        check(status, "clCreateBuffer (device)");
        char *pageable = malloc(n);
        if (!pageable) { fprintf(stderr, "cl-transfer: out of memory\n"); return 1; }
        memset(pageable, 1, n);
        cl_mem pinnedBuffer = clCreateBuffer(context, CL_MEM_ALLOC_HOST_PTR, n, NULL, &status);
        check(status, "clCreateBuffer (CL_MEM_ALLOC_HOST_PTR)");
        char *pinned = clEnqueueMapBuffer(queue, pinnedBuffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n, 0, NULL, NULL, &status);
        check(status, "clEnqueueMapBuffer");
        memset(pinned, 1, n);
        for (int m = 0; m < MODES; m++) {
            double t[REPS];
            for (int r = 0; r < REPS; r++) {
                char *fresh = NULL;
                if (m == 2 || m == 6) {
                    fresh = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                    if (fresh == MAP_FAILED) { perror("cl-transfer: mmap"); return 1; }
                    if (m == 6) memset(fresh, 2, n);
                }
                double t0 = now();
                switch (m) {
                case 0: check(clEnqueueWriteBuffer(queue, buffer, CL_TRUE, 0, n, pageable, 0, NULL, NULL), "write"); break;
                case 1: check(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, n, pageable, 0, NULL, NULL), "read"); break;
                case 2: check(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, n, fresh, 0, NULL, NULL), "read"); break;
                case 3: check(clEnqueueWriteBuffer(queue, buffer, CL_TRUE, 0, n, pinned, 0, NULL, NULL), "write"); break;
                case 4: check(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, n, pinned, 0, NULL, NULL), "read"); break;
                case 5: memcpy(pageable, pinned, n); break;
                case 6: check(clEnqueueWriteBuffer(queue, buffer, CL_TRUE, 0, n, fresh, 0, NULL, NULL), "write"); break;
                }
                t[r] = now() - t0;
                if (fresh) munmap(fresh, n);
            }
            double mid = median(t, REPS);
            printf("%10zu bytes  %-30s median %8.3f ms  %6.2f GB/s\n", n, mode_names[m], mid * 1e3, n / mid / 1e9);
        }
        check(clEnqueueUnmapMemObject(queue, pinnedBuffer, pinned, 0, NULL, NULL), "clEnqueueUnmapMemObject");
        check(clFinish(queue), "clFinish");
        clReleaseMemObject(pinnedBuffer);
        clReleaseMemObject(buffer);
        free(pageable);
    }
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}
