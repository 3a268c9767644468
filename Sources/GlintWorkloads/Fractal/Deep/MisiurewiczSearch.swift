import CMPFR
import GlintCore

extension MisiurewiczLocator {
    /// Step 1 of the locator (see its documentation): the candidates (q, p) near a view, one at a
    /// time, in order of q + p and, for one q + p, nearest first.
    ///
    /// The centre's orbit z_n is kept at the view's precision for the last `periods.upperBound`
    /// steps (g_i = z_n − z_{n−p} is a difference of nearly equal numbers), its first and second
    /// derivatives in c at 64 bits (only magnitudes matter to the test); the sums
    /// Σ = Σ_{i<q} g_i'/g_i and Σ' = Σ_{i<q} (g_i'/g_i)' are kept per period.
    final class Search {
        /// Why the search ended, once `next()` has returned nil.
        private(set) var end: String?

        private let c: MPFRComplex
        private let bits: Int
        /// The formula's power N.
        private let power: Int
        private let preperiods: ClosedRange<Int>
        private let periods: ClosedRange<Int>
        /// The last n iterated.
        private let lastStep: Int
        private var n = 0
        /// z_n (view precision), z_n and dz_n/dc at 64 bits.
        private let z: MPFRComplex
        private let z64 = MPFRComplex(precision: 64), slope = MPFRComplex(precision: 64)
        /// d²z_n/dc² at 64 bits.
        private let bend = MPFRComplex(precision: 64)
        /// The last orbit points and derivatives from z_0 = 0 on, z_k at k % ring.
        private let ring: Int
        private var points: [MPFRComplex]
        private var slopes = [MPFRComplex(precision: 64)]
        private var bends = [MPFRComplex(precision: 64)]
        /// Per period p (index p − lowest period, for the periods reached so far): Σ and Σ', and
        /// whether z_{i+p} = z_i was met (nothing more to find for p).
        private var sums: [MPFRComplex] = []
        private var turns: [MPFRComplex] = []
        private var done: [Bool] = []
        private var queue: [(distance: Double, preperiod: Int, period: Int)] = []
        // Working values.
        private let scratch: MPFRComplex
        private let g = MPFRComplex(precision: 64), gSlope = MPFRComplex(precision: 64)
        private let a = MPFRComplex(precision: 64), reduced = MPFRComplex(precision: 64)
        private let gBend = MPFRComplex(precision: 64), w = MPFRComplex(precision: 64)
        private let reducedTurn = MPFRComplex(precision: 64), ratio = MPFRComplex(precision: 64)
        private let product = MPFRComplex(precision: 64), scratch64 = MPFRComplex(precision: 64)
        private let m = MPFRNumber(precision: 64), m2 = MPFRNumber(precision: 64), m3 = MPFRNumber(precision: 64)
        private let l2 = MPFRNumber(precision: 64)
        private let r2: MPFRNumber
        /// |g|² at or below which z_{i+p} = z_i at the view's precision.
        private let zeroLevel: MPFRNumber
        /// Past power 2: z^(N−1) at full precision, z^(N−2) and z^(N−1) at 64 bits, a product.
        private let wide: MPFRComplex
        private let power64 = MPFRComplex(precision: 64), lower64 = MPFRComplex(precision: 64)
        private let term64 = MPFRComplex(precision: 64)

        init(_ view: LocatorView, preperiods: ClosedRange<Int>, periods: ClosedRange<Int>, power: Int = 2) {
            c = view.centre
            bits = view.bits
            self.power = power
            wide = MPFRComplex(precision: view.bits)
            (self.preperiods, self.periods) = (preperiods, periods)
            lastStep = preperiods.upperBound + periods.upperBound
            z = MPFRComplex(precision: bits)
            scratch = MPFRComplex(precision: bits)
            points = [MPFRComplex(precision: bits)]
            ring = min(periods.upperBound, lastStep) + 1
            r2 = view.radius.squared()
            zeroLevel = MPFRNumber(1, precision: 64)
            zeroLevel.setScaled(zeroLevel, byPowerOfTwo: -2 * (bits - 8))
        }

        /// The next candidate, or nil when there is none (`end` says why). Errors:
        /// `Locator.cancelled` when the running task is cancelled (looked at every step: each tests
        /// up to `periods.count` pairs).
        func next() throws(GlintError) -> (preperiod: Int, period: Int)? {
            defer { MPFRNumber.releaseThreadCaches() }
            while queue.isEmpty {
                guard end == nil else { return nil }
                guard n < lastStep else {
                    end = "no Misiurewicz point of preperiod up to \(preperiods.upperBound) and period up to \(periods.upperBound) shows near this view: move the centre, zoom out, or raise --max-preperiod or --max-period"
                    return nil
                }
                try Locator.checkCancellation()
                advance()
            }
            let first = queue.removeFirst()
            return (first.preperiod, first.period)
        }

        /// One step of the orbit, then the test for every (q, p) with q + p = n.
        private func advance() {
            if power == 2 {
                // d²z ← 2·(dz² + z·d²z), dz ← 2·z·dz + 1 (from the old values), z ← z² + c.
                product.multiply(z, bend)
                bend.multiply(slope, slope)
                bend.setSum(bend, product)
                bend.re.setScaled(bend.re, byPowerOfTwo: 1)
                bend.im.setScaled(bend.im, byPowerOfTwo: 1)
                slope.advanceDerivative(at: z, scratch: product)
                z.squarePlus(c, scratch: scratch)
            } else {
                // d²z ← N·(N−1)·z^(N−2)·dz² + N·z^(N−1)·d²z, dz ← N·z^(N−1)·dz + 1 (from the old
                // values, at 64 bits), z ← z^(N−1)·z + c (at full precision).
                lower64.setPower(z, power - 2)
                power64.multiply(lower64, z)
                term64.multiply(slope, slope)
                term64.multiply(by: lower64)
                term64.re.setProduct(term64.re, power * (power - 1))
                term64.im.setProduct(term64.im, power * (power - 1))
                bend.multiply(by: power64)
                bend.re.setProduct(bend.re, power)
                bend.im.setProduct(bend.im, power)
                bend.setSum(bend, term64)
                slope.multiply(by: power64)
                slope.re.setProduct(slope.re, power)
                slope.im.setProduct(slope.im, power)
                slope.re.setSum(slope.re, 1.0)
                wide.setPower(z, power - 1)
                z.multiply(by: wide)
                z.setSum(z, c)
            }
            z64.set(z)
            n += 1
            z64.squaredMagnitude(into: m)
            if m.compare(4) > 0 {
                end = "the centre's orbit escapes (|z| > 2 at step \(n)) before a Misiurewicz point shows near it: move the centre onto the set's edge, zoom out, or give --preperiod and --period"
                return
            }
            let slot = n % ring
            if points.count < ring {
                points.append(MPFRComplex(z, precision: bits))
                slopes.append(MPFRComplex(slope, precision: 64))
                bends.append(MPFRComplex(bend, precision: 64))
            } else {
                points[slot].set(z)
                slopes[slot].set(slope)
                bends[slot].set(bend)
            }
            var found: [(distance: Double, preperiod: Int, period: Int)] = []
            let low = max(periods.lowerBound, n - preperiods.upperBound)
            let high = min(periods.upperBound, n)
            guard low <= high else { return }
            while sums.count <= high - periods.lowerBound {
                sums.append(MPFRComplex(precision: 64))
                turns.append(MPFRComplex(precision: 64))
                done.append(false)
            }
            for p in low...high where !done[p - periods.lowerBound] {
                let i = n - p
                g.setDifference(z, points[i % ring])
                g.squaredMagnitude(into: m)
                if mpfr_lessequal_p(m.raw, zeroLevel.raw) != 0 {
                    // The orbit repeats from z_i at this precision: c is (numerically) a point of
                    // preperiod i, or its orbit has fallen onto an attracting cycle.
                    done[p - periods.lowerBound] = true
                    guard i >= 2 else { continue }
                    if cycleAttracts(from: i, period: p) {
                        end = "the centre is inside the set (its orbit falls onto an attracting cycle of period \(p)): move it onto the set's edge"
                        return
                    }
                    if preperiods.contains(i) { found.append((0, i, p)) }
                    continue
                }
                // a = g'/g and w = (g'/g)' = g''/g − a², the terms of Σ and Σ'.
                gSlope.setDifference(slope, slopes[i % ring])
                _ = a.divide(gSlope, g, scratch: scratch64)
                gBend.setDifference(bend, bends[i % ring])
                _ = w.divide(gBend, g, scratch: scratch64)
                product.multiply(a, a)
                w.setDifference(w, product)
                let index = p - periods.lowerBound
                if i >= 2 && preperiods.contains(i) && isCandidate(sum: sums[index], turn: turns[index]) {
                    found.append((1 / m.toDouble().squareRoot(), i, p))
                }
                sums[index].setSum(sums[index], a)
                turns[index].setSum(turns[index], w)
            }
            queue += found.sorted { ($0.distance, $0.period) < ($1.distance, $1.period) }
        }

        /// The test of step 1 for g = z_n − z_i (a = g'/g in `a`, w = (g'/g)' in `w`) and the sums
        /// Σ, Σ' of the lower terms: with L = a − Σ = h'/h and L' = w − Σ', Newton's first step on h,
        /// 1/L, is shorter than the view radius, a outweighs Σ, and h is near enough linear over
        /// that step: |h''/h'|/|L| = |1 + L'/L²| ≤ `bendLimit` (near the centre of a minibrot of
        /// period n, dz_n/dc is huge and a first step means nothing). Leaves |L|²r² in `m`.
        private func isCandidate(sum: MPFRComplex, turn: MPFRComplex) -> Bool {
            reduced.setDifference(a, sum)
            reduced.squaredMagnitude(into: l2)
            m.setProduct(l2, r2)
            guard m.compare(1) > 0 else { return false }
            a.squaredMagnitude(into: m2)
            sum.squaredMagnitude(into: m3)
            guard mpfr_greater_p(m2.raw, m3.raw) != 0 else { return false }
            // L'/L² + 1
            product.multiply(reduced, reduced)
            reducedTurn.setDifference(w, turn)
            _ = ratio.divide(reducedTurn, product, scratch: scratch64)
            ratio.re.setSum(ratio.re, 1.0)
            ratio.squaredMagnitude(into: m2)
            return m2.compare(MisiurewiczLocator.bendLimit * MisiurewiczLocator.bendLimit) <= 0
        }

        /// Whether the cycle z_i … z_{i+p−1} attracts: |Π N·z_k^(N−1)| < 1.
        private func cycleAttracts(from i: Int, period p: Int) -> Bool {
            let lambda = MPFRComplex(MPFRNumber(1, precision: 64), MPFRNumber(precision: 64))
            for k in i..<(i + p) {
                lambda.multiply(byDerivativeOfPower: power, at: points[k % ring], scratch: product, w: power64)
            }
            return lambda.log2Magnitude() < 0
        }
    }
}
