import GlintCore
import Testing

@Suite struct ColorTests {
    @Test func hsvPrimariesSecondariesAndGreys() {
        let cases: [(Float, Float, Float, SIMD3<Float>)] = [
            (0, 1, 1, SIMD3(1, 0, 0)), (1.0 / 3.0, 1, 1, SIMD3(0, 1, 0)), (2.0 / 3.0, 1, 1, SIMD3(0, 0, 1)),
            (1.0 / 6.0, 1, 1, SIMD3(1, 1, 0)), (0.5, 1, 1, SIMD3(0, 1, 1)), (5.0 / 6.0, 1, 1, SIMD3(1, 0, 1)),
            (0.3, 0, 0.5, SIMD3(0.5, 0.5, 0.5)), (0.7, 0, 0, SIMD3(0, 0, 0)), (0.1, 0, 1, SIMD3(1, 1, 1)),
        ]
        for (h, s, v, rgb) in cases {
            let got = Color.hsvToRGB(h, s, v)
            #expect(abs(got.x - rgb.x) < 1e-6 && abs(got.y - rgb.y) < 1e-6 && abs(got.z - rgb.z) < 1e-6, "hsv(\(h),\(s),\(v)) = \(got)")
        }
        // Hue wraps: 1.25 is 0.25, -0.75 is 0.25.
        #expect(Color.hsvToRGB(1.25, 1, 1) == Color.hsvToRGB(0.25, 1, 1))
        #expect(Color.hsvToRGB(-0.75, 1, 1) == Color.hsvToRGB(0.25, 1, 1))
    }

    @Test func eightBitConversionRoundsAndClampsLikeTheKernel() {
        #expect(Color.to8Bit(0) == 0)
        #expect(Color.to8Bit(1) == 255)
        #expect(Color.to8Bit(-3) == 0 && Color.to8Bit(7) == 255)
        #expect(Color.to8Bit(.nan) == 0)  // OpenCL's clamp(NaN, 0, 1) is 0
        #expect(Color.to8Bit(0.5) == 128)  // 127.5 + 0.5 floors to 128
        #expect(Color.to8Bit(1.0 / 255.0) == 1)
    }

    @Test func thePaletteNamesRoundTrip() {
        for p in Color.Palette.allCases { #expect(Color.Palette(name: p.name) == p) }
        #expect(Color.Palette(name: "nope") == nil)
        // The tutorial's colouring at count 0: (sin 0, cos 0, cos 0.785).
        let t = Color.palette(.tutorial, 0)
        #expect(t.x == 0 && t.y == 1 && abs(t.z - 0.7074) < 1e-3)
    }
}

@Suite struct JSONAndHashTests {
    @Test func jsonIsValidAndKeepsKeyOrder() {
        let j = JSON.object([("b", .int(1)), ("a", .array([.string("x\"y\n"), .bool(true), .null, .number(0.5)]))])
        #expect(j.serialized(pretty: false) == #"{"b":1,"a":["x\"y\n",true,null,0.5]}"#)
        #expect(JSON.number(.infinity).serialized() == "null")
        #expect(JSON.string("\u{1}").serialized() == #""\u0001""#)
    }

    @Test func stableHashIsStableAndSeparatesParts() {
        #expect(StableHash.of("abc") == StableHash.of("abc"))
        #expect(StableHash.of("ab", "c") != StableHash.of("a", "bc"))
        #expect(StableHash.of("").count == 32)
        // A fixed value: the cache key must not change between runs or Swift versions.
        // (Two 64-bit FNV-1a lanes over "glint" and its 0xFF separator, computed independently.)
        #expect(StableHash.of("glint") == "5ba2b088a8ba40d042c015b15c71d0a7")
        var h = StableHash()
        h.update("glint")
        #expect(h.hex == StableHash.of("glint"))
    }

    @Test func counterRNGIsUniformInTheUnitInterval() {
        var sum = 0.0
        for i in 0..<4096 {
            let u = CounterRNG.uniform(x: UInt32(i % 64), y: UInt32(i / 64), sample: 0, dim: 0, seed: 7)
            #expect(u >= 0 && u < 1)
            sum += Double(u)
        }
        #expect(abs(sum / 4096 - 0.5) < 0.02)
        // Another seed, another number; the same key, the same number.
        #expect(CounterRNG.uniform(x: 1, y: 2, sample: 3, dim: 4, seed: 5) != CounterRNG.uniform(x: 1, y: 2, sample: 3, dim: 4, seed: 6))
        #expect(CounterRNG.uniform(x: 1, y: 2, sample: 3, dim: 4, seed: 5) == CounterRNG.uniform(x: 1, y: 2, sample: 3, dim: 4, seed: 5))
    }
}
