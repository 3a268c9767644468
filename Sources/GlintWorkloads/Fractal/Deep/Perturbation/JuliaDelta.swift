/// Julia, z' = z² + c with c fixed: dz' = 2·Z·dz + dz² (c cancels). The kernels' twin is
/// Kernels/deep/julia.h.
enum JuliaDelta: DeltaFormula {
    @inline(__always)
    static func tinyStep(z: (re: Double, im: Double), w: FloatExpComplex, d: (re: Double, im: Double), E: Int,
                         next: (re: Double, im: Double))
        -> (w: FloatExpComplex, dd: (re: Double, im: Double), x: (re: Double, im: Double)) {
        let q = squareDelta(z, w)
        let n = FloatExpComplex(normalising: q.re, q.im, exponent: w.e)
        let dd = n.scaled
        return (n, dd, (next.re + dd.re, next.im + dd.im))
    }

    @inline(__always)
    static func step(z: (re: Double, im: Double), dz: (re: Double, im: Double), dc: (re: Double, im: Double),
                     next: (re: Double, im: Double)) -> (n: (re: Double, im: Double), x: (re: Double, im: Double)) {
        let n = squareDelta(z, dz)
        return (n, (next.re + n.re, next.im + n.im))
    }
}
