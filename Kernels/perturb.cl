/* Deep zoom of the Mandelbrot set by perturbation, at any depth, with bilinear approximation.
   Swift twin: Sources/GlintWorkloads/Fractal/Deep/PerturbationCPU.swift (escape, sampleDelta)
   and BLATable.swift (the table's layout and validity tests).

   A sample at c = C + dc is iterated as a delta dz against the reference orbit O of the view
   centre C (O[0] = 0, O[1] = C, O[n+1] = O[n]^2 + C, computed on the host in arbitrary
   precision and rounded to double): z = O[m] + dz, dz' = 2 O[m] dz + dz^2 + dc. dc is a mantissa
   pair times 2^E; while |dz| < 2^-520 it is a mantissa pair w with its own exponent e (the tiny
   phase), then a plain double (the double phase). Rebasing: when |z| < |dz| or the reference has
   no next point, dz = z and m = 0. A table step maps dz to A dz + B dc over 2^k iterations.
   The operations and their order are the contract with the Swift twin (its escape's
   documentation spells them out): no fused multiply-add (FP_CONTRACT OFF); ldexp and ilogb are
   exact, so escape counts are identical on both paths.

   The counts and |z|^2 at escape go to the same buffers as fractal_escape's, for fractal.cl's
   colour pass. params.scale_bits holds the mantissa of the pixel spacing 2/(zoom*H), in [1, 2);
   spacing_exp its exponent. */
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#include "common/types.h"
#include "common/perturb.h"


__kernel void perturb_escape(__global uint* counts,        /* escape count per sample         */
                             __global float* mag2_out,     /* |z|^2 at escape (smooth)        */
                             __global const double* orbit_re,
                             __global const double* orbit_im,
                             const int orbit_count,        /* points in the orbit, at least 2 */
                             __global const double* bla_r, /* 5 per entry: A re, im; B re, im; R^2 */
                             __global const int* bla_i,    /* 4 per entry: A exp, B exp, tA, tB */
                             __global const int* bla_lv,   /* offsets of the levels, then counts */
                             const int levels,             /* stored levels, 0: no table      */
                             const int spacing_exp,        /* E: spacing = mantissa * 2^E     */
                             const GlintFractalParams p,
                             const int row0,               /* first sample row of this strip  */
                             const int rows)               /* sample rows in this strip       */
{
    const int sx = (int)get_global_id(0);
    const int ly = (int)get_global_id(1);
    const int sw = p.width * p.ss;
    if (sx >= sw || ly >= rows) return;
    const double2 d = Perturb_SampleDelta(p, sx, row0 + ly);
    const double d_re = d.x, d_im = d.y;
    const int E = spacing_exp;
    const double b2 = (double)p.bailout2;
    const int max_iter = p.max_iter;

    const double dcr = ldexp(d_re, E), dci = ldexp(d_im, E);
    const int xd = Perturb_OffsetExponent(d_re, d_im, E);

    const int last = orbit_count - 1;
    int m = 1;
    int tiny = xd < PERTURB_TINY_LIMIT;
    double dr = dcr, di = dci;
    double wr = 0.0, wi = 0.0;
    int e = 0;
    if (tiny) { wr = d_re; wi = d_im; e = E; Perturb_Norm(&wr, &wi, &e); }
    if (m == last) {            /* the centre itself escaped at once: start rebased */
        dr = orbit_re[1] + dcr;
        di = orbit_im[1] + dci;
        m = 0;
        tiny = 0;
    }
    int count = 0;
    float mag = 0.0f;
    while (count < max_iter) {
        /* The longest valid table step here (0: none). */
        int step = 0, entry = 0;
        if (levels > 0 && m >= 1) {
            const double dz2 = (dr * dr) + (di * di);
            for (int k = PERTURB_FIRST_LEVEL; k < PERTURB_FIRST_LEVEL + levels; k++) {
                const int l = 1 << k;
                if (((m - 1) & (l - 1)) != 0) break;
                const int j = (m - 1) >> k;
                const int level = k - PERTURB_FIRST_LEVEL;
                if (j >= bla_lv[levels + level] || count + l > max_iter) break;
                const int idx = bla_lv[level] + j;
                if (tiny) {
                    if (bla_i[idx * 4 + 2] + e + 2 > -501 || bla_i[idx * 4 + 3] + xd + 2 > -501) break;
                } else {
                    if (!(dz2 < bla_r[idx * 5 + 4])) break;
                }
                step = l;
                entry = idx;
            }
        }
        if (tiny) {
            if (step > 0) {
                const double ar = bla_r[entry * 5], ai = bla_r[entry * 5 + 1];
                const double br = bla_r[entry * 5 + 2], bi = bla_r[entry * 5 + 3];
                const double pr = (ar * wr) - (ai * wi), pi = (ar * wi) + (ai * wr);
                const int pe = bla_i[entry * 4] + e;
                const double qr = (br * d_re) - (bi * d_im), qi = (br * d_im) + (bi * d_re);
                const int qe = bla_i[entry * 4 + 1] + E;
                const int f = pe > qe ? pe : qe;
                wr = ldexp(pr, pe - f) + ldexp(qr, qe - f);
                wi = ldexp(pi, pe - f) + ldexp(qi, qe - f);
                e = f;
                Perturb_Norm(&wr, &wi, &e);
            } else {
                step = 1;
                const double zr = orbit_re[m], zi = orbit_im[m];
                const double nr = ((2.0 * ((zr * wr) - (zi * wi))) + ldexp((wr * wr) - (wi * wi), e)) + ldexp(d_re, E - e);
                const double ni = ((2.0 * ((zr * wi) + (zi * wr))) + ldexp(2.0 * (wr * wi), e)) + ldexp(d_im, E - e);
                wr = nr; wi = ni;
                Perturb_Norm(&wr, &wi, &e);
            }
            m += step;
            count += step - 1;
            const double ddr = ldexp(wr, e), ddi = ldexp(wi, e);
            const double xr = orbit_re[m] + ddr, xi = orbit_im[m] + ddi;
            const double zm = (xr * xr) + (xi * xi);
            if (!(zm <= b2)) {
                mag = (float)zm;
                break;
            }
            count += 1;
            if (m == last || zm < (ddr * ddr) + (ddi * ddi)) {
                dr = xr; di = xi;
                m = 0;
                tiny = 0;
            } else if (e > PERTURB_TINY_LIMIT) {
                dr = ddr; di = ddi;
                tiny = 0;
            }
        } else {
            double nr, ni;
            if (step > 0) {
                const double ar = bla_r[entry * 5], ai = bla_r[entry * 5 + 1];
                const double br = bla_r[entry * 5 + 2], bi = bla_r[entry * 5 + 3];
                const int ae = bla_i[entry * 4], be = bla_i[entry * 4 + 1] + E;
                nr = ldexp((ar * dr) - (ai * di), ae) + ldexp((br * d_re) - (bi * d_im), be);
                ni = ldexp((ar * di) + (ai * dr), ae) + ldexp((br * d_im) + (bi * d_re), be);
            } else {
                step = 1;
                const double zr = orbit_re[m], zi = orbit_im[m];
                nr = ((2.0 * ((zr * dr) - (zi * di))) + ((dr * dr) - (di * di))) + dcr;
                ni = ((2.0 * ((zr * di) + (zi * dr))) + (2.0 * (dr * di))) + dci;
            }
            m += step;
            count += step - 1;
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
    }
    const int i = ly * sw + sx;
    counts[i] = (uint)count;
    mag2_out[i] = mag;
}
