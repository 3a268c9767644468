import GlintCore
import GlintWorkloads
import Testing

/// The Misiurewicz locator past power 2 (z^N + c), against points known in closed form and
/// checked by direct MPFR iteration (z_{q+p} = z_q, numbered from z₀ = 0).
///
/// The tips of the multibrot's N − 1 antennas are M(2,1): z₂ = c^N + c is a fixed point, so
/// (c^N + c)^N + c = c^N + c, i.e. (c^(N−1) + 1)^N = 1 for c ≠ 0: c^(N−1) = ω − 1 with ω an N-th
/// root of unity other than 1. Then z₂ = c·ω and λ = N·z₂^(N−1) = N·(1 − ω̄): for ω = e^(2πi/N),
/// |λ| = 2N·sin(π/N) at arg 90 − 180/N degrees.
@Suite("misiurewicz locator: powers past 2")
struct MisiurewiczLocatorPowerTests {
    func n(_ t: String) throws(GlintError) -> DeepNumber { try DeepNumber(parsing: t) }

    /// c = (e^(2πi/N) − 1)^(1/(N−1)) on the principal branch, to 70 digits (mpmath).
    static let tip3 = (re: "0.3406250193166066401943942440378308889772101025491253031197026326145174",
                       im: "1.271229878418706239135612991021064976728414328226777678213679143693481")
    static let tip5 = (re: "0.8878261996329312520749334358496402586001005708195789365073553714718201",
                       im: "0.5440605948663408748080166634353739364345528761741751381039253688925602")

    @Test(arguments: [(3, tip3, "0.3405", "1.2714", 5.196152422706632, 30.0),
                      (5, tip5, "0.8879", "0.5439", 5.877852522924731, 54.0)])
    func antennaTipIsPreperiodTwoPeriodOne(power: Int, tip: (re: String, im: String), re: String, im: String,
                                           multiplier: Double, rotation: Double) throws {
        let m = try MisiurewiczLocator.locate(centerRe: n(re), centerIm: n(im), zoom: n("2000"), power: power, digits: 60)
        #expect(m.power == power && m.preperiod == 2 && m.period == 1, "M(\(m.preperiod),\(m.period))")
        let (wantRe, wantIm) = (try n(tip.re), try n(tip.im))
        #expect(m.re.significand.hasPrefix(wantRe.significand.prefix(58)), "\(m.re.text)")
        #expect(m.im.significand.hasPrefix(wantIm.significand.prefix(58)), "\(m.im.text)")
        // z₃ = z₂ to about 60 digits, z₂ ≠ z₁.
        let gap = DirectMPFRFormula.orbitGapExponent(re: m.re.plainText, im: m.im.plainText, power: power, bits: 400, 3, minus: 2)
        #expect(gap < -180, "z3 - z2 exponent \(gap)")
        #expect(DirectMPFRFormula.orbitGapExponent(re: m.re.plainText, im: m.im.plainText, power: power, bits: 400, 2, minus: 1) > -4)
        #expect(abs(m.multiplierMantissa - multiplier) < 1e-9 && m.multiplierExponent10 == 0, "\(m.multiplierMantissa)")
        #expect(abs(m.rotationDegrees - rotation) < 1e-6, "\(m.rotationDegrees)")
        #expect(m.distanceInRadii < 1, "\(m.distanceInRadii)")
    }

    /// Given (3, 1) and (2, 2) by the cubic tip, Newton's method on h (lower roots divided out)
    /// finds a point of exactly that preperiod and period: z_{q+p} = z_q while z_{q−1+p} ≠ z_{q−1}
    /// and, for period 2, z_{q+1} ≠ z_q.
    @Test(arguments: [(3, 1), (2, 2)])
    func givenPreperiodAndPeriodAtPowerThree(preperiod q: Int, period p: Int) throws {
        let m = try MisiurewiczLocator.locate(centerRe: n("0.34"), centerIm: n("1.27"), zoom: n("1"), power: 3,
                                              preperiod: q, period: p, digits: 50)
        #expect(m.power == 3 && m.preperiod == q && m.period == p)
        let (re, im) = (m.re.plainText, m.im.plainText)
        #expect(DirectMPFRFormula.orbitGapExponent(re: re, im: im, power: 3, bits: 400, q + p, minus: q) < -140)
        #expect(DirectMPFRFormula.orbitGapExponent(re: re, im: im, power: 3, bits: 400, q - 1 + p, minus: q - 1) > -20)
        if p == 2 { #expect(DirectMPFRFormula.orbitGapExponent(re: re, im: im, power: 3, bits: 400, q + 1, minus: q) > -20) }
        #expect(m.multiplierLog2 > 0, "the cycle repels")
    }

    @Test func powerOutOfRange() throws {
        let (re, im, zoom) = (try n("0.34"), try n("1.27"), try n("10"))
        for power in [1, 9] {
            do throws(GlintError) {
                _ = try MisiurewiczLocator.locate(centerRe: re, centerIm: im, zoom: zoom, power: power)
                Issue.record("power \(power) accepted")
            } catch {
                #expect(error.message.hasPrefix("power must be between 2 and 8"), "\(error.message)")
            }
        }
    }
}
