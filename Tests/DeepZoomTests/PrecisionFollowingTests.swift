import CMPFR
import GlintCore
@testable import GlintWorkloads
import Testing

/// A Mandelbrot reference orbit whose steps round at fewer bits as its derivative grows
/// (ReferenceOrbit.appendFollowing) must store the doubles of the orbit kept at full precision,
/// and must actually fall: on a zoom into a Misiurewicz point to about half the bits on average.
@Suite struct PrecisionFollowingTests {
    typealias Step = ReferenceOrbit.PrecisionStep

    /// The orbit of c at `bits`, kept there and following its derivative.
    static func orbits(re: String, im: String, bits: Int, points: Int, form: ReferenceOrbit.StepForm)
        throws -> (kept: [UInt64], followed: [UInt64], escaped: [Bool], steps: [Step]) {
        let c = (try MPFRNumber(parsing: re, precision: bits), try MPFRNumber(parsing: im, precision: bits))
        var keptRe = [Double](), keptIm = [Double](), re = [Double](), im = [Double]()
        let kept = try ReferenceOrbit.appendFollowing(c: c, points: points, limit: 4, bits: bits, re: &keptRe,
                                                      im: &keptIm, form: form, follow: false)
        let followed = try ReferenceOrbit.appendFollowing(c: c, points: points, limit: 4, bits: bits, re: &re,
                                                          im: &im, form: form)
        #expect(kept.steps == [Step(point: 0, bits: bits)])
        return ((keptRe + keptIm).map(\.bitPattern), (re + im).map(\.bitPattern), [kept.escaped, followed.escaped],
                followed.steps)
    }

    /// The steps' bits averaged over the points they computed.
    static func meanBits(_ steps: [Step], points: Int) -> Double {
        var total = 0
        for (i, step) in steps.enumerated() {
            total += ((i + 1 < steps.count ? steps[i + 1].point : points) - step.point) * step.bits
        }
        return Double(total) / Double(points)
    }

    /// M(4,1) to 4,000 bits: the orbit escapes after about 9,800 points, its derivative doubling
    /// about every 2.4 steps; in both forms, since a segment's stepper is made anew.
    @Test("a zoom into M(4,1): the same doubles at about half the bits", arguments: [ReferenceOrbit.StepForm.mpfr, .fft])
    func misiurewicz(form: ReferenceOrbit.StepForm) throws {
        let bits = 4_000
        let (kept, followed, escaped, steps) = try Self.orbits(re: DeepLocations.misiurewicz41.re,
                                                               im: DeepLocations.misiurewicz41.im, bits: bits,
                                                               points: 100_000, form: form)
        #expect(escaped == [true, true])
        #expect(kept.count > 2 * 9_000 && kept.count < 2 * 11_000, "\(kept.count / 2) points")
        #expect(followed == kept, "\(zip(followed, kept).filter { $0 != $1 }.count) doubles differ")
        let points = kept.count / 2
        let mean = Self.meanBits(steps, points: points)
        #expect(mean < 0.6 * Double(bits), "mean \(mean) bits")
        // Only down, by at most an eighth and to the floor.
        #expect(zip(steps, steps.dropFirst()).allSatisfy { $1.bits < $0.bits && $1.point > $0.point })
        #expect(steps.last?.bits == ReferenceOrbit.followingFloorBits, "\(steps)")
        #expect(steps.count > 10 && steps.count < 40, "\(steps.count) segments")
    }

    /// The nucleus of the period-808 minibrot by M(4,1) (MinibrotLocatorTests.deepPeriod808),
    /// to 420 digits: |dz/dc| grows for 807 steps (to about 2^330) and falls back near 1 where z
    /// passes within about 1e-200 of 0, every 808 steps. The precision must rise there, and the orbit (which
    /// never escapes) must still be the kept one's.
    @Test("a minibrot's nucleus: the precision rises where the derivative falls")
    func nucleus() throws {
        let view = (re: "-0.10109636384562216102578544573862256546380544282625348387693117766078084074047058427482121981051677903340453190855674119",
                    im: "0.95628651080914150077109605772997743580983333651052917003431432150052465906571673252697841078733980720434447249264692843")
        let m = try MinibrotLocator.locate(centerRe: DeepNumber(parsing: view.re), centerIm: DeepNumber(parsing: view.im),
                                           zoom: DeepNumber(parsing: "1e100"), period: 808, digits: 420)
        let bits = 1_500
        let points = 808 * 5
        let (kept, followed, escaped, steps) = try Self.orbits(re: m.nucleusRe.text, im: m.nucleusIm.text, bits: bits,
                                                               points: points, form: .automatic)
        #expect(escaped == [false, false])
        #expect(kept.count == 2 * points)
        #expect(followed == kept, "\(zip(followed, kept).filter { $0 != $1 }.count) doubles differ")
        let rises = zip(steps, steps.dropFirst()).filter { $1.bits > $0.bits }
        // A rise in each period after the first fall, each to the whole precision at the nucleus.
        #expect(rises.count >= 3, "\(steps)")
        // From z_808 (stored at 807, the orbit's first point being z_1 = c), the nucleus's pass by 0.
        #expect(rises.allSatisfy { $1.bits == bits && $1.point % 808 == 807 }, "\(rises)")
        #expect(steps.contains { $0.bits < bits })

        // Through ReferenceOrbit, as renders get it: O[0] = 0, then the same points, maxIterations + 2
        // of them (the centre's 420 digits make its precision 1,459 bits), and a longer orbit's
        // prefix is the same orbit.
        let orbit = try ReferenceOrbit(centerRe: m.nucleusRe, centerIm: m.nucleusIm, zoom: DeepNumber(parsing: "1e195"),
                                       height: 100, bailout: 2, maxIterations: points - 1)
        #expect(orbit.precisionBits > ReferenceOrbit.followingFromBits)
        #expect(orbit.count == points + 1)
        let (direct, _, _, _) = try Self.orbits(re: m.nucleusRe.text, im: m.nucleusIm.text, bits: orbit.precisionBits,
                                                points: points, form: .automatic)
        let stored: [Double] = Array(orbit.re.dropFirst()) + Array(orbit.im.dropFirst())
        #expect(orbit.re.first == 0 && orbit.im.first == 0)
        #expect(stored.map(\.bitPattern) == direct)
        let longer = try ReferenceOrbit(centerRe: m.nucleusRe, centerIm: m.nucleusIm, zoom: DeepNumber(parsing: "1e195"),
                                        height: 100, bailout: 2, maxIterations: points + 100)
        let prefix = longer.prefix(maxIterations: points - 1, spacing: orbit.spacing)
        #expect(prefix?.count == orbit.count && prefix?.re == orbit.re && prefix?.im == orbit.im)
    }
}
