import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// The thin-lens camera of the book, with SwiftRTOW's gestures as methods.
public struct RTCamera: Sendable, Equatable {
    public var lookfrom = SIMD3<Double>(13, 2, 3)  // eye: the lens centre
    public var lookat = SIMD3<Double>(0, 0, 0)     // the point looked at
    public var vup = SIMD3<Double>(0, 1, 0)        // up; need not be perpendicular to the view
    public var vfov = 20.0                         // vertical field of view, degrees
    public var aperture = 0.1                      // lens diameter, scene units; 0 is a pinhole
    public var focusDist = 10.0                    // distance from the lens to the sharp plane, scene units

    public init() {}

    /// The book cover's camera, used by every built-in scene (SwiftRTOW's choice).
    public static let cover = RTCamera()

    /// The app clamps the trackball's latitude short of the poles.
    public static let latitudeLimit = 89.999
    /// The app's pinch range for one viewer-distance gesture.
    public static let distanceRange = 0.314...2.718
    /// The app's rotate-gesture range for roll.
    public static let rollLimit = 63.0

    /// Moves the viewer around the look-at point: `longitude` degrees about `vup` (right-handed:
    /// positive is counter-clockwise seen from above), then `latitude` degrees up, the result
    /// clamped to +-89.999 degrees of latitude. The distance to the look-at point is kept.
    public mutating func orbit(longitude: Double, latitude: Double) {
        lookfrom = lookat + Self.rotate(lookfrom - lookat, pole: vup, longitude: longitude, latitude: latitude)
    }

    /// Moves the viewer towards (factor < 1) or away from the look-at point:
    /// eye = lookat + factor * (eye - lookat), factor clamped to the app's 0.314...2.718.
    public mutating func scaleDistance(_ factor: Double) {
        let f = min(max(factor, Self.distanceRange.lowerBound), Self.distanceRange.upperBound)
        lookfrom = lookat + (lookfrom - lookat) * f
    }

    /// Turns the camera on the spot: `yaw` degrees about `vup` (positive turns left), then
    /// `pitch` degrees up (clamped to +-89.999 degrees of elevation). The eye stays; the look-at
    /// point moves, keeping its distance.
    public mutating func turn(yaw: Double, pitch: Double) {
        lookat = lookfrom + Self.rotate(lookat - lookfrom, pole: vup, longitude: yaw, latitude: pitch)
    }

    /// Rolls the camera about its viewing direction by `degrees` (clamped to the app's +-63):
    /// positive tilts the camera's top to the right, so the picture turns counter-clockwise.
    public mutating func roll(_ degrees: Double) {
        let d = min(max(degrees, -Self.rollLimit), Self.rollLimit)
        vup = Self.rotate(vup, axis: Self.unit(lookat - lookfrom), degrees: d)
    }

    /// Checks the camera; one line naming the bad control.
    public func validate() throws(GlintError) {
        for (name, v) in [("lookfrom", lookfrom), ("lookat", lookat), ("vup", vup)] {
            guard v.x.isFinite, v.y.isFinite, v.z.isFinite, Self.length(v) < 1e18 else {
                throw GlintError("camera \(name) must be 3 finite numbers")
            }
        }
        let view = lookfrom - lookat
        guard Self.length(view) > 1e-9 else { throw GlintError("camera lookfrom and lookat are the same point") }
        guard Self.length(vup) > 1e-12 else { throw GlintError("camera vup must not be (0, 0, 0)") }
        let side = Self.cross(vup, view)
        guard Self.length(side) > 1e-9 * Self.length(vup) * Self.length(view) else {
            throw GlintError("camera vup is parallel to the viewing direction: choose another vup")
        }
        guard vfov.isFinite, vfov > 0, vfov < 180 else { throw GlintError("camera vfov must be between 0 and 180 degrees (got \(vfov))") }
        guard aperture.isFinite, aperture >= 0, aperture < 1e9 else { throw GlintError("camera aperture must be a number >= 0 (got \(aperture))") }
        guard focusDist.isFinite, focusDist > 0, focusDist < 1e18 else {
            throw GlintError("camera focus distance must be a positive number (got \(focusDist))")
        }
    }

    /// The book's camera frame for an image of `aspect` = width / height, in Double.
    struct Frame {
        var origin, corner, horizontal, vertical, u, v: SIMD3<Double>
        var lensRadius: Double
    }

    func frame(aspect: Double) -> Frame {
        let theta = vfov * Double.pi / 180
        let h = tan(theta / 2)
        let viewportHeight = 2 * h
        let viewportWidth = aspect * viewportHeight
        let w = Self.unit(lookfrom - lookat)
        let u = Self.unit(Self.cross(vup, w))
        let v = Self.cross(w, u)
        let horizontal = u * (focusDist * viewportWidth)
        let vertical = v * (focusDist * viewportHeight)
        let corner = lookfrom - horizontal / 2 - vertical / 2 - w * focusDist
        return Frame(origin: lookfrom, corner: corner, horizontal: horizontal, vertical: vertical, u: u, v: v,
                     lensRadius: aperture / 2)
    }

    // MARK: Vector helpers (Double, host side only)

    static func dot(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double { (a * b).sum() }
    static func length(_ a: SIMD3<Double>) -> Double { dot(a, a).squareRoot() }
    static func unit(_ a: SIMD3<Double>) -> SIMD3<Double> { a / length(a) }
    static func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    }

    /// Rodrigues' rotation of `v` about the unit `axis`.
    static func rotate(_ v: SIMD3<Double>, axis k: SIMD3<Double>, degrees: Double) -> SIMD3<Double> {
        let a = degrees * Double.pi / 180
        let c = cos(a), s = sin(a)
        return v * c + cross(k, v) * s + k * (dot(k, v) * (1 - c))
    }

    /// `v` turned `longitude` degrees about `pole`, then its elevation above the pole's equator
    /// raised by `latitude` degrees and clamped to +-latitudeLimit. Keeps the length.
    static func rotate(_ v: SIMD3<Double>, pole: SIMD3<Double>, longitude: Double, latitude: Double) -> SIMD3<Double> {
        let k = unit(pole)
        let r = length(v)
        let turned = rotate(v, axis: k, degrees: longitude)
        let along = dot(turned, k)
        var horizontal = turned - k * along
        let hl = length(horizontal)
        if hl > 1e-12 * r {
            horizontal = horizontal / hl
        } else {
            // Straight along the pole: any horizontal direction will do; take one fixed one.
            let trial = abs(k.x) < 0.9 ? SIMD3<Double>(1, 0, 0) : SIMD3<Double>(0, 0, 1)
            horizontal = unit(trial - k * dot(trial, k))
        }
        let elevation = atan2(along, hl) * 180 / Double.pi
        let target = min(max(elevation + latitude, -latitudeLimit), latitudeLimit) * Double.pi / 180
        return (horizontal * cos(target) + k * sin(target)) * r
    }
}
