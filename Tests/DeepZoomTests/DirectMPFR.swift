import CMPFR
import GlintWorkloads

/// The test's yardstick: z = z² + c iterated directly in MPFR for one sample, c = centre + dc
/// with the centre read from its decimal text at `precision` bits, with Glint's escape-count
/// contract (z0 = c; count the steps with |z|² <= R²; stop at the first with |z|² > R²; at most
/// maxIterations; mag = |z|² at escape, else 0). It calls MPFR directly and shares no code with
/// the perturbation path under test (not DeepNumber, not MPFRNumber, not ReferenceOrbit).
struct DirectMPFR {
    let centerRe: String
    let centerIm: String
    let precision: Int
    let bailout2: Double
    let maxIterations: Int

    /// max(64, ⌊log2(zoom)⌋ + 64) from MPFR's own reading of the zoom: zoom = m × 2^e with
    /// 0.5 <= m < 1, so ⌊log2(zoom)⌋ = e - 1 (barring the zoom rounding up to a power of 2).
    static func precision(zoom: String) -> Int {
        let z = UnsafeMutablePointer<__mpfr_struct>.allocate(capacity: 1)
        defer { mpfr_clear(z); z.deallocate(); MPFRNumber.releaseThreadCaches() }
        mpfr_init2(z, 256)
        precondition(mpfr_set_str(z, zoom, 10, MPFR_RNDN) == 0)
        var e = 0
        _ = mpfr_get_d_2exp(&e, z, MPFR_RNDN)
        return max(64, e - 1 + 64)
    }

    /// The reference orbit's precision for a view: the zoom's, or the centre's digits' when they
    /// need more: ⌈digits × log2(10)⌉ + 64, digits the significant decimal digits of the longer
    /// coordinate, counted on the text here, and ⌈digits × log2(10)⌉ the bit length of 10^digits
    /// (exact in MPFR: 10^digits = 5^digits × 2^digits fits in 3 × digits bits).
    static func precision(zoom: String, centerRe: String, centerIm: String) -> Int {
        let digits = max(significantDigits(centerRe), significantDigits(centerIm))
        guard digits > 0 else { return precision(zoom: zoom) }
        let x = UnsafeMutablePointer<__mpfr_struct>.allocate(capacity: 1)
        defer { mpfr_clear(x); x.deallocate(); MPFRNumber.releaseThreadCaches() }
        mpfr_init2(x, mpfr_prec_t(3 * digits + 64))
        precondition(mpfr_ui_pow_ui(x, 10, UInt(digits), MPFR_RNDN) == 0, "10^\(digits) is exact")
        // x = m × 2^e with 0.5 <= m < 1: e bits.
        return max(precision(zoom: zoom), Int(mpfr_get_exp(x)) + 64)
    }

    /// Significant digits of a plain decimal: the digits before any exponent, less leading and
    /// trailing zeros.
    static func significantDigits(_ text: String) -> Int {
        let mantissa = text.lowercased().split(separator: "e", maxSplits: 1).first ?? ""
        let digits = mantissa.filter(\.isNumber).drop { $0 == "0" }
        return String(digits).reversed().drop { $0 == "0" }.count
    }

    /// 2 / (zoom × height) in MPFR at `precision` bits, rounded to Double.
    static func spacing(zoom: String, height: Int, precision: Int) -> Double {
        withSpacing(zoom: zoom, height: height, precision: precision) { mpfr_get_d($0, MPFR_RNDN) }
    }

    /// The same spacing as mantissa × 2^exponent, the mantissa in [1, 2), at any depth.
    static func spacingParts(zoom: String, height: Int, precision: Int) -> (mantissa: Double, exponent: Int) {
        withSpacing(zoom: zoom, height: height, precision: precision) { z in
            var e = 0
            let m = mpfr_get_d_2exp(&e, z, MPFR_RNDN)
            return (m * 2, e - 1)
        }
    }

    /// `read` of 2 / (zoom × height) computed in MPFR at `precision` bits.
    private static func withSpacing<T>(zoom: String, height: Int, precision: Int,
                                       _ read: (UnsafeMutablePointer<__mpfr_struct>) -> T) -> T {
        let z = UnsafeMutablePointer<__mpfr_struct>.allocate(capacity: 1)
        defer { mpfr_clear(z); z.deallocate(); MPFRNumber.releaseThreadCaches() }
        mpfr_init2(z, precision)
        precondition(mpfr_set_str(z, zoom, 10, MPFR_RNDN) == 0)
        mpfr_mul_ui(z, z, UInt(height), MPFR_RNDN)
        mpfr_ui_div(z, 2, z, MPFR_RNDN)
        return read(z)
    }

    func escape(dcRe: Double, dcIm: Double) -> (count: UInt32, mag: Float) {
        escape(dRe: dcRe, dIm: dcIm, exponent: 0)
    }

    /// The escape of c = centre + (dRe, dIm) × 2^exponent (the offset exact in MPFR at any depth).
    func escape(dRe: Double, dIm: Double, exponent: Int) -> (count: UInt32, mag: Float) {
        DirectMPFRFormula(formula: .mandelbrot, centerRe: centerRe, centerIm: centerIm, precision: precision,
                          bailout2: bailout2, maxIterations: maxIterations).escape(dRe: dRe, dIm: dIm, exponent: exponent)
    }
}
