/// Burning Ship, z' = |z² + c| per component with c the pixel. With S = Z² + C the reference's
/// value before the abs (FormulaOrbit stores it signed) and dw = 2·Z·dz + dz² + dc its delta,
/// dz' = |S + dw| − |S| per component, taken from the signs without cancellation (`fold`). In
/// the tiny phase the fold is taken in units of 2^e (S·2^-e, exact), so a sign change of a tiny
/// S + dw needs no Double of the delta's size. The kernels' twin is Kernels/deep/burning_ship.h.
public enum BurningShipDelta: DeltaFormula {
    /// A step multiplies by |Z[m]|: the abs of the signed point, except at an orbit's first point,
    /// which is stored as it is.
    @inline(__always)
    static func reference(_ o: PerturbationEscape.Orbit, _ m: Int) -> (re: Double, im: Double) {
        m == o.mainStart || m == o.criticalStart ? (o.re[m], o.im[m]) : (abs(o.re[m]), abs(o.im[m]))
    }

    @inline(__always)
    static func tinyStep(z: (re: Double, im: Double), w: FloatExpComplex, d: (re: Double, im: Double), E: Int,
                         next s: (re: Double, im: Double))
        -> (w: FloatExpComplex, dd: (re: Double, im: Double), x: (re: Double, im: Double)) {
        let q = squareDelta(z, w)
        let pr = q.re + FloatExpComplex.ldexp(d.re, E - w.e), pi = q.im + FloatExpComplex.ldexp(d.im, E - w.e)
        let x = (re: abs(s.re + FloatExpComplex.ldexp(pr, w.e)), im: abs(s.im + FloatExpComplex.ldexp(pi, w.e)))
        // Where |S| is far above the delta, tr is ±infinity: tr + pr keeps its sign and fold
        // returns ±pr without using it.
        let tr = FloatExpComplex.ldexp(s.re, -w.e), ti = FloatExpComplex.ldexp(s.im, -w.e)
        let n = FloatExpComplex(normalising: fold(tr, tr + pr, pr), fold(ti, ti + pi, pi), exponent: w.e)
        return (n, n.scaled, x)
    }

    @inline(__always)
    static func step(z: (re: Double, im: Double), dz: (re: Double, im: Double), dc: (re: Double, im: Double),
                     next s: (re: Double, im: Double)) -> (n: (re: Double, im: Double), x: (re: Double, im: Double)) {
        let q = squareDelta(z, dz)
        let wr = q.re + dc.re, wi = q.im + dc.im
        let ar = s.re + wr, ai = s.im + wi
        return ((fold(s.re, ar, wr), fold(s.im, ai, wi)), (abs(ar), abs(ai)))
    }

    /// |s + w| − |s| for the reference's signed value s, its delta w and a = s + w (as computed).
    @inline(__always)
    public static func fold(_ s: Double, _ a: Double, _ w: Double) -> Double {
        if s < 0 {
            return a < 0 ? -w : (2 * s) + w
        }
        return a < 0 ? -((2 * s) + w) : w
    }
}
