/* Deep zoom by perturbation, at any depth: the Mandelbrot set (with bilinear approximation),
   Julia sets and the Burning Ship. Swift twin: Sources/GlintWorkloads/Fractal/Deep/, laid out
   alike: the extended-range number (deep/floatexp.h), one file per formula (deep/mandelbrot.h,
   deep/julia.h, deep/burning_ship.h) and one escape loop (deep/escape.h).

   A sample is iterated as a delta dz against reference orbits O, computed on the host in
   arbitrary precision and rounded to double. The Mandelbrot set has one orbit, of the view
   centre C: O[0] = 0, O[1] = C, O[n+1] = O[n]^2 + C, and the sample's c = C + dc. Julia sets and
   the Burning Ship have the main orbit from the centre (indices 0 .. main_count-1), then the
   critical orbit from 0 (indices main_count .. orbit_count-1), and the sample starts at
   z0 = C + dz0. dc and dz0 are the sample's offset d 2^E. While |dz| is under
   2^PERTURB_TINY_LIMIT it is a mantissa pair with its own exponent (the tiny phase), then a plain
   double (the double phase). Rebasing: when |z| < |dz| or the reference has no next point,
   dz = z and the sample goes on from the critical orbit's first point (Mandelbrot: O[0]), in the
   double phase. For the Mandelbrot set a table step maps dz to A dz + B dc over 2^k iterations
   (the table's layout and validity tests are the Swift twin's).
   The operations and their order are the contract with the Swift twin: no fused multiply-add
   (FP_CONTRACT OFF); ldexp and ilogb are exact and double division is correctly rounded, so
   escape counts are identical on both paths. Change one only with the other.

   The host passes the constants the Swift twin uses, so both sides read one value:
     PERTURB_TINY_LIMIT      deltas from 2^PERTURB_TINY_LIMIT up are plain doubles
     PERTURB_ZERO_EXPONENT   the exponent given to a zero offset
     PERTURB_FIRST_LEVEL     the shortest stored table level (steps of 2^PERTURB_FIRST_LEVEL)
   With DERIV (distance and slope colouring) the derivative dz/dc (Julia: dz/dz0) is carried too,
   in pixel units with its own exponent, and u = z/d at escape goes to u_out.
   The counts and |z|^2 at escape go to the same buffers as fractal_escape's, for fractal.cl's
   colour pass. params.scale_bits holds the mantissa of the pixel spacing 2/(zoom*H), in [1, 2);
   spacing_exp its exponent. */
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#include "common/types.h"
#include "deep/escape.h"


#if DERIV
#define DEEP_U_ARG __global float* u_out,  /* z/d at escape, 2 floats a sample (DERIV) */
#define DEEP_U u_out
#else
#define DEEP_U_ARG
#define DEEP_U 0
#endif
#ifndef EXPMAP
#define EXPMAP 0
#endif
/* EXPMAP 1: an exp-map strip, each sample's offset from the host's per-column and per-row tables. */
#if EXPMAP
#define DEEP_STRIP_ARGS __global const double* strip_cols, __global const double* strip_row_m, \
                        __global const int* strip_row_e,
#define DEEP_STRIP strip_cols, strip_row_m, strip_row_e
#else
#define DEEP_STRIP_ARGS
#define DEEP_STRIP 0, 0, 0
#endif

__kernel void perturb_escape(__global uint* counts,        /* escape count per sample         */
                             __global float* mag2_out,     /* |z|^2 at escape (smooth)        */
                             DEEP_U_ARG
                             DEEP_STRIP_ARGS
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
    Deep_Escape(DEEP_MANDELBROT, counts, mag2_out, DEEP_U, DEEP_STRIP, orbit_re, orbit_im, orbit_count, orbit_count,
                bla_r, bla_i, bla_lv, levels, spacing_exp, p, row0, rows);
}

__kernel void perturb_julia_escape(__global uint* counts,        /* escape count per sample          */
                                   __global float* mag2_out,     /* |z|^2 at escape (smooth)         */
                                   DEEP_U_ARG
                                   __global const double* orbit_re,
                                   __global const double* orbit_im,
                                   const int main_count,         /* points of the main orbit, >= 2   */
                                   const int orbit_count,        /* points of both orbits            */
                                   const int spacing_exp,        /* E: spacing = mantissa * 2^E      */
                                   const GlintFractalParams p,
                                   const int row0,               /* first sample row of this strip   */
                                   const int rows)               /* sample rows in this strip        */
{
    Deep_Escape(DEEP_JULIA, counts, mag2_out, DEEP_U, 0, 0, 0, orbit_re, orbit_im, main_count, orbit_count,
                0, 0, 0, 0, spacing_exp, p, row0, rows);
}

__kernel void perturb_burning_ship_escape(__global uint* counts,
                                          __global float* mag2_out,
                                          DEEP_U_ARG
                                          __global const double* orbit_re,  /* signed, before abs() */
                                          __global const double* orbit_im,
                                          const int main_count,
                                          const int orbit_count,
                                          const int spacing_exp,
                                          const GlintFractalParams p,
                                          const int row0,
                                          const int rows)
{
    Deep_Escape(DEEP_BURNING_SHIP, counts, mag2_out, DEEP_U, 0, 0, 0, orbit_re, orbit_im, main_count, orbit_count,
                0, 0, 0, 0, spacing_exp, p, row0, rows);
}
