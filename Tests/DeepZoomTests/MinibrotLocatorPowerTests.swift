import Foundation
import GlintCore
import GlintWorkloads
import Testing

/// The minibrot locator past power 2 (z^N + c), against nuclei computed independently (mpmath:
/// the roots of z_p(c) at 60 digits) and checked by direct MPFR iteration (z_p = 0), and its size
/// and rotation against the set itself: the copy c₀ + s·c' must be in the set where c' is.
@Suite("minibrot locator: powers past 2")
struct MinibrotLocatorPowerTests {
    func n(_ t: String) throws -> DeepNumber { try DeepNumber(parsing: t) }

    /// Period-4 nucleus of z³ + c on the upper antenna (a minibrot, size about 1.34e-3).
    static let cubic4 = (re: "-0.243965359233483689698992525022", im: "1.32240723571300810124394840812")
    /// Period-3 nucleus of z⁵ + c (size about 8.39e-3).
    static let quintic3 = (re: "0.873677077330138837958514085277", im: "0.763156619220193058891725023874")

    @Test(arguments: [(3, 4, cubic4, "-0.2437", "1.3221", "2000", 1.33e-3...1.35e-3, 0.93),
                      (5, 3, quintic3, "0.8737", "0.7631", "500", 8.3e-3...8.5e-3, 0.85)])
    func nucleusSizeAndRotation(power: Int, period: Int, known: (re: String, im: String), re: String, im: String,
                                zoom: String, size: ClosedRange<Double>, agreement: Double) throws {
        let m = try MinibrotLocator.locate(centerRe: n(re), centerIm: n(im), zoom: n(zoom), power: power, digits: 60)
        #expect(m.power == power && m.period == period, "period \(m.period)")
        // The nucleus agrees with the independent one to its 28 digits ...
        let (wantRe, wantIm) = (try n(known.re), try n(known.im))
        #expect(m.nucleusRe.isNegative == wantRe.isNegative && m.nucleusRe.significand.hasPrefix(wantRe.significand.prefix(28)),
                "\(m.nucleusRe.text)")
        #expect(m.nucleusIm.isNegative == wantIm.isNegative && m.nucleusIm.significand.hasPrefix(wantIm.significand.prefix(28)),
                "\(m.nucleusIm.text)")
        // ... and to its 60: z_p is 0 to about 2^-190 (60 digits, times dz_p/dc), while no z_k
        // before it is small (the period is the smallest).
        let (nr, ni) = (m.nucleusRe.plainText, m.nucleusIm.plainText)
        let zp = DirectMPFRFormula.orbitGapExponent(re: nr, im: ni, power: power, bits: 400, period, minus: nil)
        #expect(zp < -170, "z_p exponent \(zp)")
        for k in 1..<period {
            let zk = DirectMPFRFormula.orbitGapExponent(re: nr, im: ni, power: power, bits: 400, k, minus: nil)
            #expect(zk > -8, "z_\(k) exponent \(zk)")
        }
        let s = m.sizeMantissa * pow(10, Double(m.sizeExponent10))
        #expect(size.contains(s), "size \(s)")
        // Past power 2 the framing view is centred on the nucleus at zoom framingPowers / |s|.
        #expect(m.centerRe.text == m.nucleusRe.text && m.centerIm.text == m.nucleusIm.text)
        #expect(abs(m.zoom.nearestDouble * s / MinibrotLocator.framingPowers - 1) < 1e-4, "zoom \(m.zoom.text)")
        // Rotation within (−180/(N−1), 180/(N−1)].
        let half = 180 / Double(power - 1)
        #expect(m.orientationDegrees > -half && m.orientationDegrees <= half, "\(m.orientationDegrees)")
        let share = Self.agreement(m)
        #expect(share >= agreement, "copy and set agree at \(share)")
    }

    /// The share of a 31 × 31 grid over the whole multibrot (|re|, |im| ≤ 1.3) on which c' and
    /// nucleus + s·c' agree on staying bounded (60 steps for c', 60 × period for the copy, whose
    /// p steps make one of the whole set's). With s = 1/(b·l²) in place of 1/(b·l^(N/(N−1))) it
    /// is about 0.25 for the two minibrots above; with arg s turned by 90 degrees (power 3) 0.83.
    static func agreement(_ m: MinibrotLocator.Minibrot) -> Double {
        let magnitude = m.sizeMantissa * pow(10, Double(m.sizeExponent10))
        let angle = m.orientationDegrees * Double.pi / 180
        let (sr, si) = (magnitude * cos(angle), magnitude * sin(angle))
        let (c0r, c0i) = (m.nucleusRe.nearestDouble, m.nucleusIm.nearestDouble)
        func bounded(_ cr: Double, _ ci: Double, _ steps: Int) -> Bool {
            var (x, y) = (0.0, 0.0)
            for _ in 0..<steps {
                // z ← z^N + c, z^N as N − 1 complex products.
                var (pr, pi) = (x, y)
                for _ in 1..<m.power { (pr, pi) = (pr * x - pi * y, pr * y + pi * x) }
                (x, y) = (pr + cr, pi + ci)
                if x * x + y * y > 4 { return false }
            }
            return true
        }
        var agree = 0, total = 0
        for i in 0..<31 {
            for j in 0..<31 {
                let (a, b) = (-1.3 + 2.6 * Double(i) / 30, -1.3 + 2.6 * Double(j) / 30)
                let whole = bounded(a, b, 60)
                let copy = bounded(c0r + sr * a - si * b, c0i + sr * b + si * a, 60 * m.period)
                total += 1
                if whole == copy { agree += 1 }
            }
        }
        return Double(agree) / Double(total)
    }

    /// Given a multiple of the period by a nucleus, Newton's method goes to that nucleus, where
    /// z_k = 0 for the smaller period k makes the size estimate meaningless (0 or past the whole
    /// set's; once a crash converting it): refused in one line.
    @Test(arguments: [(2, "-1.75", "0", "10", 6), (3, "-0.243965359", "1.322407235", "2000", 8)])
    func multipleOfThePeriodRefused(power: Int, re: String, im: String, zoom: String, period: Int) throws {
        let (cr, ci, z) = (try n(re), try n(im), try n(zoom))
        do throws(GlintError) {
            let m = try MinibrotLocator.locate(centerRe: cr, centerIm: ci, zoom: z, power: power, period: period)
            Issue.record("period \(period) gave size \(m.sizeMantissa)e\(m.sizeExponent10)")
        } catch {
            #expect(error.message.contains("smaller period that divides it"), "\(error.message)")
        }
    }

    @Test func powerOutOfRange() throws {
        let (re, im, zoom) = (try n("-0.2437"), try n("1.3221"), try n("2000"))
        for power in [1, 9, 0] {
            do throws(GlintError) {
                _ = try MinibrotLocator.locate(centerRe: re, centerIm: im, zoom: zoom, power: power)
                Issue.record("power \(power) accepted")
            } catch {
                #expect(error.message.hasPrefix("power must be between 2 and 8"), "\(error.message)")
            }
        }
    }
}

/// A locator in a cancelled task stops within moments, with `Locator.cancelled`, wherever it is:
/// the period search, Newton's iterations, a Misiurewicz candidate's orbits. Uncancelled, each
/// case runs for many seconds (measured in a debug build: the period search 25 s, the Misiurewicz
/// point over a minute) or ends with another answer.
@Suite("minibrot and misiurewicz locators: cancellation")
struct MinibrotLocatorCancellationTests {
    func n(_ t: String) throws -> DeepNumber { try DeepNumber(parsing: t) }

    /// When the cancellation came and when the locator ended, as their own threads saw them.
    final class Instants: @unchecked Sendable {
        private let lock = NSLock()
        private var times: [String: ContinuousClock.Instant] = [:]
        func mark(_ key: String) { lock.withLock { times[key] = .now } }
        subscript(_ key: String) -> ContinuousClock.Instant? { lock.withLock { times[key] } }
    }

    /// Runs `body` in a task, cancels it 200 ms later from a thread of its own (the test's task may
    /// wait for one of the pool's threads while locators run on them) and expects
    /// `Locator.cancelled` within 2 s of the cancellation (or of the start, if later).
    func expectStopsWhenCancelled<T: Sendable>(_ what: String, _ body: @escaping @Sendable () throws -> T) async {
        let instants = Instants()
        let task = Task.detached { () throws -> T in
            instants.mark("started")
            defer { instants.mark("ended") }
            return try body()
        }
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.2)
            instants.mark("cancelled")
            task.cancel()
        }
        let result = await task.result
        switch result {
        case .success:
            Issue.record("\(what): finished instead of stopping")
        case .failure(let error):
            #expect((error as? GlintError) == Locator.cancelled, "\(what): \(error)")
        }
        guard let cancelled = instants["cancelled"], let started = instants["started"], let ended = instants["ended"],
              ended >= cancelled else {
            Issue.record("\(what): ended before it was cancelled")
            return
        }
        // From when the locator could first see the cancellation: the task may start late, when
        // other tests hold the pool's threads.
        let stopped = ended - max(started, cancelled)
        #expect(stopped < .seconds(2), "\(what): stopped \(stopped) after it was cancelled")
    }

    /// At c = −7/4, the period-3 window's parabolic point, at 1e300 the ball never holds 0: the
    /// search runs to its 10 million steps at about 1060 bits.
    @Test func periodSearch() async throws {
        let (re, im, zoom) = (try n("-1.75"), try n("0"), try n("1e300"))
        await expectStopsWhenCancelled("period search") {
            try MinibrotLocator.locate(centerRe: re, centerIm: im, zoom: zoom, maxPeriod: MinibrotLocator.maxPeriodLimit)
        }
    }

    /// Newton's method for a given period of 300001 at power 3 from a nucleus of period 4: each
    /// step iterates 300001 times (about a second in a debug build).
    @Test func newtonIterations() async throws {
        let (re, im, zoom) = (try n("-0.243965359"), try n("1.322407235"), try n("2000"))
        await expectStopsWhenCancelled("newton") {
            try MinibrotLocator.locate(centerRe: re, centerIm: im, zoom: zoom, power: 3, period: 300_001)
        }
    }

    /// A Misiurewicz point of preperiod 300000 on the real axis, where the orbit stays bounded:
    /// each Newton step carries two copies of the orbit 300000 steps.
    @Test func misiurewiczOrbit() async throws {
        let (re, im, zoom) = (try n("-1.75"), try n("0"), try n("10"))
        await expectStopsWhenCancelled("misiurewicz") {
            try MisiurewiczLocator.locate(centerRe: re, centerIm: im, zoom: zoom, preperiod: 300_000, period: 1)
        }
    }
}
