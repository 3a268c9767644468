import CMPFR
import GlintWorkloads

/// The yardstick for Mandelbrot, Julia and Burning Ship: one sample iterated directly in MPFR, with
/// Glint's formulas and escape-count contract (FractalCPU): z0 = the pixel (centre + d × 2^exponent, the
/// centre read from its decimal text at `precision` bits, the offset exact at any depth); Julia z = z² + c with c read from its decimal
/// text; Mandelbrot z = z² + c and Burning Ship z = |z² + c| per component with c the pixel; count the steps with
/// |z|² <= R², stop at the first with |z|² > R², at most maxIterations; mag = |z|² at escape, else
/// 0. It calls MPFR directly and shares no code with the perturbation path under test.
struct DirectMPFRFormula {
    enum Formula { case mandelbrot, julia, burningShip }
    let formula: Formula
    let centerRe: String
    let centerIm: String
    /// Julia's constant (unused by Burning Ship).
    var cRe = "0"
    var cIm = "0"
    let precision: Int
    let bailout2: Double
    let maxIterations: Int
    /// Mandelbrot's z^power + c, z^power as power - 1 complex products.
    var power = 2

    func escape(dRe: Double, dIm: Double, exponent: Int = 0) -> (count: UInt32, mag: Float) {
        // cr, ci, x, y, x², y², |z|²
        let v = UnsafeMutablePointer<__mpfr_struct>.allocate(capacity: 10)
        for i in 0..<10 { mpfr_init2(v + i, mpfr_prec_t(precision)) }
        defer {
            for i in 0..<10 { mpfr_clear(v + i) }
            v.deallocate()
            MPFRNumber.releaseThreadCaches()
        }
        let cr = v, ci = v + 1, x = v + 2, y = v + 3, x2 = v + 4, y2 = v + 5, m = v + 6
        let pr = v + 7, pi = v + 8, t = v + 9
        // The offset, exactly: d × 2^exponent (in x², y² for now), then added to the centre.
        mpfr_set_d(x2, dRe, MPFR_RNDN)
        mpfr_set_d(y2, dIm, MPFR_RNDN)
        mpfr_mul_2si(x2, x2, exponent, MPFR_RNDN)
        mpfr_mul_2si(y2, y2, exponent, MPFR_RNDN)
        precondition(mpfr_set_str(x, centerRe, 10, MPFR_RNDN) == 0)
        precondition(mpfr_set_str(y, centerIm, 10, MPFR_RNDN) == 0)
        mpfr_add(x, x, x2, MPFR_RNDN)
        mpfr_add(y, y, y2, MPFR_RNDN)
        switch formula {
        case .julia:
            precondition(mpfr_set_str(cr, cRe, 10, MPFR_RNDN) == 0)
            precondition(mpfr_set_str(ci, cIm, 10, MPFR_RNDN) == 0)
        case .mandelbrot, .burningShip:
            mpfr_set(cr, x, MPFR_RNDN)
            mpfr_set(ci, y, MPFR_RNDN)
        }
        var count: UInt32 = 0
        for _ in 0..<maxIterations {
            if power > 2 {
                Self.powerStep(x, y, cr, ci, power: power, scratch: (pr, pi, t, m))
                mpfr_sqr(x2, x, MPFR_RNDN)
                mpfr_sqr(y2, y, MPFR_RNDN)
                mpfr_add(m, x2, y2, MPFR_RNDN)
                if !(mpfr_cmp_d(m, bailout2) <= 0) { return (count, Float(mpfr_get_d(m, MPFR_RNDN))) }
                count += 1
                continue
            }
            mpfr_sqr(x2, x, MPFR_RNDN)
            mpfr_sqr(y2, y, MPFR_RNDN)
            mpfr_mul(y, x, y, MPFR_RNDN)
            mpfr_mul_2ui(y, y, 1, MPFR_RNDN)
            mpfr_add(y, y, ci, MPFR_RNDN)
            mpfr_sub(x, x2, y2, MPFR_RNDN)
            mpfr_add(x, x, cr, MPFR_RNDN)
            if formula == .burningShip {
                mpfr_abs(x, x, MPFR_RNDN)
                mpfr_abs(y, y, MPFR_RNDN)
            }
            mpfr_sqr(x2, x, MPFR_RNDN)
            mpfr_sqr(y2, y, MPFR_RNDN)
            mpfr_add(m, x2, y2, MPFR_RNDN)
            if !(mpfr_cmp_d(m, bailout2) <= 0) {
                return (count, Float(mpfr_get_d(m, MPFR_RNDN)))
            }
            count += 1
        }
        return (count, 0)
    }

    /// For c = (re, im) at `bits`: z1 = c, z2 = c^power + c, z3 = z2^power + c (z^power as
    /// power − 1 complex products); the binary exponent of the larger part of z3 − z2 (a large
    /// negative number where z2 is a fixed point) and z2 as Doubles.
    static func preperiodicCheck(re: String, im: String, power: Int, bits: Int) -> (residualExponent: Int, z2: (Double, Double)) {
        let v = UnsafeMutablePointer<__mpfr_struct>.allocate(capacity: 10)
        for i in 0..<10 { mpfr_init2(v + i, mpfr_prec_t(bits)) }
        defer { for i in 0..<10 { mpfr_clear(v + i) }; v.deallocate(); MPFRNumber.releaseThreadCaches() }
        let cr = v, ci = v + 1, x = v + 2, y = v + 3, pr = v + 4, pi = v + 5, t = v + 6, x2 = v + 7, y2 = v + 8, u = v + 9
        precondition(mpfr_set_str(cr, re, 10, MPFR_RNDN) == 0 && mpfr_set_str(ci, im, 10, MPFR_RNDN) == 0)
        func step() { powerStep(x, y, cr, ci, power: power, scratch: (pr, pi, t, u)) }
        mpfr_set(x, cr, MPFR_RNDN)
        mpfr_set(y, ci, MPFR_RNDN)
        step()
        let z2 = (mpfr_get_d(x, MPFR_RNDN), mpfr_get_d(y, MPFR_RNDN))
        mpfr_set(x2, x, MPFR_RNDN)
        mpfr_set(y2, y, MPFR_RNDN)
        step()
        mpfr_sub(x, x, x2, MPFR_RNDN)
        mpfr_sub(y, y, y2, MPFR_RNDN)
        func exponent(_ a: UnsafeMutablePointer<__mpfr_struct>) -> Int { mpfr_zero_p(a) != 0 ? Int.min / 2 : Int(mpfr_get_exp(a)) }
        return (max(exponent(x), exponent(y)), z2)
    }

    typealias MPFR = UnsafeMutablePointer<__mpfr_struct>

    /// The critical orbit of z^power + c from z₀ = 0 (so z₁ = c), c = (re, im) read from its
    /// decimal text at `bits`, iterated directly in MPFR: the binary exponent of the larger part
    /// of z_a − z_b (of z_a alone when b is nil), a large negative number where they agree to
    /// many digits (Int.min / 2 for exactly 0). The locators' checks: z_p = 0 for a nucleus of
    /// period p, z_{q+p} = z_q for a Misiurewicz point M(q, p).
    static func orbitGapExponent(re: String, im: String, power: Int, bits: Int, _ a: Int, minus b: Int?) -> Int {
        let v = UnsafeMutablePointer<__mpfr_struct>.allocate(capacity: 10)
        for i in 0..<10 { mpfr_init2(v + i, mpfr_prec_t(bits)) }
        defer { for i in 0..<10 { mpfr_clear(v + i) }; v.deallocate(); MPFRNumber.releaseThreadCaches() }
        let cr = v, ci = v + 1, x = v + 2, y = v + 3, pr = v + 4, pi = v + 5, t = v + 6, u = v + 7, br = v + 8, bi = v + 9
        precondition(mpfr_set_str(cr, re, 10, MPFR_RNDN) == 0 && mpfr_set_str(ci, im, 10, MPFR_RNDN) == 0)
        mpfr_set_zero(x, 1)
        mpfr_set_zero(y, 1)
        mpfr_set_zero(br, 1)
        mpfr_set_zero(bi, 1)
        for n in 0..<a {
            if n == b {
                mpfr_set(br, x, MPFR_RNDN)
                mpfr_set(bi, y, MPFR_RNDN)
            }
            powerStep(x, y, cr, ci, power: power, scratch: (pr, pi, t, u))
        }
        if a == b {
            mpfr_set(br, x, MPFR_RNDN)
            mpfr_set(bi, y, MPFR_RNDN)
        }
        mpfr_sub(x, x, br, MPFR_RNDN)
        mpfr_sub(y, y, bi, MPFR_RNDN)
        func exponent(_ p: MPFR) -> Int { mpfr_zero_p(p) != 0 ? Int.min / 2 : Int(mpfr_get_exp(p)) }
        return max(exponent(x), exponent(y))
    }

    /// z ← z^power + c in place, z^power as power − 1 complex products, with four scratch numbers.
    static func powerStep(_ x: MPFR, _ y: MPFR, _ cr: MPFR, _ ci: MPFR, power: Int, scratch: (MPFR, MPFR, MPFR, MPFR)) {
        let (pr, pi, t, u) = scratch
        mpfr_set(pr, x, MPFR_RNDN)
        mpfr_set(pi, y, MPFR_RNDN)
        for _ in 1..<power {
            mpfr_mul(t, pr, y, MPFR_RNDN)
            mpfr_mul(pr, pr, x, MPFR_RNDN)
            mpfr_mul(u, pi, y, MPFR_RNDN)
            mpfr_sub(pr, pr, u, MPFR_RNDN)
            mpfr_mul(pi, pi, x, MPFR_RNDN)
            mpfr_add(pi, pi, t, MPFR_RNDN)
        }
        mpfr_add(x, pr, cr, MPFR_RNDN)
        mpfr_add(y, pi, ci, MPFR_RNDN)
    }
}
