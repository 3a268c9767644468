import CDeepOrbit
import CMPFR
import GlintCore
@testable import GlintWorkloads
import Testing

/// The reference orbit's step, z <- z² + a with each part rounded once (CDeepOrbit): its MPFR form,
/// its FFT form on one thread and on two, and an exact computation written out here must give
/// the same bits, for operands of every shape a step meets.
@Suite struct OrbitStepTests {
    /// Precisions below, at and well above the FFT form's threshold, and the 1e10000 view's.
    static let precisions = [64, 301, 4_000, 9_000, 33_283]

    /// Operand shapes: (exponent of x, exponent of y, zero x, zero y); values are random below.
    static let shapes: [(Int, Int, Bool, Bool)] = [
        (0, 0, false, false), (1, -3, false, false), (-40, 2, false, false), (0, -200, false, false),
        (0, -60_000, false, false),   // too far apart for the transform: the MPFR form takes it
        (0, 0, true, false), (0, 0, false, true), (-5_000, -5_003, false, false), (3, 3, false, false),
    ]

    @Test("every form of the step gives the exactly rounded values", arguments: precisions)
    func formsAgree(bits: Int) {
        var random = SplitMix(seed: UInt64(bits))
        let steppers = [(0, 1), (1, 1), (1, 2)].map { form, threads in
            glint_orbit_stepper_create(bits, Int32(threads), Int32(form))!
        }
        defer { steppers.forEach { glint_orbit_stepper_destroy($0) } }
        for (index, shape) in Self.shapes.enumerated() {
            for trial in 0..<6 {
                let x = random.number(bits: bits, exponent: shape.0, zero: shape.2)
                let y = random.number(bits: bits, exponent: shape.1, zero: shape.3)
                // x = ±y on some trials: the real part cancels to a few bits or to nothing.
                if trial == 5 && !shape.2 && !shape.3 { mpfr_set(y.raw, x.raw, MPFR_RNDN) }
                let aRe = random.number(bits: bits, exponent: trial % 2 == 0 ? 1 : -9, zero: false)
                let aIm = random.number(bits: bits, exponent: trial % 3 == 0 ? -70 : 0, zero: trial == 4 || trial == 5)
                let (wantRe, wantIm) = Self.exactStep(x: x, y: y, aRe: aRe, aIm: aIm, bits: bits)
                for (s, stepper) in steppers.enumerated() {
                    let gotRe = MPFRNumber(precision: bits), gotIm = MPFRNumber(precision: bits)
                    gotRe.set(x); gotIm.set(y)
                    glint_orbit_step(stepper, gotRe.raw, gotIm.raw, aRe.raw, aIm.raw)
                    #expect(Self.same(gotRe, wantRe) && Self.same(gotIm, wantIm),
                            "\(bits) bits, shape \(index), trial \(trial), stepper \(s)")
                }
            }
        }
    }

    /// One stepper for many steps of every shape, as a long orbit meets them: sparse numbers (a few
    /// bits far apart) and dense ones, exponent gaps, a near x² or far below it, x² − y² + a
    /// cancelling, a of another precision. A step must not see anything of the steps before it.
    @Test("one stepper, many steps of mixed shapes", arguments: [(301, 1), (4_000, 1), (4_000, 2)])
    func manyMixedSteps(bits: Int, threads: Int) {
        var random = SplitMix(seed: UInt64(bits * 10 + threads))
        let stepper = glint_orbit_stepper_create(bits, Int32(threads), 1)!
        defer { glint_orbit_stepper_destroy(stepper) }
        let aBits = bits + 100
        func value(_ precision: Int, _ exponent: Int, span: Int) -> MPFRNumber {
            let kind = random.next() % 8
            if kind == 0 {
                let zero = MPFRNumber(precision: precision)
                if random.next() & 1 == 1 { mpfr_neg(zero.raw, zero.raw, MPFR_RNDN) }
                return zero
            }
            if kind <= 2 { return random.number(bits: precision, exponent: exponent, zero: false) }
            let sum = MPFRNumber(precision: precision + span + 64), term = MPFRNumber(precision: 2)
            mpfr_set_ui_2exp(sum.raw, 1, exponent - 1, MPFR_RNDN)
            for _ in 0...(random.next() % 4) {
                mpfr_set_ui_2exp(term.raw, 1, exponent - 2 - Int(random.next() % UInt64(span + 1)), MPFR_RNDN)
                if random.next() & 1 == 1 { mpfr_sub(sum.raw, sum.raw, term.raw, MPFR_RNDN) } else { mpfr_add(sum.raw, sum.raw, term.raw, MPFR_RNDN) }
            }
            let v = MPFRNumber(precision: precision)
            mpfr_set(v.raw, sum.raw, MPFR_RNDN)
            if random.next() & 1 == 1 { mpfr_neg(v.raw, v.raw, MPFR_RNDN) }
            return v
        }
        var mismatches = 0
        for step in 0..<600 {
            let ex = Int(random.next() % 9) - 4
            let ey = random.next() % 4 == 0 ? ex : ex + Int(random.next() % 200) - 100
            let span = random.next() & 1 == 1 ? bits + 2 : bits / 2 + 1
            let x = value(bits, ex, span: span)
            var y = value(bits, ey, span: span)
            if random.next() % 6 == 0 {
                y = MPFRNumber(precision: bits)
                mpfr_set(y.raw, x.raw, MPFR_RNDN)
                if random.next() & 1 == 1 { mpfr_neg(y.raw, y.raw, MPFR_RNDN) }
            }
            var ea = 2 * max(ex, ey) + Int(random.next() % 12) - 8
            if random.next() % 5 == 0 { ea -= Int(random.next() % UInt64(2 * bits)) }
            var aRe = value(aBits, ea, span: aBits + 2)
            let aIm = value(aBits, ea + Int(random.next() % 5) - 2, span: aBits + 2)
            if random.next() % 5 == 0 && mpfr_regular_p(x.raw) != 0 && mpfr_regular_p(y.raw) != 0 {
                // a cancels x² − y² to within its own precision.
                let big = MPFRNumber(precision: 4 * bits + 8), other = MPFRNumber(precision: 4 * bits + 8)
                mpfr_sqr(big.raw, x.raw, MPFR_RNDN)
                mpfr_sqr(other.raw, y.raw, MPFR_RNDN)
                mpfr_sub(big.raw, other.raw, big.raw, MPFR_RNDN)
                aRe = MPFRNumber(precision: aBits)
                mpfr_set(aRe.raw, big.raw, MPFR_RNDN)
            }
            let (wantRe, wantIm) = Self.exactStep(x: x, y: y, aRe: aRe, aIm: aIm, bits: bits)
            let gotRe = MPFRNumber(precision: bits), gotIm = MPFRNumber(precision: bits)
            gotRe.set(x); gotIm.set(y)
            glint_orbit_step(stepper, gotRe.raw, gotIm.raw, aRe.raw, aIm.raw)
            if !(Self.same(gotRe, wantRe) && Self.same(gotIm, wantIm)) {
                mismatches += 1
                if mismatches <= 3 { Issue.record("\(bits) bits, \(threads) threads: step \(step) differs") }
            }
        }
        #expect(mismatches == 0)
    }

    /// A cancelled task ends its orbit within a step, in the FFT form (at 1e20000, 66,000 bits)
    /// and the MPFR form, and throws rather than return a short orbit.
    // Serialized: each case holds one of the cooperative pool's threads until it is cancelled,
    // and the test's own sleep needs another.
    @Test("cancelling the task ends a long orbit at once", .serialized, arguments: [ReferenceOrbit.StepForm.fft, .mpfr])
    func cancellationEndsTheOrbit(form: ReferenceOrbit.StepForm) async throws {
        let bits = 66_000
        let c = (MPFRNumber(-1.7548776662466927, precision: bits), MPFRNumber(1e-17, precision: bits))
        let task = Task { () throws -> Int in
            var re = [Double](), im = [Double]()
            _ = try ReferenceOrbit.append(from: c, adding: c, fold: false, testingStart: true, points: 2_000_000, limit: 4,
                                          bits: bits, re: &re, im: &im, form: form)
            return re.count
        }
        try await Task.sleep(for: .milliseconds(300))
        let sent = ContinuousClock.now
        task.cancel()
        let result = await task.result
        let took = ContinuousClock.now - sent
        // The proof is the throw: 2 million steps at 66,000 bits would take minutes. The time
        // bound is loose, since a loaded machine may take seconds just to schedule the task.
        #expect(took < .seconds(120), "the orbit ran \(took) past its cancellation")
        switch result {
        case .success(let n): Issue.record("a cancelled orbit returned \(n) points")
        case .failure(let e): #expect((e as? GlintError) == ReferenceOrbit.cancelled, "\(e)")
        }
    }

    /// An orbit falling to 0 (a Julia set with c = 0, from inside the unit circle): its exponent
    /// doubles every step, past MPFR's range, where the FFT form must hand over to MPFR.
    @Test("an orbit falling to zero is the same in every form")
    func orbitFallingToZero() throws {
        let bits = 4_000
        let start = (MPFRNumber(0.6, precision: bits), MPFRNumber(-0.79, precision: bits))
        let zero = (MPFRNumber(precision: bits), MPFRNumber(precision: bits))
        var orbits: [[UInt64]] = []
        for form in [ReferenceOrbit.StepForm.mpfr, .fft] {
            var re = [Double](), im = [Double]()
            let escaped = try ReferenceOrbit.append(from: start, adding: zero, fold: false, testingStart: false, points: 100,
                                                limit: 4, bits: bits, re: &re, im: &im, form: form)
            #expect(!escaped && re.count == 100)
            orbits.append((re + im).map(\.bitPattern))
        }
        #expect(orbits[0] == orbits[1])
    }

    /// Exact halfway cases round to even: x = 2^h + 1 (h = ⌈p/2⌉) has x² = 2^(2h) + 2^(h+1) + 1,
    /// one bit more than the precision holds when 2h = p, so its last bit is a tie; with y's
    /// square added (y = 2^j) or a (±2^-k) the tie moves or breaks.
    @Test("halfway cases round to even in every form", arguments: [64, 302, 3_000, 6_000])
    func tiesGoToEven(bits: Int) {
        let h = bits / 2
        let steppers = [(0, 1), (1, 1), (1, 2)].map { form, threads in
            glint_orbit_stepper_create(bits, Int32(threads), Int32(form))!
        }
        defer { steppers.forEach { glint_orbit_stepper_destroy($0) } }
        for (yPower, aPower) in [(Int?.none, Int?.none), (0, nil), (nil, 1), (h / 2, 3)] {
            let x = MPFRNumber(precision: bits), y = MPFRNumber(precision: bits)
            mpfr_set_ui_2exp(x.raw, 1, h, MPFR_RNDN)
            mpfr_add_ui(x.raw, x.raw, 1, MPFR_RNDN)
            if let yPower { mpfr_set_ui_2exp(y.raw, 1, yPower, MPFR_RNDN) }
            let aRe = MPFRNumber(precision: bits), aIm = MPFRNumber(precision: bits)
            if let aPower { mpfr_set_si_2exp(aRe.raw, -1, -aPower, MPFR_RNDN) }
            let (wantRe, wantIm) = Self.exactStep(x: x, y: y, aRe: aRe, aIm: aIm, bits: bits)
            for (s, stepper) in steppers.enumerated() {
                let gotRe = MPFRNumber(precision: bits), gotIm = MPFRNumber(precision: bits)
                gotRe.set(x); gotIm.set(y)
                glint_orbit_step(stepper, gotRe.raw, gotIm.raw, aRe.raw, aIm.raw)
                #expect(Self.same(gotRe, wantRe) && Self.same(gotIm, wantIm), "\(bits) bits, y 2^\(yPower ?? -1), stepper \(s)")
            }
        }
        // The plain case by hand: 2^(2h) + 2^(h+1) + 1 rounds to 2^(2h) + 2^(h+1) at 2h bits.
        let x = MPFRNumber(precision: 2 * h), zero = MPFRNumber(precision: 2 * h)
        mpfr_set_ui_2exp(x.raw, 1, h, MPFR_RNDN)
        mpfr_add_ui(x.raw, x.raw, 1, MPFR_RNDN)
        let y = MPFRNumber(precision: 2 * h)
        let stepper = glint_orbit_stepper_create(2 * h, 1, 1)!
        defer { glint_orbit_stepper_destroy(stepper) }
        glint_orbit_step(stepper, x.raw, y.raw, zero.raw, zero.raw)
        let want = MPFRNumber(precision: 2 * h + 8)
        mpfr_set_ui_2exp(want.raw, 1, 2 * h, MPFR_RNDN)
        let term = MPFRNumber(precision: 2 * h + 8)
        mpfr_set_ui_2exp(term.raw, 1, h + 1, MPFR_RNDN)
        mpfr_add(want.raw, want.raw, term.raw, MPFR_RNDN)
        #expect(mpfr_equal_p(x.raw, want.raw) != 0)
    }

    /// The FFT form must be the one computing: over an orbit at the 1e10000 view's precision no
    /// step may have gone to MPFR (a check that fails every step would pass the tests here).
    @Test("the FFT form computes an orbit's steps itself", arguments: [1, 2])
    func fftFormRuns(threads: Int) {
        let bits = 33_283
        let stepper = glint_orbit_stepper_create(bits, Int32(threads), 1)!
        defer { glint_orbit_stepper_destroy(stepper) }
        #expect(glint_orbit_stepper_uses_fft(stepper) == 1)
        var random = SplitMix(seed: 7)
        let c = (random.number(bits: bits, exponent: 0, zero: false), random.number(bits: bits, exponent: -1, zero: false))
        mpfr_set_exp(c.0.raw, 0)
        mpfr_mul_d(c.0.raw, c.0.raw, -0.75, MPFR_RNDN)
        mpfr_mul_d(c.1.raw, c.1.raw, 0.25, MPFR_RNDN)
        var re = [Double](repeating: 0, count: 300), im = re
        var escaped: Int32 = 0
        let n = glint_orbit_run(stepper, c.0.raw, c.1.raw, c.0.raw, c.1.raw, 0, 1, 300, 4, &re, &im, &escaped)
        #expect(n == 300 && escaped == 0)
        #expect(glint_orbit_stepper_mpfr_steps(stepper) == 0)
    }

    /// Whole orbits (Mandelbrot, Burning Ship's folded one, and one on the real axis, where y
    /// stays an exact zero) are the same through every form.
    @Test("an orbit is the same through the MPFR and the FFT form", arguments: [0, 1, 2])
    func orbitsAgree(kind: Int) throws {
        let bits = 6_000
        // Near the period-3 minibrot: a long orbit whose values soon use every bit.
        let c = (MPFRNumber(-1.7548776662466927, precision: bits), MPFRNumber(kind == 2 ? 0 : 1e-17, precision: bits))
        var orbits: [[Double]] = []
        for form in [ReferenceOrbit.StepForm.mpfr, .fft, .automatic] {
            var re = [Double](), im = [Double]()
            _ = try ReferenceOrbit.append(from: c, adding: c, fold: kind == 1, testingStart: true, points: 2_000, limit: 4,
                                      bits: bits, re: &re, im: &im, form: form)
            orbits.append(re + im)
        }
        #expect(orbits[0].count > 100)
        // Bit for bit (a zero's sign included).
        #expect(orbits[0].map(\.bitPattern) == orbits[1].map(\.bitPattern))
        #expect(orbits[0].map(\.bitPattern) == orbits[2].map(\.bitPattern))
    }

    /// The same value, and for a zero the same sign.
    static func same(_ a: MPFRNumber, _ b: MPFRNumber) -> Bool {
        mpfr_equal_p(a.raw, b.raw) != 0 && (mpfr_signbit(a.raw) != 0) == (mpfr_signbit(b.raw) != 0)
    }

    /// RN(x² − y² + aRe) and RN(2xy + aIm) at `bits`, from products and a difference kept exact
    /// by giving each the precision it needs, and one rounding each at the end.
    static func exactStep(x: MPFRNumber, y: MPFRNumber, aRe: MPFRNumber, aIm: MPFRNumber, bits: Int)
        -> (MPFRNumber, MPFRNumber) {
        let xx = MPFRNumber(precision: 2 * bits), yy = MPFRNumber(precision: 2 * bits), xy = MPFRNumber(precision: 2 * bits)
        mpfr_mul(xx.raw, x.raw, x.raw, MPFR_RNDN)
        mpfr_mul(yy.raw, y.raw, y.raw, MPFR_RNDN)
        mpfr_mul(xy.raw, x.raw, y.raw, MPFR_RNDN)
        mpfr_mul_2ui(xy.raw, xy.raw, 1, MPFR_RNDN)
        // The difference of two 2p-bit numbers is exact at 2p bits plus their exponents' distance.
        let spread = xx.sign == 0 || yy.sign == 0 ? 0 : abs(mpfr_get_exp(xx.raw) - mpfr_get_exp(yy.raw))
        let difference = MPFRNumber(precision: 2 * bits + spread + 2)
        #expect(mpfr_sub(difference.raw, xx.raw, yy.raw, MPFR_RNDN) == 0)
        let re = MPFRNumber(precision: bits), im = MPFRNumber(precision: bits)
        mpfr_add(re.raw, difference.raw, aRe.raw, MPFR_RNDN)
        mpfr_add(im.raw, xy.raw, aIm.raw, MPFR_RNDN)
        return (re, im)
    }
}

/// Random numbers of a given precision and size, from a fixed seed.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// ± a number in [2^(exponent−1), 2^exponent) with every one of its `bits` bits random, or zero.
    mutating func number(bits: Int, exponent: Int, zero: Bool) -> MPFRNumber {
        let n = MPFRNumber(precision: bits)
        guard !zero else {
            if next() & 1 == 1 { mpfr_neg(n.raw, n.raw, MPFR_RNDN) }   // -0 as well as +0
            return n
        }
        let word = MPFRNumber(precision: 64)
        var filled = 0
        while filled < bits {
            mpfr_set_ui_2exp(word.raw, UInt(next()), -64 - filled, MPFR_RNDN)
            mpfr_add(n.raw, n.raw, word.raw, MPFR_RNDZ)
            filled += 64
        }
        // Into [1/2, 1) with the top bit set, then scaled; the sign at random.
        mpfr_set_exp(n.raw, 0)
        mpfr_mul_2si(n.raw, n.raw, exponent, MPFR_RNDN)
        if next() & 1 == 1 { mpfr_neg(n.raw, n.raw, MPFR_RNDN) }
        return n
    }
}
