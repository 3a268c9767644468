import CGlintTypes
import GlintCore

/// The scene as the kernel and its Swift twin read it: an 8-wide bounding volume hierarchy
/// built on the host (surface-area heuristic), flattened into arrays of the structs of
/// Kernels/common/types.h. Both paths traverse these very arrays.
public struct RTBVH: Sendable {
    /// Node 0 is the root.
    public internal(set) var nodes: [GlintRTNode] = []
    public internal(set) var blocks: [GlintRTSphereBlock] = []
    /// Sphere 8k + l is lane l of block k (unused lanes are zero and never read).
    public internal(set) var spheres: [GlintRTSphere] = []
    public internal(set) var materials: [GlintRTMaterial] = []
    /// Levels of nodes from the root to the deepest leaf block.
    public internal(set) var depth = 0

    /// The kernel's traversal stack holds 64 entries: 7 per level plus one.
    public static let maxDepth = 9
    /// Below this level splits are at the median (balanced), which bounds the depth.
    static let sahLevels = 3

    struct Box {
        var lo = SIMD3<Double>(repeating: .infinity)
        var hi = SIMD3<Double>(repeating: -.infinity)
        mutating func add(_ b: Box) {
            lo = pointwiseMin(lo, b.lo)
            hi = pointwiseMax(hi, b.hi)
        }
        /// Half the surface area: the SAH's measure of how likely a ray hits the box.
        var area: Double {
            let e = hi - lo
            guard e.x >= 0 else { return 0 }
            return e.x * e.y + e.y * e.z + e.z * e.x
        }
    }

    private var boxes: [Box] = []
    private var centroids: [SIMD3<Double>] = []
    private var floatSpheres: [(center: SIMD3<Float>, radius: Float)] = []

    /// Builds the hierarchy for a validated scene.
    public init(scene: RTScene) throws(GlintError) {
        materials = scene.materials.map(Self.material)
        if materials.isEmpty { materials.append(GlintRTMaterial()) }
        for s in scene.spheres {
            let c = SIMD3<Float>(Float(s.center.x), Float(s.center.y), Float(s.center.z))
            let r = Float(s.radius)
            floatSpheres.append((c, r))
            // The box of the float sphere, grown by a hair and rounded outwards.
            let cd = SIMD3<Double>(Double(c.x), Double(c.y), Double(c.z))
            let rd = Double(abs(r)) * (1 + 1e-6)
            var b = Box()
            b.lo = cd - SIMD3(repeating: rd)
            b.hi = cd + SIMD3(repeating: rd)
            boxes.append(b)
            centroids.append(cd)
        }
        _ = buildNode(Array(scene.spheres.indices), level: 1, scene: scene)
        guard depth <= Self.maxDepth else {
            throw GlintError("scene \(scene.name): the BVH is \(depth) levels deep, over the traversal limit of \(Self.maxDepth)")
        }
        boxes = []; centroids = []; floatSpheres = []
    }

    static func material(_ m: RTMaterial) -> GlintRTMaterial {
        var g = GlintRTMaterial()
        let albedo: SIMD3<Double>
        switch m {
        case .lambertian(let a):
            g.kind = GLINT_RT_LAMBERTIAN
            albedo = a
        case .metal(let a, let fuzz):
            g.kind = GLINT_RT_METAL
            albedo = a
            g.fuzz = Float(min(fuzz, 1))
        case .dielectric(let ior, let attenuation):
            g.kind = GLINT_RT_DIELECTRIC
            albedo = attenuation
            g.ior = Float(ior)
        }
        g.albedo_r = Float(albedo.x)
        g.albedo_g = Float(albedo.y)
        g.albedo_b = Float(albedo.z)
        return g
    }

    private func bounds(_ items: [Int]) -> Box {
        var b = Box()
        for i in items { b.add(boxes[i]) }
        return b
    }

    /// Splits `items` in two: at the best surface-area cost over the three axes, or at the
    /// median of the longest centroid axis. Returns nil for fewer than two items.
    private func split(_ items: [Int], median: Bool) -> (left: [Int], right: [Int], cost: Double)? {
        let n = items.count
        guard n >= 2 else { return nil }
        func sorted(_ axis: Int) -> [Int] {
            items.sorted { a, b in
                let ca = centroids[a][axis], cb = centroids[b][axis]
                return ca < cb || (ca == cb && a < b)
            }
        }
        if median {
            var lo = SIMD3<Double>(repeating: .infinity), hi = SIMD3<Double>(repeating: -.infinity)
            for i in items { lo = pointwiseMin(lo, centroids[i]); hi = pointwiseMax(hi, centroids[i]) }
            let e = hi - lo
            let axis = e.x >= e.y && e.x >= e.z ? 0 : (e.y >= e.z ? 1 : 2)
            let s = sorted(axis)
            let l = Array(s[0 ..< n / 2]), r = Array(s[(n / 2)...])
            return (l, r, bounds(l).area * Double(l.count) + bounds(r).area * Double(r.count))
        }
        var best: (left: [Int], right: [Int], cost: Double)?
        var suffix = [Double](repeating: 0, count: n)
        for axis in 0..<3 {
            let s = sorted(axis)
            var b = Box()
            for i in stride(from: n - 1, through: 1, by: -1) {
                b.add(boxes[s[i]])
                suffix[i] = b.area
            }
            var prefix = Box()
            var bestHere = (cost: Double.infinity, at: 1)
            for i in 1..<n {
                prefix.add(boxes[s[i - 1]])
                let cost = prefix.area * Double(i) + suffix[i] * Double(n - i)
                if cost < bestHere.cost { bestHere = (cost, i) }
            }
            if best == nil || bestHere.cost < best!.cost {
                best = (Array(s[0 ..< bestHere.at]), Array(s[bestHere.at...]), bestHere.cost)
            }
        }
        return best
    }

    /// Builds the node for `items` and returns its index. Up to eight children: clusters of more
    /// than eight spheres are split while slots are free (the most costly first); then clusters
    /// that a split makes cheaper to hit (smaller total area). A cluster of at most eight spheres
    /// becomes a leaf block, a larger one a child node.
    private mutating func buildNode(_ items: [Int], level: Int, scene: RTScene) -> Int32 {
        let index = nodes.count
        var node = GlintRTNode()
        Self.setLanes(&node.child, repeating: GLINT_RT_EMPTY)
        nodes.append(node)
        depth = max(depth, level)
        let median = level > Self.sahLevels
        var clusters: [(items: [Int], box: Box)] = items.isEmpty ? [] : [(items, bounds(items))]
        while clusters.count < 8 {
            var pick: Int?
            var pickWeight = -1.0
            for (i, c) in clusters.enumerated() where c.items.count > 8 {
                let w = c.box.area * Double(c.items.count)
                if w > pickWeight { pickWeight = w; pick = i }
            }
            var chosen: (left: [Int], right: [Int], cost: Double)?
            if let p = pick {
                chosen = split(clusters[p].items, median: median)
            } else {
                var bestGain = 0.0
                for (i, c) in clusters.enumerated() where c.items.count >= 2 {
                    guard let s = split(c.items, median: false) else { continue }
                    let gain = c.box.area - (bounds(s.left).area + bounds(s.right).area)
                    if gain > bestGain { bestGain = gain; pick = i; chosen = s }
                }
            }
            guard let p = pick, let s = chosen else { break }
            clusters[p] = (s.left, bounds(s.left))
            clusters.append((s.right, bounds(s.right)))
        }
        for (slot, c) in clusters.enumerated() {
            let child: Int32
            if c.items.count <= 8 {
                child = ~Int32(makeBlock(c.items, scene: scene))
            } else {
                child = buildNode(c.items, level: level + 1, scene: scene)
            }
            let lo = SIMD3<Float>(Self.down(c.box.lo.x), Self.down(c.box.lo.y), Self.down(c.box.lo.z))
            let hi = SIMD3<Float>(Self.up(c.box.hi.x), Self.up(c.box.hi.y), Self.up(c.box.hi.z))
            Self.setLane(&nodes[index].min_x, slot, lo.x)
            Self.setLane(&nodes[index].min_y, slot, lo.y)
            Self.setLane(&nodes[index].min_z, slot, lo.z)
            Self.setLane(&nodes[index].max_x, slot, hi.x)
            Self.setLane(&nodes[index].max_y, slot, hi.y)
            Self.setLane(&nodes[index].max_z, slot, hi.z)
            Self.setLane(&nodes[index].child, slot, child)
        }
        return Int32(index)
    }

    private mutating func makeBlock(_ items: [Int], scene: RTScene) -> Int {
        let k = blocks.count
        var block = GlintRTSphereBlock()
        Self.setLanes(&block.center_x, repeating: Float.nan)
        Self.setLanes(&block.center_y, repeating: Float.nan)
        Self.setLanes(&block.center_z, repeating: Float.nan)
        for _ in 0..<8 { spheres.append(GlintRTSphere()) }
        for (lane, i) in items.enumerated() {
            let (c, r) = floatSpheres[i]
            Self.setLane(&block.center_x, lane, c.x)
            Self.setLane(&block.center_y, lane, c.y)
            Self.setLane(&block.center_z, lane, c.z)
            Self.setLane(&block.radius2, lane, r * r)
            var s = GlintRTSphere()
            s.center_x = c.x; s.center_y = c.y; s.center_z = c.z
            s.radius = r
            s.inv_radius = Float(1 / scene.spheres[i].radius)
            s.material = Int32(scene.spheres[i].material)
            spheres[k * 8 + lane] = s
        }
        blocks.append(block)
        return k
    }

    static func down(_ x: Double) -> Float {
        let f = Float(x)
        return Double(f) > x ? f.nextDown : f
    }
    static func up(_ x: Double) -> Float {
        let f = Float(x)
        return Double(f) < x ? f.nextUp : f
    }

    /// Writes lane `i` of an imported C array (a tuple of eight).
    static func setLane<T>(_ tuple: inout (T, T, T, T, T, T, T, T), _ i: Int, _ value: T) {
        withUnsafeMutableBytes(of: &tuple) { $0.storeBytes(of: value, toByteOffset: i * MemoryLayout<T>.stride, as: T.self) }
    }
    static func setLanes<T>(_ tuple: inout (T, T, T, T, T, T, T, T), repeating value: T) {
        tuple = (value, value, value, value, value, value, value, value)
    }
}
