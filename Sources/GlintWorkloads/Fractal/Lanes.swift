import CGlintTypes
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
    /// Writes the first `valid` lanes as escape counts and as float |z|^2.
    func store(counts: UnsafeMutablePointer<UInt32>, mags: UnsafeMutablePointer<Float>, mag: Self, valid: Int)
}

protocol LaneMask {
    static func & (a: Self, b: Self) -> Self
    static func | (a: Self, b: Self) -> Self
    static prefix func ! (a: Self) -> Self
    var any: Bool { get }
}

/// 16 float lanes (two AVX2 registers); named so as not to shadow the standard library's `Float16`.
struct FloatLanes16: Lanes {
    var v: SIMD16<Float>
    init(_ v: SIMD16<Float>) { self.v = v }
    static var count: Int { 16 }
    init(repeating s: Float) { v = SIMD16<Float>(repeating: s) }
    init(ramp base: Float) { v = SIMD16<Float>(repeating: base) + SIMD16<Float>(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) }
    subscript(i: Int) -> Float { v[i] }
    @inline(__always) static func + (a: Self, b: Self) -> Self { Self(a.v + b.v) }
    @inline(__always) static func - (a: Self, b: Self) -> Self { Self(a.v - b.v) }
    @inline(__always) static func * (a: Self, b: Self) -> Self { Self(a.v * b.v) }
    @inline(__always) static func / (a: Self, b: Self) -> Self { Self(a.v / b.v) }
    @inline(__always) static func lessThan(_ a: Self, _ b: Self) -> Mask16 { Mask16(a.v .< b.v) }
    @inline(__always) static func lessOrEqual(_ a: Self, _ b: Self) -> Mask16 { Mask16(a.v .<= b.v) }
    @inline(__always) func replacing(with other: Self, where m: Mask16) -> Self { Self(v.replacing(with: other.v, where: m.m)) }
    @inline(__always) func store(counts: UnsafeMutablePointer<UInt32>, mags: UnsafeMutablePointer<Float>, mag: Self, valid: Int) {
        if valid >= 16 {
            // Whole vectors: counts are whole numbers below 2^31 (vcvttps2dq).
            UnsafeMutableRawPointer(counts).storeBytes(of: glint_trunc16(v), as: SIMD16<Int32>.self)
            UnsafeMutableRawPointer(mags).storeBytes(of: mag.v, as: SIMD16<Float>.self)
            return
        }
        for l in 0..<valid {
            counts[l] = UInt32(v[l])
            mags[l] = Float(mag.v[l])
        }
    }
}

struct Mask16: LaneMask {
    var m: SIMDMask<SIMD16<Int32>>
    init(_ m: SIMDMask<SIMD16<Int32>>) { self.m = m }
    @inline(__always) static func & (a: Self, b: Self) -> Self { Self(a.m .& b.m) }
    @inline(__always) static func | (a: Self, b: Self) -> Self { Self(a.m .| b.m) }
    @inline(__always) static prefix func ! (a: Self) -> Self { Self(.!a.m) }
    @inline(__always) var any: Bool { glint_any16(unsafeBitCast(m, to: SIMD16<Int32>.self)) != 0 }
}

/// 8 double lanes.
struct DoubleLanes8: Lanes {
    var v: SIMD8<Double>
    init(_ v: SIMD8<Double>) { self.v = v }
    static var count: Int { 8 }
    init(repeating s: Double) { v = SIMD8<Double>(repeating: s) }
    init(ramp base: Double) { v = SIMD8<Double>(repeating: base) + SIMD8<Double>(0, 1, 2, 3, 4, 5, 6, 7) }
    subscript(i: Int) -> Double { v[i] }
    @inline(__always) static func + (a: Self, b: Self) -> Self { Self(a.v + b.v) }
    @inline(__always) static func - (a: Self, b: Self) -> Self { Self(a.v - b.v) }
    @inline(__always) static func * (a: Self, b: Self) -> Self { Self(a.v * b.v) }
    @inline(__always) static func / (a: Self, b: Self) -> Self { Self(a.v / b.v) }
    @inline(__always) static func lessThan(_ a: Self, _ b: Self) -> Mask8D { Mask8D(a.v .< b.v) }
    @inline(__always) static func lessOrEqual(_ a: Self, _ b: Self) -> Mask8D { Mask8D(a.v .<= b.v) }
    @inline(__always) func replacing(with other: Self, where m: Mask8D) -> Self { Self(v.replacing(with: other.v, where: m.m)) }
    @inline(__always) func store(counts: UnsafeMutablePointer<UInt32>, mags: UnsafeMutablePointer<Float>, mag: Self, valid: Int) {
        if valid >= 8 {
            UnsafeMutableRawPointer(counts).storeBytes(of: glint_trunc8d(v), as: SIMD8<Int32>.self)
            UnsafeMutableRawPointer(mags).storeBytes(of: glint_float8_of_double(mag.v), as: SIMD8<Float>.self)
            return
        }
        for l in 0..<valid {
            counts[l] = UInt32(v[l])
            mags[l] = Float(mag.v[l])
        }
    }
}

struct Mask8D: LaneMask {
    var m: SIMDMask<SIMD8<Int64>>
    init(_ m: SIMDMask<SIMD8<Int64>>) { self.m = m }
    @inline(__always) static func & (a: Self, b: Self) -> Self { Self(a.m .& b.m) }
    @inline(__always) static func | (a: Self, b: Self) -> Self { Self(a.m .| b.m) }
    @inline(__always) static prefix func ! (a: Self) -> Self { Self(.!a.m) }
    @inline(__always) var any: Bool { glint_any8l(unsafeBitCast(m, to: SIMD8<Int64>.self)) != 0 }
}
