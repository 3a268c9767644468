import GlintCore
import GlintTestSupport
import Testing

/// The shared test helpers measure what the tests' thresholds were written for.
@Suite struct TestSupportTests {
    @Test func imageDifferencesAreImageCompareMeasures() throws {
        let a = makeImage(width: 2, height: 2) { x, y in SIMD4(UInt8(10 * x), UInt8(20 * y), 30, 255) }
        var b = a
        b[1, 1] = SIMD4(13, 20, 30, 255)  // 3 levels off in one channel of one pixel
        #expect(try maxDifference(a, b) == 3)
        #expect(try meanDifference(a, b) == 3.0 / 16)  // over the 4 channels of the 4 pixels
        let c = try ImageComparison(a, b)
        #expect(c.differingPixels == 0.25 && c.meanAbsolute == 3.0 / 12 / 255)
        #expect(try ImageComparison(a, a).psnr == .infinity)
        #expect(try maxRelative(a.toFloat(), a.toFloat()) == 0)
        #expect(throws: GlintError.self) { try maxDifference(a, Image8(width: 1, height: 1)) }
    }

    @Test func dataHelpersAreTheKnownAlgorithms() throws {
        // CRC-32 of the IEND chunk type, as every PNG ends: AE 42 60 82.
        #expect(chunkCRC(Array("IEND".utf8)) == 0xAE42_6082)
        // SplitMix64 from seed 0: the reference implementation's first output.
        var r = SplitMix64(seed: 0)
        #expect(r.next() == 0xE220_A839_7B1D_CDAF)
        let png = try forgedPNG(width: 7, height: 9)
        #expect(bigEndian32(png, at: 16) == 7 && bigEndian32(png, at: 20) == 9)
        #expect(chunkCRC(png[12..<29]) == bigEndian32(png, at: 29))
    }
}
