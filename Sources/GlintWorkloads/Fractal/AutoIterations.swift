import GlintCore

/// `--iterations auto`: the iteration limit a view needs, found by rendering its escape counts
/// on small probe grids of the same view (one sample a pixel, the job's formula, precision and
/// bailout).
///
/// The rule, in two stages:
/// 1. A scout grid `scoutSide` samples across is iterated to N = `start`, 2N, 4N, ... until some
///    of its samples escape: a deep view may need thousands of iterations before any does.
/// 2. From that N, the probe grid (`probeSide` across) is iterated to N, 2N, 4N, ...; after each
///    doubling the share of its samples still iterating (count = N, never escaped) is compared
///    with the share before. The first doubling that lets fewer than `threshold` of the samples
///    escape, with some escaped, ends the search, and its N (the doubled one) is the answer: the
///    view no longer changes when given more iterations. A grid whose samples have all escaped
///    ends it at once, with that N.
///
/// A view still changing at `cap`, or with nothing escaped there, gets the cap. Escape counts are
/// the same on every backend, so the choice is too.
public enum AutoIterations {
    public static let start = 256
    public static let cap = 1 << 20
    /// One sample in a thousand.
    public static let threshold = 0.001
    public static let probeSide = 256
    public static let scoutSide = 32

    /// One probe: its limit and the share of samples still iterating there.
    public struct Step: Sendable, Equatable {
        public let iterations: Int
        public let stillIterating: Double
    }

    public struct Choice: Sendable {
        public let iterations: Int
        public let steps: [Step]
        /// The view was still changing at `cap`.
        public let capped: Bool

        /// `2048 (still iterating at 256: 31.2%, 512: 12%, ...)`.
        public var summary: String {
            let shares = steps.map { "\($0.iterations): \(Format.fixed($0.stillIterating * 100, 2))%" }.joined(separator: ", ")
            return "\(iterations)\(capped ? " (the cap)" : "") (still iterating at \(shares))"
        }
    }

    /// `job`'s view at most `side` samples across (the probe grid by default), one sample a pixel.
    public static func probe(_ job: FractalJob, side: Int = probeSide) -> FractalJob {
        var p = job
        let scale = min(1, Double(side) / Double(max(job.width, job.height)))
        p.width = max(1, Int((Double(job.width) * scale).rounded()))
        p.height = max(1, Int((Double(job.height) * scale).rounded()))
        p.supersampling = 1
        // An exp-map strip is probed as a square view at its zoom (its rows past that may want more).
        if job.expMap != nil {
            p.expMap = nil
            (p.width, p.height) = (side, side)
        }
        return p
    }

    /// The limit `job`'s view needs, probed on `backend`.
    public static func choose(for job: FractalJob, on backend: Backend) async throws -> Choice {
        var steps: [Step] = []
        /// The share of `grid`'s samples still iterating after n iterations; `record` keeps it in `steps`.
        func stillIterating(_ grid: FractalJob, _ n: Int, record: Bool = true) async throws -> Double {
            var limited = grid
            limited.maxIterations = n
            let counts = try await FractalRenderer.render(limited, on: backend, outputs: .init(counts: true)).counts ?? []
            let still = Double(counts.reduce(0) { $0 + ($1 >= UInt32(n) ? 1 : 0) }) / Double(max(1, counts.count))
            if record { steps.append(Step(iterations: n, stillIterating: still)) }
            return still
        }
        var n = start
        let scout = probe(job, side: scoutSide), grid = probe(job)
        while n < cap, try await stillIterating(scout, n, record: false) >= 1 { n *= 2 }
        // Nothing escaped below the cap: the cap it is, without the grid's costliest render.
        if n >= cap { return Choice(iterations: cap, steps: steps, capped: true) }
        var before = try await stillIterating(grid, n)
        // Every sample escaped: more iterations change nothing.
        if before == 0 { return Choice(iterations: n, steps: steps, capped: false) }
        while n < cap {
            let next = min(2 * n, cap)
            let after = try await stillIterating(grid, next)
            if after == 0 || (before - after < threshold && after < 1) { return Choice(iterations: next, steps: steps, capped: false) }
            (n, before) = (next, after)
        }
        return Choice(iterations: n, steps: steps, capped: true)
    }
}
