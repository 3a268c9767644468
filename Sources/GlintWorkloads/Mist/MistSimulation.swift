import CGlintTypes
import GlintCore

/// The rain on the window: drops that slide under gravity, merge and leave trails of droplets,
/// and the wipes of a finger. It runs on the host for every backend (a few hundred numbers a
/// frame) and hands the compose pass a list of capsules. Every random number comes from the
/// counter-based generator keyed by (drop, frame, purpose, dimension, seed): a frame's rain
/// depends only on the job, never on the backend or on timing.
///
/// Coordinates follow the seed: normalised by the image width, x in [0, 1], y in [0, H/W], y down.
public struct MistSimulation: Sendable {
    public struct Drop: Sendable, Equatable {
        public var x: Double, y: Double
        public var radius: Double
        /// Rim darkening (0: none).
        public var shade: Double
    }
    public struct Droplet: Sendable, Equatable {
        public var x: Double, y: Double
        public var radius: Double
        public var born: Int
    }

    /// The sequence; a live window (`glint serve`) adds wipes and changes gravity as it goes.
    public private(set) var job: MistJob
    public let aspect: Double
    public private(set) var drops: [Drop] = []
    public private(set) var droplets: [Droplet] = []

    /// The seed's drop radius and motion per frame (at 60 fps).
    public static let baseRadius = 0.01
    public static let fallStep = 0.004
    public static let sideStep = 0.001
    /// Beyond the seed: the largest a merged drop grows, how long a droplet stays.
    public static let maxRadius = 0.03
    public static let dropletLife = 300

    enum Purpose: UInt32 { case spawn = 0, move = 1, respawn = 2, trail = 3 }

    public init(job: MistJob, width: Int, height: Int) {
        self.job = job
        aspect = Double(height) / Double(width)
        for i in 0..<job.drops {
            var d = Drop(x: 0, y: 0, radius: Self.baseRadius, shade: 0)
            style(&d, i, frame: -1, .spawn)
            d.x = rng(i, -1, .spawn, 2)
            d.y = rng(i, -1, .spawn, 3) * aspect
            drops.append(d)
        }
    }

    func rng(_ drop: Int, _ frame: Int, _ purpose: Purpose, _ dim: UInt32) -> Double {
        Double(CounterRNG.uniform(x: UInt32(truncatingIfNeeded: drop), y: UInt32(truncatingIfNeeded: frame),
                                  sample: purpose.rawValue, dim: dim, seed: job.seed))
    }

    /// Size and look of a new drop (all the same in classic mode).
    func style(_ d: inout Drop, _ i: Int, frame: Int, _ purpose: Purpose) {
        if job.classic { d.radius = Self.baseRadius; d.shade = 0; return }
        let u = rng(i, frame, purpose, 0)
        d.radius = Self.baseRadius * (0.5 + 1.1 * u * u)
        d.shade = 0.12 + 0.25 * rng(i, frame, purpose, 1)
    }

    /// Puts drop i back at the edge it falls away from.
    mutating func respawn(_ i: Int, frame: Int, gravity g: SIMD2<Double>) {
        var d = drops[i]
        style(&d, i, frame: frame, .respawn)
        let u = rng(i, frame, .respawn, 2)
        if abs(g.y) >= abs(g.x) {
            d.x = u
            d.y = g.y >= 0 ? -d.radius : aspect + d.radius
        } else {
            d.y = u * aspect
            d.x = g.x >= 0 ? -d.radius : 1 + d.radius
        }
        drops[i] = d
    }

    /// A finger stroke that arrives while the window runs: it applies from its `start` frame on,
    /// as if the job had listed it. Strokes that have ended are dropped (a live window gets
    /// thousands), and at most 256 stay (the oldest go first).
    public mutating func addWipe(_ wipe: MistWipe) {
        job.wipes.removeAll { $0.start + $0.points.count < wipe.start }
        if job.wipes.count >= 256 { job.wipes.removeFirst(job.wipes.count - 255) }
        job.wipes.append(wipe)
    }

    /// Gravity from now on (the per-frame list, if any, is dropped).
    public mutating func setGravity(_ g: SIMD2<Double>) {
        job.gravityPerFrame = nil
        job.gravity = g
    }

    /// The wipe segments touching the window at `frame`: (from, to, radius) in window coordinates.
    public func wipeSegments(frame: Int) -> [(SIMD2<Double>, SIMD2<Double>, Double)] {
        var out: [(SIMD2<Double>, SIMD2<Double>, Double)] = []
        for w in job.wipes {
            let k = frame - w.start
            guard k >= 0 && k < w.points.count else { continue }
            let a = w.points[max(k - 1, 0)], b = w.points[k]
            out.append((SIMD2(a.x, a.y * aspect), SIMD2(b.x, b.y * aspect), w.radius))
        }
        return out
    }

    static func distance(_ p: SIMD2<Double>, _ a: SIMD2<Double>, _ b: SIMD2<Double>) -> Double {
        let e = b - a, d = p - a
        let ee = (e * e).sum()
        let t = ee > 0 ? min(max((d * e).sum() / ee, 0), 1) : 0
        let q = d - t * e
        return (q * q).sum().squareRoot()
    }

    /// Moves the rain on to `frame` (call with 0, 1, 2, ... in order) and returns the shapes that
    /// clear the mist in that frame: drops, droplets, then wipe segments.
    public mutating func advance(frame f: Int) -> [GlintMistShape] {
        let timeScale = 60 / job.fps
        var g = job.gravity(at: f)
        let len = (g * g).sum().squareRoot()
        g = len > 1e-12 ? g / len : .zero
        let wipes = wipeSegments(frame: f)
        for i in drops.indices {
            // Drops a finger touches are gone until they respawn, which is at once.
            let p = SIMD2(drops[i].x, drops[i].y)
            if wipes.contains(where: { Self.distance(p, $0.0, $0.1) < $0.2 }) {
                respawn(i, frame: f, gravity: g)
                continue
            }
            let speed = job.classic ? 1 : min(max(drops[i].radius / Self.baseRadius, 0.4), 1.6)
            let along = rng(i, f, .move, 0) * Self.fallStep * speed * timeScale
            let side = (rng(i, f, .move, 1) * 2 - 1) * Self.sideStep * timeScale
            let old = drops[i]
            drops[i].x += g.x * along - g.y * side
            drops[i].y += g.y * along + g.x * side
            // Beyond the seed: a moving drop now and then leaves a droplet behind and loses its water.
            if !job.classic && g != .zero && old.radius > 0.006 && rng(i, f, .trail, 0) < 0.12 * timeScale {
                let r = old.radius * (0.25 + 0.2 * rng(i, f, .trail, 1))
                droplets.append(Droplet(x: old.x + (rng(i, f, .trail, 2) - 0.5) * old.radius,
                                        y: old.y + (rng(i, f, .trail, 3) - 0.5) * old.radius, radius: r, born: f))
                drops[i].radius = (old.radius * old.radius - r * r).squareRoot()
            }
            let d = drops[i]
            if d.x < -d.radius || d.x > 1 + d.radius || d.y < -d.radius || d.y > aspect + d.radius {
                respawn(i, frame: f, gravity: g)
            }
        }
        if !job.classic {
            // Drops that touch merge: the larger takes the water (area) of both; the other respawns.
            for i in drops.indices {
                for j in drops.indices where j > i {
                    let a = drops[i], b = drops[j]
                    let dx = a.x - b.x, dy = a.y - b.y
                    guard (dx * dx + dy * dy).squareRoot() < (a.radius + b.radius) * 0.8 else { continue }
                    let (keep, lose) = a.radius >= b.radius ? (i, j) : (j, i)
                    let ak = drops[keep].radius * drops[keep].radius, al = drops[lose].radius * drops[lose].radius
                    drops[keep].x = (drops[keep].x * ak + drops[lose].x * al) / (ak + al)
                    drops[keep].y = (drops[keep].y * ak + drops[lose].y * al) / (ak + al)
                    drops[keep].radius = min(Self.maxRadius, (ak + al).squareRoot())
                    respawn(lose, frame: f, gravity: g)
                }
            }
            // Drops gather the droplets they run into; old droplets dry up; the oldest go first past a cap.
            droplets.removeAll { f - $0.born > Self.dropletLife }
            for i in drops.indices {
                droplets.removeAll { dl in
                    let dx = dl.x - drops[i].x, dy = dl.y - drops[i].y
                    guard (dx * dx + dy * dy).squareRoot() < drops[i].radius + dl.radius, dl.born < f else { return false }
                    drops[i].radius = min(Self.maxRadius, (drops[i].radius * drops[i].radius + dl.radius * dl.radius).squareRoot())
                    return true
                }
            }
            if droplets.count > 4 * max(job.drops, 1) { droplets.removeFirst(droplets.count - 4 * max(job.drops, 1)) }
        }

        var shapes: [GlintMistShape] = []
        shapes.reserveCapacity(drops.count + droplets.count + wipes.count)
        for d in drops {
            shapes.append(GlintMistShape(ax: Float(d.x), ay: Float(d.y), bx: Float(d.x), by: Float(d.y),
                                         radius: Float(d.radius), refract: 1, shade: Float(d.shade), pad0: 0))
        }
        for d in droplets {
            shapes.append(GlintMistShape(ax: Float(d.x), ay: Float(d.y), bx: Float(d.x), by: Float(d.y),
                                         radius: Float(d.radius), refract: 1, shade: 0.1, pad0: 0))
        }
        for (a, b, r) in wipes {
            shapes.append(GlintMistShape(ax: Float(a.x), ay: Float(a.y), bx: Float(b.x), by: Float(b.y),
                                         radius: Float(r), refract: 0, shade: 0, pad0: 0))
        }
        return shapes
    }
}

/// Shapes sorted into square tiles of the image: tile t's shapes are
/// `list[start[t] ..< start[t + 1]]`, in shape order (which the compose pass relies on).
public struct MistTiles: Sendable {
    public static let size = 32
    public var start: [Int32]
    public var list: [Int32]
    /// Per shape, the pixels its tiles were chosen by: (x0, x1, y0, y1), inclusive, one pixel of
    /// margin on each side. No pixel outside this box is within the shape's radius, so the Swift
    /// path also passes over shapes whose box misses a row, or a group of pixels of it.
    public var bounds: [SIMD4<Int32>]
    public let tilesX: Int, tilesY: Int

    public init(shapes: [GlintMistShape], width: Int, height: Int) {
        tilesX = (width + Self.size - 1) / Self.size
        tilesY = (height + Self.size - 1) / Self.size
        var ranges: [(Int, Int, Int, Int)] = []
        var counts = [Int32](repeating: 0, count: tilesX * tilesY + 1)
        var boxes: [SIMD4<Int32>] = []
        boxes.reserveCapacity(shapes.count)
        let w = Double(width)
        for s in shapes {
            let r = Double(s.radius)
            // Pixel x sits at (x + 0.5) / W: a pixel whose centre is within r of the segment lies in this box.
            let x0 = Int(((Double(min(s.ax, s.bx)) - r) * w - 0.5).rounded(.down)) - 1
            let x1 = Int(((Double(max(s.ax, s.bx)) + r) * w - 0.5).rounded(.up)) + 1
            let y0 = Int(((Double(min(s.ay, s.by)) - r) * w - 0.5).rounded(.down)) - 1
            let y1 = Int(((Double(max(s.ay, s.by)) + r) * w - 0.5).rounded(.up)) + 1
            // Clamped to the image (and one past it), which keeps them in Int32.
            boxes.append(SIMD4(Int32(min(max(x0, -1), width)), Int32(min(max(x1, -1), width)),
                               Int32(min(max(y0, -1), height)), Int32(min(max(y1, -1), height))))
            let tx0 = max(0, x0 / Self.size), tx1 = min(tilesX - 1, max(x1, -1) / Self.size)
            let ty0 = max(0, y0 / Self.size), ty1 = min(tilesY - 1, max(y1, -1) / Self.size)
            if x1 < 0 || y1 < 0 || tx0 > tx1 || ty0 > ty1 { ranges.append((1, 0, 1, 0)); continue }
            ranges.append((tx0, tx1, ty0, ty1))
            for ty in ty0...ty1 { for tx in tx0...tx1 { counts[ty * tilesX + tx + 1] += 1 } }
        }
        for t in 0 ..< tilesX * tilesY { counts[t + 1] += counts[t] }
        start = counts
        bounds = boxes
        var fill = counts
        list = [Int32](repeating: 0, count: Int(counts[tilesX * tilesY]))
        for (k, (tx0, tx1, ty0, ty1)) in ranges.enumerated() where tx0 <= tx1 {
            for ty in ty0...ty1 {
                for tx in tx0...tx1 {
                    let t = ty * tilesX + tx
                    list[Int(fill[t])] = Int32(k)
                    fill[t] += 1
                }
            }
        }
    }
}
