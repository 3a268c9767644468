// The pieces of 16-bit output: the sRGB curve undone, and linear floats rounded to 16 bits.

import GlintCore
import Testing

@Test func srgbToLinearIsTheIECCurve() {
    #expect(Color.srgbToLinear(0) == 0 && Color.srgbToLinear(1) == 1)
    #expect(abs(Color.srgbToLinear(0.5) - 0.21404114) < 1e-7)
    #expect(abs(Color.srgbToLinear(0.04) - 0.04 / 12.92) < 1e-9)
    // Clamped as the 8-bit path clamps; NaN becomes 0.
    #expect(Color.srgbToLinear(-1) == 0 && Color.srgbToLinear(2) == 1 && Color.srgbToLinear(.nan) == 0)
    // Every 8-bit level decodes to a distinct, increasing value.
    let levels = (0...255).map { Color.srgbToLinear(Float($0) / 255) }
    #expect(zip(levels, levels.dropFirst()).allSatisfy { $0 < $1 })
}

@Test func linearFloatsRoundToSixteenBits() {
    let image = ImageF(width: 2, height: 1, pixels: [0, 0.5, 1, 1, -0.25, 2, .nan, 1.0 / 65535 * 0.49])
    #expect(image.to16Bit() == [0, 32768, 65535, 65535, 0, 65535, 0, 0])
    #expect(ImageF.quantize16(1.0 / 65535 * 0.51) == 1)
    // srgbToLinear on an image decodes R, G and B and keeps alpha.
    let decoded = ImageF(width: 1, height: 1, pixels: [0.5, 1, 0, 0.5]).srgbToLinear()
    #expect(decoded.pixels == [Color.srgbToLinear(0.5), 1, 0, 0.5])
}
