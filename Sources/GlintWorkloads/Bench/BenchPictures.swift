import CGlintTypes
import GlintCL
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// A deterministic RGBA test picture: gradients, a sine pattern, hard-edged squares and noise
/// (edges and noise are where blur methods differ most).
public enum TestPicture {
    public static func make(width: Int, height: Int, seed: UInt64 = 1, shift: Int = 0) -> Image8 {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let xs = x + shift
                let squares = ((xs / 24) + (y / 24)) % 2 == 0
                pixels[i] = UInt8(truncatingIfNeeded: xs * 255 / max(width - 1, 1))
                let wave: Double = sin(Double(xs) / 9) * cos(Double(y) / 7)
                let s: Double = (wave * 0.5 + 0.5) * 255
                pixels[i + 1] = UInt8(max(0, min(255, s)))
                let noise = CounterRNG.philox(x: UInt32(xs), y: UInt32(y), sample: 0, dim: 0, seed: seed).x
                pixels[i + 2] = squares ? UInt8(truncatingIfNeeded: noise >> 24) : 40
            }
        }
        return Image8(width: width, height: height, pixels: pixels)
    }
}

/// What one bench case holds between its runs (inputs, per-backend state), released by
/// `BenchScope.endCase()` when the case is done: each case's memory is its own, and a run of
/// many cases holds one case's images at a time.
public enum BenchScope {
    private static let releases = Locked<[@Sendable () -> Void]>([])

    /// Registers what to release at the end of the case in progress.
    static func onEnd(_ release: @escaping @Sendable () -> Void) {
        releases.withLock { $0.append(release) }
    }

    /// Releases everything the case registered and hands freed memory back to the system, so
    /// the next case's peak resident size starts from the process's own.
    public static func endCase() {
        let pending = releases.withLock { r in defer { r.removeAll() }; return r }
        for release in pending { release() }
        OrbitCache.shared.removeAll()
        _ = glint_trim_heap()
    }
}

/// A case's input, made on first use and released with the case (`BenchScope`).
final class BenchInput<Value: Sendable>: Sendable {
    private let value = Locked<Value?>(nil)
    private let make: @Sendable () -> Value
    init(_ make: @escaping @Sendable () -> Value) { self.make = make }

    var get: Value {
        value.withLock { v in
            if let v { return v }
            let made = make()
            v = made
            BenchScope.onEnd { [self] in self.value.withLock { $0 = nil } }
            return made
        }
    }
}

/// Per-backend state that timed runs reuse (a video pipeline keeps its buffers), made on first
/// use and released with the case (`BenchScope`).
final class BenchStateCache<State: Sendable>: Sendable {
    private let states = Locked<[String: State]>([:])
    func get(_ backend: Backend, make: () throws -> State) rethrows -> State {
        let key = backend.label
        if let s = states.withLock({ $0[key] }) { return s }
        let s = try make()
        let first = states.withLock { st in defer { st[key] = s }; return st.isEmpty }
        if first { BenchScope.onEnd { [self] in self.states.withLock { $0.removeAll() } } }
        return s
    }
}
