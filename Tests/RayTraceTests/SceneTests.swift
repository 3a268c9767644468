import CGlintTypes
import GlintCore
@testable import GlintWorkloads
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct RTSceneTests {
    /// SwiftRTOW's scenes as the notes give them.
    @Test func builtinScenesAreSwiftRTOWs() {
        let ch8 = RTScene.ch8()
        #expect(ch8.spheres == [RTSphere(center: SIMD3(0, -100, -1), radius: 100, material: 0),
                                RTSphere(center: SIMD3(0, 1, 0), radius: 1, material: 0)])
        #expect(ch8.materials == [.lambertian(albedo: SIMD3(0.5, 0.5, 0.5))])
        let ch10 = RTScene.ch10()
        #expect(ch10.spheres.map(\.radius) == [100, 1, 1, -0.8, 1])
        #expect(ch10.spheres[3].center == SIMD3(-4, 1, 0) && ch10.materials[ch10.spheres[3].material] == .glass(1.5))
        #expect(ch10.materials[ch10.spheres[4].material] == .metal(albedo: SIMD3(0.8, 0.6, 0.2), fuzz: 0))
        for s in [ch8, ch10, RTScene.cover(seed: 0)] {
            #expect(s.camera == .cover && s.camera.lookfrom == SIMD3(13, 2, 3) && s.camera.vfov == 20)
            #expect(s.camera.aperture == 0.1 && s.camera.focusDist == 10 && s.sky == .book)
        }
    }

    @Test func coverSceneIsAPureFunctionOfTheSeed() {
        let a = RTScene.cover(seed: 42), b = RTScene.cover(seed: 42), c = RTScene.cover(seed: 43)
        #expect(a == b)
        #expect(a != c)
        #expect(a.spheres.first == RTSphere(center: SIMD3(0, -1000, 0), radius: 1000, material: 0))
        // 22 x 22 candidates minus those near (4, 0.2, 0), plus the ground and three big spheres.
        #expect(a.spheres.count > 470 && a.spheres.count <= 22 * 22 + 4)
        let small = a.spheres.dropFirst().dropLast(3)
        #expect(small.allSatisfy { $0.radius == 0.2 && $0.center.y == 0.2 })
        let kinds = small.map { a.materials[$0.material] }
        let diffuse = kinds.filter { if case .lambertian = $0 { true } else { false } }.count
        #expect(Double(diffuse) / Double(kinds.count) > 0.7 && Double(diffuse) / Double(kinds.count) < 0.9)
        #expect(Array(a.spheres.suffix(3).map(\.center)) == [SIMD3(0, 1, 0), SIMD3(-4, 1, 0), SIMD3(4, 1, 0)])
    }

    @Test func appGlassOnlyTintsGlass() {
        var s = RTScene.ch10()
        s.useAppGlass()
        #expect(s.materials[2] == .dielectric(ior: 1.5, attenuation: SIMD3(1, 1, 1.1)))
        #expect(s.materials[0] == RTScene.ch10().materials[0])
    }

    // MARK: JSON

    static let good = """
        { "name": "demo",
          "camera": { "lookfrom": [0, 1, 6], "lookat": [0, 1, 0], "vfov": 40, "aperture": 0, "focus_dist": 6 },
          "sky": { "bottom": [1, 1, 1], "top": [0.2, 0.3, 0.9] },
          "materials": { "ground": { "type": "lambertian", "albedo": [0.5, 0.5, 0.5] },
                         "glass": { "type": "dielectric", "ior": 1.5 } },
          "spheres": [ { "center": [0, -1000, 0], "radius": 1000, "material": "ground" },
                       { "center": [0, 1, 0], "radius": 1, "material": "glass" },
                       { "center": [0, 1, 0], "radius": -0.9, "material": "glass" },
                       { "center": [2, 1, 0], "radius": 1, "material": { "type": "metal", "albedo": [0.9, 0.9, 0.9], "fuzz": 0.2 } } ] }
        """

    @Test func sceneFilesParse() throws {
        let s = try RTScene.parse(Self.good, name: "demo.json")
        #expect(s.name == "demo")
        #expect(s.spheres.count == 4 && s.materials.count == 3)
        #expect(s.camera.lookfrom == SIMD3(0, 1, 6) && s.camera.vfov == 40 && s.camera.aperture == 0)
        #expect(s.sky.top == SIMD3(0.2, 0.3, 0.9))
        #expect(s.materials[s.spheres[3].material] == .metal(albedo: SIMD3(0.9, 0.9, 0.9), fuzz: 0.2))
        #expect(s.spheres[2].radius == -0.9)
        let minimal = try RTScene.parse(#"{"spheres": []}"#, name: "empty.json")
        #expect(minimal.spheres.isEmpty && minimal.camera == .cover && minimal.sky == .book)
    }

    /// Each bad scene gives one line naming the file and the bad field.
    @Test(arguments: [
        (#"{"spheres": [{"center": [0, 0, 0], "radius": 0, "material": {"type": "lambertian", "albedo": [1, 1, 1]}}]}"#, "spheres[0].radius"),
        (#"{"spheres": [{"center": [0, 0], "radius": 1, "material": "x"}]}"#, "spheres[0].center"),
        (#"{"spheres": [{"center": [0, 0, 0], "radius": 1, "material": "nope"}]}"#, "spheres[0].material"),
        (#"{"spheres": [{"center": [0, 0, 0], "radius": "big", "material": "nope"}]}"#, "spheres[0].radius"),
        (#"{"spheres": [{"center": [0, 0, 0], "radius": 1}]}"#, "spheres[0]"),
        (#"{"spheres": [{"centre": [0, 0, 0], "radius": 1, "material": "m"}]}"#, "spheres[0].centre"),
        (#"{"materials": {"m": {"type": "metal", "albedo": [1, 1, 1], "fuzz": 2}}, "spheres": []}"#, "materials.m.fuzz"),
        (#"{"materials": {"m": {"type": "plastic"}}, "spheres": []}"#, "materials.m.type"),
        (#"{"materials": {"m": {"type": "lambertian", "albedo": [1, -1, 1]}}, "spheres": []}"#, "materials.m.albedo"),
        (#"{"materials": {"m": {"type": "dielectric"}}, "spheres": []}"#, "materials.m"),
        (#"{"camera": {"lookfom": [1, 2, 3]}, "spheres": []}"#, "camera.lookfom"),
        (#"{"camera": {"vfov": 190}, "spheres": []}"#, "camera.vfov"),
        (#"{"camera": {"lookfrom": [0, 0, 0]}, "spheres": []}"#, "lookfrom and lookat"),
        (#"{"sky": {"top": "blue"}, "spheres": []}"#, "sky.top"),
        (#"{"spheres": {}}"#, "spheres"),
        (#"{}"#, "spheres"),
        (#"{"spheres": [}"#, "not valid JSON"),
    ])
    func badSceneFilesNameTheField(_ text: String, _ field: String) {
        do {
            _ = try RTScene.parse(text, name: "bad.json")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.message.hasPrefix("bad.json: "), "\(error)")
            #expect(error.message.contains(field), "\(error) should name \(field)")
            #expect(!error.message.contains("\n"))
        }
    }

    // MARK: BVH

    /// The BVH holds every sphere exactly once, inside its boxes, within the traversal's depth.
    @Test(arguments: [0, 1, 2, 7, 9, 485] as [Int])
    func bvhHoldsEverySphere(_ count: Int) throws {
        var scene = count == 485 ? RTScene.cover(seed: 1) : RTScene(name: "n", materials: [.glass()])
        if count != 485 {
            for i in 0..<count { scene.add(center: SIMD3(Double(i), Double(i % 3), 0), radius: 0.4, material: 0) }
        }
        let bvh = try RTBVH(scene: scene)
        #expect(bvh.depth <= RTBVH.maxDepth)
        var found: [Float] = []
        for s in bvh.spheres where s.radius != 0 { found.append(s.radius) }
        #expect(found.count == scene.spheres.count)
    }

    /// Traversal finds the same closest sphere as testing every sphere (random rays, cover scene).
    @Test func traversalFindsTheClosestHit() throws {
        let scene = RTScene.cover(seed: 5)
        let bvh = try RTBVH(scene: scene)
        let stack = RTStack()
        defer { stack.deallocate() }
        try bvh.nodes.withUnsafeBytes { nodes in
            try bvh.blocks.withUnsafeBytes { blocks in
                try bvh.spheres.withUnsafeBufferPointer { spheres in
                    try bvh.materials.withUnsafeBufferPointer { materials in
                        let data = RTSceneData(nodes: nodes.baseAddress!, blocks: blocks.baseAddress!,
                                               spheres: spheres.baseAddress!, materials: materials.baseAddress!)
                        for i in 0..<2000 {
                            let w = CounterRNG.philox(x: UInt32(i), y: 1, sample: 2, dim: 3, seed: 4)
                            let o = RTVec(Float(CounterRNG.toUnit(w.x)) * 24 - 12, Float(CounterRNG.toUnit(w.y)) * 3, Float(CounterRNG.toUnit(w.z)) * 24 - 12)
                            let d = RTTrace.unitVector(CounterRNG.toUnit(w.w), Float(i) / 2000)
                            let (id, t) = RTTrace.intersect(data, o, d, 1e-3, stack)
                            // Brute force, in Double.
                            var best = Double.infinity, bestIndex = -1
                            for (k, s) in spheres.enumerated() where s.radius != 0 {
                                let oc = SIMD3<Double>(Double(o.x - s.center_x), Double(o.y - s.center_y), Double(o.z - s.center_z))
                                let dd = SIMD3<Double>(Double(d.x), Double(d.y), Double(d.z))
                                let b = (oc * dd).sum(), c = (oc * oc).sum() - Double(s.radius) * Double(s.radius)
                                let disc = b * b - c
                                guard disc > 0 else { continue }
                                for root in [-b - disc.squareRoot(), -b + disc.squareRoot()] where root > 1e-3 {
                                    if root < best { best = root; bestIndex = k }
                                    break
                                }
                            }
                            if bestIndex < 0 {
                                #expect(id == -1, "ray \(i): hit \(id) where nothing should be")
                            } else {
                                try #require(id >= 0, "ray \(i): missed sphere \(bestIndex) at \(best)")
                                #expect(abs(Double(t) - best) < 1e-2 * max(1, best), "ray \(i): t \(t) vs \(best)")
                            }
                        }
                    }
                }
            }
        }
    }

    // MARK: Camera gestures

    @Test func orbitKeepsDistanceAndClampsLatitude() {
        var cam = RTCamera()
        let r = RTCamera.length(cam.lookfrom - cam.lookat)
        cam.orbit(longitude: 90, latitude: 0)
        #expect(abs(RTCamera.length(cam.lookfrom - cam.lookat) - r) < 1e-9)
        #expect(abs(cam.lookfrom.y - 2) < 1e-9, "a pure longitude move keeps the height")
        // (13, 2, 3) turned 90 degrees counter-clockwise seen from above: (3, 2, -13).
        #expect(abs(cam.lookfrom.x - 3) < 1e-9 && abs(cam.lookfrom.z + 13) < 1e-9, "\(cam.lookfrom)")
        cam.orbit(longitude: 0, latitude: 200)
        let lat = asinDegrees(cam.lookfrom.y / r)
        #expect(abs(lat - 89.999) < 1e-6, "latitude \(lat)")
        cam.orbit(longitude: 0, latitude: -400)
        #expect(abs(asinDegrees(cam.lookfrom.y / r) + 89.999) < 1e-6)
    }

    @Test func distanceIsClampedPerStep() {
        var cam = RTCamera()
        let r = RTCamera.length(cam.lookfrom - cam.lookat)
        cam.scaleDistance(10)
        #expect(abs(RTCamera.length(cam.lookfrom - cam.lookat) - r * 2.718) < 1e-9)
        cam.scaleDistance(0.01)
        #expect(abs(RTCamera.length(cam.lookfrom - cam.lookat) - r * 2.718 * 0.314) < 1e-9)
        cam.scaleDistance(1)
        #expect(abs(RTCamera.length(cam.lookfrom - cam.lookat) - r * 2.718 * 0.314) < 1e-9)
    }

    @Test func turnKeepsTheEyeAndRollTiltsUp() {
        var cam = RTCamera()
        let eye = cam.lookfrom
        cam.turn(yaw: 30, pitch: 5)
        #expect(cam.lookfrom == eye)
        #expect(abs(RTCamera.length(cam.lookat - eye) - RTCamera.length(eye)) < 1e-9)
        var level = RTCamera()
        level.lookfrom = SIMD3(0, 0, 10)
        level.roll(30)
        // Looking down -z, a positive roll tips up towards +x.
        #expect(abs(level.vup.x - 0.5) < 1e-9 && abs(level.vup.y - 3.0.squareRoot() / 2) < 1e-9, "\(level.vup)")
        var steep = RTCamera()
        steep.lookfrom = SIMD3(0, 0, 10)
        steep.roll(80)
        #expect(abs(asinDegrees(steep.vup.x) - 63) < 1e-6, "roll is clamped to the app's 63 degrees a gesture")
    }

    @Test func badCamerasAreRefused() {
        var cam = RTCamera()
        cam.vup = SIMD3(13, 2, 3)
        #expect(throws: GlintError.self) { try cam.validate() }
        cam = RTCamera(); cam.lookat = cam.lookfrom
        #expect(throws: GlintError.self) { try cam.validate() }
        cam = RTCamera(); cam.vfov = 0
        #expect(throws: GlintError.self) { try cam.validate() }
        cam = RTCamera(); cam.focusDist = -1
        #expect(throws: GlintError.self) { try cam.validate() }
    }
}

func asinDegrees(_ x: Double) -> Double { asin(min(max(x, -1), 1)) * 180 / Double.pi }
