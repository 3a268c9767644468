#if canImport(Glibc)
import Glibc
#endif
import GlintCore

/// Bilinear approximation (BLA) of a reference orbit: tables of steps that skip many iterations
/// of a sample's delta at once.
///
/// Near the reference, one perturbation step dz' = 2·O[m]·dz + dz² + dc is, while dz² is
/// negligible, the linear map dz' = A·dz + B·dc with A = 2·O[m], B = 1. Two such maps, x then y,
/// compose to A = A_y·A_x, B = A_y·B_x + B_y, so a step of 2^k iterations is one multiply-add.
/// Level k holds the steps of 2^k iterations that start at m = j·2^k + 1 (j = 0, 1, ...), each
/// ending at m + 2^k <= the orbit's last point. A sample at m (m − 1 a multiple of 2^k) takes the
/// longest step whose validity test it passes; the tests grow stricter with the level, so the
/// search climbs from the shortest stored level and stops at the first failure.
///
/// Validity, while the delta is a normal Double ("double phase"): |dz| < R, with
/// R = min(ε·|O[m]|, room to the escape radius) for one step and, merging x then y,
///     R = max(0, min(R_x, (R_y − |B_x|·|dc|max) / |A_x|))
/// (|dc|max bounds the view's sample offsets). Stored as R² (|dz|² < R²), and as 0 when R is under
/// 2^-500, so that a |dz|² that underflows never passes a radius that small.
///
/// Validity, while the delta is tiny ("tiny phase", |dz| < 2^-500, carried as a mantissa and
/// exponent: PerturbationCPU): there the dropped dz² is below 2^-100 of 2·O·dz as long as every
/// |O| in the step is at least 2^-400, so the linear map is exact to rounding, and a step is
/// valid while every intermediate delta stays under 2^-500: with |A_j|, |B_j| the partial maps
/// inside the step, Amax = max|A_j| < 2^tA and Bmax = max|B_j| < 2^tB, the test is
/// tA + ⌈log2|dz|⌉ <= −501 and tB + ⌈log2|dc|⌉ <= −501, in integers. Merging x then y:
///     tA = max(tA_x, tA_y + a_x),  tB = max(tB_x, max(tA_y + b_x, tB_y) + 1)
/// where 2^a_x > |A_x| and 2^b_x > |B_x|. A step over an |O| under 2^-400 never passes
/// (tA = `never`).
///
/// A and B are stored as a mantissa pair (the larger part in [1, 2)) and an exponent, so that
/// they hold at any depth (|A| reaches 1/|dc|, past Double's range beyond zoom 1e300).
///
/// Levels 0 and 1 are not stored (a sample takes up to 3 plain steps to reach a multiple of 4):
/// the table holds about half as many entries as the orbit has points, 56 bytes each (5 Doubles
/// and 4 Int32), 28 bytes per orbit point: 28 MB for a million iterations, beside the orbit's 16.
/// While it is built the two finest levels are held as well, about 124 bytes per point at the peak.
public struct BLATable: Sendable {
    /// The shortest stored level: steps of 2^firstLevel iterations.
    public static let firstLevel = 2
    /// ε of the double-phase radius: the relative size of the dropped dz² term allowed per step.
    public static let epsilon = 0x1p-45
    /// tA of a step the tiny phase must never take.
    public static let never: Int32 = 1 << 29
    /// The exponent given to zero (a mantissa of 0), low enough that no test involving it fails.
    public static let zeroExponent = -(1 << 28)

    /// Doubles per entry: A's mantissa (re, im), B's mantissa (re, im), R².
    public static let realsPerEntry = 5
    /// Int32s per entry: A's exponent, B's exponent, tA, tB.
    public static let intsPerEntry = 4

    /// Entries of every stored level, level by level.
    public let reals: [Double]
    public let ints: [Int32]
    /// Per stored level (firstLevel, firstLevel + 1, ...): the index of its first entry.
    public let levelOffsets: [Int32]
    /// Per stored level: its number of entries.
    public let levelCounts: [Int32]

    /// The largest R² of the first stored level (0 without levels): a |dz|² at or above it passes
    /// no entry's test (R shrinks with the level at each start).
    public let maxR2: Double

    /// Stored levels (0 when the orbit is too short for a step of 2^firstLevel).
    public var levels: Int { levelOffsets.count }
    public var entries: Int { reals.count / Self.realsPerEntry }
    /// The table's memory.
    public var byteCount: Int { reals.count * 8 + ints.count * 4 + levelOffsets.count * 8 }

    /// No table: every sample iterates step by step.
    public static let empty = BLATable()

    private init() {
        reals = []; ints = []; levelOffsets = []; levelCounts = []; maxR2 = 0
    }

    /// The table for `orbit`, for a view whose sample offsets are at most `dcMax` (0 when that is
    /// below Double's range: the double phase then needs no dc margin, its dc being 0). A
    /// cancelled task gets no table (as for a short orbit) within one level's work: its render
    /// then stops before its first row.
    public init(orbit: ReferenceOrbit, dcMax: Double) {
        let steps = orbit.count - 2   // steps from m = 1 to the last point
        var reals = [Double](), ints = [Int32](), offsets = [Int32](), counts = [Int32]()
        guard steps >= 1 << Self.firstLevel, !Task.isCancelled else {
            self = .empty
            return
        }
        // Level 0: the step at m = j + 1.
        // The escape radius as the escape test sees it (R² rounded through Float).
        let bailout = PerturbationCPU.bailout2(orbit.bailout).squareRoot()
        var level = [Entry]()
        level.reserveCapacity(steps)
        orbit.re.withUnsafeBufferPointer { re in
            orbit.im.withUnsafeBufferPointer { im in
                for j in 0..<steps {
                    level.append(orbit.power == 2 ? Entry(single: re[j + 1], im[j + 1], bailout: bailout)
                                                  : Entry(single: re[j + 1], im[j + 1], power: orbit.power, bailout: bailout))
                }
            }
        }
        var k = 0
        var stored = 0
        let storedCapacity = steps   // a bound on the stored entries (steps/4 + steps/8 + ... )
        reals.reserveCapacity(storedCapacity / 2 * Self.realsPerEntry)
        ints.reserveCapacity(storedCapacity / 2 * Self.intsPerEntry)
        while level.count >= 1 {
            if Task.isCancelled {
                self = .empty
                return
            }
            if k >= Self.firstLevel {
                offsets.append(Int32(stored))
                counts.append(Int32(level.count))
                for e in level {
                    reals.append(e.ar); reals.append(e.ai); reals.append(e.br); reals.append(e.bi)
                    reals.append(e.r >= 0x1p-500 ? e.r * e.r : 0)
                    ints.append(Int32(clamping: e.ae)); ints.append(Int32(clamping: e.be))
                    ints.append(e.tA); ints.append(e.tB)
                }
                stored += level.count
            }
            guard level.count >= 2 else { break }
            var next = [Entry]()
            next.reserveCapacity(level.count / 2)
            for j in 0..<(level.count / 2) {
                next.append(Entry.merge(level[2 * j], then: level[2 * j + 1], dcMax: dcMax))
            }
            level = next
            k += 1
        }
        var largest = 0.0
        if let first = counts.first {
            for j in 0..<Int(first) { largest = max(largest, reals[j * Self.realsPerEntry + 4]) }
        }
        maxR2 = largest
        self.reals = reals
        self.ints = ints
        levelOffsets = offsets
        levelCounts = counts
    }

    /// One step of the table while it is built: A and B as mantissa pairs and exponents.
    struct Entry {
        var ar: Double, ai: Double, ae: Int
        var br: Double, bi: Double, be: Int
        var r: Double
        var tA: Int32, tB: Int32

        /// The single step at a point O = (zr, zi): A = 2·O, B = 1, R = ε·|O|, and no more than
        /// the room left to the escape radius, so that a sample inside a longer step cannot pass
        /// the escape radius at a point the step skips: min(ε·|O|, (bailout − |O|)·(1 − 2^-30)).
        /// The tiny phase's test likewise never passes where that room is under 2^-499.
        init(single zr: Double, _ zi: Double, bailout: Double) {
            (ar, ai, ae) = BLATable.normalized(2 * zr, 2 * zi, 0)
            (br, bi, be) = (1, 0, 0)
            let magnitude = (zr * zr + zi * zi).squareRoot()
            let room = (bailout - magnitude) * (1 - 0x1p-30)
            r = max(0, min(BLATable.epsilon * magnitude, room))
            let big = max(abs(zr), abs(zi))
            tA = big != 0 && big.exponent >= -400 && room >= 0x1p-499 ? Int32(ae + 2) : BLATable.never
            tB = 1
        }

        /// The single step of z^n + c at O (n > 2): A = n·O^(n−1), B = 1 and R = ε·|O|/(n − 1)
        /// (the dropped terms are led by C(n,2)·O^(n−2)·dz², which against A·dz is
        /// (n − 1)/2·|dz|/|O|: the quadratic step's ratio for the same ε), with the same room to
        /// the escape radius and tiny-phase bounds. O^(n−1) is renormalised after each product,
        /// so that it holds where a Double would underflow.
        init(single zr: Double, _ zi: Double, power n: Int, bailout: Double) {
            var (pr, pi, pe) = BLATable.normalized(zr, zi, 0)
            let (or, oi, oe) = (pr, pi, pe)
            for _ in 2..<n {
                (pr, pi, pe) = BLATable.normalized(pr * or - pi * oi, pr * oi + pi * or, pe + oe)
            }
            (ar, ai, ae) = BLATable.normalized(Double(n) * pr, Double(n) * pi, pe)
            (br, bi, be) = (1, 0, 0)
            let magnitude = (zr * zr + zi * zi).squareRoot()
            let room = (bailout - magnitude) * (1 - 0x1p-30)
            r = max(0, min(BLATable.epsilon * magnitude / Double(n - 1), room))
            let big = max(abs(zr), abs(zi))
            tA = big != 0 && big.exponent >= -400 && room >= 0x1p-499 ? Int32(clamping: ae + 2) : BLATable.never
            tB = 1
        }

        init(ar: Double, ai: Double, ae: Int, br: Double, bi: Double, be: Int, r: Double, tA: Int32, tB: Int32) {
            self.ar = ar; self.ai = ai; self.ae = ae
            self.br = br; self.bi = bi; self.be = be
            self.r = r; self.tA = tA; self.tB = tB
        }

        static func merge(_ x: Entry, then y: Entry, dcMax: Double) -> Entry {
            // A = A_y · A_x
            let (ar, ai, ae) = BLATable.normalized(y.ar * x.ar - y.ai * x.ai, y.ar * x.ai + y.ai * x.ar,
                                                   clampedSum(y.ae, x.ae))
            // B = A_y · B_x + B_y
            let pr = y.ar * x.br - y.ai * x.bi, pi = y.ar * x.bi + y.ai * x.br
            let pe = clampedSum(y.ae, x.be)
            let f = max(pe, y.be)
            let (br, bi, be) = BLATable.normalized(scalbn(pr, Int32(clamping: pe - f)) + scalbn(y.br, Int32(clamping: y.be - f)),
                                                   scalbn(pi, Int32(clamping: pe - f)) + scalbn(y.bi, Int32(clamping: y.be - f)), f)
            // R = max(0, min(R_x, (R_y − |B_x|·dcMax) / |A_x|))
            let magA = scalbn((x.ar * x.ar + x.ai * x.ai).squareRoot(), Int32(clamping: x.ae))
            let magB = scalbn((x.br * x.br + x.bi * x.bi).squareRoot(), Int32(clamping: x.be))
            let margin = dcMax == 0 ? 0 : magB * dcMax
            let candidate = (y.r - margin) / magA
            let r = candidate.isNaN ? 0 : max(0, min(x.r, candidate))
            // Tiny-phase bounds.
            let aX = x.ae + 2, bX = x.be + 2
            let tA = clamp(max(Int(x.tA), Int(y.tA) + aX))
            let tB = clamp(max(Int(x.tB), max(Int(y.tA) + bX, Int(y.tB)) + 1))
            return Entry(ar: ar, ai: ai, ae: ae, br: br, bi: bi, be: be, r: r, tA: tA, tB: tB)
        }

        private static func clampedSum(_ a: Int, _ b: Int) -> Int {
            Swift.max(BLATable.zeroExponent, Swift.min(-BLATable.zeroExponent, a + b))
        }

        private static func clamp(_ t: Int) -> Int32 {
            Int32(Swift.max(-Int(BLATable.never), Swift.min(Int(BLATable.never), t)))
        }
    }

    /// (re, im) × 2^e rescaled so that the larger of |re|, |im| is in [1, 2); zero (or a value
    /// that is not finite) keeps its exponent.
    @inline(__always)
    static func normalized(_ re: Double, _ im: Double, _ e: Int) -> (Double, Double, Int) {
        let big = abs(re) > abs(im) ? abs(re) : abs(im)
        guard big != 0 else { return (0, 0, zeroExponent) }
        guard big.isFinite else { return (re, im, e) }
        let k = big.exponent
        return (scalbn(re, Int32(-k)), scalbn(im, Int32(-k)), e + k)
    }
}
