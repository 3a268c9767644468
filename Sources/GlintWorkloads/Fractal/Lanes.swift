/// SIMD lanes for the CPU escape loop.
///
/// Swift's SIMD operators have fast concrete overloads (SIMD8<Float>, SIMD4<Double>, …) and slow
/// generic fallbacks. Generic code resolves to the fallbacks even after specialisation, which made
/// a generic loop ~15x slower. These wrappers define each operation on a concrete type, so generic
/// code written against `Lanes` specialises into the fast instructions.
protocol Lanes {
    associatedtype Scalar: BinaryFloatingPoint
    associatedtype Mask: LaneMask
    static var count: Int { get }
    init(repeating: Scalar)
    /// base, base+1, base+2, …
    init(ramp base: Scalar)
    subscript(i: Int) -> Scalar { get }
    static func + (a: Self, b: Self) -> Self
    static func - (a: Self, b: Self) -> Self
    static func * (a: Self, b: Self) -> Self
    static func / (a: Self, b: Self) -> Self
    static func lessThan(_ a: Self, _ b: Self) -> Mask
    static func lessOrEqual(_ a: Self, _ b: Self) -> Mask
    func replacing(with other: Self, where mask: Mask) -> Self
}

protocol LaneMask {
    static func & (a: Self, b: Self) -> Self
    static func | (a: Self, b: Self) -> Self
    static prefix func ! (a: Self) -> Self
    var any: Bool { get }
}

struct Float8: Lanes {
    var v: SIMD8<Float>
    init(_ v: SIMD8<Float>) { self.v = v }
    static var count: Int { 8 }
    init(repeating s: Float) { v = SIMD8(repeating: s) }
    init(ramp base: Float) { v = SIMD8(repeating: base) + SIMD8(0, 1, 2, 3, 4, 5, 6, 7) }
    subscript(i: Int) -> Float { v[i] }
    @inline(__always) static func + (a: Self, b: Self) -> Self { Self(a.v + b.v) }
    @inline(__always) static func - (a: Self, b: Self) -> Self { Self(a.v - b.v) }
    @inline(__always) static func * (a: Self, b: Self) -> Self { Self(a.v * b.v) }
    @inline(__always) static func / (a: Self, b: Self) -> Self { Self(a.v / b.v) }
    @inline(__always) static func lessThan(_ a: Self, _ b: Self) -> Mask8 { Mask8(a.v .< b.v) }
    @inline(__always) static func lessOrEqual(_ a: Self, _ b: Self) -> Mask8 { Mask8(a.v .<= b.v) }
    @inline(__always) func replacing(with other: Self, where m: Mask8) -> Self { Self(v.replacing(with: other.v, where: m.m)) }
}

struct Mask8: LaneMask {
    var m: SIMDMask<SIMD8<Int32>>
    init(_ m: SIMDMask<SIMD8<Int32>>) { self.m = m }
    @inline(__always) static func & (a: Self, b: Self) -> Self { Self(a.m .& b.m) }
    @inline(__always) static func | (a: Self, b: Self) -> Self { Self(a.m .| b.m) }
    @inline(__always) static prefix func ! (a: Self) -> Self { Self(.!a.m) }
    @inline(__always) var any: Bool { Swift.any(m) }
}

struct Double4: Lanes {
    var v: SIMD4<Double>
    init(_ v: SIMD4<Double>) { self.v = v }
    static var count: Int { 4 }
    init(repeating s: Double) { v = SIMD4(repeating: s) }
    init(ramp base: Double) { v = SIMD4(repeating: base) + SIMD4(0, 1, 2, 3) }
    subscript(i: Int) -> Double { v[i] }
    @inline(__always) static func + (a: Self, b: Self) -> Self { Self(a.v + b.v) }
    @inline(__always) static func - (a: Self, b: Self) -> Self { Self(a.v - b.v) }
    @inline(__always) static func * (a: Self, b: Self) -> Self { Self(a.v * b.v) }
    @inline(__always) static func / (a: Self, b: Self) -> Self { Self(a.v / b.v) }
    @inline(__always) static func lessThan(_ a: Self, _ b: Self) -> Mask4 { Mask4(a.v .< b.v) }
    @inline(__always) static func lessOrEqual(_ a: Self, _ b: Self) -> Mask4 { Mask4(a.v .<= b.v) }
    @inline(__always) func replacing(with other: Self, where m: Mask4) -> Self { Self(v.replacing(with: other.v, where: m.m)) }
}

struct Mask4: LaneMask {
    var m: SIMDMask<SIMD4<Int64>>
    init(_ m: SIMDMask<SIMD4<Int64>>) { self.m = m }
    @inline(__always) static func & (a: Self, b: Self) -> Self { Self(a.m .& b.m) }
    @inline(__always) static func | (a: Self, b: Self) -> Self { Self(a.m .| b.m) }
    @inline(__always) static prefix func ! (a: Self) -> Self { Self(.!a.m) }
    @inline(__always) var any: Bool { Swift.any(m) }
}
