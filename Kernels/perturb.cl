/* Deep zoom of the Mandelbrot set by perturbation, with Double deltas. Swift twin:
   Sources/GlintWorkloads/Fractal/Deep/PerturbationCPU.swift (escape, sampleDelta).

   A sample at c = C + dc is iterated as a delta dz against the reference orbit O of the view
   centre C (O[0] = 0, O[1] = C, O[n+1] = O[n]^2 + C, computed on the host in arbitrary
   precision and rounded to double): z = O[m] + dz, dz' = 2 O[m] dz + dz^2 + dc. Rebasing: when
   |z| < |dz| or the reference has no next point, dz = z and m = 0. The operations and their
   order are the contract with the Swift twin: no fused multiply-add (FP_CONTRACT OFF), and
   double division is correctly rounded, so escape counts are identical on both paths.

   The counts and |z|^2 at escape go to the same buffers as fractal_escape's, for fractal.cl's
   colour pass. params.scale_bits holds the pixel spacing 2/(zoom*H) (from the orbit). */
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#include "common/types.h"

__kernel void perturb_escape(__global uint* counts,        /* escape count per sample         */
                             __global float* mag2_out,     /* |z|^2 at escape (smooth)        */
                             __global const double* orbit_re,
                             __global const double* orbit_im,
                             const int orbit_count,        /* points in the orbit, at least 2 */
                             const GlintFractalParams p,
                             const int row0,               /* first sample row of this strip  */
                             const int rows)               /* sample rows in this strip       */
{
    const int sx = (int)get_global_id(0);
    const int ly = (int)get_global_id(1);
    const int sw = p.width * p.ss;
    if (sx >= sw || ly >= rows) return;
    const int sy = row0 + ly;

    /* The sample's delta from the centre (PerturbationCPU.sampleDelta). */
    const double spacing = as_double(p.scale_bits);
    const double ss = (double)p.ss;
    const double half_w = (double)p.width * 0.5, half_h = (double)p.height * 0.5;
    const double dc_re = (((double)sx + 0.5) / ss - half_w) * spacing;
    const double off_im = (((double)sy + 0.5) / ss - half_h) * spacing;
    const double dc_im = -off_im;
    const double b2 = (double)p.bailout2;

    const int last = orbit_count - 1;
    int m = 1;
    double dr = dc_re, di = dc_im;
    if (m == last) {            /* the centre itself escaped at once: start rebased */
        dr = orbit_re[1] + dc_re;
        di = orbit_im[1] + dc_im;
        m = 0;
    }
    uint count = 0;
    float mag = 0.0f;
    for (int i = 0; i < p.max_iter; i++) {
        const double zr = orbit_re[m], zi = orbit_im[m];
        const double nr = ((2.0 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))) + dc_re;
        const double ni = ((2.0 * ((zr * di) + (zi * dr))) + (2.0 * (dr * di))) + dc_im;
        m += 1;
        const double xr = orbit_re[m] + nr, xi = orbit_im[m] + ni;
        const double zm = (xr * xr) + (xi * xi);
        /* "not <=" so that a NaN orbit counts as escaped */
        if (!(zm <= b2)) {
            mag = (float)zm;
            break;
        }
        count += 1;
        if (zm < (nr * nr) + (ni * ni) || m == last) {
            dr = xr; di = xi;
            m = 0;
        } else {
            dr = nr; di = ni;
        }
    }
    const int i = ly * sw + sx;
    counts[i] = count;
    mag2_out[i] = mag;
}
