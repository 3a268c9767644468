import GlintCore

/// How a surface scatters light (the book's three materials).
public enum RTMaterial: Sendable, Equatable {
    /// Diffuse: scatters around the normal (normal + a random unit vector); `albedo` per channel.
    case lambertian(albedo: SIMD3<Double>)
    /// Mirror with a fuzzy reflection: `fuzz` 0 is a perfect mirror, at most 1.
    case metal(albedo: SIMD3<Double>, fuzz: Double)
    /// Glass: refracts or reflects (Schlick); `attenuation` multiplies each bounce. The original
    /// app uses (1, 1, 1.1); (1, 1, 1) conserves energy.
    case dielectric(ior: Double, attenuation: SIMD3<Double>)

    public static func glass(_ ior: Double = 1.5) -> RTMaterial { .dielectric(ior: ior, attenuation: SIMD3(1, 1, 1)) }

    /// The glass attenuation of the original SwiftRTOW app (it adds 10% blue at every glass bounce).
    public static let appGlassAttenuation = SIMD3<Double>(1, 1, 1.1)
}

/// A sphere; a negative radius keeps the surface but turns its normals inwards (a hollow glass shell).
public struct RTSphere: Sendable, Equatable {
    public var center: SIMD3<Double>
    public var radius: Double
    /// Index into the scene's materials.
    public var material: Int

    public init(center: SIMD3<Double>, radius: Double, material: Int) {
        self.center = center
        self.radius = radius
        self.material = material
    }
}

/// The background: a linear blend in the ray direction's y, from `bottom` (looking straight
/// down) to `top` (straight up). The book's sky is white to (0.5, 0.7, 1.0).
public struct RTSky: Sendable, Equatable {
    public var bottom: SIMD3<Double>
    public var top: SIMD3<Double>
    public init(bottom: SIMD3<Double>, top: SIMD3<Double>) {
        self.bottom = bottom
        self.top = top
    }
    public static let book = RTSky(bottom: SIMD3(1, 1, 1), top: SIMD3(0.5, 0.7, 1.0))
    public static func uniform(_ c: SIMD3<Double>) -> RTSky { RTSky(bottom: c, top: c) }
}

/// Spheres, their materials, the sky and the scene's own camera.
public struct RTScene: Sendable, Equatable {
    public var name: String
    public var materials: [RTMaterial]
    public var spheres: [RTSphere]
    public var sky: RTSky
    public var camera: RTCamera

    public init(name: String, materials: [RTMaterial] = [], spheres: [RTSphere] = [],
                sky: RTSky = .book, camera: RTCamera = .cover) {
        self.name = name
        self.materials = materials
        self.spheres = spheres
        self.sky = sky
        self.camera = camera
    }

    /// Adds a material and returns its index.
    @discardableResult
    public mutating func add(_ material: RTMaterial) -> Int {
        materials.append(material)
        return materials.count - 1
    }

    public mutating func add(center: SIMD3<Double>, radius: Double, material: Int) {
        spheres.append(RTSphere(center: center, radius: radius, material: material))
    }

    /// The built-in scene names.
    public static let builtinNames = ["ch8", "ch10", "cover"]

    /// A built-in scene by name (`ch8`, `ch10`, `cover`; `ch13` is the cover), or nil.
    public static func builtin(_ name: String, seed: UInt64) -> RTScene? {
        switch name.lowercased() {
        case "ch8": ch8()
        case "ch10": ch10()
        case "cover", "ch13": cover(seed: seed)
        default: nil
        }
    }

    /// SwiftRTOW's chapter 8 (diffuse): a grey sphere on a grey ground, scaled x2 and moved
    /// for the cover camera.
    public static func ch8() -> RTScene {
        var s = RTScene(name: "ch8")
        let grey = s.add(.lambertian(albedo: SIMD3(0.5, 0.5, 0.5)))
        s.add(center: SIMD3(0, -100, -1), radius: 100, material: grey)
        s.add(center: SIMD3(0, 1, 0), radius: 1, material: grey)
        return s
    }

    /// SwiftRTOW's chapter 10 (dielectrics): yellow ground, blue diffuse centre, a hollow glass
    /// sphere on the left, a gold mirror on the right.
    public static func ch10() -> RTScene {
        var s = RTScene(name: "ch10")
        let ground = s.add(.lambertian(albedo: SIMD3(0.8, 0.8, 0.0)))
        let centre = s.add(.lambertian(albedo: SIMD3(0.1, 0.2, 0.5)))
        let glass = s.add(.glass(1.5))
        let gold = s.add(.metal(albedo: SIMD3(0.8, 0.6, 0.2), fuzz: 0))
        s.add(center: SIMD3(0, -100, -1), radius: 100, material: ground)
        s.add(center: SIMD3(0, 1, 0), radius: 1, material: centre)
        s.add(center: SIMD3(-4, 1, 0), radius: 1, material: glass)
        s.add(center: SIMD3(-4, 1, 0), radius: -0.8, material: glass)
        s.add(center: SIMD3(4, 1, 0), radius: 1, material: gold)
        return s
    }

    /// The book cover (chapter 13): 22 x 22 candidate small spheres drawn from the counter-based
    /// RNG under `seed` (so one seed is always one scene), and three big ones.
    public static func cover(seed: UInt64) -> RTScene {
        var s = RTScene(name: "cover")
        let ground = s.add(.lambertian(albedo: SIMD3(0.5, 0.5, 0.5)))
        s.add(center: SIMD3(0, -1000, 0), radius: 1000, material: ground)
        // Scene draws use dimensions far from the renderer's (0 camera, 1+k bounces).
        let base: UInt32 = 0x5CE0_0000
        func unit(_ w: UInt32) -> Double { Double(CounterRNG.toUnit(w)) }
        for a in -11..<11 {
            for b in -11..<11 {
                let (x, y) = (UInt32(a + 11), UInt32(b + 11))
                let w0 = CounterRNG.philox(x: x, y: y, sample: 0, dim: base, seed: seed)
                let w1 = CounterRNG.philox(x: x, y: y, sample: 0, dim: base + 1, seed: seed)
                let w2 = CounterRNG.philox(x: x, y: y, sample: 0, dim: base + 2, seed: seed)
                let chooseMat = unit(w0.x)
                let center = SIMD3(Double(a) + 0.9 * unit(w0.y), 0.2, Double(b) + 0.9 * unit(w0.z))
                let off = center - SIMD3(4, 0.2, 0)
                guard (off * off).sum().squareRoot() > 0.9 else { continue }
                let material: RTMaterial
                if chooseMat < 0.8 {
                    // albedo = random() * random(), per channel
                    material = .lambertian(albedo: SIMD3(unit(w1.x) * unit(w1.y), unit(w1.z) * unit(w1.w),
                                                         unit(w2.x) * unit(w2.y)))
                } else if chooseMat < 0.95 {
                    material = .metal(albedo: SIMD3(0.5 + 0.5 * unit(w1.x), 0.5 + 0.5 * unit(w1.y), 0.5 + 0.5 * unit(w1.z)),
                                      fuzz: 0.5 * unit(w1.w))
                } else {
                    material = .glass(1.5)
                }
                s.add(center: center, radius: 0.2, material: s.add(material))
            }
        }
        s.add(center: SIMD3(0, 1, 0), radius: 1, material: s.add(.glass(1.5)))
        s.add(center: SIMD3(-4, 1, 0), radius: 1, material: s.add(.lambertian(albedo: SIMD3(0.4, 0.2, 0.1))))
        s.add(center: SIMD3(4, 1, 0), radius: 1, material: s.add(.metal(albedo: SIMD3(0.7, 0.6, 0.5), fuzz: 0)))
        return s
    }

    /// Gives every glass the original app's attenuation (1, 1, 1.1).
    public mutating func useAppGlass() {
        for i in materials.indices {
            if case .dielectric(let ior, _) = materials[i] {
                materials[i] = .dielectric(ior: ior, attenuation: RTMaterial.appGlassAttenuation)
            }
        }
    }

    public static let maxSpheres = 1_000_000

    /// Checks every sphere and material; one clear line naming the first bad one.
    public func validate() throws(GlintError) {
        guard spheres.count <= Self.maxSpheres else {
            throw GlintError("scene \(name): \(spheres.count) spheres, over the limit of \(Self.maxSpheres)")
        }
        for (i, m) in materials.enumerated() {
            switch m {
            case .lambertian(let a):
                guard Self.isColor(a) else { throw GlintError("scene \(name): material \(i): albedo must be 3 finite numbers >= 0") }
            case .metal(let a, let fuzz):
                guard Self.isColor(a) else { throw GlintError("scene \(name): material \(i): albedo must be 3 finite numbers >= 0") }
                guard fuzz.isFinite, fuzz >= 0, fuzz <= 1 else { throw GlintError("scene \(name): material \(i): fuzz must be in [0, 1] (got \(fuzz))") }
            case .dielectric(let ior, let a):
                guard ior.isFinite, ior > 0 else { throw GlintError("scene \(name): material \(i): ior must be a positive number (got \(ior))") }
                guard Self.isColor(a) else { throw GlintError("scene \(name): material \(i): attenuation must be 3 finite numbers >= 0") }
            }
        }
        for (i, s) in spheres.enumerated() {
            guard s.center.x.isFinite, s.center.y.isFinite, s.center.z.isFinite, abs(s.center.x) < 1e18,
                  abs(s.center.y) < 1e18, abs(s.center.z) < 1e18 else {
                throw GlintError("scene \(name): sphere \(i): center must be 3 finite numbers")
            }
            guard s.radius.isFinite, s.radius != 0, abs(s.radius) < 1e18, Float(s.radius).isNormal else {
                throw GlintError("scene \(name): sphere \(i): radius must be a non-zero finite number (got \(s.radius))")
            }
            guard materials.indices.contains(s.material) else {
                throw GlintError("scene \(name): sphere \(i): material \(s.material) does not exist")
            }
        }
        guard Self.isColor(sky.bottom), Self.isColor(sky.top) else {
            throw GlintError("scene \(name): sky colours must be 3 finite numbers >= 0")
        }
    }

    static func isColor(_ c: SIMD3<Double>) -> Bool {
        c.x.isFinite && c.y.isFinite && c.z.isFinite && c.x >= 0 && c.y >= 0 && c.z >= 0 && c.max() < 1e30
    }
}
