/* The pulse: one frame of the oscillator's colour. The host steps the oscillator (a sequence
   in double, as the seed keeps it) and maps purity to saturation and value; the kernel turns
   (h, s, v) into RGB with Foley's HSV and fills the frame. Swift twin:
   GlintWorkloads/Pulse/Pulse.swift (PulseRenderer.fillCPU). */
#pragma OPENCL FP_CONTRACT OFF
#include "common/types.h"
#include "common/color.h"

/* Each work-item fills PULSE_RUN consecutive pixels: a CPU device then spends its time storing
   rather than starting work-items (one pixel an item took 11 ms a 1080p frame on PoCL). */
#define PULSE_RUN 64

__kernel void pulse_fill(__global uchar4* out,  /* the frame, RGBA, row-major     */
                         float h,               /* hue in [0,1]                   */
                         float s,               /* saturation in [0,1]            */
                         float v,               /* value in [0,1]                 */
                         int count)             /* pixels in the frame            */
{
    int first = get_global_id(0) * PULSE_RUN;
    if (first >= count) return;
    float3 c = Color_HSVToRGB(h, s, v);
    uchar4 pixel = (uchar4)(Color_To8Bit(c.x), Color_To8Bit(c.y), Color_To8Bit(c.z), (uchar)255);
    int last = min(first + PULSE_RUN, count);
    for (int i = first; i < last; i++) Color_Store8(out, i, pixel);
}
