import Foundation
import GlintWorkloads
import Testing

/// The bilinear-approximation table: each entry is the composition of the single steps it spans,
/// its tests are monotone with the level, and its memory stays in tens of MB for a million
/// iterations.
@Suite struct BLATableTests {
    /// A mantissa pair and exponent, multiplied step by step: the reference the table's merged
    /// entries are checked against.
    struct Wide {
        var re: Double, im: Double, e: Int

        mutating func normalize() {
            let big = max(abs(re), abs(im))
            guard big != 0 else { return }
            let k = big.exponent
            re = scalbn(re, Int32(-k)); im = scalbn(im, Int32(-k)); e += k
        }

        func magnitudeLog2() -> Double { log2((re * re + im * im).squareRoot()) + Double(e) }
    }

    /// Every entry of every stored level against the product of its single steps, written out
    /// independently: A = Π 2·O[i] and B by B' = 2·O[i]·B + 1 from 0, over i = m ..< m + 2^k.
    @Test func entriesComposeTheirSteps() throws {
        let orbit = try ReferenceOrbit(centerRe: DeepLocations.misiurewicz41.re, centerIm: DeepLocations.misiurewicz41.im,
                                       zoom: "1e300", height: 12, bailout: 2, maxIterations: 3000)
        let table = BLATable(orbit: orbit, dcMax: 0)
        #expect(table.levels >= 8, "levels for \(orbit.count) points")
        var checked = 0
        for level in 0..<table.levels {
            let k = BLATable.firstLevel + level
            let count = Int(table.levelCounts[level])
            #expect(count == (orbit.count - 2) >> k, "entries at level \(k)")
            for j in stride(from: 0, to: count, by: max(1, count / 16)) {
                let m = j << k + 1
                var a = Wide(re: 1, im: 0, e: 0), b = Wide(re: 0, im: 0, e: 0)
                for i in m..<(m + 1 << k) {
                    let zr = 2 * orbit.re[i], zi = 2 * orbit.im[i]
                    (a.re, a.im) = (a.re * zr - a.im * zi, a.re * zi + a.im * zr)
                    a.normalize()
                    // B' = 2·O·B + 1, with B's exponent carried.
                    let pr = b.re * zr - b.im * zi, pi = b.re * zi + b.im * zr
                    let one = scalbn(1.0, Int32(clamping: -b.e))
                    b.re = pr + one; b.im = pi
                    b.normalize()
                }
                let idx = Int(table.levelOffsets[level]) + j
                let got = Wide(re: table.reals[idx * 5], im: table.reals[idx * 5 + 1], e: Int(table.ints[idx * 4]))
                let gotB = Wide(re: table.reals[idx * 5 + 2], im: table.reals[idx * 5 + 3], e: Int(table.ints[idx * 4 + 1]))
                // Same magnitude to 1e-9 of a binary order, same direction to 1e-9 radians.
                #expect(abs(got.magnitudeLog2() - a.magnitudeLog2()) < 1e-9, "|A| at level \(k), m \(m)")
                let turn = abs(atan2(got.im, got.re) - atan2(a.im, a.re))
                #expect(min(turn, 2 * .pi - turn) < 1e-9, "arg A at level \(k), m \(m)")
                #expect(abs(gotB.magnitudeLog2() - b.magnitudeLog2()) < 1e-9, "|B| at level \(k), m \(m)")
                // The tiny-phase bounds hold the endpoint: |A| < 2^tA, |B| < 2^tB.
                #expect(a.magnitudeLog2() < Double(table.ints[idx * 4 + 2]))
                #expect(b.magnitudeLog2() < Double(table.ints[idx * 4 + 3]))
                checked += 1
            }
        }
        #expect(checked > 50)
    }

    /// The search climbs the levels and stops at the first failure: that is only right if a
    /// longer step starting at the same point is never easier to take.
    @Test func validityIsMonotoneInTheLevel() throws {
        let orbit = try ReferenceOrbit(centerRe: DeepLocations.elephant30.re, centerIm: DeepLocations.elephant30.im,
                                       zoom: "1e100", height: 12, bailout: 2, maxIterations: 20000)
        let dcMax = PerturbationCPU.dcMax(orbit: orbit, width: 16, height: 12)
        let table = BLATable(orbit: orbit, dcMax: dcMax)
        for level in 1..<table.levels {
            for j in 0..<Int(table.levelCounts[level]) {
                let long = Int(table.levelOffsets[level]) + j
                let short = Int(table.levelOffsets[level - 1]) + 2 * j   // the same start, half as long
                #expect(table.reals[long * 5 + 4] <= table.reals[short * 5 + 4])
                #expect(table.ints[long * 4 + 2] >= table.ints[short * 4 + 2])
                #expect(table.ints[long * 4 + 3] >= table.ints[short * 4 + 3])
            }
        }
        // Long steps are usable at all: some entries of 32 iterations and more have a radius, and
        // some pass the tiny phase's bound for a delta of 2^-600 at a sample offset of 2^-600.
        var withRadius = 0, tinyUsable = 0
        for level in 3..<table.levels {
            for j in 0..<Int(table.levelCounts[level]) {
                let idx = Int(table.levelOffsets[level]) + j
                if table.reals[idx * 5 + 4] > 0 { withRadius += 1 }
                if Int(table.ints[idx * 4 + 2]) - 600 + 2 <= -501 && Int(table.ints[idx * 4 + 3]) - 600 + 2 <= -501 { tinyUsable += 1 }
            }
        }
        #expect(withRadius > 10, "entries of 32+ iterations with a radius")
        #expect(tinyUsable > 10, "entries of 32+ iterations the tiny phase can take")
    }

    /// A million iterations: the orbit's 16 bytes a point and the table's 28, 44 MB together.
    @Test func memoryForAMillionIterations() throws {
        let orbit = try ReferenceOrbit(centerRe: "-0.1", centerIm: "0.1", zoom: "1e20", height: 1000, bailout: 2,
                                       maxIterations: 1_000_000)
        #expect(orbit.count == 1_000_002, "the orbit of an attracting fixed point never escapes")
        let table = BLATable(orbit: orbit, dcMax: 1e-20)
        let orbitBytes = orbit.count * 16
        print("orbit \(orbitBytes / 1_000_000) MB, BLA table \(table.byteCount / 1_000_000) MB (\(table.entries) entries, \(table.levels) levels)")
        #expect(table.byteCount < 30_000_000)
        #expect(orbitBytes + table.byteCount < 50_000_000)
    }
}
