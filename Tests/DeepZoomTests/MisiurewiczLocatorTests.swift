import GlintCore
import GlintWorkloads
import Testing

/// The Misiurewicz locator against points known exactly (i, −2) or computed independently
/// (DeepLocations.misiurewicz41: mpmath at 4200 bits), numbered from z₀ = 0.
@Suite("misiurewicz locator: preperiod, period, point, multiplier")
struct MisiurewiczLocatorTests {
    func n(_ t: String) throws(GlintError) -> DeepNumber { try DeepNumber(parsing: t) }

    /// c = i: 0, i, −1+i, −i, −1+i, …: z₄ = z₂, preperiod 2, period 2; λ = 2(−1+i)·2(−i) = 4 + 4i.
    @Test func iIsPreperiodTwoPeriodTwo() throws {
        let m = try MisiurewiczLocator.locate(centerRe: n("0.01"), centerIm: n("0.98"), zoom: n("20"))
        #expect(m.preperiod == 2 && m.period == 2)
        #expect(m.re.isZero, "\(m.re.text)")
        #expect(m.im.text == "1", "\(m.im.text)")
        #expect(abs(m.multiplierLog2 - 2.5) < 1e-12, "|λ| = 4√2")
        #expect(abs(m.rotationDegrees - 45) < 1e-9)
        #expect(m.zoom.text == "20")
    }

    /// c = −2: 0, −2, 2, 2, …: z₃ = z₂, preperiod 2, period 1; λ = 2·2 = 4.
    @Test func minusTwoIsPreperiodTwoPeriodOne() throws {
        let m = try MisiurewiczLocator.locate(centerRe: n("-1.98"), centerIm: n("0.01"), zoom: n("20"))
        #expect(m.preperiod == 2 && m.period == 1)
        #expect(m.re.text == "-2" && m.im.isZero, "\(m.re.text),\(m.im.text)")
        #expect(abs(m.multiplierLog2 - 2) < 1e-12 && abs(m.rotationDegrees) < 1e-9)
    }

    /// The tip of the 1/3 bulb's antenna: z₅ = z₄ with z₄ ≠ z₃, so preperiod 4 here (3 where the
    /// orbit is numbered from z₁ = c); λ = 2·z₄, |λ| = 1.328330115 at 119.5531068 degrees.
    @Test func antennaTipIsPreperiodFourPeriodOne() throws {
        let m = try MisiurewiczLocator.locate(centerRe: n("-0.1011"), centerIm: n("0.9563"), zoom: n("1000"), digits: 40)
        #expect(m.preperiod == 4 && m.period == 1)
        try expectDigits(m, of: DeepLocations.misiurewicz41, 38)
        #expect(abs(m.multiplierMantissa - 1.328330115) < 1e-9 && m.multiplierExponent10 == 0, "\(m.multiplierMantissa)")
        #expect(abs(m.rotationDegrees - 119.5531068) < 1e-6, "\(m.rotationDegrees)")
        #expect(m.distanceInRadii < 0.2)
    }

    /// From a centre 0.3 − 0.2i view radii off M(4,1) at 1e100 and 1e1000: the point to the digits
    /// the zoom needs (its answer has log₁₀ zoom + 12 significant digits; all but the last few
    /// must match).
    @Test(arguments: [100, 1000])
    func deepPointFromAnOffsetCentre(exponent: Int) throws {
        let bits = 4400
        let known = DeepLocations.misiurewicz41
        let re = try MPFRNumber(parsing: known.re, precision: bits).adding(MPFRNumber(parsing: "3e-\(exponent + 1)", precision: bits))
        let im = try MPFRNumber(parsing: known.im, precision: bits).subtracting(MPFRNumber(parsing: "2e-\(exponent + 1)", precision: bits))
        let digits = exponent + 60
        let m = try MisiurewiczLocator.locate(centerRe: n(re.decimalString(digits: digits)), centerIm: n(im.decimalString(digits: digits)),
                                              zoom: n("1e\(exponent)"))
        #expect(m.preperiod == 4 && m.period == 1)
        #expect(m.re.significand.count >= exponent + 10, "\(m.re.significand.count) digits")
        try expectDigits(m, of: known, exponent + 5)
        #expect((0.3...0.4).contains(m.distanceInRadii), "\(m.distanceInRadii)")
        #expect(abs(m.multiplierMantissa - 1.328330115) < 1e-9)
        // About 2.5 iterations per binary order of zoom (DeepLocations), with the margins.
        let counts = 4 + (Double(exponent) * 3.321928 + 16) / 0.409592
        #expect(abs(Double(m.iterations) - (1.25 * counts + 1000)) < 3, "\(m.iterations)")
    }

    /// Asked for preperiod 5 or period 2 right by M(4,1), Newton's method on z₆ − z₅ or z₆ − z₄
    /// alone goes to M(4,1) (whose preperiod or period is lower); with the lower roots divided
    /// out it finds a point of exactly the preperiod and period asked for.
    @Test(arguments: [(5, 1), (4, 2)])
    func lowerPreperiodOrPeriodNotReturned(preperiod q: Int, period p: Int) throws {
        let m = try MisiurewiczLocator.locate(centerRe: n("-0.1011"), centerIm: n("0.9563"), zoom: n("1"),
                                              preperiod: q, period: p)
        #expect(m.preperiod == q && m.period == p)
        let tip = (re: -0.10109636384562216, im: 0.9562865108091415)
        let (re, im) = (m.re.nearestDouble, m.im.nearestDouble)
        #expect(abs(re - tip.re) + abs(im - tip.im) > 0.01, "\(re),\(im) is M(4,1)")
        // Its orbit, in double: z_{q+p} = z_q, while z_{q−1+p} ≠ z_{q−1} and (p = 2) z_{q+1} ≠ z_q.
        var z = [(0.0, 0.0)]
        for _ in 0..<(q + p + 1) {
            let (x, y) = z[z.count - 1]
            z.append((x * x - y * y + re, 2 * x * y + im))
        }
        func gap(_ i: Int, _ j: Int) -> Double { abs(z[i].0 - z[j].0) + abs(z[i].1 - z[j].1) }
        #expect(gap(q + p, q) < 1e-12)
        #expect(gap(q - 1 + p, q - 1) > 0.1)
        if p == 2 { #expect(gap(q + 1, q) > 0.1) }
    }

    /// Given both, the search is skipped: from c = i itself Newton is done at once.
    @Test func givenPreperiodAndPeriod() throws {
        let m = try MisiurewiczLocator.locate(centerRe: n("0"), centerIm: n("1"), zoom: n("5"), preperiod: 2, period: 2)
        #expect(m.preperiod == 2 && m.period == 2 && m.newtonSteps == 1)
        #expect(m.re.isZero && m.im.text == "1")
    }

    @Test func errors() throws {
        func refusal(_ body: () throws -> MisiurewiczLocator.Point) -> String {
            do {
                _ = try body()
                return "no error"
            } catch {
                return (error as? GlintError)?.message ?? "\(error)"
            }
        }
        // No point has preperiod 1 with z₀ = 0; ranges.
        #expect(refusal { try MisiurewiczLocator.locate(centerRe: n("0"), centerIm: n("1"), zoom: n("5"), preperiod: 1, period: 2) }
            .hasPrefix("preperiod must be at least 2"))
        #expect(refusal { try MisiurewiczLocator.locate(centerRe: n("0"), centerIm: n("1"), zoom: n("5"), period: 0) }
            .hasPrefix("period must be"))
        #expect(refusal { try MisiurewiczLocator.locate(centerRe: n("0"), centerIm: n("1"), zoom: n("5"), maxPeriod: 0) }
            .hasPrefix("max-period must be"))
        #expect(refusal { try MisiurewiczLocator.locate(centerRe: n("0"), centerIm: n("1"), zoom: n("0")) }.hasPrefix("zoom must be"))
        #expect(refusal { try MisiurewiczLocator.locate(centerRe: n("0"), centerIm: n("1"), zoom: n("-1")) }.hasPrefix("zoom must be"))
        // Outside the set the centre's orbit escapes at once; inside it falls onto a cycle.
        #expect(refusal { try MisiurewiczLocator.locate(centerRe: n("3"), centerIm: n("3"), zoom: n("1")) }
            .hasPrefix("the centre's orbit escapes"))
        #expect(refusal { try MisiurewiczLocator.locate(centerRe: n("0.001"), centerIm: n("0.001"), zoom: n("1e5")) }
            .hasPrefix("the centre is inside the set"))
        // Newton's method wanders about the real axis by the period-3 cusp.
        #expect(refusal { try MisiurewiczLocator.locate(centerRe: n("-1.75"), centerIm: n("0"), zoom: n("10"), preperiod: 2, period: 10) }
            .contains("did not converge"))
    }

    /// The point's significand agrees with `known`'s over its first `count` digits.
    func expectDigits(_ m: MisiurewiczLocator.Point, of known: DeepLocations.Point, _ count: Int,
                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (re, im) = (try n(known.re), try n(known.im))
        #expect(m.re.isNegative == re.isNegative && m.im.isNegative == im.isNegative, sourceLocation: sourceLocation)
        #expect(m.re.significand.hasPrefix(re.significand.prefix(count)), "\(m.re.text)", sourceLocation: sourceLocation)
        #expect(m.im.significand.hasPrefix(im.significand.prefix(count)), "\(m.im.text)", sourceLocation: sourceLocation)
    }
}
