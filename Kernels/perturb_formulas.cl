/* Deep zoom of Julia sets and the Burning Ship by perturbation, at any depth. Swift twin:
   Sources/GlintWorkloads/Fractal/Deep/PerturbationFormulas.swift (escapeJulia,
   escapeBurningShip, foldDelta) with PerturbationCPU's sampleDelta, offsetExponent, ldexp and
   norm (common/perturb.h).

   Each sample starts at its pixel z0 = C + d 2^E and is iterated as a delta dz against reference
   orbits computed on the host in arbitrary precision and rounded to double (FormulaOrbit): the
   main orbit from the centre C (indices 0 .. main_count-1), then the critical orbit from 0
   (indices main_count .. orbit_count-1). Julia: dz' = 2 Z dz + dz^2. Burning Ship: the delta of
   z^2 + c before the abs, then |S + dw| - |S| per component by the signs of S and S + dw, the
   orbits holding the signed values before the abs. While |dz| < 2^-520 it is a mantissa pair w
   with its own exponent e (the tiny phase; the Burning Ship's fold taken in units of 2^e), then
   a plain double (the double phase). Rebasing: when |z| < |dz| or the current reference has no
   next point, dz = z and the sample continues from the critical orbit's start, in the double
   phase. The operations and their order are the contract with the Swift twin (its
   documentation spells them out): no fused multiply-add (FP_CONTRACT OFF); ldexp and ilogb are
   exact and double division is correctly rounded, so escape counts are identical on both paths.

   The counts and |z|^2 at escape go to the same buffers as fractal_escape's, for fractal.cl's
   colour pass. params.scale_bits holds the mantissa of the pixel spacing 2/(zoom*H), in [1, 2);
   spacing_exp its exponent. */
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#include "common/types.h"
#include "common/perturb.h"


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
                                   const int spacing_exp,        /* E: spacing = mantissa * 2^E      */
                                   const GlintFractalParams p,
                                   const int row0,               /* first sample row of this strip   */
                                   const int rows)               /* sample rows in this strip        */
{
    const int sx = (int)get_global_id(0);
    const int ly = (int)get_global_id(1);
    const int sw = p.width * p.ss;
    if (sx >= sw || ly >= rows) return;
    const double2 d = Perturb_SampleDelta(p, sx, row0 + ly);
    const int E = spacing_exp;
    double dr = ldexp(d.x, E), di = ldexp(d.y, E);
    const double b2 = (double)p.bailout2;

    int m = 0;
    int last = main_count - 1;
    uint count = 0;
    float mag = 0.0f;
    int i = 0;
    int escaped = 0;
    if (Perturb_OffsetExponent(d.x, d.y, E) < PERTURB_TINY_LIMIT) {
        double wr = d.x, wi = d.y;
        int e = E;
        Perturb_Norm(&wr, &wi, &e);
        while (i < p.max_iter) {
            const double zr = orbit_re[m], zi = orbit_im[m];
            double nr = (2.0 * ((zr * wr) - (zi * wi))) + ldexp((wr * wr) - (wi * wi), e);
            double ni = (2.0 * ((zr * wi) + (zi * wr))) + ldexp(2.0 * (wr * wi), e);
            Perturb_Norm(&nr, &ni, &e);
            wr = nr; wi = ni;
            m += 1;
            const double ddr = ldexp(wr, e), ddi = ldexp(wi, e);
            const double xr = orbit_re[m] + ddr, xi = orbit_im[m] + ddi;
            const double zm = (xr * xr) + (xi * xi);
            if (!(zm <= b2)) {
                mag = (float)zm;
                escaped = 1;
                break;
            }
            count += 1;
            i += 1;
            if (m == last || zm < (ddr * ddr) + (ddi * ddi)) {
                dr = xr; di = xi;
                m = main_count;
                last = orbit_count - 1;
                break;
            } else if (e > PERTURB_TINY_LIMIT) {
                dr = ddr; di = ddi;
                break;
            }
        }
    }
    while (!escaped && i < p.max_iter) {
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
        i += 1;
    }
    const int o = ly * sw + sx;
    counts[o] = count;
    mag2_out[o] = mag;
}

__kernel void perturb_burning_ship_escape(__global uint* counts,
                                          __global float* mag2_out,
                                          __global const double* orbit_re,  /* signed, before abs() */
                                          __global const double* orbit_im,
                                          const int main_count,
                                          const int orbit_count,
                                          const int spacing_exp,
                                          const GlintFractalParams p,
                                          const int row0,
                                          const int rows)
{
    const int sx = (int)get_global_id(0);
    const int ly = (int)get_global_id(1);
    const int sw = p.width * p.ss;
    if (sx >= sw || ly >= rows) return;
    const double2 d = Perturb_SampleDelta(p, sx, row0 + ly);
    const int E = spacing_exp;
    const double dc_re = ldexp(d.x, E), dc_im = ldexp(d.y, E);
    const double b2 = (double)p.bailout2;

    int m = 0;
    int last = main_count - 1;
    double zr = orbit_re[0], zi = orbit_im[0];
    double dr = dc_re, di = dc_im;
    uint count = 0;
    float mag = 0.0f;
    int i = 0;
    int escaped = 0;
    if (Perturb_OffsetExponent(d.x, d.y, E) < PERTURB_TINY_LIMIT) {
        double wr = d.x, wi = d.y;
        int e = E;
        Perturb_Norm(&wr, &wi, &e);
        while (i < p.max_iter) {
            const double pr = ((2.0 * ((zr * wr) - (zi * wi))) + ldexp((wr * wr) - (wi * wi), e)) + ldexp(d.x, E - e);
            const double pi = ((2.0 * ((zr * wi) + (zi * wr))) + ldexp(2.0 * (wr * wi), e)) + ldexp(d.y, E - e);
            m += 1;
            const double sr = orbit_re[m], si = orbit_im[m];
            const double ar = sr + ldexp(pr, e), ai = si + ldexp(pi, e);
            const double xr = fabs(ar), xi = fabs(ai);
            const double tr = ldexp(sr, -e), ti = ldexp(si, -e);
            double nr = Perturb_FoldDelta(tr, tr + pr, pr), ni = Perturb_FoldDelta(ti, ti + pi, pi);
            Perturb_Norm(&nr, &ni, &e);
            wr = nr; wi = ni;
            const double zm = (xr * xr) + (xi * xi);
            if (!(zm <= b2)) {
                mag = (float)zm;
                escaped = 1;
                break;
            }
            count += 1;
            i += 1;
            const double ddr = ldexp(wr, e), ddi = ldexp(wi, e);
            if (m == last || zm < (ddr * ddr) + (ddi * ddi)) {
                dr = xr; di = xi;
                m = main_count;
                last = orbit_count - 1;
                zr = orbit_re[m]; zi = orbit_im[m];
                break;
            }
            zr = fabs(sr); zi = fabs(si);
            if (e > PERTURB_TINY_LIMIT) {
                dr = ddr; di = ddi;
                break;
            }
        }
    }
    while (!escaped && i < p.max_iter) {
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
        i += 1;
    }
    const int o = ly * sw + sx;
    counts[o] = count;
    mag2_out[o] = mag;
}
