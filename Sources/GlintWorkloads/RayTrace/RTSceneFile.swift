import GlintCore

/// Reading scenes from JSON. The format (docs/RTOW.md, "Scene files"):
///
///     {
///       "camera":    { "lookfrom": [13, 2, 3], "lookat": [0, 0, 0], "vup": [0, 1, 0],
///                      "vfov": 20, "aperture": 0.1, "focus_dist": 10 },
///       "sky":       { "bottom": [1, 1, 1], "top": [0.5, 0.7, 1.0] },
///       "materials": { "ground": { "type": "lambertian", "albedo": [0.5, 0.5, 0.5] },
///                      "gold":   { "type": "metal", "albedo": [0.8, 0.6, 0.2], "fuzz": 0.1 },
///                      "glass":  { "type": "dielectric", "ior": 1.5 } },
///       "spheres":   [ { "center": [0, -1000, 0], "radius": 1000, "material": "ground" } ]
///     }
///
/// Only "spheres" is required; every field is checked, and unknown fields are refused (a typo
/// must not silently fall back to a default), as are duplicate keys and anything else that is
/// not strict JSON (RFC 8259). Errors name the file and the field's path; text from the file in
/// them is escaped and cut short, so a message never prints control characters. Parsing takes
/// time linear in the size of the file (materials are found by name through a dictionary).
extension RTScene {
    /// Reads a scene file (at most 64 MiB).
    public static func load(_ path: String) throws(GlintError) -> RTScene {
        try parse(FileIO.readText(path), name: path)
    }

    /// Parses scene JSON; `name` names the scene in messages.
    public static func parse(_ text: String, name: String) throws(GlintError) -> RTScene {
        let root: JSON
        do throws(GlintError) { root = try JSON.parse(text) } catch { throw GlintError("\(name): not valid JSON: \(error.message)") }
        var reader = SceneReader(file: name)
        return try reader.scene(root)
    }
}

private struct SceneReader {
    let file: String

    /// Longest scene name accepted (it is printed in the "wrote" line).
    static let maxNameLength = 200

    /// `path` holds names from the file (fields, materials): printed escaped and cut short.
    func fail(_ path: String, _ why: String) -> GlintError { GlintError("\(file): \(JSON.printable(path, limit: 80)): \(why)") }

    /// The fields of an object whose keys must be among the few `allowed` ones.
    func object(_ v: JSON, _ path: String, allowed: [String]) throws(GlintError) -> [(String, JSON)] {
        guard let fields = v.objectValue else { throw fail(path, "must be an object, got \(v.typeName)") }
        for (key, _) in fields where !allowed.contains(key) {
            throw fail(path.isEmpty ? key : "\(path).\(key)", "unknown field (expected one of: \(allowed.joined(separator: ", ")))")
        }
        return fields
    }

    func number(_ v: JSON, _ path: String) throws(GlintError) -> Double {
        guard let d = v.doubleValue, d.isFinite else { throw fail(path, "must be a number, got \(describe(v))") }
        return d
    }

    func vector(_ v: JSON, _ path: String) throws(GlintError) -> SIMD3<Double> {
        guard let a = v.arrayValue, a.count == 3 else { throw fail(path, "must be an array of 3 numbers, got \(describe(v))") }
        return SIMD3(try number(a[0], "\(path)[0]"), try number(a[1], "\(path)[1]"), try number(a[2], "\(path)[2]"))
    }

    func color(_ v: JSON, _ path: String) throws(GlintError) -> SIMD3<Double> {
        let c = try vector(v, path)
        guard c.min() >= 0, c.max() < 1e30 else { throw fail(path, "colour channels must be >= 0") }
        return c
    }

    /// A value for a message: its type and its JSON text, escaped and cut short.
    func describe(_ v: JSON) -> String {
        let text: String
        switch v {
        case .array(let items) where items.count > 8: text = JSON.array(Array(items.prefix(8))).serialized(pretty: false)
        case .object(let fields) where fields.count > 8: text = JSON.object(Array(fields.prefix(8))).serialized(pretty: false)
        default: text = v.serialized(pretty: false)
        }
        return "\(v.typeName) \(JSON.printable(text, limit: 37))"
    }

    mutating func scene(_ root: JSON) throws(GlintError) -> RTScene {
        let fields = try object(root, "", allowed: ["camera", "sky", "materials", "spheres", "name"])
        var scene = RTScene(name: file)
        var materialIndex: [String: Int] = [:]
        for (key, value) in fields {
            switch key {
            case "name":
                guard let s = value.stringValue else { throw fail("name", "must be a string, got \(describe(value))") }
                guard JSON.printable(s, limit: Self.maxNameLength) == s else {
                    throw fail("name", "must be at most \(Self.maxNameLength) printable characters (no control characters), got \(JSON.quotedForMessage(s, limit: 40))")
                }
                scene.name = s
            case "camera": scene.camera = try camera(value)
            case "sky":
                let sky = try object(value, "sky", allowed: ["bottom", "top"])
                for (k, v) in sky {
                    if k == "bottom" { scene.sky.bottom = try color(v, "sky.bottom") } else { scene.sky.top = try color(v, "sky.top") }
                }
            case "materials":
                // Any names: no allowed-key check (a linear search per key made this quadratic).
                guard let materials = value.objectValue else { throw fail("materials", "must be an object, got \(describe(value))") }
                materialIndex.reserveCapacity(materials.count)
                for (mname, m) in materials {
                    guard materialIndex[mname] == nil else { throw fail("materials.\(mname)", "defined twice") }
                    materialIndex[mname] = scene.add(try material(m, "materials.\(mname)"))
                }
            default: break
            }
        }
        guard let spheres = root["spheres"] else { throw fail("spheres", "missing: a scene needs a \"spheres\" array (it may be empty)") }
        guard let list = spheres.arrayValue else { throw fail("spheres", "must be an array, got \(describe(spheres))") }
        guard list.count <= RTScene.maxSpheres else { throw fail("spheres", "\(list.count) spheres, over the limit of \(RTScene.maxSpheres)") }
        for (i, s) in list.enumerated() {
            let path = "spheres[\(i)]"
            let f = try object(s, path, allowed: ["center", "radius", "material"])
            guard let c = f.first(where: { $0.0 == "center" })?.1 else { throw fail(path, "missing \"center\"") }
            guard let r = f.first(where: { $0.0 == "radius" })?.1 else { throw fail(path, "missing \"radius\"") }
            guard let m = f.first(where: { $0.0 == "material" })?.1 else { throw fail(path, "missing \"material\"") }
            let center = try vector(c, "\(path).center")
            guard Swift.max(abs(center.x), abs(center.y), abs(center.z)) < 1e18 else { throw fail("\(path).center", "too far out (over 1e18)") }
            let radius = try number(r, "\(path).radius")
            guard radius != 0, abs(radius) < 1e18, Float(radius).isNormal else {
                throw fail("\(path).radius", "must be a non-zero number (negative for a hollow shell), got \(radius)")
            }
            let index: Int
            if let mname = m.stringValue {
                guard let found = materialIndex[mname] else {
                    throw fail("\(path).material", "no material named \(JSON.quotedForMessage(mname, limit: 40)) (\(known(materialIndex)))")
                }
                index = found
            } else {
                // An inline material object.
                index = scene.add(try material(m, "\(path).material"))
            }
            scene.add(center: center, radius: radius, material: index)
        }
        return scene
    }

    /// The known material names for a message: a few, escaped, and how many more.
    func known(_ index: [String: Int]) -> String {
        guard !index.isEmpty else { return "the scene defines no materials" }
        let names = index.keys.sorted()
        let shown = names.prefix(8).map { JSON.quotedForMessage($0, limit: 24) }.joined(separator: ", ")
        return names.count > 8 ? "known: \(shown) and \(names.count - 8) more" : "known: \(shown)"
    }

    func camera(_ v: JSON) throws(GlintError) -> RTCamera {
        var cam = RTCamera()
        for (key, value) in try object(v, "camera", allowed: ["lookfrom", "lookat", "vup", "vfov", "aperture", "focus_dist"]) {
            let path = "camera.\(key)"
            switch key {
            case "lookfrom": cam.lookfrom = try vector(value, path)
            case "lookat": cam.lookat = try vector(value, path)
            case "vup": cam.vup = try vector(value, path)
            case "vfov":
                cam.vfov = try number(value, path)
                guard cam.vfov > 0, cam.vfov < 180 else { throw fail(path, "must be between 0 and 180 degrees, got \(cam.vfov)") }
            case "aperture":
                cam.aperture = try number(value, path)
                guard cam.aperture >= 0 else { throw fail(path, "must be >= 0, got \(cam.aperture)") }
            default:
                cam.focusDist = try number(value, path)
                guard cam.focusDist > 0 else { throw fail(path, "must be > 0, got \(cam.focusDist)") }
            }
        }
        do throws(GlintError) { try cam.validate() } catch { throw GlintError("\(file): \(error.message)") }
        return cam
    }

    func material(_ v: JSON, _ path: String) throws(GlintError) -> RTMaterial {
        guard let fields = v.objectValue else { throw fail(path, "must be a material name or object, got \(describe(v))") }
        guard let typeValue = fields.first(where: { $0.0 == "type" })?.1 else {
            throw fail(path, "missing \"type\" (lambertian, metal or dielectric)")
        }
        guard let type = typeValue.stringValue else { throw fail("\(path).type", "must be a string, got \(describe(typeValue))") }
        func field(_ key: String) -> JSON? { fields.first { $0.0 == key }?.1 }
        switch type {
        case "lambertian":
            _ = try object(v, path, allowed: ["type", "albedo"])
            guard let a = field("albedo") else { throw fail(path, "missing \"albedo\"") }
            return .lambertian(albedo: try color(a, "\(path).albedo"))
        case "metal":
            _ = try object(v, path, allowed: ["type", "albedo", "fuzz"])
            guard let a = field("albedo") else { throw fail(path, "missing \"albedo\"") }
            var fuzz = 0.0
            if let f = field("fuzz") {
                fuzz = try number(f, "\(path).fuzz")
                guard fuzz >= 0, fuzz <= 1 else { throw fail("\(path).fuzz", "must be between 0 and 1, got \(fuzz)") }
            }
            return .metal(albedo: try color(a, "\(path).albedo"), fuzz: fuzz)
        case "dielectric":
            _ = try object(v, path, allowed: ["type", "ior", "attenuation"])
            guard let i = field("ior") else { throw fail(path, "missing \"ior\" (index of refraction, e.g. 1.5)") }
            let ior = try number(i, "\(path).ior")
            guard ior > 0 else { throw fail("\(path).ior", "must be > 0, got \(ior)") }
            var attenuation = SIMD3<Double>(1, 1, 1)
            if let a = field("attenuation") { attenuation = try color(a, "\(path).attenuation") }
            return .dielectric(ior: ior, attenuation: attenuation)
        default:
            throw fail("\(path).type", "unknown material type \(JSON.quotedForMessage(type, limit: 40)) (use lambertian, metal or dielectric)")
        }
    }
}
