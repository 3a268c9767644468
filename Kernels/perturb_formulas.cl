/* Deep zoom of Julia sets and the Burning Ship by perturbation, with Double deltas. Swift twin:
   Sources/GlintWorkloads/Fractal/Deep/PerturbationFormulas.swift (escapeJulia,
   escapeBurningShip, foldDelta, sampleDelta).

   Each sample starts at its pixel z0 = C + d and is iterated as a delta dz against reference
   orbits computed on the host in arbitrary precision and rounded to double (FormulaOrbit): the
   main orbit from the centre C (indices 0 .. main_count-1), then the critical orbit from 0
   (indices main_count .. orbit_count-1). Julia: dz' = 2 Z dz + dz^2. Burning Ship: the delta of
   z^2 + c before the abs, then |S + dw| - |S| per component by the signs of S and S + dw, the
   orbits holding the signed values before the abs. Rebasing: when |z| < |dz| or the current
   reference has no next point, dz = z and the sample continues from the critical orbit's
   start. The operations and their order are the contract with the Swift twin: no fused
   multiply-add (FP_CONTRACT OFF), and double division is correctly rounded, so escape counts
   are identical on both paths.

   The counts and |z|^2 at escape go to the same buffers as fractal_escape's, for fractal.cl's
   colour pass. params.scale_bits holds the pixel spacing 2/(zoom*H) (from MPFR). */
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#include "common/types.h"

/* The sample's delta from the centre (PerturbationFormulas.sampleDelta). */
inline double2 Perturb_SampleDelta(const GlintFractalParams p, int sx, int sy)
{
    const double spacing = as_double(p.scale_bits);
    const double ss = (double)p.ss;
    const double half_w = (double)p.width * 0.5, half_h = (double)p.height * 0.5;
    const double d_re = (((double)sx + 0.5) / ss - half_w) * spacing;
    const double off_im = (((double)sy + 0.5) / ss - half_h) * spacing;
    return (double2)(d_re, -off_im);
}

/* |s + w| - |s| from the reference's signed value s, its delta w and a = s + w
   (PerturbationFormulas.foldDelta). */
inline double Perturb_FoldDelta(double s, double a, double w)
{
    if (s < 0.0) return a < 0.0 ? -w : (2.0 * s) + w;
    return a < 0.0 ? -((2.0 * s) + w) : w;
}

__kernel void perturb_julia_escape(__global uint* counts,        /* escape count per sample          */
                                   __global float* mag2_out,     /* |z|^2 at escape (smooth)         */
                                   __global const double* orbit_re,
                                   __global const double* orbit_im,
                                   const int main_count,         /* points of the main orbit, >= 2   */
                                   const int orbit_count,        /* points of both orbits            */
                                   const GlintFractalParams p,
                                   const int row0,               /* first sample row of this strip   */
                                   const int rows)               /* sample rows in this strip        */
{
    const int sx = (int)get_global_id(0);
    const int ly = (int)get_global_id(1);
    const int sw = p.width * p.ss;
    if (sx >= sw || ly >= rows) return;
    const double2 d0 = Perturb_SampleDelta(p, sx, row0 + ly);
    double dr = d0.x, di = d0.y;
    const double b2 = (double)p.bailout2;

    int m = 0;
    int last = main_count - 1;
    uint count = 0;
    float mag = 0.0f;
    for (int i = 0; i < p.max_iter; i++) {
        const double zr = orbit_re[m], zi = orbit_im[m];
        const double nr = (2.0 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di));
        const double ni = (2.0 * ((zr * di) + (zi * dr))) + (2.0 * (dr * di));
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
            m = main_count;
            last = orbit_count - 1;
        } else {
            dr = nr; di = ni;
        }
    }
    const int i = ly * sw + sx;
    counts[i] = count;
    mag2_out[i] = mag;
}

__kernel void perturb_burning_ship_escape(__global uint* counts,
                                          __global float* mag2_out,
                                          __global const double* orbit_re,  /* signed, before abs() */
                                          __global const double* orbit_im,
                                          const int main_count,
                                          const int orbit_count,
                                          const GlintFractalParams p,
                                          const int row0,
                                          const int rows)
{
    const int sx = (int)get_global_id(0);
    const int ly = (int)get_global_id(1);
    const int sw = p.width * p.ss;
    if (sx >= sw || ly >= rows) return;
    const double2 dc = Perturb_SampleDelta(p, sx, row0 + ly);
    const double dc_re = dc.x, dc_im = dc.y;
    const double b2 = (double)p.bailout2;

    int m = 0;
    int last = main_count - 1;
    double zr = orbit_re[0], zi = orbit_im[0];
    double dr = dc_re, di = dc_im;
    uint count = 0;
    float mag = 0.0f;
    for (int i = 0; i < p.max_iter; i++) {
        const double wr = ((2.0 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))) + dc_re;
        const double wi = ((2.0 * ((zr * di) + (zi * dr))) + (2.0 * (dr * di))) + dc_im;
        m += 1;
        const double sr = orbit_re[m], si = orbit_im[m];
        const double ar = sr + wr, ai = si + wi;
        const double xr = fabs(ar), xi = fabs(ai);
        const double nr = Perturb_FoldDelta(sr, ar, wr), ni = Perturb_FoldDelta(si, ai, wi);
        const double zm = (xr * xr) + (xi * xi);
        if (!(zm <= b2)) {
            mag = (float)zm;
            break;
        }
        count += 1;
        if (zm < (nr * nr) + (ni * ni) || m == last) {
            dr = xr; di = xi;
            m = main_count;
            last = orbit_count - 1;
            zr = orbit_re[m]; zi = orbit_im[m];
        } else {
            dr = nr; di = ni;
            zr = fabs(sr); zi = fabs(si);
        }
    }
    const int i = ly * sw + sx;
    counts[i] = count;
    mag2_out[i] = mag;
}
