import GlintCore
import GlintWorkloads
import Testing

/// The minibrot locator against nuclei computed independently (mpmath at 1200 bits: the ball
/// method's period, then Newton's method on z_p(c) = 0).
@Suite("minibrot locator: period, nucleus, size")
struct MinibrotLocatorTests {
    func n(_ t: String) throws -> DeepNumber { try DeepNumber(parsing: t) }

    /// The period-3 minibrot on the real axis: the real root of c³ + 2c² + c + 1 (its digits).
    static let period3 = "175487766624669276004950889635852869189460661777279314398928"

    @Test func periodThreeNearMinusOnePointSevenFive() throws {
        let m = try MinibrotLocator.locate(centerRe: n("-1.75"), centerIm: n("0"), zoom: n("10"), digits: 50)
        #expect(m.period == 3)
        #expect(m.nucleusIm.isZero)
        #expect(m.nucleusRe.isNegative && m.nucleusRe.significand.hasPrefix(String(Self.period3.prefix(49))),
                "\(m.nucleusRe.text)")
        // It spans about [-1.7864, -1.7433]: about 0.0174 of the whole set's 2.47.
        #expect(m.sizeExponent10 == -2 && (1.7...2.0).contains(m.sizeMantissa), "\(m.sizeMantissa)e\(m.sizeExponent10)")
        #expect(abs(m.orientationDegrees) < 1e-6)
        #expect(m.distanceInRadii < 1)
    }

    /// Given the period, the search is skipped and Newton goes to the same nucleus.
    @Test func givenPeriod() throws {
        let m = try MinibrotLocator.locate(centerRe: n("-1.76"), centerIm: n("0.001"), zoom: n("20"), period: 3, digits: 30)
        #expect(m.period == 3)
        #expect(m.nucleusRe.significand.hasPrefix(String(Self.period3.prefix(29))), "\(m.nucleusRe.text)")
    }

    /// At 1e100 by the Misiurewicz point M(4,1) (its first 120 digits as the centre), the nearest
    /// minibrot has period 808 and size about 9e-201: the nucleus to the 210 digits that frame it.
    @Test func deepPeriod808() throws {
        let re = "-0.10109636384562216102578544573862256546380544282625348387693117766078084074047058427482121981051677903340453190855674119"
        let im = "0.95628651080914150077109605772997743580983333651052917003431432150052465906571673252697841078733980720434447249264692843"
        let m = try MinibrotLocator.locate(centerRe: n(re), centerIm: n(im), zoom: n("1e100"))
        #expect(m.period == 808)
        #expect(m.sizeExponent10 == -201 && abs(m.sizeMantissa - 8.907) < 0.01, "\(m.sizeMantissa)e\(m.sizeExponent10)")
        let wantRe = "1010963638456221610257854457386225654638054428262534838769311776607808407404705842748212198105167790916957"
            + "4185778285069426918592498517726991372125572830296384775886980699758874122081057197095957276180932389220385"
        let wantIm = "9562865108091415007710960577299774358098333365105291700343143215005246590657167325269784107873398072564504"
            + "5063648638420232095431850181451062582648854525895821253116651944686327775551277776625370907624286964915070"
        // 205 matching digits: the answer's last digits are rounded.
        #expect(m.nucleusRe.isNegative && m.nucleusRe.significand.hasPrefix(String(wantRe.prefix(205))), "\(m.nucleusRe.text)")
        #expect(!m.nucleusIm.isNegative && m.nucleusIm.significand.hasPrefix(String(wantIm.prefix(205))), "\(m.nucleusIm.text)")
        #expect(m.zoom.log10Magnitude.map { (199.5...200.5).contains($0) } == true, "\(m.zoom.text)")
    }

    @Test func errors() throws {
        // Outside the set the centre's orbit escapes before any period shows.
        #expect(throws: GlintError.self) { try MinibrotLocator.locate(centerRe: n("3"), centerIm: n("3"), zoom: n("1")) }
        #expect(throws: GlintError.self) {
            try MinibrotLocator.locate(centerRe: n("-1.75"), centerIm: n("0"), zoom: n("10"), period: 0)
        }
        #expect(throws: GlintError.self) {
            try MinibrotLocator.locate(centerRe: n("-1.75"), centerIm: n("0"), zoom: n("10"), maxPeriod: 2)
        }
        #expect(throws: GlintError.self) { try MinibrotLocator.locate(centerRe: n("0"), centerIm: n("0"), zoom: n("-1")) }
    }
}
