import CGlintTypes
import GlintCore

/// A float vector of three, as the kernel's float3: component-wise IEEE operations.
/// (Scalar fields rather than SIMD3: the optimiser keeps these in registers and the
/// operations are plainly the kernel's.)
struct RTVec {
    var x: Float, y: Float, z: Float
    @inline(__always) init(_ x: Float, _ y: Float, _ z: Float) { self.x = x; self.y = y; self.z = z }
    @inline(__always) static func + (a: RTVec, b: RTVec) -> RTVec { RTVec(a.x + b.x, a.y + b.y, a.z + b.z) }
    @inline(__always) static func - (a: RTVec, b: RTVec) -> RTVec { RTVec(a.x - b.x, a.y - b.y, a.z - b.z) }
    @inline(__always) static func * (a: RTVec, b: RTVec) -> RTVec { RTVec(a.x * b.x, a.y * b.y, a.z * b.z) }
    @inline(__always) static func * (a: RTVec, s: Float) -> RTVec { RTVec(a.x * s, a.y * s, a.z * s) }
    @inline(__always) static prefix func - (a: RTVec) -> RTVec { RTVec(-a.x, -a.y, -a.z) }
}

/// The scene arrays of an `RTBVH`, as raw pointers for the hot loop (no ARC, no bounds checks).
/// The owner keeps the storage alive while a render runs.
struct RTSceneData: @unchecked Sendable {
    let nodes: UnsafeRawPointer
    let blocks: UnsafeRawPointer
    let spheres: UnsafePointer<GlintRTSphere>
    let materials: UnsafePointer<GlintRTMaterial>
}

/// The traversal stack of one worker (RT_STACK entries).
struct RTStack: @unchecked Sendable {
    static let size = 64
    let ref: UnsafeMutablePointer<Int32>
    let t: UnsafeMutablePointer<Float>
    init() {
        ref = .allocate(capacity: Self.size)
        t = .allocate(capacity: Self.size)
    }
    func deallocate() { ref.deallocate(); t.deallocate() }
}

/// The Swift twin of Kernels/raytrace.cl: each function is the kernel's of the same name
/// (Rt_Dot -> dot, ...), with the same parameters in the same order and the same IEEE
/// operations in the same order, so a sample's colour is the same on both paths.
enum RTTrace {
    typealias F8 = SIMD8<Float>
    typealias I8 = SIMD8<Int32>

    // Kernel constants (hex, exact).
    static let halfPi: Float = 0x1.921fb6p+0
    static let third: Float = 0x1.555556p-2
    static let nearZero: Float = 0x1.5798eep-27

    @inline(__always) static func dot(_ a: RTVec, _ b: RTVec) -> Float { (a.x * b.x + a.y * b.y) + a.z * b.z }

    @inline(__always) static func normalize(_ v: RTVec) -> RTVec {
        let len = dot(v, v).squareRoot()
        // Three independent divisions (one vector division): shorter latency than 1/len, then multiply.
        let q = SIMD4<Float>(v.x, v.y, v.z, 1) / SIMD4<Float>(repeating: len)
        return RTVec(q.x, q.y, q.z)
    }

    /// (sin, cos) of 2*pi*u for u in [0, 1].
    @inline(__always) static func sinCosTurns(_ u: Float) -> (s: Float, c: Float) {
        let q = u * 4
        let k = Int32(q + 0.5)
        let a = (q - Float(k)) * halfPi
        let a2 = a * a
        let s = a * (1 + a2 * (-0x1.555556p-3 + a2 * (0x1.111112p-7 + a2 * -0x1.a01a02p-13)))
        let c = 1 + a2 * (-0.5 + a2 * (0x1.555556p-5 + a2 * (-0x1.6c16c2p-10 + a2 * 0x1.a01a02p-16)))
        // The kernel's steps (raytrace.cl, Rt_SinCosTurns): an odd quarter turn swaps the pair,
        // bit 1 negates both.
        let turned = k & 1 != 0 ? (s: c, c: -s) : (s: s, c: c)
        return k & 2 != 0 ? (-turned.s, -turned.c) : turned

    }

    /// Cube root of x in [0, 1): a guess from the bits, then three Newton steps.
    @inline(__always) static func cbrt(_ x: Float) -> Float {
        var y = Float(bitPattern: x.bitPattern / 3 &+ 709_921_077)
        for _ in 0..<3 {
            y = ((y + y) + x / (y * y)) * third
        }
        return y
    }

    @inline(__always) static func unitVector(_ u0: Float, _ u1: Float) -> RTVec {
        let z = 1 - 2 * u0
        let r = (1 - z * z).squareRoot()
        let sc = sinCosTurns(u1)
        return RTVec(r * sc.c, r * sc.s, z)
    }

    /// Lane l of the mask as bit l (the kernel iterates the set lanes in the same ascending order).
    /// One vmovmskps (a C helper): the generic `any` and element loops are scalar code.
    @inline(__always) static func bits(_ m: SIMDMask<I8>) -> UInt32 {
        glint_bits8(unsafeBitCast(m, to: I8.self))
    }

    /// Lane-wise minimum of values that are never NaN.
    @inline(__always) static func minLanes<V: SIMD>(_ a: V, _ b: V) -> V where V.Scalar == Float {
        a.replacing(with: b, where: b .< a)
    }

    @inline(__always) static func load8(_ p: UnsafeRawPointer, _ offset: Int) -> F8 {
        p.loadUnaligned(fromByteOffset: offset, as: F8.self)
    }

    /// Rt_Intersect: the closest sphere hit by o + t*d with t_min < t, or -1, and its t.
    @inline(__always)
    static func intersect(_ scene: RTSceneData, _ o: RTVec, _ d: RTVec, _ tMin: Float, _ stack: RTStack) -> (Int32, Float) {
        // One vector division: the same correctly rounded quotients as three scalar ones.
        let q = SIMD4<Float>(1, 1, 1, 1) / SIMD4<Float>(d.x, d.y, d.z, 1)
        let inv = RTVec(q.x, q.y, q.z)
        let invX = F8(repeating: inv.x), invY = F8(repeating: inv.y), invZ = F8(repeating: inv.z)
        let ox = F8(repeating: o.x), oy = F8(repeating: o.y), oz = F8(repeating: o.z)
        let dX = F8(repeating: d.x), dY = F8(repeating: d.y), dZ = F8(repeating: d.z)
        let tmin8 = F8(repeating: tMin)
        let zero = F8(repeating: 0)
        let empty = I8(repeating: GLINT_RT_EMPTY)
        let stackRef = stack.ref, stackT = stack.t
        var sp = 0
        var ref: Int32 = 0
        var tEntry = tMin
        var closest = Float.infinity
        var hit: Int32 = -1
        while true {
            if tEntry < closest {
                if ref >= 0 {
                    let n = scene.nodes + Int(ref) * MemoryLayout<GlintRTNode>.stride
                    // Slabs as (plane - o) / d: a zero direction component gives infinite (not NaN)
                    // distances; a NaN slab (0 * inf) is ignored by the selects, never poisons the rest.
                    // Rt_Slab of the kernel, written out per axis: as an inlined Swift function
                    // (inout or returning a pair) it made the whole render 20-55% slower.
                    var tnear = tmin8, tfar = F8(repeating: closest)
                    var t1 = (load8(n, 0) - ox) * invX
                    var t2 = (load8(n, 96) - ox) * invX
                    var swap = t2 .< t1
                    var lo = t1.replacing(with: t2, where: swap), hi = t2.replacing(with: t1, where: swap)
                    tnear = tnear.replacing(with: lo, where: lo .> tnear)
                    tfar = tfar.replacing(with: hi, where: hi .< tfar)
                    t1 = (load8(n, 32) - oy) * invY
                    t2 = (load8(n, 128) - oy) * invY
                    swap = t2 .< t1
                    lo = t1.replacing(with: t2, where: swap)
                    hi = t2.replacing(with: t1, where: swap)
                    tnear = tnear.replacing(with: lo, where: lo .> tnear)
                    tfar = tfar.replacing(with: hi, where: hi .< tfar)
                    t1 = (load8(n, 64) - oz) * invZ
                    t2 = (load8(n, 160) - oz) * invZ
                    swap = t2 .< t1
                    lo = t1.replacing(with: t2, where: swap)
                    hi = t2.replacing(with: t1, where: swap)
                    tnear = tnear.replacing(with: lo, where: lo .> tnear)
                    tfar = tfar.replacing(with: hi, where: hi .< tfar)
                    let child = n.loadUnaligned(fromByteOffset: 192, as: I8.self)
                    var m = bits((tnear .<= tfar) .& (child .!= empty))
                    if m != 0 {
                        // The hit children sorted by distance above the stack's top, farthest
                        // lowest; the nearest is visited next without a trip through the stack.
                        let base = sp
                        while m != 0 {
                            let l = m.trailingZeroBitCount
                            m &= m &- 1
                            if sp >= RTStack.size { continue }
                            let tl = tnear[l]
                            var j = sp
                            while j > base && stackT[j - 1] < tl {
                                stackT[j] = stackT[j - 1]
                                stackRef[j] = stackRef[j - 1]
                                j -= 1
                            }
                            stackT[j] = tl
                            stackRef[j] = child[l]
                            sp += 1
                        }
                        sp -= 1
                        ref = stackRef[sp]
                        tEntry = stackT[sp]
                        continue
                    }
                } else {
                    let block = ~ref
                    let b = scene.blocks + Int(block) * MemoryLayout<GlintRTSphereBlock>.stride
                    let ocx = ox - load8(b, 0)
                    let ocy = oy - load8(b, 32)
                    let ocz = oz - load8(b, 64)
                    let hb = (ocx * dX + ocy * dY) + ocz * dZ
                    let c = ((ocx * ocx + ocy * ocy) + ocz * ocz) - load8(b, 96)
                    let disc = hb * hb - c
                    // The leaf's contract (written in raytrace.cl, whose loop takes the lanes one by
                    // one): every lane's nearer root in (t_min, closest), else its farther one there,
                    // else infinity; the block's hit is the smallest, the lowest lane on a tie.
                    let positive = disc .> zero
                    if bits(positive) != 0 {
                        let sq = glint_sqrt8(disc)
                        let r1 = -hb - sq, r2 = -hb + sq
                        let near8 = F8(repeating: closest)
                        var cand = F8(repeating: .infinity)
                        cand.replace(with: r2, where: (r2 .> tmin8) .& (r2 .< near8))
                        cand.replace(with: r1, where: (r1 .> tmin8) .& (r1 .< near8))
                        cand.replace(with: .infinity, where: .!positive)
                        let m4 = minLanes(cand.lowHalf, cand.highHalf)
                        let m2 = minLanes(m4.lowHalf, m4.highHalf)
                        let best = m2.x < m2.y ? m2.x : m2.y
                        if best < closest {
                            closest = best
                            hit = block &* 8 &+ Int32(bits(cand .== F8(repeating: best)).trailingZeroBitCount)
                        }
                    }
                }
            }
            if sp == 0 { break }
            sp -= 1
            ref = stackRef[sp]
            tEntry = stackT[sp]
        }
        return (hit, closest)
    }

    @inline(__always) static func sky(_ p: UnsafePointer<GlintRTParams>, _ d: RTVec) -> RTVec {
        let t = 0.5 * (d.y + 1)
        let bottom = RTVec(p.pointee.sky_bottom_r, p.pointee.sky_bottom_g, p.pointee.sky_bottom_b)
        let top = RTVec(p.pointee.sky_top_r, p.pointee.sky_top_g, p.pointee.sky_top_b)
        return bottom * (1 - t) + top * t
    }

    @inline(__always) static func reflect(_ d: RTVec, _ n: RTVec) -> RTVec { d - n * (2 * dot(d, n)) }

    /// Rt_Sample: the colour one camera sample of pixel (px, py) brings back.
    @inline(__always)
    static func sample(_ p: UnsafePointer<GlintRTParams>, _ scene: RTSceneData, _ px: UInt32, _ py: UInt32, _ s: UInt32,
                       _ stack: RTStack) -> RTVec {
        let seed = p.pointee.seed
        let w = CounterRNG.philox(x: px, y: py, sample: s, dim: 0, seed: seed)
        let jx = CounterRNG.toUnit(w.x), jy = CounterRNG.toUnit(w.y)
        let lr = CounterRNG.toUnit(w.z).squareRoot()
        let lsc = sinCosTurns(CounterRNG.toUnit(w.w))
        let lx = p.pointee.lens_radius * (lr * lsc.c), ly = p.pointee.lens_radius * (lr * lsc.s)
        let cu = RTVec(p.pointee.u_x, p.pointee.u_y, p.pointee.u_z), cv = RTVec(p.pointee.v_x, p.pointee.v_y, p.pointee.v_z)
        let offset = cu * lx + cv * ly
        let origin = RTVec(p.pointee.origin_x, p.pointee.origin_y, p.pointee.origin_z)
        let corner = RTVec(p.pointee.corner_x, p.pointee.corner_y, p.pointee.corner_z)
        let horizontal = RTVec(p.pointee.horizontal_x, p.pointee.horizontal_y, p.pointee.horizontal_z)
        let vertical = RTVec(p.pointee.vertical_x, p.pointee.vertical_y, p.pointee.vertical_z)
        let su = (Float(px) + jx) / Float(p.pointee.width)
        let tv = (Float(p.pointee.height - 1 - Int32(bitPattern: py)) + jy) / Float(p.pointee.height)
        var o = origin + offset
        var d = normalize((((corner + horizontal * su) + vertical * tv) - origin) - offset)

        var attenuation = RTVec(1, 1, 1)
        let tMin = p.pointee.t_min
        var depth: Int32 = 0
        while depth < p.pointee.max_depth {
            // The bounce's random numbers do not depend on the hit: drawn first, they overlap the traversal.
            let r = CounterRNG.philox(x: px, y: py, sample: s, dim: UInt32(bitPattern: depth &+ 1), seed: seed)
            let (id, t) = intersect(scene, o, d, tMin, stack)
            if id < 0 { return attenuation * sky(p, d) }
            let sp = scene.spheres[Int(id)]
            let point = o + d * t
            let outward = (point - RTVec(sp.center_x, sp.center_y, sp.center_z)) * sp.inv_radius
            let front = dot(d, outward) < 0
            let normal = front ? outward : -outward
            let m = scene.materials[Int(sp.material)]
            if m.kind == GLINT_RT_LAMBERTIAN {
                var dir = normal + unitVector(CounterRNG.toUnit(r.x), CounterRNG.toUnit(r.y))
                // Catch degenerate scatter direction
                if abs(dir.x) < nearZero && abs(dir.y) < nearZero && abs(dir.z) < nearZero { dir = normal }
                d = normalize(dir)
            } else if m.kind == GLINT_RT_METAL {
                let radius = m.fuzz * cbrt(CounterRNG.toUnit(r.z))
                let dir = reflect(d, normal) + unitVector(CounterRNG.toUnit(r.x), CounterRNG.toUnit(r.y)) * radius
                // Fuzz that points below the surface is absorbed.
                if !(dot(dir, normal) > 0) { return RTVec(0, 0, 0) }
                d = normalize(dir)
            } else {
                let ratio = front ? 1 / m.ior : m.ior
                var cosT = -dot(d, normal)
                if cosT > 1 { cosT = 1 }
                let s2 = 1 - cosT * cosT
                let sinT = (s2 > 0 ? s2 : 0).squareRoot()
                // Schlick's approximation of the reflectance.
                var r0 = (1 - ratio) / (1 + ratio)
                r0 = r0 * r0
                let x = 1 - cosT, x2 = x * x
                let reflectance = r0 + (1 - r0) * ((x2 * x2) * x)
                let dir: RTVec
                if ratio * sinT > 1 || reflectance > CounterRNG.toUnit(r.w) {
                    dir = reflect(d, normal)
                } else {
                    let perp = (d + normal * cosT) * ratio
                    let k = 1 - dot(perp, perp)
                    dir = perp + normal * -(abs(k).squareRoot())
                }
                d = normalize(dir)
            }
            attenuation = attenuation * RTVec(m.albedo_r, m.albedo_g, m.albedo_b)
            o = point
            depth += 1
        }
        return RTVec(0, 0, 0)
    }

    /// rt_trace for one image row: adds samples sample0 ..< sample0 + samples to each pixel's
    /// sums (RGBA floats, row-major, from image row `band0`), in sample order. A sample that is
    /// not finite counts as black.
    static func trace(_ accum: UnsafeMutablePointer<Float>, _ scene: RTSceneData, _ p: UnsafePointer<GlintRTParams>,
                      row y: Int, band0: Int, sample0: Int, samples: Int, stack: RTStack) {
        let w = Int(p.pointee.width)
        for x in 0..<w {
            let a = accum + ((y - band0) * w + x) * 4
            var r = a[0], g = a[1], b = a[2]
            for k in 0..<samples {
                let c = sample(p, scene, UInt32(x), UInt32(y), UInt32(sample0 + k), stack)
                if c.x.isFinite && c.y.isFinite && c.z.isFinite {
                    r = r + c.x
                    g = g + c.y
                    b = b + c.z
                }
            }
            a[0] = r; a[1] = g; a[2] = b
        }
    }
}
