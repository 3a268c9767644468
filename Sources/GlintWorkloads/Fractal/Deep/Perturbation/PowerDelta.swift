/// Mandelbrot's z^n + c (`--power n`, n > 2), c the pixel: (Z + dz)^n − Z^n is the sum over k of
/// C(n,k)·Z^(n−k)·dz^k, taken by Horner's rule in dz: t = 1, then t = C(n,j)·Z^j + dz·t for
/// j = 1 ... n−1, and the delta is dz·t + dc. The kernels' twin is Kernels/deep/power.h. Its
/// table (BLATable) steps by A = n·Z^(n−1).
enum PowerDelta<P: FractalPower>: DeltaFormula {
    static var usesTable: Bool { true }
    static var addsSpacing: Bool { true }

    /// n·z^(n−1), z^(n−1) as n − 2 products.
    @inline(__always)
    static func derivativeFactor(_ z: (re: Double, im: Double)) -> (re: Double, im: Double) {
        var zp = z
        for _ in 2..<P.n { zp = multiply(zp, z) }
        return (Double(P.n) * zp.re, Double(P.n) * zp.im)
    }

    @inline(__always)
    static func multiply(_ a: (re: Double, im: Double), _ b: (re: Double, im: Double)) -> (re: Double, im: Double) {
        ((a.re * b.re) - (a.im * b.im), (a.re * b.im) + (a.im * b.re))
    }

    /// dz·t before dc is added; with `e` the tiny phase's exponent (dz = w·2^e, the sum in units
    /// of 2^e), 0 in the double phase.
    @inline(__always)
    static func horner(_ z: (re: Double, im: Double), _ dz: (re: Double, im: Double), e: Int?) -> (re: Double, im: Double) {
        var t = (re: 1.0, im: 0.0)
        var zp = z
        var b = 1.0
        for j in 1..<P.n {
            b = (b * Double(P.n - j + 1)) / Double(j)   // C(n, j), exact
            let u = multiply(dz, t)
            if let e {
                t = ((b * zp.re) + FloatExpComplex.ldexp(u.re, e), (b * zp.im) + FloatExpComplex.ldexp(u.im, e))
            } else {
                t = ((b * zp.re) + u.re, (b * zp.im) + u.im)
            }
            zp = multiply(zp, z)
        }
        return multiply(dz, t)
    }

    @inline(__always)
    static func tinyStep(z: (re: Double, im: Double), w: FloatExpComplex, d: (re: Double, im: Double), E: Int,
                         next: (re: Double, im: Double))
        -> (w: FloatExpComplex, dd: (re: Double, im: Double), x: (re: Double, im: Double)) {
        let s = horner(z, (w.re, w.im), e: w.e)
        let n = FloatExpComplex(normalising: s.re + FloatExpComplex.ldexp(d.re, E - w.e),
                                s.im + FloatExpComplex.ldexp(d.im, E - w.e), exponent: w.e)
        let dd = n.scaled
        return (n, dd, (next.re + dd.re, next.im + dd.im))
    }

    @inline(__always)
    static func step(z: (re: Double, im: Double), dz: (re: Double, im: Double), dc: (re: Double, im: Double),
                     next: (re: Double, im: Double)) -> (n: (re: Double, im: Double), x: (re: Double, im: Double)) {
        let s = horner(z, dz, e: nil)
        let n = (re: s.re + dc.re, im: s.im + dc.im)
        return (n, (next.re + n.re, next.im + n.im))
    }
}
