import GlintCore

/// The seed's linear oscillator: starts at 0.5 going up; each tick adds or subtracts 0.01 and
/// turns round once it reaches 1 or 0. Kept in double and stepped one tick at a time, exactly as
/// the seed accumulates it (so 0.01's rounding drifts as it does there).
public struct PulseOscillator: Sendable, Equatable {
    public private(set) var location = 0.5
    public private(set) var increasing = true
    /// Ticks per second (the seed's draw loop).
    public static let ticksPerSecond = 60.0

    public init() {}

    public mutating func tick() {
        if increasing {
            location += 0.01
            if location >= 1.0 { increasing = false }
        } else {
            location -= 0.01
            if location <= 0.0 { increasing = true }
        }
    }

    /// The oscillator after `ticks` ticks from the start.
    public static func after(ticks: Int) -> PulseOscillator {
        var o = PulseOscillator()
        // Stepped tick by tick, as the seed accumulates it: the double's rounding drift is part of
        // the sequence, so no shortcut by its period. `PulseJob.validate` bounds a job's ticks
        // (`PulseJob.maxTicks`, about a second of stepping).
        for _ in 0 ..< ticks { o.tick() }
        return o
    }
}

/// One pulse render or animation.
public struct PulseJob: Sendable {
    public var width = 640                 // frame pixels
    public var height = 360
    public var frames = 120                // frames in the sequence
    public var fps = 60.0                  // frames per second of the sequence
    public var hue = 0.0                   // hue in [0,1] (0 red, 1/3 green, 2/3 blue)
    public var purityCenter = 0.5          // purity at the oscillator's middle, [0,1]
    public var purityRange = 0.7           // purity swept over one oscillation, [0,1]
    public var hueRamp: (Double, Double)?  // hue from the first frame to the last, overriding `hue`

    public init() {}

    public static let maxFrames = 1_000_000
    /// Frames per second accepted: at lower rates the oscillator's ticks per frame (60 / fps) run
    /// into the billions.
    public static let fpsRange = 0.001...1000.0
    /// Oscillator ticks a sequence may span (about a second of stepping).
    public static let maxTicks = 1_000_000_000

    public func validate() throws(GlintError) {
        try ImageLimits.check(width: width, height: height)
        guard frames >= 1 && frames <= Self.maxFrames else { throw GlintError(field: "frames", "must be 1 to \(Self.maxFrames) (got \(frames))") }
        guard fps.isFinite && Self.fpsRange.contains(fps) else {
            throw GlintError(field: "fps", "must be between \(Format.short(Self.fpsRange.lowerBound)) and \(Format.short(Self.fpsRange.upperBound)), got \(fps)")
        }
        // The oscillator steps once per tick, so a long sequence at a low rate (a million frames
        // at 0.001 fps: 6e10 ticks) would run for hours before the first frame.
        let ticks = Double(frames - 1) * PulseOscillator.ticksPerSecond / fps
        guard ticks <= Double(Self.maxTicks) else {
            throw GlintError(field: "frames", "\(frames) at \(Format.short(fps)) frames per second span \(Format.short(ticks)) oscillator ticks (60 a second), over the limit of \(Self.maxTicks): use fewer frames or a higher rate")
        }
        for (name, v) in [("hue", hue), ("purityCenter", purityCenter), ("purityRange", purityRange)] {
            guard v.isFinite && v >= 0 && v <= 1 else { throw GlintError(field: name, "must be in [0, 1] (got \(v))") }
        }
    }

    /// Oscillator ticks before frame `k` is drawn: the seed ticks once per 60 Hz draw, then draws,
    /// so at 60 fps frame k follows k + 1 ticks; at other rates, the ticks due by time k / fps, plus one.
    public func ticks(frame k: Int) -> Int {
        Int((Double(k) * PulseOscillator.ticksPerSecond / fps + 1e-9).rounded(.down)) + 1
    }

    /// The seed's purity rule: a purity at or below 0.5 sets saturation, above 0.5 brightness
    /// (the other stays 0.5); then each is folded to a tent, 2x below 0.5 and 2(1 - x) above.
    public static func hsv(hue: Double, purityCenter: Double, purityRange: Double, location: Double)
        -> (h: Double, s: Double, v: Double) {
        var brightness = 0.5, saturation = 0.5
        if purityCenter <= 0.5 { saturation = purityCenter } else { brightness = purityCenter }
        if purityRange > 0 {
            let purity = (purityCenter - purityRange / 2) + purityRange * location
            if purity <= 0.5 { saturation = purity } else { brightness = purity }
        }
        func tent(_ x: Double) -> Double { x > 0.5 ? 1 - (x - 0.5) * 2 : x * 2 }
        return (hue, tent(saturation), tent(brightness))
    }

    /// Frame k's hue: `hue`, or its place on the ramp.
    public func hue(frame k: Int) -> Double {
        guard let (a, b) = hueRamp else { return hue }
        return Ramp(name: "hue", from: [a], to: [b]).value(frame: k, of: frames)[0]
    }

    /// Frame k's (h, s, v), as the kernel receives them (float).
    public func color(frame k: Int) -> SIMD3<Float> {
        color(location: PulseOscillator.after(ticks: ticks(frame: k)).location, frame: k)
    }

    func color(location: Double, frame k: Int) -> SIMD3<Float> {
        let c = Self.hsv(hue: hue(frame: k), purityCenter: purityCenter, purityRange: purityRange, location: location)
        return SIMD3(Float(c.h), Float(c.s), Float(c.v))
    }

    /// Every frame's (h, s, v), stepping the oscillator once through the sequence.
    public func colors() -> [SIMD3<Float>] {
        var o = PulseOscillator()
        var done = 0
        var out: [SIMD3<Float>] = []
        out.reserveCapacity(frames)
        for k in 0 ..< frames {
            let due = ticks(frame: k)
            while done < due { o.tick(); done += 1 }
            out.append(color(location: o.location, frame: k))
        }
        return out
    }
}

extension PulseJob: PixelIdentifiable {
    public func writeIdentity(into identity: inout PixelIdentity) {
        identity.add("pulse", fields: width, height, frames, fps, hue, purityCenter, purityRange,
                     hueRamp.map { "\($0.0):\($0.1)" } ?? "-")
    }
}
