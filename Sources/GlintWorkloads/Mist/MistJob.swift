import GlintCore

/// A finger stroke that wipes the mist: it touches `points[0]` at frame `start`, and at each later
/// frame moves on to the next point, clearing everything within `radius` of its path.
public struct MistWipe: Sendable, Equatable {
    public var start: Int
    /// Positions as fractions of the image width (x) and height (y), 0...1.
    public var points: [SIMD2<Double>]
    /// As a fraction of the image width (the seed's touch radius is 0.05).
    public var radius: Double

    public init(start: Int, points: [SIMD2<Double>], radius: Double = 0.05) {
        self.start = start
        self.points = points
        self.radius = radius
    }
}

/// One misty-window sequence, fully described. Frames are a pure function of this value and the camera frames.
public struct MistJob: Sendable {
    public var frames = 60
    /// Frames per second: motion and re-fogging per frame scale by 60/fps (the seed runs at 60).
    public var fps = 60.0
    /// Blur of the camera image, in pixels.
    public var sigma = 40.0
    public var method = BlurMethod.auto
    public var drops = 50
    /// Gravity in image coordinates (y down); its direction matters, not its length.
    public var gravity = SIMD2<Double>(0, 1)
    /// Per-frame gravity (frame i uses entry min(i, count-1)); overrides `gravity` when set.
    public var gravityPerFrame: [SIMD2<Double>]? = nil
    public var wipes: [MistWipe] = []
    public var seed: UInt64 = 0
    /// The seed's drops exactly: one size, no merging, no trails, no rim shading.
    public var classic = false
    /// Start misted over: every blur weight at 1, as once the fog has built up (100 frames at
    /// 60 fps); by default the window starts clear and mists over.
    public var fogged = false

    public init() {}

    public static let maxFrames = 1_000_000
    public static let maxDrops = 10_000
    /// Frames per second accepted (a lower rate would move the rain by thousands of widths a frame).
    public static let fpsRange = 0.001...1000.0

    public func validate() throws(GlintError) {
        guard frames >= 1 && frames <= Self.maxFrames else {
            throw GlintError(field: "frames", "must be between 1 and \(Self.maxFrames) (got \(frames))")
        }
        guard fps.isFinite, Self.fpsRange.contains(fps) else {
            throw GlintError(field: "fps", "must be between \(Format.short(Self.fpsRange.lowerBound)) and \(Format.short(Self.fpsRange.upperBound)), got \(fps)")
        }
        guard drops >= 0 && drops <= Self.maxDrops else {
            throw GlintError(field: "drops", "must be between 0 and \(Self.maxDrops) (got \(drops))")
        }
        try BlurJob(sigma: sigma, method: method).validate()
        for g in gravityPerFrame ?? [gravity] where !(g.x.isFinite && g.y.isFinite) {
            throw GlintError(field: "gravity", "must be finite")
        }
    }

    public func gravity(at frame: Int) -> SIMD2<Double> {
        guard let list = gravityPerFrame, !list.isEmpty else { return gravity }
        return list[min(frame, list.count - 1)]
    }

    /// Reads the wipes file: a JSON array of strokes, each
    /// `{"start": FRAME, "radius": R, "points": [[x, y], ...]}` (radius optional, default 0.05).
    public static func parseWipes(_ text: String, name: String) throws(GlintError) -> [MistWipe] {
        func fail(_ why: String) -> GlintError { GlintError("\(name): \(why)") }
        let doc: JSON
        do { doc = try JSON.parse(text) } catch { throw fail("not valid JSON (\(error.message))") }
        guard let strokes = doc.arrayValue else { throw fail("expected a JSON array of strokes, e.g. [{\"start\": 0, \"points\": [[0.2, 0.5], [0.8, 0.5]]}]") }
        var wipes: [MistWipe] = []
        for (i, s) in strokes.enumerated() {
            guard case .object = s else { throw fail("stroke \(i) is not an object") }
            guard let start = s["start"]?.doubleValue, start >= 0, start == start.rounded(), start < Double(maxFrames) else {
                throw fail("stroke \(i): \"start\" must be a whole frame number >= 0")
            }
            var radius = 0.05
            if let r = s["radius"] {
                guard let v = r.doubleValue, v > 0, v <= 1 else { throw fail("stroke \(i): \"radius\" must be a number in (0, 1]") }
                radius = v
            }
            guard let pts = s["points"]?.arrayValue, !pts.isEmpty else {
                throw fail("stroke \(i): \"points\" must be a non-empty array of [x, y]")
            }
            var points: [SIMD2<Double>] = []
            for (k, p) in pts.enumerated() {
                guard let xy = p.arrayValue, xy.count == 2, let x = xy[0].doubleValue, let y = xy[1].doubleValue,
                      x.isFinite, y.isFinite, abs(x) <= 10, abs(y) <= 10 else {
                    throw fail("stroke \(i), point \(k): must be [x, y], fractions of the width and height")
                }
                points.append(SIMD2(x, y))
            }
            wipes.append(MistWipe(start: Int(start), points: points, radius: radius))
        }
        return wipes
    }

    /// Reads a gravity file: one `X,Y` per line (frame 0 first; the last line holds after it);
    /// blank lines and lines starting with # are skipped.
    public static func parseGravity(_ text: String, name: String) throws(GlintError) -> [SIMD2<Double>] {
        var list: [SIMD2<Double>] = []
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = Substring(raw.filter { $0 != "\r" }).trimmingCharacters()
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(separator: ",")
            guard parts.count == 2, let x = Double(parts[0].trimmingCharacters()), let y = Double(parts[1].trimmingCharacters()),
                  x.isFinite, y.isFinite else {
                throw GlintError("\(name), line \(n + 1): expected X,Y (e.g. 0,1), got '\(line)'")
            }
            list.append(SIMD2(x, y))
        }
        guard !list.isEmpty else { throw GlintError("\(name): no X,Y lines") }
        return list
    }
}


extension MistJob: PixelIdentifiable {
    /// Every field; the blur by the method `auto` stands for at this sigma.
    public func writeIdentity(into identity: inout PixelIdentity) {
        identity.add("mist", fields: frames, fps, drops, seed, classic, gravity, gravityPerFrame?.description ?? "-")
        identity.add("blur", BlurJob(sigma: sigma, method: method))
        for w in wipes { identity.add("wipe", fields: w.start, w.radius, w.points) }
    }
}
