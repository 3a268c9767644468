import GlintCore

/// Reference orbits already computed in this process, so that the renders of views at one centre
/// (the frames of a zoom animation, a render's extra pass for its counts) compute the centre's
/// orbit once.
///
/// An orbit depends on the formula, the centre's value (and, for formulas that have one, c's),
/// the MPFR precision and the bailout; the iteration limit only sets how long it is, and the
/// zoom only the pixel spacing it carries. `Key` holds the former, the decimals normalised
/// (DeepNumber.mpfrText: `-0.5`, `-.50` and `-5e-1` are one key). A cached orbit serves a
/// request when it is long enough: computed for at least as many iterations, or escaped
/// (`ReferenceOrbit.prefix`, which also sets the request's pixel spacing); the result is the
/// orbit that computing it afresh would give, to the bit. A request it cannot serve computes
/// the orbit and replaces the entry.
///
/// Bounded by the orbits' total size (16 bytes a point, `byteLimit`): the least recently used
/// are dropped first, and an orbit larger than the whole budget is not kept. Thread-safe: the
/// table is behind a lock and orbits are computed outside it (two tasks asking at once for one
/// missing orbit may both compute it; the results are equal).
public final class OrbitCache: Sendable {
    /// What an orbit is a function of (besides its length).
    public struct Key: Hashable, Sendable {
        /// FractalFormula.name (Mandelbrot past power 2: `mandelbrot^N`).
        public private(set) var formula: String
        /// The centre as DeepNumber.mpfrText.
        public let centerRe: String
        public let centerIm: String
        /// The formula's constant (julia's c) as DeepNumber.mpfrText; nil where there is none.
        public let cRe: String?
        public let cIm: String?
        public let precisionBits: Int
        /// The escape radius's bit pattern.
        public let bailoutBits: UInt64

        public init(formula: FractalFormula, centerRe: DeepNumber, centerIm: DeepNumber,
                    c: (re: DeepNumber, im: DeepNumber)? = nil, precisionBits: Int, bailout: Double) {
            self.formula = formula.name
            self.centerRe = centerRe.mpfrText
            self.centerIm = centerIm.mpfrText
            cRe = c?.re.mpfrText
            cIm = c?.im.mpfrText
            self.precisionBits = precisionBits
            bailoutBits = bailout.bitPattern
        }

        /// The key of a Mandelbrot view's orbit (its precision from the centre and the zoom).
        public static func mandelbrot(centerRe: DeepNumber, centerIm: DeepNumber, zoom: DeepNumber, bailout: Double,
                                      power: Int = 2) -> Key {
            var key = Key(formula: .mandelbrot, centerRe: centerRe, centerIm: centerIm,
                          precisionBits: ReferenceOrbit.precisionBits(zoom: zoom, centerRe: centerRe, centerIm: centerIm),
                          bailout: bailout)
            if power != 2 { key.formula += "^\(power)" }
            return key
        }
    }

    private struct Entry {
        var orbit: ReferenceOrbit
        var lastUse: UInt64
        /// Times this key's orbit was computed (carried over when a longer one replaces it).
        var computations: Int
        var bytes: Int { Self.bytes(orbit) }
        static func bytes(_ orbit: ReferenceOrbit) -> Int { 16 * orbit.count }
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
        var computed = 0
        var hits = 0
    }

    /// The process's cache, which FractalRenderer uses: at most 256 MiB of orbits.
    public static let shared = OrbitCache(byteLimit: 256 << 20)

    /// The most bytes of orbit points kept.
    public let byteLimit: Int
    private let state = Locked(State())

    public init(byteLimit: Int) {
        self.byteLimit = byteLimit
    }

    /// Orbits computed so far (requests the cache could not serve).
    public var computed: Int { state.withLock { $0.computed } }
    /// Requests served from the cache.
    public var hits: Int { state.withLock { $0.hits } }
    /// Orbits held.
    public var count: Int { state.withLock { $0.entries.count } }
    /// Bytes of orbit points held.
    public var bytes: Int { state.withLock { $0.bytes } }

    /// How many times the orbit of `key` was computed while it has been held (0 if it is not held).
    public func computations(for key: Key) -> Int {
        state.withLock { $0.entries[key]?.computations ?? 0 }
    }

    /// Drops the orbit of `key`, if held: the next request for it computes it (a benchmark that
    /// times the whole render).
    public func remove(_ key: Key) {
        state.withLock { s in
            if let entry = s.entries.removeValue(forKey: key) { s.bytes -= entry.bytes }
        }
    }

    /// Drops every orbit (the counters stay).
    public func removeAll() {
        state.withLock { s in
            s.entries.removeAll()
            s.bytes = 0
        }
    }

    /// The orbit of `key` for `maxIterations` with `pixelSpacing`: from the cache when an orbit
    /// held there covers it, else `compute()`, which must return exactly that orbit (it is kept
    /// for later requests).
    public func orbit(for key: Key, maxIterations: Int, spacing: ReferenceOrbit.Spacing,
                      compute: () throws(GlintError) -> ReferenceOrbit) throws(GlintError) -> ReferenceOrbit {
        let cached: ReferenceOrbit? = state.withLock { s in
            guard var entry = s.entries[key],
                  let orbit = entry.orbit.prefix(maxIterations: maxIterations, spacing: spacing) else { return nil }
            s.clock += 1
            entry.lastUse = s.clock
            s.entries[key] = entry
            s.hits += 1
            return orbit
        }
        if let cached { return cached }

        let orbit = try compute()
        state.withLock { s in
            s.computed += 1
            s.clock += 1
            let previous = s.entries[key]
            if let previous {
                s.entries[key]?.computations += 1
                // Another task may have stored one that serves more meanwhile: keep the longer.
                let kept = previous.orbit
                if kept.escaped || kept.maxIterations >= orbit.maxIterations {
                    s.entries[key]?.lastUse = s.clock
                    return
                }
                s.bytes -= previous.bytes
                s.entries[key] = nil
            }
            let size = Entry.bytes(orbit)
            guard size <= byteLimit else { return }
            while s.bytes + size > byteLimit, let oldest = s.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                s.bytes -= oldest.value.bytes
                s.entries[oldest.key] = nil
            }
            s.entries[key] = Entry(orbit: orbit, lastUse: s.clock, computations: (previous?.computations ?? 0) + 1)
            s.bytes += size
        }
        return orbit
    }

    /// The Mandelbrot reference orbit of a view (ReferenceOrbit's arguments and errors), from
    /// the cache when it holds one that covers it.
    public func orbit(centerRe: DeepNumber, centerIm: DeepNumber, zoom: DeepNumber, height: Int, bailout: Double,
                      maxIterations: Int, power: Int = 2) throws(GlintError) -> ReferenceOrbit {
        try ReferenceOrbit.check(zoom: zoom, height: height, bailout: bailout, maxIterations: maxIterations)
        let key = Key.mandelbrot(centerRe: centerRe, centerIm: centerIm, zoom: zoom, bailout: bailout, power: power)
        let spacing = ReferenceOrbit.Spacing(zoom: zoom, height: height, precision: key.precisionBits)
        return try orbit(for: key, maxIterations: maxIterations, spacing: spacing) { () throws(GlintError) in
            try ReferenceOrbit(centerRe: centerRe, centerIm: centerIm, zoom: zoom, height: height, bailout: bailout,
                               maxIterations: maxIterations, power: power)
        }
    }
}
