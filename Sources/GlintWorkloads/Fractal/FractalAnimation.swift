import GlintCore

/// The ramps of a fractal animation (`glint fractal --frames N --ramp ...`): the zoom
/// (geometric) and the centre (linear) as exact decimals of any depth, DeepRamp's, and the Julia
/// constant linear in Doubles. A frame's job is a fixed function of the first job, the ramps
/// and (k, n): frame k renders again alone, and its PNG's view record reads back to its job.
public struct FractalRamps: Sendable {
    /// Both ends positive.
    public var zoom: (from: DeepNumber, to: DeepNumber)?
    /// Both ends within ±FractalLocation.maxCoordinate (DeepRamp bounds its work by that).
    public var center: (from: DeepComplex, to: DeepComplex)?
    /// Two values each end: re, im.
    public var c: Ramp?

    public init() {}

    public var isEmpty: Bool { zoom == nil && center == nil && c == nil }

    /// The job of frame k of n (0 <= k < n): `job` with every ramp at its value for that frame
    /// and, when `automaticPrecision` and there is a ramp, the precision that frame needs
    /// (`Precision.automatic`; the frames of one animation may differ).
    public func job(_ job: FractalJob, frame k: Int, of n: Int, automaticPrecision: Bool) -> FractalJob {
        var j = job
        // DeepRamp writes text DeepNumber reads back.
        if let z = zoom { j.exactZoom = try! DeepNumber(parsing: DeepRamp.zoom(from: z.from, to: z.to, frame: k, of: n)) }
        if let c = center {
            // The frame's centre has digits to its own zoom's depth.
            func coordinate(_ from: DeepNumber, _ to: DeepNumber) -> DeepNumber {
                try! DeepNumber(parsing: DeepRamp.coordinate(from: from, to: to, frame: k, of: n, zoom: j.exactZoom))
            }
            j.exactCenter = DeepComplex(re: coordinate(c.from.re, c.to.re), im: coordinate(c.from.im, c.to.im))
        }
        if let c {
            let v = c.value(frame: k, of: n)
            (j.cRe, j.cIm) = (v[0], v[1])
        }
        if automaticPrecision && !isEmpty { j.precision = .automatic(for: j) }
        return j
    }
}

extension FractalRamps: PixelIdentifiable {
    /// Each ramp's ends, as typed (the frames' view records follow from them).
    public func writeIdentity(into identity: inout PixelIdentity) {
        identity.add("zoom", fields: zoom.map { "\($0.from):\($0.to)" } ?? "-")
        identity.add("center", fields: center.map { "\($0.from):\($0.to)" } ?? "-")
        identity.add("c", c)
    }
}
