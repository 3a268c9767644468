#if canImport(Glibc)
import Glibc
#endif

/// The Swift twin of Kernels/common/color.h: the same steps in the same order, in Float.
public enum Color {
    /// The palettes both paths know; raw values are the kernels' GLINT_PALETTE_* codes.
    public enum Palette: Int32, CaseIterable, Sendable {
        case tutorial = 0, grey = 1, fire = 2, ocean = 3, rainbow = 4
        public var name: String {
            switch self {
            case .tutorial: "tutorial"
            case .grey: "grey"
            case .fire: "fire"
            case .ocean: "ocean"
            case .rainbow: "rainbow"
            }
        }
        public init?(name: String) {
            guard let p = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
            self = p
        }
    }

    /// Foley & van Dam's HSV -> RGB; h, s, v in [0,1], h wraps.
    @inlinable
    public static func hsvToRGB(_ h: Float, _ s: Float, _ v: Float) -> SIMD3<Float> {
        let hh = (h - floorf(h)) * 6.0
        var i = Int32(floorf(hh))
        if i > 5 { i = 5 }
        let f = hh - Float(i)
        let p = v * (1.0 - s)
        let q = v * (1.0 - s * f)
        let t = v * (1.0 - s * (1.0 - f))
        switch i {
        case 0: return SIMD3(v, t, p)
        case 1: return SIMD3(q, v, p)
        case 2: return SIMD3(p, v, t)
        case 3: return SIMD3(p, q, v)
        case 4: return SIMD3(t, p, v)
        default: return SIMD3(v, p, q)
        }
    }

    /// A palette at escape value `t` (unclamped RGB).
    @inlinable
    public static func palette(_ palette: Palette, _ t: Float) -> SIMD3<Float> {
        switch palette {
        case .grey:
            let u = t / (t + 24.0)
            return SIMD3(u, u, u)
        case .fire:
            let u = 3.0 * (t / (t + 32.0))
            return SIMD3(u, u - 1.0, u - 2.0)
        case .ocean:
            let a: Float = 6.2831855 * (t / 32.0)
            return SIMD3(0.5 + 0.5 * cosf(a + 3.14159274),
                         0.5 + 0.5 * cosf(a + 1.57079637),
                         0.5 + 0.5 * cosf(a))
        case .rainbow:
            return hsvToRGB(t / 48.0, 0.85, 1.0)
        case .tutorial:
            return SIMD3(sinf(t / 3.0), cosf(t / 6.0), cosf(t / 12.0 + 0.785))
        }
    }

    /// OpenCL's `clamp(v, 0, 1)`: fmin/fmax semantics, so NaN becomes 0 as on the device.
    @inlinable @inline(__always)
    public static func clamp01(_ v: Float) -> Float {
        Float.minimum(Float.maximum(v, 0.0), 1.0)
    }

    /// [0,1] float to an 8-bit channel, rounding to nearest.
    @inlinable @inline(__always)
    public static func to8Bit(_ v: Float) -> UInt8 {
        UInt8(floorf(clamp01(v) * 255.0 + 0.5))
    }

    /// The sRGB transfer curve undone (IEC 61966-2-1): an sRGB-encoded value in [0,1] to linear
    /// light. Clamped to [0,1] first (NaN becomes 0); computed in double and rounded once to float.
    public static func srgbToLinear(_ v: Float) -> Float {
        let c = Double(clamp01(v))
        return Float(c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4))
    }
}
