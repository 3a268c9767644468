/// The perturbation escape loop, written once for every formula (MandelbrotDelta, JuliaDelta,
/// BurningShipDelta). Kernels/deep/escape.h is its OpenCL twin, operation for operation: both
/// are compiled without fused multiply-add and scale with exact ldexp, so escape counts are
/// identical on every backend. Change one only with the other.
///
/// A sample at z = Z[m] + dz is iterated as its delta dz against a reference orbit Z computed in
/// arbitrary precision (ReferenceOrbit, FormulaOrbit). The orbit buffer holds a main orbit from
/// the view centre and a critical orbit from 0 (for Mandelbrot one orbit is both: O[0] = 0 is
/// the critical start and O[1] = C the main start).
///
/// **Two phases.** The sample's offset is a mantissa pair d and the view's exponent E (dc =
/// d·2^E). While |dz| < 2^tinyLimit the delta is a FloatExpComplex (the tiny phase), so a 1e1000
/// view's deltas never underflow; from there on it is a pair of Doubles (the double phase, where
/// every view shallower than about 1e150 starts).
///
/// **Rebasing** (Zhuoran): when |z| < |dz| or the reference has no next point, the sample goes
/// on against the critical orbit's start with dz = z, in the double phase. One orbit pair serves
/// every sample, with no glitch detection.
///
/// **Bilinear approximation** (Mandelbrot, when a BLATable is given): where m − 1 is a multiple
/// of 2^BLATable.firstLevel the sample takes the longest valid table step, dz ← A·dz + B·dc over
/// 2^k iterations, counted in full and tested for escape at its end.
///
/// Counts follow Glint's contract (FractalCPU.escape): the number of steps with |z|² <= R²
/// before the first with |z|² > R² (or NaN), at most maxIterations; `mag` is |z|² at escape.
public enum PerturbationEscape {
    /// The orbit buffer as the loop reads it.
    struct Orbit {
        let re: UnsafePointer<Double>
        let im: UnsafePointer<Double>
        /// Where a sample starts and the main orbit's last point.
        let mainStart: Int
        let mainLast: Int
        /// Where a rebased sample goes on, and the critical orbit's last point.
        let criticalStart: Int
        let criticalLast: Int
    }

    /// The BLA table as the loop reads it.
    public struct Table {
        public var reals: UnsafePointer<Double>
        public var ints: UnsafePointer<Int32>
        public var offsets: UnsafePointer<Int32>
        public var counts: UnsafePointer<Int32>
        public var levels: Int
        /// The largest R² among the shortest stored steps (no entry is valid for a |dz|² above it).
        public var maxR2: Double
    }

    /// A sample between the phases: reference index and its orbit's end, count, and the
    /// double-phase delta.
    struct State {
        var m: Int
        var last: Int
        var count: Int
        var dr: Double
        var di: Double
        /// With the derivative (distance and slope colouring): the sample's z at m, and
        /// d = dz/dc (Julia: dz/dz0) in pixel units, with its own exponent.
        var zr = 0.0, zi = 0.0
        var d = FloatExpComplex(normalising: 0, 0, exponent: 0)
    }

    /// Whether the loop carries the derivative: a type, so that each loop is compiled apart.
    protocol DerivativeMode { static var on: Bool { get } }
    enum NoDerivative: DerivativeMode { static var on: Bool { false } }
    enum WithDerivative: DerivativeMode { static var on: Bool { true } }

    /// A sample's count, |z|² and u = z/d at escape (0 without the derivative or when it never escapes).
    typealias Outcome = (count: UInt32, mag: Float, ur: Float, ui: Float)

    /// One sample's escape count and |z|² at escape (0 if it never escapes), for the offset
    /// (dRe, dIm)·2^E from the centre.
    @inline(__always)
    static func escape<F: DeltaFormula>(_: F.Type, _ o: Orbit, _ table: Table?, dRe: Double, dIm: Double, E: Int,
                                        bailout2: Double, maxIterations: Int) -> (count: UInt32, mag: Float) {
        let r = escape(F.self, NoDerivative.self, o, table, dRe: dRe, dIm: dIm, E: E, spacing: 0, bailout2: bailout2,
                       maxIterations: maxIterations)
        return (r.count, r.mag)
    }

    /// `escape` carrying the derivative too (`spacing`: the pixel spacing's mantissa, its
    /// exponent being E), for u = z/d at escape.
    @inline(__always)
    static func escape<F: DeltaFormula, D: DerivativeMode>(_: F.Type, _: D.Type, _ o: Orbit, _ table: Table?,
                                                           dRe: Double, dIm: Double, E: Int, spacing: Double,
                                                           bailout2: Double, maxIterations: Int) -> Outcome {
        let dcr = FloatExpComplex.ldexp(dRe, E), dci = FloatExpComplex.ldexp(dIm, E)
        var s = State(m: o.mainStart, last: o.mainLast, count: 0, dr: dcr, di: dci)
        if D.on {
            (s.zr, s.zi) = (o.re[s.m] + dcr, o.im[s.m] + dci)
            s.d = FloatExpComplex(normalising: spacing, 0, exponent: E)
        }
        let xd = FloatExpComplex.exponent(dRe, dIm, E)
        if s.m == s.last {
            // The centre escaped at once: the sample starts rebased.
            s.dr = o.re[s.m] + dcr
            s.di = o.im[s.m] + dci
            s.m = o.criticalStart
            s.last = o.criticalLast
        } else if xd < FloatExpComplex.tinyLimit {
            if let mag = tinyPhase(F.self, D.self, o, table, dRe, dIm, E, spacing, xd, bailout2, maxIterations, &s) {
                return outcome(D.self, s, mag)
            }
        }
        let mag = doublePhase(F.self, D.self, o, table, dRe, dIm, E, spacing, dcr, dci, bailout2, maxIterations, &s)
        return outcome(D.self, s, mag)
    }

    /// The outcome once the loop ended: with the derivative and an escape, u = z/d with z the
    /// escaped point (s.zr, s.zi), scaled to 1e18 where it is larger (only its direction matters
    /// there: the kernels' twin does the same).
    @inline(__always)
    static func outcome<D: DerivativeMode>(_: D.Type, _ s: State, _ mag: Float) -> Outcome {
        guard D.on, mag != 0 else { return (UInt32(s.count), mag, 0, 0) }
        let den = (s.d.re * s.d.re) + (s.d.im * s.d.im)
        let ur = ((s.zr * s.d.re) + (s.zi * s.d.im)) / den
        let ui = ((s.zi * s.d.re) - (s.zr * s.d.im)) / den
        let big = abs(ur) > abs(ui) ? abs(ur) : abs(ui)
        let e = -s.d.e
        if FloatExpComplex.ldexp(big, e) > 1e18 {
            return (UInt32(s.count), mag, Float((ur / big) * 1e18), Float((ui / big) * 1e18))
        }
        return (UInt32(s.count), mag, Float(FloatExpComplex.ldexp(ur, e)), Float(FloatExpComplex.ldexp(ui, e)))
    }

    /// The derivative's step from z (before z's own): d' = f(z)·d + s (Mandelbrot: c moves with
    /// the pixel) or f(z)·d (Julia), f = F.derivativeFactor, in d's units.
    @inline(__always)
    static func derivativeStep<F: DeltaFormula>(_: F.Type, _ zr: Double, _ zi: Double, _ d: FloatExpComplex,
                                                _ spacing: Double, _ E: Int) -> FloatExpComplex {
        let f = F.derivativeFactor((zr, zi))
        let pr = (f.re * d.re) - (f.im * d.im), pi = (f.re * d.im) + (f.im * d.re)
        return FloatExpComplex(normalising: F.addsSpacing ? pr + FloatExpComplex.ldexp(spacing, E - d.e) : pr, pi,
                               exponent: d.e)
    }

    /// The tiny phase: returns |z|² if the sample escapes in it, else nil with the state handed
    /// to the double phase (or count = maxIterations).
    @inline(never)
    static func tinyPhase<F: DeltaFormula, D: DerivativeMode>(_: F.Type, _: D.Type, _ o: Orbit, _ table: Table?,
                                                              _ dRe: Double, _ dIm: Double, _ E: Int, _ spacing: Double,
                                                              _ xd: Int, _ bailout2: Double, _ maxIterations: Int,
                                                              _ s: inout State) -> Float? {
        var w = FloatExpComplex(normalising: dRe, dIm, exponent: E)
        var m = s.m, count = s.count
        let last = s.last
        defer { s.m = m; s.count = count }
        while count < maxIterations {
            var step = 0, entry = 0
            if F.usesTable, let t = table {
                (step, entry) = search(t, m: m, count: count, maxIterations: maxIterations) { idx in
                    let ti = t.ints + idx * BLATable.intsPerEntry
                    return Int(ti[2]) + w.e + 2 <= -501 && Int(ti[3]) + xd + 2 <= -501
                }
            }
            let dd: (re: Double, im: Double), x: (re: Double, im: Double)
            if D.on {
                if step > 0, let t = table {
                    s.d = tableStep(t, entry, s.d, spacing, 0, E)
                } else {
                    s.d = derivativeStep(F.self, s.zr, s.zi, s.d, spacing, E)
                }
            }
            if step > 0, let t = table {
                w = tableStep(t, entry, w, dRe, dIm, E)
                m += step
                count += step - 1
                dd = w.scaled
                x = (o.re[m] + dd.re, o.im[m] + dd.im)
            } else {
                let z = F.reference(o, m)
                m += 1
                (w, dd, x) = F.tinyStep(z: z, w: w, d: (dRe, dIm), E: E, next: (o.re[m], o.im[m]))
            }
            let zm = (x.re * x.re) + (x.im * x.im)
            if D.on { (s.zr, s.zi) = x }
            if !(zm <= bailout2) { return Float(zm) }
            count += 1
            if m == last || zm < (dd.re * dd.re) + (dd.im * dd.im) {
                (s.dr, s.di) = x
                m = o.criticalStart
                s.last = o.criticalLast
                return nil
            } else if w.e > FloatExpComplex.tinyLimit {
                (s.dr, s.di) = dd
                return nil
            }
        }
        return nil
    }

    /// The double phase: returns |z|² at escape, or 0 at maxIterations.
    @inline(never)
    static func doublePhase<F: DeltaFormula, D: DerivativeMode>(_: F.Type, _: D.Type, _ o: Orbit, _ table: Table?,
                                                                _ dRe: Double, _ dIm: Double, _ E: Int, _ spacing: Double,
                                                                _ dcr: Double, _ dci: Double, _ bailout2: Double,
                                                                _ maxIterations: Int, _ s: inout State) -> Float {
        var m = s.m, last = s.last, count = s.count, dr = s.dr, di = s.di
        defer { s.m = m; s.last = last; s.count = count }
        let firstLevelMask = (1 << BLATable.firstLevel) - 1
        // No table entry is valid where the shortest steps' largest radius is exceeded.
        let maxR2 = table?.maxR2 ?? 0
        while count < maxIterations {
            var step = 0
            var n = (re: 0.0, im: 0.0), x = (re: 0.0, im: 0.0)
            // m = 0 gives (m - 1) & mask == mask: no table step from the start of the reference.
            if F.usesTable, (m - 1) & firstLevelMask == 0, let t = table {
                let dz2 = (dr * dr) + (di * di)
                if dz2 < maxR2 {
                    let found = search(t, m: m, count: count, maxIterations: maxIterations) { idx in
                        dz2 < t.reals[idx * BLATable.realsPerEntry + 4]
                    }
                    if found.step > 0 {
                        step = found.step
                        if D.on { s.d = tableStep(t, found.entry, s.d, spacing, 0, E) }
                        n = tableStep(t, found.entry, (dr, di), dRe, dIm, E)
                        m += step
                        x = (o.re[m] + n.re, o.im[m] + n.im)
                    }
                }
            }
            if step == 0 {
                step = 1
                if D.on { s.d = derivativeStep(F.self, s.zr, s.zi, s.d, spacing, E) }
                let z = F.reference(o, m)
                m += 1
                (n, x) = F.step(z: z, dz: (dr, di), dc: (dcr, dci), next: (o.re[m], o.im[m]))
            }
            count += step - 1
            let zm = (x.re * x.re) + (x.im * x.im)
            if D.on { (s.zr, s.zi) = x }
            // "not <=" so that a NaN orbit counts as escaped
            if !(zm <= bailout2) { return Float(zm) }
            count += 1
            if zm < (n.re * n.re) + (n.im * n.im) || m == last {
                (dr, di) = x
                m = o.criticalStart
                last = o.criticalLast
            } else {
                (dr, di) = n
            }
        }
        return 0
    }

    /// The longest table step valid at m: levels from `BLATable.firstLevel` up while m − 1 is a
    /// multiple of 2^k, the level has entry (m − 1) >> k, the step fits and `valid` holds;
    /// (2^k, its entry), or (0, 0).
    @inline(__always)
    static func search(_ t: Table, m: Int, count: Int, maxIterations: Int, valid: (Int) -> Bool) -> (step: Int, entry: Int) {
        guard m >= 1 else { return (0, 0) }
        var step = 0, entry = 0
        var k = BLATable.firstLevel
        while k < BLATable.firstLevel + t.levels {
            let l = 1 << k
            if (m - 1) & (l - 1) != 0 { break }
            let j = (m - 1) >> k
            let level = k - BLATable.firstLevel
            if j >= Int(t.counts[level]) || count + l > maxIterations { break }
            let idx = Int(t.offsets[level]) + j
            if !valid(idx) { break }
            step = l
            entry = idx
            k += 1
        }
        return (step, entry)
    }

    /// A table step of the tiny delta: A·w·2^e + B·d·2^E, each product with its exponent, added
    /// at the larger one and renormalised.
    @inline(__always)
    static func tableStep(_ t: Table, _ entry: Int, _ w: FloatExpComplex, _ dRe: Double, _ dIm: Double,
                          _ E: Int) -> FloatExpComplex {
        let tr = t.reals + entry * BLATable.realsPerEntry, ti = t.ints + entry * BLATable.intsPerEntry
        let ar = tr[0], ai = tr[1], br = tr[2], bi = tr[3]
        let pr = (ar * w.re) - (ai * w.im), pi = (ar * w.im) + (ai * w.re)
        let pe = Int(ti[0]) + w.e
        let qr = (br * dRe) - (bi * dIm), qi = (br * dIm) + (bi * dRe)
        let qe = Int(ti[1]) + E
        let f = pe > qe ? pe : qe
        return FloatExpComplex(normalising: FloatExpComplex.ldexp(pr, pe - f) + FloatExpComplex.ldexp(qr, qe - f),
                               FloatExpComplex.ldexp(pi, pe - f) + FloatExpComplex.ldexp(qi, qe - f), exponent: f)
    }

    /// A table step of the double delta: A·dz·2^(A's exponent) + B·d·2^(B's exponent + E).
    @inline(__always)
    static func tableStep(_ t: Table, _ entry: Int, _ dz: (re: Double, im: Double), _ dRe: Double, _ dIm: Double,
                          _ E: Int) -> (re: Double, im: Double) {
        let tr = t.reals + entry * BLATable.realsPerEntry, ti = t.ints + entry * BLATable.intsPerEntry
        let ar = tr[0], ai = tr[1], br = tr[2], bi = tr[3]
        let ae = Int(ti[0]), be = Int(ti[1]) + E
        return (FloatExpComplex.ldexp((ar * dz.re) - (ai * dz.im), ae) + FloatExpComplex.ldexp((br * dRe) - (bi * dIm), be),
                FloatExpComplex.ldexp((ar * dz.im) + (ai * dz.re), ae) + FloatExpComplex.ldexp((br * dIm) + (bi * dRe), be))
    }
}

/// One formula as perturbation iterates it: its step of the delta in each phase. The operations
/// and their order are a contract with the formula's kernel header in Kernels/deep/.
protocol DeltaFormula {
    /// Whether the loop looks for BLA table steps (only Mandelbrot's table exists).
    static var usesTable: Bool { get }
    /// The value a step from point m multiplies by.
    static func reference(_ o: PerturbationEscape.Orbit, _ m: Int) -> (re: Double, im: Double)
    /// A tiny-phase step from reference value z: the new delta w, its Doubles dd, and z after the
    /// step, `next` being the reference's next stored point.
    static func tinyStep(z: (re: Double, im: Double), w: FloatExpComplex, d: (re: Double, im: Double), E: Int,
                         next: (re: Double, im: Double))
        -> (w: FloatExpComplex, dd: (re: Double, im: Double), x: (re: Double, im: Double))
    /// A double-phase step: the new delta n and z after the step.
    static func step(z: (re: Double, im: Double), dz: (re: Double, im: Double), dc: (re: Double, im: Double),
                     next: (re: Double, im: Double)) -> (n: (re: Double, im: Double), x: (re: Double, im: Double))
    /// f'(z) of the step z -> f(z), the derivative's factor: 2z for the quadratic formulas.
    static func derivativeFactor(_ z: (re: Double, im: Double)) -> (re: Double, im: Double)
    /// Whether c moves with the pixel (Mandelbrot: d' = f'(z)·d + 1, in pixel units the spacing).
    static var addsSpacing: Bool { get }
}

extension DeltaFormula {
    static var usesTable: Bool { false }
    static var addsSpacing: Bool { false }

    @inline(__always)
    static func derivativeFactor(_ z: (re: Double, im: Double)) -> (re: Double, im: Double) { (2 * z.re, 2 * z.im) }

    @inline(__always)
    static func reference(_ o: PerturbationEscape.Orbit, _ m: Int) -> (re: Double, im: Double) { (o.re[m], o.im[m]) }

    /// 2·z·dz + dz², the delta of z² (in the tiny phase in units of 2^e: 2·z·w + w²·2^e).
    @inline(__always)
    static func squareDelta(_ z: (re: Double, im: Double), _ dz: (re: Double, im: Double)) -> (re: Double, im: Double) {
        ((2 * ((z.re * dz.re) - (z.im * dz.im))) + ((dz.re * dz.re) - (dz.im * dz.im)),
         (2 * ((z.re * dz.im) + (z.im * dz.re))) + (2 * (dz.re * dz.im)))
    }

    @inline(__always)
    static func squareDelta(_ z: (re: Double, im: Double), _ w: FloatExpComplex) -> (re: Double, im: Double) {
        ((2 * ((z.re * w.re) - (z.im * w.im))) + FloatExpComplex.ldexp((w.re * w.re) - (w.im * w.im), w.e),
         (2 * ((z.re * w.im) + (z.im * w.re))) + FloatExpComplex.ldexp(2 * (w.re * w.im), w.e))
    }
}
