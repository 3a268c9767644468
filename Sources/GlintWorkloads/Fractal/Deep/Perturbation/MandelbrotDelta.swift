/// Mandelbrot, z' = z² + c with c the pixel: dz' = 2·Z·dz + dz² + dc. The kernels' twin is
/// Kernels/deep/mandelbrot.h. Only Mandelbrot has a BLA table (BLATable).
enum MandelbrotDelta: DeltaFormula {
    static var usesTable: Bool { true }
    static var addsSpacing: Bool { true }

    @inline(__always)
    static func tinyStep(z: (re: Double, im: Double), w: FloatExpComplex, d: (re: Double, im: Double), E: Int,
                         next: (re: Double, im: Double))
        -> (w: FloatExpComplex, dd: (re: Double, im: Double), x: (re: Double, im: Double)) {
        let q = squareDelta(z, w)
        let n = FloatExpComplex(normalising: q.re + FloatExpComplex.ldexp(d.re, E - w.e),
                                q.im + FloatExpComplex.ldexp(d.im, E - w.e), exponent: w.e)
        let dd = n.scaled
        return (n, dd, (next.re + dd.re, next.im + dd.im))
    }

    @inline(__always)
    static func step(z: (re: Double, im: Double), dz: (re: Double, im: Double), dc: (re: Double, im: Double),
                     next: (re: Double, im: Double)) -> (n: (re: Double, im: Double), x: (re: Double, im: Double)) {
        let q = squareDelta(z, dz)
        let n = (re: q.re + dc.re, im: q.im + dc.im)
        return (n, (next.re + n.re, next.im + n.im))
    }
}
