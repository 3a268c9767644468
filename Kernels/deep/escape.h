#ifndef GLINT_DEEP_ESCAPE_H
#define GLINT_DEEP_ESCAPE_H
/* The escape loop of every perturbed formula, written once (the method: perturb.cl). Each
   kernel passes its formula as a constant, so the compiler keeps that formula's steps alone and
   the loop carries no test of it at run time. */
#pragma OPENCL FP_CONTRACT OFF
#include "common/types.h"
#include "floatexp.h"
#include "mandelbrot.h"
#include "julia.h"
#include "burning_ship.h"
#include "power.h"

#if !defined(PERTURB_TINY_LIMIT) || !defined(PERTURB_FIRST_LEVEL)
#error "the perturbation kernels are built with PERTURB_TINY_LIMIT, PERTURB_ZERO_EXPONENT and PERTURB_FIRST_LEVEL"
#endif

#define DEEP_MANDELBROT   0
#define DEEP_JULIA        1
#define DEEP_BURNING_SHIP 2

#ifndef DERIV
#define DERIV 0
#endif

/* The derivative's step from the sample's z, before z's own (DERIV: distance and slope
   colouring): d' = f'(z) d + s for Mandelbrot (c moves with the pixel; s the pixel spacing
   mantissa 2^E, d in pixel units), f'(z) d for Julia; f'(z) = 2z, or POWER z^(POWER-1). */
DEEP_INLINE FloatExpC Deep_DerivativeStep(const int formula, const DoubleC z, const FloatExpC d,
                                          const double spacing, const int E)
{
    DoubleC f;
#if POWER > 2
    if (formula == DEEP_MANDELBROT) {
        DoubleC zp = z;
        for (int k = 2; k < POWER; k++) zp = Deep_Power_Mul(zp, z);
        f.re = (double)POWER * zp.re;
        f.im = (double)POWER * zp.im;
    } else
#endif
    {
        f.re = 2.0 * z.re;
        f.im = 2.0 * z.im;
    }
    const double pr = (f.re * d.re) - (f.im * d.im), pi = (f.re * d.im) + (f.im * d.re);
    const FloatExpC n = { formula == DEEP_MANDELBROT ? pr + ldexp(spacing, E - d.e) : pr, pi, d.e };
    return FloatExpC_Norm(n);
}

/* The sample's offset mantissa d: scale_bits holds the pixel spacing's mantissa in [1, 2). */
DEEP_INLINE DoubleC Deep_SampleOffset(const GlintFractalParams p, int sx, int sy)
{
    const double spacing = as_double(p.scale_bits);
    const double ss = (double)p.ss;
    const double half_w = (double)p.width * 0.5, half_h = (double)p.height * 0.5;
    const double d_re = (((double)sx + 0.5) / ss - half_w) * spacing;
    const double off_im = (((double)sy + 0.5) / ss - half_h) * spacing;
    const DoubleC d = { d_re, -off_im };
    return d;
}

/* The longest valid table step from index m (m >= 1), 0 for none; its entry goes to *entry.
   Level k holds the steps of 2^k iterations from the indices 1 + j 2^k. A tiny delta passes by
   its exponents alone (e + 2 and xd + 2 bound log2 |dz| and log2 |dc| from above); a double one
   passes while |dz|^2 is under the entry's R^2. */
DEEP_INLINE int Deep_TableSearch(__global const double* bla_r, __global const int* bla_i,
                                 __global const int* bla_lv, const int levels, const int m, const int count,
                                 const int max_iter, const int tiny, const int e, const int xd, const DoubleC dz,
                                 int* entry)
{
    if (m < 1) return 0;
    const double dz2 = (dz.re * dz.re) + (dz.im * dz.im);
    int step = 0;
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
        *entry = idx;
    }
    return step;
}

/* The table entry's maps A and B (mantissa pairs with their exponents). */
DEEP_INLINE void Deep_TableMaps(__global const double* bla_r, __global const int* bla_i, const int entry,
                                FloatExpC* a, FloatExpC* b)
{
    a->re = bla_r[entry * 5];     a->im = bla_r[entry * 5 + 1]; a->e = bla_i[entry * 4];
    b->re = bla_r[entry * 5 + 2]; b->im = bla_r[entry * 5 + 3]; b->e = bla_i[entry * 4 + 1];
}

/* d over the next step from z: a table step's d <- A d + B s (s the spacing sc), else one
   iteration's (Deep_DerivativeStep). */
DEEP_INLINE FloatExpC Deep_DerivativeAdvance(const int formula, __global const double* bla_r, __global const int* bla_i,
                                             const int table, const int entry, const DoubleC z, const FloatExpC d,
                                             const FloatExpC sc)
{
    if (table > 0) {
        FloatExpC a, b;
        Deep_TableMaps(bla_r, bla_i, entry, &a, &b);
        return FloatExpC_Norm(FloatExpC_Add(FloatExpC_Mul(a, d), FloatExpC_Mul(b, sc)));
    }
    return Deep_DerivativeStep(formula, z, d, sc.re, sc.e);
}

/* A sample between steps. */
typedef struct {
    int m;       /* its reference's index                              */
    int last;    /* the reference's last index                         */
    int count;   /* iterations that stayed within the bailout          */
    DoubleC Z;   /* the reference's z at m                             */
    DoubleC dz;  /* the delta there, as doubles (the double phase's)   */
    float mag;   /* |z|^2 at escape                                    */
} DeepSample;

#define DEEP_ESCAPED 0
#define DEEP_REBASED 1
#define DEEP_GOES_ON 2

/* Ends a step that reached index s->m, where the reference holds S, the sample's z is x and its
   delta n: the escape test, the count, and the rebase (dz = z, from the critical orbit's first
   point) when |z| < |dz| or the reference has no next point. */
DEEP_INLINE int Deep_EndStep(const int formula, __global const double* orbit_re, __global const double* orbit_im,
                             const int restart, const int orbit_count, const double b2,
                             const DoubleC S, const DoubleC x, const DoubleC n, DeepSample* s)
{
    const double zm = (x.re * x.re) + (x.im * x.im);
    /* "not <=" so that a NaN orbit counts as escaped */
    if (!(zm <= b2)) {
        s->mag = (float)zm;
        return DEEP_ESCAPED;
    }
    s->count += 1;
    if (s->m == s->last || zm < (n.re * n.re) + (n.im * n.im)) {
        s->dz = x;
        s->m = restart;
        s->last = orbit_count - 1;
        s->Z.re = orbit_re[restart];
        s->Z.im = orbit_im[restart];
        return DEEP_REBASED;
    }
    s->dz = n;
    s->Z = formula == DEEP_BURNING_SHIP ? Deep_BurningShip_Z(S) : S;
    return DEEP_GOES_ON;
}

/* One sample: its escape count and |z|^2 at escape, stored at its place in the strip.
   main_count: the points of the orbit from the centre (Mandelbrot: all of them, O[0] = 0 being
   its critical point too); levels: the table's (0: none, always for Julia and the Burning Ship).
   The tiny phase and the double phase have a loop each, so that the double phase's keeps none of
   the tiny phase's values in registers. */
DEEP_INLINE void Deep_Escape(const int formula,
                             __global uint* counts, __global float* mag2_out, __global float* u_out,
                             __global const double* strip_cols, __global const double* strip_row_m,
                             __global const int* strip_row_e,
                             __global const double* orbit_re, __global const double* orbit_im,
                             const int main_count, const int orbit_count,
                             __global const double* bla_r, __global const int* bla_i,
                             __global const int* bla_lv, const int levels,
                             const int spacing_exp, const GlintFractalParams p, const int row0, const int rows)
{
    const int sx = (int)get_global_id(0);
    const int ly = (int)get_global_id(1);
    const int sw = p.width * p.ss;
    if (sx >= sw || ly >= rows) return;
#if EXPMAP
    /* An exp-map strip: the column's (cos, sin) times the row's radius mantissa, at the row's
       power of two (the host's tables, ExpMapTables). */
    const double rm = strip_row_m[row0 + ly];
    const DoubleC d = { strip_cols[2 * sx] * rm, strip_cols[2 * sx + 1] * rm };
    const FloatExpC c = { d.re, d.im, strip_row_e[row0 + ly] };
#else
    const DoubleC d = Deep_SampleOffset(p, sx, row0 + ly);
    const FloatExpC c = { d.re, d.im, spacing_exp };  /* the offset d 2^E: dc, and dz at the start */
#endif
    const DoubleC dc = FloatExpC_ToDouble(c);
    const int xd = FloatExpC_Exponent(c);
    const double b2 = (double)p.bailout2;
    const int max_iter = p.max_iter;

    /* Mandelbrot: the sample's z1 = c is O[1] + dc, and a rebase goes to O[0] = 0. The others:
       z0 = O[0] + dz, and a rebase goes to the critical orbit's first point. */
    const int restart = formula == DEEP_MANDELBROT ? 0 : main_count;
    DeepSample s;
    s.m = formula == DEEP_MANDELBROT ? 1 : 0;
    s.last = main_count - 1;
    s.count = 0;
    s.Z.re = orbit_re[s.m];
    s.Z.im = orbit_im[s.m];
    s.dz = dc;
    s.mag = 0.0f;
    int tiny = xd < PERTURB_TINY_LIMIT;
#if DERIV
#if EXPMAP
    /* A strip row's pixel side, its radius times 2π/columns (ExpMapTables.spacing). */
    const double angle = 2.0 * M_PI / (double)sw;
    const FloatExpC sc = { rm * angle, 0.0, strip_row_e[row0 + ly] };
#else
    const double spacing = as_double(p.scale_bits);
    const FloatExpC sc = { spacing, 0.0, spacing_exp };  /* the pixel spacing: d's step by c */
#endif
    DoubleC zc;                                         /* the sample's z                 */
    zc.re = orbit_re[s.m] + dc.re;
    zc.im = orbit_im[s.m] + dc.im;
    FloatExpC dd = FloatExpC_Norm(sc);                  /* d = dz/dc in pixel units        */
#endif
    if (formula == DEEP_MANDELBROT && s.m == s.last) {  /* the centre escaped at once: start rebased */
        s.dz.re = orbit_re[1] + dc.re;
        s.dz.im = orbit_im[1] + dc.im;
        s.m = 0;
        s.Z.re = orbit_re[0];
        s.Z.im = orbit_im[0];
        tiny = 0;
    }
    int escaped = 0;
    if (tiny) {
        FloatExpC w = FloatExpC_Norm(c);  /* dz */
        while (s.count < max_iter) {
            int entry = 0;
            const int table = formula == DEEP_MANDELBROT && levels > 0
                ? Deep_TableSearch(bla_r, bla_i, bla_lv, levels, s.m, s.count, max_iter, 1, w.e, xd, s.dz, &entry) : 0;
            const int step = table > 0 ? table : 1;
#if DERIV
            dd = Deep_DerivativeAdvance(formula, bla_r, bla_i, table, entry, zc, dd, sc);
#endif
            s.m += step;
            s.count += step - 1;
            const DoubleC S = { orbit_re[s.m], orbit_im[s.m] };
            DoubleC x;  /* the sample's z at m */
            if (table > 0) {  /* A dz + B dc */
                FloatExpC a, b;
                Deep_TableMaps(bla_r, bla_i, entry, &a, &b);
                w = FloatExpC_Norm(FloatExpC_Add(FloatExpC_Mul(a, w), FloatExpC_Mul(b, c)));
            } else if (formula == DEEP_JULIA) {
                w = Deep_Julia_TinyStep(s.Z, w);
            } else if (formula == DEEP_BURNING_SHIP) {
                w = Deep_BurningShip_TinyStep(s.Z, w, c, S, &x);
            } else {
#if POWER > 2
                w = Deep_Power_TinyStep(s.Z, w, c);
#else
                w = Deep_Mandelbrot_TinyStep(s.Z, w, c);
#endif
            }
            const DoubleC n = FloatExpC_ToDouble(w);
            if (formula != DEEP_BURNING_SHIP) {  /* orbits that hold z itself */
                x.re = S.re + n.re;
                x.im = S.im + n.im;
            }
#if DERIV
            zc = x;
#endif
            const int end = Deep_EndStep(formula, orbit_re, orbit_im, restart, orbit_count, b2, S, x, n, &s);
            if (end == DEEP_ESCAPED) {
                escaped = 1;
                break;
            }
            /* rebased, or dz fits a double from here: the double phase */
            if (end == DEEP_REBASED || w.e > PERTURB_TINY_LIMIT) break;
        }
    }
    while (!escaped && s.count < max_iter) {
        int entry = 0;
        const int table = formula == DEEP_MANDELBROT && levels > 0
            ? Deep_TableSearch(bla_r, bla_i, bla_lv, levels, s.m, s.count, max_iter, 0, 0, xd, s.dz, &entry) : 0;
        const int step = table > 0 ? table : 1;
#if DERIV
        dd = Deep_DerivativeAdvance(formula, bla_r, bla_i, table, entry, zc, dd, sc);
#endif
        s.m += step;
        s.count += step - 1;
        const DoubleC S = { orbit_re[s.m], orbit_im[s.m] };
        DoubleC x, n;  /* the sample's z at m, and its delta */
        if (table > 0) {  /* A dz + B dc */
            FloatExpC a, b;
            Deep_TableMaps(bla_r, bla_i, entry, &a, &b);
            const FloatExpC f = { s.dz.re, s.dz.im, 0 };
            const DoubleC adz = FloatExpC_ToDouble(FloatExpC_Mul(a, f));
            const DoubleC bdc = FloatExpC_ToDouble(FloatExpC_Mul(b, c));
            n.re = adz.re + bdc.re;
            n.im = adz.im + bdc.im;
        } else if (formula == DEEP_JULIA) {
            n = Deep_Julia_Step(s.Z, s.dz);
        } else if (formula == DEEP_BURNING_SHIP) {
            n = Deep_BurningShip_Step(s.Z, s.dz, dc, S, &x);
        } else {
#if POWER > 2
            n = Deep_Power_Step(s.Z, s.dz, dc);
#else
            n = Deep_Mandelbrot_Step(s.Z, s.dz, dc);
#endif
        }
        if (formula != DEEP_BURNING_SHIP) {  /* orbits that hold z itself */
            x.re = S.re + n.re;
            x.im = S.im + n.im;
        }
#if DERIV
        zc = x;
#endif
        if (Deep_EndStep(formula, orbit_re, orbit_im, restart, orbit_count, b2, S, x, n, &s) == DEEP_ESCAPED) break;
    }
    const int i = ly * sw + sx;
    counts[i] = (uint)s.count;
    mag2_out[i] = s.mag;
#if DERIV
    /* u = z/d where the sample escaped, scaled to 1e18 where larger (only its direction counts) */
    float ur = 0.0f, ui = 0.0f;
    if (s.mag != 0.0f) {
        const double den = (dd.re * dd.re) + (dd.im * dd.im);
        const double qr = ((zc.re * dd.re) + (zc.im * dd.im)) / den;
        const double qi = ((zc.im * dd.re) - (zc.re * dd.im)) / den;
        const double big = fabs(qr) > fabs(qi) ? fabs(qr) : fabs(qi);
        if (ldexp(big, -dd.e) > 1e18) {
            ur = (float)((qr / big) * 1e18);
            ui = (float)((qi / big) * 1e18);
        } else {
            ur = (float)ldexp(qr, -dd.e);
            ui = (float)ldexp(qi, -dd.e);
        }
    }
    u_out[2 * i] = ur;
    u_out[2 * i + 1] = ui;
#endif
}

#endif
