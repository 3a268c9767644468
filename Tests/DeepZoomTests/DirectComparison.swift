import CMPFR
import Foundation
import GlintWorkloads
import Testing

/// A view's samples by direct MPFR iteration, against the counts and |z|² a path under test gave:
/// the share of counts that differ, and where both escape at the same step how far |z|² and
/// smooth colouring's fractional count are apart.
struct DirectComparison {
    let samples: Int
    let differing: Int
    /// Samples the direct iteration never saw escape (count = maxIterations).
    let interior: Int
    let distinctCounts: Int
    let maxCount: UInt32
    /// Samples whose |z|² at escape is off by over 1e-3 relative, and the worst relative error.
    let magsOff: Int
    let worstMag: Float
    /// The largest difference of count + 1 − log2(ln|z|² / ln R²).
    let worstSmooth: Double
    let summary: String

    var share: Double { Double(differing) / Double(samples) }

    /// Iterates every sample of the width × height view at supersampling `ss` with `escape` (the
    /// offset as a mantissa pair and exponent: FractalCPU.View.re/im less the centre, written out
    /// independently, with the spacing's mantissa `spacing.mantissa`), one sample row per task
    /// (MPFR keeps its caches and flags per thread in Debian's build), and compares `got`.
    init(width: Int, height: Int, supersampling ss: Int, spacing: (mantissa: Double, exponent: Int),
         maxIterations: Int, bailout: Double, gotCounts: [UInt32], gotMags: [Float],
         escape: @escaping @Sendable (Double, Double, Int) -> (count: UInt32, mag: Float)) async {
        #expect(mpfr_buildopt_tls_p() != 0, "this MPFR is not thread-safe")
        let sw = width * ss, sh = height * ss
        #expect(gotCounts.count == sw * sh && gotMags.count == sw * sh)
        let expectedCounts = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: sw * sh)
        let expectedMags = UnsafeMutableBufferPointer<Float>.allocate(capacity: sw * sh)
        defer { expectedCounts.deallocate(); expectedMags.deallocate() }
        let counts = SharedBuffer(expectedCounts), mags = SharedBuffer(expectedMags)
        let t0 = Date()
        await CPUParallel.forEach(sh) { sy in
            for sx in 0..<sw {
                let dRe = ((Double(sx) + 0.5) / Double(ss) - Double(width) * 0.5) * spacing.mantissa
                let dIm = -(((Double(sy) + 0.5) / Double(ss) - Double(height) * 0.5) * spacing.mantissa)
                let r = escape(dRe, dIm, spacing.exponent)
                counts[sy * sw + sx] = r.count
                mags[sy * sw + sx] = r.mag
            }
        }
        let directSeconds = Date().timeIntervalSince(t0)

        let logB2 = log(Double(Float(bailout * bailout)))
        func smooth(_ mag: Float) -> Double { -log2(log(Double(mag)) / logB2) }
        var differing = 0, interior = 0, worstMag: Float = 0, magsOff = 0, worstSmooth = 0.0
        var firstDifferences: [String] = []
        for i in 0..<(sw * sh) {
            let got = gotCounts[i], want = expectedCounts[i]
            if want == UInt32(maxIterations) { interior += 1 }
            if got != want {
                differing += 1
                if firstDifferences.count < 5 { firstDifferences.append("(\(i % sw), \(i / sw)): \(got) vs \(want)") }
            } else if want < UInt32(maxIterations) {
                let d = abs(gotMags[i] - expectedMags[i]) / expectedMags[i]
                worstMag = max(worstMag, d)
                if !(d <= 1e-3) { magsOff += 1 }
                worstSmooth = max(worstSmooth, abs(smooth(gotMags[i]) - smooth(expectedMags[i])))
            }
        }
        samples = sw * sh
        self.differing = differing
        self.interior = interior
        self.magsOff = magsOff
        self.worstMag = worstMag
        self.worstSmooth = worstSmooth
        distinctCounts = Set(expectedCounts).count
        maxCount = expectedCounts.max() ?? 0
        let share = Double(differing) / Double(samples)
        summary = "\(samples) samples, \(differing) differ (\(String(format: "%.2f", share * 100))%), " +
            "counts \(expectedCounts.min() ?? 0)...\(maxCount), \(interior) interior, \(distinctCounts) distinct, " +
            "|z|² at escape off by over 1e-3 relative in \(magsOff) (worst \(worstMag)), " +
            "smooth count off by \(String(format: "%.2g", worstSmooth)) at worst, " +
            "direct MPFR \(String(format: "%.2f", directSeconds)) s" +
            (firstDifferences.isEmpty ? "" : "; first: " + firstDifferences.joined(separator: ", "))
    }

    /// At most 1% of counts differ, and where both escape at the same step |z|² agrees well
    /// enough for smooth colouring: under a quarter of a palette step (a wrong final point would
    /// be whole steps off).
    func check(_ line: String) {
        #expect(share <= 0.01, "\(line)")
        #expect(worstSmooth < 0.25, "\(line)")
    }
}
