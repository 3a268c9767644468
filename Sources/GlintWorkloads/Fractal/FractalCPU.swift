import CGlintTypes
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// One step of an escape-time formula, z -> f(z), as fractal_escape writes it.
protocol EscapeStep {
    static func step<L: Lanes>(x: L, y: L, x2: L, y2: L, cr: L, ci: L, hr: L, hi: L) -> (L, L)
    /// The derivative's step before z's (fractal.cl's FRACTAL_DSTEP): d' = 2·z·d + ds.
    static func derivative<L: Lanes>(x: L, y: L, dr: L, di: L, ds: L) -> (L, L)
}

extension EscapeStep {
    @inline(__always)
    static func derivative<L: Lanes>(x: L, y: L, dr: L, di: L, ds: L) -> (L, L) {
        let two = L(repeating: 2)
        return (two * (x * dr - y * di) + ds, two * (x * di + y * dr))
    }
}

/// z^2 + c (Mandelbrot, Julia).
enum QuadraticStep: EscapeStep {
    @inline(__always)
    static func step<L: Lanes>(x: L, y: L, x2: L, y2: L, cr: L, ci: L, hr: L, hi: L) -> (L, L) {
        ((x2 - y2) + cr, (x + x) * y + ci)
    }
}

/// A Mandelbrot power past 2 (`--power`), as a type so that each power's loop is compiled apart.
protocol FractalPower {
    static var n: Int { get }
}
enum Power3: FractalPower { static var n: Int { 3 } }
enum Power4: FractalPower { static var n: Int { 4 } }
enum Power5: FractalPower { static var n: Int { 5 } }
enum Power6: FractalPower { static var n: Int { 6 } }
enum Power7: FractalPower { static var n: Int { 7 } }
enum Power8: FractalPower { static var n: Int { 8 } }

/// z^n + c: z multiplied by itself n - 1 times, then c added (fractal.cl's POWER step).
enum PowerStep<P: FractalPower>: EscapeStep {
    /// z^k as k − 1 products (fractal.cl's FRACTAL_ZPOW).
    @inline(__always)
    static func power<L: Lanes>(_ x: L, _ y: L, _ k: Int) -> (L, L) {
        var pr = x, pi = y
        for _ in 1..<k {
            let t = pr * x - pi * y
            pi = pr * y + pi * x
            pr = t
        }
        return (pr, pi)
    }

    @inline(__always)
    static func step<L: Lanes>(x: L, y: L, x2: L, y2: L, cr: L, ci: L, hr: L, hi: L) -> (L, L) {
        let (pr, pi) = power(x, y, P.n)
        return (pr + cr, pi + ci)
    }

    /// d' = n·z^(n−1)·d + ds.
    @inline(__always)
    static func derivative<L: Lanes>(x: L, y: L, dr: L, di: L, ds: L) -> (L, L) {
        let (qr, qi) = power(x, y, P.n - 1)
        let n = L(repeating: L.Scalar(P.n))
        return (n * (qr * dr - qi * di) + ds, n * (qr * di + qi * dr))
    }
}

/// |z^2 + c| per component (the tutorial's Burning Ship: abs after adding c).
enum BurningShipStep: EscapeStep {
    @inline(__always)
    static func step<L: Lanes>(x: L, y: L, x2: L, y2: L, cr: L, ci: L, hr: L, hi: L) -> (L, L) {
        let zero = L(repeating: 0)
        let ny = (x + x) * y + ci
        let nx = (x2 - y2) + cr
        // fabs: 0 - v also turns -0 into +0, as fabs does
        return (nx.replacing(with: zero - nx, where: L.lessOrEqual(nx, zero)),
                ny.replacing(with: zero - ny, where: L.lessOrEqual(ny, zero)))
    }
}

/// z^2 + 0.5c/z^2, with (hr, hi) = 0.5c.
enum SierpinskiStep: EscapeStep {
    @inline(__always)
    static func step<L: Lanes>(x: L, y: L, x2: L, y2: L, cr: L, ci: L, hr: L, hi: L) -> (L, L) {
        let a = x2 - y2
        let b = (x + x) * y
        let d = a * a + b * b
        let ar = a / d, ai = L(repeating: 0) - (b / d)
        return (a + (hr * ar - hi * ai), b + (hr * ai + hi * ar))
    }
}

/// The Swift CPU twin of Kernels/fractal.cl. Each function follows its kernel's steps in the
/// same order: a sample's escape count is a pure function of the params, identical on both paths.
enum FractalCPU {
    /// The view in the arithmetic of one precision (Fractal_View in the kernel).
    struct View<R: BinaryFloatingPoint> {
        var reHi: R, reLo: R, imHi: R, imLo: R, s: R, cRe: R, cIm: R, bailout2: R, halfW: R, halfH: R, ss: R

        init(_ p: GlintFractalParams) where R == Float {
            reHi = p.center_re_hi; reLo = p.center_re_lo
            imHi = p.center_im_hi; imLo = p.center_im_lo
            s = p.scale; cRe = p.c_re; cIm = p.c_im
            bailout2 = p.bailout2
            halfW = Float(p.width) * 0.5; halfH = Float(p.height) * 0.5; ss = Float(p.ss)
        }
        init(_ p: GlintFractalParams) where R == Double {
            reHi = Double(bitPattern: p.center_re_bits); reLo = 0
            imHi = Double(bitPattern: p.center_im_bits); imLo = 0
            s = Double(bitPattern: p.scale_bits)
            cRe = Double(bitPattern: p.c_re_bits); cIm = Double(bitPattern: p.c_im_bits)
            bailout2 = Double(p.bailout2)
            halfW = Double(p.width) * 0.5; halfH = Double(p.height) * 0.5; ss = Double(p.ss)
        }

        @inline(__always) func re<L: Lanes>(_ sx: L) -> L where L.Scalar == R {
            let off = ((sx + L(repeating: 0.5)) / L(repeating: ss) - L(repeating: halfW)) * L(repeating: s)
            return L(repeating: reHi) + (L(repeating: reLo) + off)
        }
        @inline(__always) func re(_ sx: R) -> R {
            let off = ((sx + 0.5) / ss - halfW) * s
            return reHi + (reLo + off)
        }
        @inline(__always) func im(_ sy: R) -> R {
            let off = ((sy + 0.5) / ss - halfH) * s
            return imHi + (imLo - off)
        }
    }

    /// Escape counts (and, with `trackMag`, |z|^2 at escape) for `L.count` samples of sample row `sy`
    /// from sample `x0`: the steps of fractal_escape, lane for lane.
    @inline(__always)
    static func escape<L: Lanes, F: EscapeStep>(_: L.Type, _: F.Type, view v: View<L.Scalar>, formula: FractalFormula, skip: Bool,
                                 trackMag: Bool, maxIter: Int, x0: Int, sy: Int, sw: Int,
                                 counts: UnsafeMutablePointer<UInt32>, mags: UnsafeMutablePointer<Float>,
                                 deriv: Bool = false, u: UnsafeMutablePointer<Float>? = nil) {
        let sx = L(ramp: L.Scalar(x0))
        let pre = v.re(sx)
        let pim = L(repeating: v.im(L.Scalar(sy)))
        var active = L.lessThan(sx, L(repeating: L.Scalar(sw)))
        var count = L(repeating: 0)

        let cr: L, ci: L
        switch formula {
        case .mandelbrot, .burningShip: (cr, ci) = (pre, pim)
        default: (cr, ci) = (L(repeating: v.cRe), L(repeating: v.cIm))
        }
        let half = L(repeating: 0.5)
        let hr = cr * half, hi = ci * half

        if formula == .mandelbrot && skip {
            // Same shrunk bounds as the kernel (exact binary constants).
            let xq = cr - L(repeating: 0.25)
            let q = xq * xq + ci * ci
            let cardioid = L.lessThan(q * (q + xq), L(repeating: 0.2490234375) * (ci * ci))
            let xb = cr + L(repeating: 1.0)
            let bulb = L.lessThan(xb * xb + ci * ci, L(repeating: 0.062255859375))
            let inside = cardioid | bulb
            count = count.replacing(with: L(repeating: L.Scalar(maxIter)), where: inside & active)
            active = active & !inside
        }

        var x = pre, y = pim
        var x2 = x * x, y2 = y * y
        var mag = L(repeating: 0)
        let b2 = L(repeating: v.bailout2)
        let one = L(repeating: 1)
        // The derivative in pixel units, d0 = the spacing (dz0/dc = 1), and z, d where each lane escaped.
        let zero = L(repeating: 0)
        var dr = L(repeating: v.s), di = zero
        let ds = formula == .mandelbrot ? L(repeating: v.s) : zero
        var ex = zero, ey = zero, edr = zero, edi = zero
        var i = 0
        while i < maxIter {
            if deriv { (dr, di) = F.derivative(x: x, y: y, dr: dr, di: di, ds: ds) }
            let (nx, ny) = F.step(x: x, y: y, x2: x2, y2: y2, cr: cr, ci: ci, hr: hr, hi: hi)
            x = nx; y = ny
            x2 = x * x; y2 = y * y
            let m = x2 + y2
            // "not <=" so that a NaN orbit counts as escaped
            let stays = L.lessOrEqual(m, b2)
            if trackMag { mag = mag.replacing(with: m, where: active & !stays) }
            if deriv {
                let escaping = active & !stays
                ex = ex.replacing(with: x, where: escaping); ey = ey.replacing(with: y, where: escaping)
                edr = edr.replacing(with: dr, where: escaping); edi = edi.replacing(with: di, where: escaping)
            }
            active = active & stays
            if !active.any { break }
            count = count.replacing(with: count + one, where: active)
            i += 1
        }

        count.store(counts: counts, mags: mags, mag: mag, valid: sw - x0)
        if deriv, let u {
            // u = z/d, scaled down past 1e18 pixels (fractal.cl's order)
            let den = edr * edr + edi * edi
            var ur = (ex * edr + ey * edi) / den
            var ui = (ey * edr - ex * edi) / den
            let ar = ur.replacing(with: zero - ur, where: L.lessThan(ur, zero))
            let ai = ui.replacing(with: zero - ui, where: L.lessThan(ui, zero))
            let big = ar.replacing(with: ai, where: L.lessThan(ar, ai))
            let limit = L(repeating: 1e18)
            let far = L.lessThan(limit, big)
            ur = ur.replacing(with: (ur / big) * limit, where: far)
            ui = ui.replacing(with: (ui / big) * limit, where: far)
            for l in 0..<min(L.count, sw - x0) {
                u[2 * l] = Float(ur[l])
                u[2 * l + 1] = Float(ui[l])
            }
        }
    }

    /// One sample row of any formula but image-julia.
    static func escapeRow(_ p: GlintFractalParams, formula: FractalFormula, precision: Precision, skip: Bool,
                          sy: Int, counts: UnsafeMutablePointer<UInt32>, mags: UnsafeMutablePointer<Float>,
                          u: UnsafeMutablePointer<Float>? = nil) {
        if let u {
            // Distance and slope colouring (mandelbrot and julia: FractalJob.validate), |z|² always tracked.
            switch precision {
            case .float: row(FloatLanes16.self, View<Float>(p), p, formula, skip, true, sy, counts, mags, u)
            case .double: row(DoubleLanes8.self, View<Double>(p), p, formula, skip, true, sy, counts, mags, u)
            case .perturbation: preconditionFailure("perturbation rows are PerturbationCPU.row's")
            }
            return
        }
        switch (precision, p.smooth != 0) {
        case (.float, false): row(FloatLanes16.self, View<Float>(p), p, formula, skip, false, sy, counts, mags)
        case (.float, true): row(FloatLanes16.self, View<Float>(p), p, formula, skip, true, sy, counts, mags)
        case (.double, false): row(DoubleLanes8.self, View<Double>(p), p, formula, skip, false, sy, counts, mags)
        case (.double, true): row(DoubleLanes8.self, View<Double>(p), p, formula, skip, true, sy, counts, mags)
        case (.perturbation, _): preconditionFailure("perturbation rows are PerturbationCPU.row's")
        }
    }

    /// `u` (distance and slope colouring) carries the derivative and gets z/d at escape, 2 floats a sample.
    @inline(__always)
    private static func row<L: Lanes>(_: L.Type, _ v: View<L.Scalar>, _ p: GlintFractalParams, _ formula: FractalFormula,
                                      _ skip: Bool, _ trackMag: Bool, _ sy: Int,
                                      _ counts: UnsafeMutablePointer<UInt32>, _ mags: UnsafeMutablePointer<Float>,
                                      _ u: UnsafeMutablePointer<Float>? = nil) {
        switch formula {
        case .julia, .imageJulia:
            row(L.self, QuadraticStep.self, v, p, formula, skip, trackMag, sy, counts, mags, u)
        case .mandelbrot:
            // The cardioid and bulb test is power 2's.
            switch p.power {
            case 3: row(L.self, PowerStep<Power3>.self, v, p, formula, false, trackMag, sy, counts, mags, u)
            case 4: row(L.self, PowerStep<Power4>.self, v, p, formula, false, trackMag, sy, counts, mags, u)
            case 5: row(L.self, PowerStep<Power5>.self, v, p, formula, false, trackMag, sy, counts, mags, u)
            case 6: row(L.self, PowerStep<Power6>.self, v, p, formula, false, trackMag, sy, counts, mags, u)
            case 7: row(L.self, PowerStep<Power7>.self, v, p, formula, false, trackMag, sy, counts, mags, u)
            case 8: row(L.self, PowerStep<Power8>.self, v, p, formula, false, trackMag, sy, counts, mags, u)
            default: row(L.self, QuadraticStep.self, v, p, formula, skip, trackMag, sy, counts, mags, u)
            }
        case .burningShip:
            row(L.self, BurningShipStep.self, v, p, formula, skip, trackMag, sy, counts, mags, u)
        case .sierpinskiJulia:
            row(L.self, SierpinskiStep.self, v, p, formula, skip, trackMag, sy, counts, mags, u)
        }
    }

    @inline(__always)
    private static func row<L: Lanes, F: EscapeStep>(_: L.Type, _: F.Type, _ v: View<L.Scalar>, _ p: GlintFractalParams,
                                                     _ formula: FractalFormula, _ skip: Bool, _ trackMag: Bool, _ sy: Int,
                                                     _ counts: UnsafeMutablePointer<UInt32>, _ mags: UnsafeMutablePointer<Float>,
                                                     _ u: UnsafeMutablePointer<Float>?) {
        let sw = Int(p.width * p.ss)
        for x in stride(from: 0, to: sw, by: L.count) {
            escape(L.self, F.self, view: v, formula: formula, skip: skip, trackMag: trackMag, maxIter: Int(p.max_iter),
                   x0: x, sy: sy, sw: sw, counts: counts + x, mags: mags + x, deriv: u != nil, u: u.map { $0 + 2 * x })
        }
    }

    /// One sample row of image-julia (fractal_escape_texture), one sample at a time.
    static func escapeTextureRow<R: BinaryFloatingPoint>(
        _ v: View<R>, _ p: GlintFractalParams, texture: Image8, sy: Int,
        counts: UnsafeMutablePointer<UInt32>, mags: UnsafeMutablePointer<Float>, texels: UnsafeMutablePointer<Int32>
    ) {
        let sw = Int(p.width * p.ss)
        let tw = Int(p.tex_width), th = Int(p.tex_height)
        let low: R = 0.01, high: R = 0.99
        let yStart = v.im(R(sy))
        for sx in 0..<sw {
            var x = v.re(R(sx))
            var y = yStart
            var x2 = x * x, y2 = y * y
            var mag: R = 0
            var count: UInt32 = 0
            var texel: Int32 = -1
            var i = 0
            while i < Int(p.max_iter) {
                let ny = (x + x) * y + v.cIm
                let nx = (x2 - y2) + v.cRe
                x = nx; y = ny
                x2 = x * x; y2 = y * y
                let m = x2 + y2
                if x >= low && x <= high && y >= low && y <= high {
                    let tx = min(Int(x * R(tw)), tw - 1)
                    let ty = min(Int((1 - y) * R(th)), th - 1)
                    let t = ty * tw + tx
                    if texture.pixels[t * 4 + 3] > 25 { texel = Int32(t); mag = m; break }
                }
                if !(m <= v.bailout2) { mag = m; break }
                count += 1
                i += 1
            }
            counts[sx] = count
            mags[sx] = Float(mag)
            texels[sx] = texel
        }
    }

    /// Fractal_CountColor.
    @inline(__always)
    static func countColor(_ p: GlintFractalParams, formula: FractalFormula, palette: Color.Palette,
                           count: UInt32, mag2: Float) -> SIMD3<Float> {
        if formula == .imageJulia {
            let g = Float(count) / 80.0
            return SIMD3(g, g, g)
        }
        if count >= UInt32(p.max_iter) { return SIMD3(0, 0, 0) }
        var t = Float(count)
        if p.smooth != 0 {
            let ratio = logf(mag2) / p.log_bailout2
            t = t + 1.0 - (p.power == 2 ? log2f(ratio) : log2f(ratio) / FractalJob.log2Power(Int(p.power)))
            if !(t >= 0) { t = 0 }
        }
        return Color.palette(palette, t)
    }

    /// Fractal_SampleColor: by params.color, from the count, |z|² and u = z/d at escape.
    @inline(__always)
    static func sampleColor(_ p: GlintFractalParams, formula: FractalFormula, palette: Color.Palette,
                            count: UInt32, mag2: Float, ur: Float, ui: Float) -> SIMD3<Float> {
        let c = clamped(countColor(p, formula: formula, palette: palette, count: count, mag2: mag2))
        if p.color == GLINT_COLOR_COUNT || count >= UInt32(p.max_iter) { return c }
        let n = (ur * ur + ui * ui).squareRoot()
        if p.color == GLINT_COLOR_DE {
            let g = 1.0 - 1.0 / (1.0 + n * logf(mag2))
            return SIMD3(g, g, g)
        }
        let shade = ((ur / n) * p.light_x + (ui / n) * p.light_y + p.light_h) / (1.0 + p.light_h)
        let s = Color.clamp01(shade)
        return SIMD3(c.x * s, c.y * s, c.z * s)
    }

    /// Each pixel's distance estimate in pixels for one pixel row from its ss sample rows: the mean
    /// of |u|·ln|z|² over the samples that escaped, 0 where none did.
    static func distanceRow(counts: UnsafePointer<UInt32>, mags: UnsafePointer<Float>, u: UnsafePointer<Float>,
                            width w: Int, supersampling ss: Int, maxIterations: Int, out: UnsafeMutablePointer<Float>) {
        let sw = w * ss
        for px in 0..<w {
            var sum: Float = 0, n: Float = 0
            for j in 0..<ss {
                for i in 0..<ss {
                    let s = j * sw + px * ss + i
                    guard counts[s] < UInt32(maxIterations) else { continue }
                    let (ur, ui) = (u[2 * s], u[2 * s + 1])
                    sum += (ur * ur + ui * ui).squareRoot() * logf(mags[s])
                    n += 1
                }
            }
            out[px] = n > 0 ? sum / n : 0
        }
    }

    static func clamped(_ c: SIMD3<Float>) -> SIMD3<Float> {
        SIMD3(Color.clamp01(c.x), Color.clamp01(c.y), Color.clamp01(c.z))
    }

    /// Whether colours come from a per-count table (fractal_palette): banded colouring, table <= 64 Ki entries.
    static func usesLUT(_ p: GlintFractalParams) -> Bool { p.smooth == 0 && p.color == GLINT_COLOR_COUNT && p.max_iter <= 1 << 16 }

    /// fractal_palette.
    static func paletteLUT(_ p: GlintFractalParams, formula: FractalFormula, palette: Color.Palette) -> [SIMD3<Float>] {
        (0...Int(p.max_iter)).map { clamped(countColor(p, formula: formula, palette: palette, count: UInt32($0), mag2: 0)) }
    }

    /// The palette as finished RGBA8 pixels, one per count: what `colorRow` writes for a pixel of
    /// one sample with that count (its mean is the sample's colour: 0 + c and c / 1 are exact).
    static func packedLUT(_ lut: [SIMD3<Float>]) -> [UInt32] {
        lut.map { c in
            UInt32(Color.to8Bit(c.x)) | UInt32(Color.to8Bit(c.y)) << 8 | UInt32(Color.to8Bit(c.z)) << 16 | 0xFF00_0000
        }
    }

    /// `colorRow` for one sample per pixel from a palette table of `entries` (max_iter + 1, so
    /// every count has one; the clamp only keeps a read inside the table): a table read per pixel.
    static func colorRow(packed: UnsafeBufferPointer<UInt32>, counts: UnsafePointer<UInt32>, width w: Int,
                         out: UnsafeMutablePointer<UInt8>) {
        let out32 = UnsafeMutableRawPointer(out), table = packed.baseAddress!, last = UInt32(packed.count - 1)
        for px in 0..<w {
            out32.storeBytes(of: table[Int(min(counts[px], last))].littleEndian, toByteOffset: 4 * px, as: UInt32.self)
        }
    }

    /// fractal_color for one pixel row, from its ss sample rows; `outF32` (COLOR_F32) also gets
    /// each pixel's mean colour as floats, alpha 1.
    static func colorRow(_ p: GlintFractalParams, formula: FractalFormula, palette: Color.Palette, texture: Image8?,
                         lut: [SIMD3<Float>]?, counts: UnsafePointer<UInt32>, mags: UnsafePointer<Float>,
                         texels: UnsafePointer<Int32>?, out: UnsafeMutablePointer<UInt8>,
                         outF32: UnsafeMutablePointer<Float>? = nil, u: UnsafePointer<Float>? = nil) {
        let ss = Int(p.ss), w = Int(p.width), sw = w * ss
        let n = Float(ss * ss)
        for px in 0..<w {
            var sum = SIMD3<Float>(0, 0, 0)
            for j in 0..<ss {
                for i in 0..<ss {
                    let s = j * sw + px * ss + i
                    let c: SIMD3<Float>
                    if let texels, texels[s] >= 0, let texture {
                        let t = Int(texels[s]) * 4
                        c = SIMD3(Float(texture.pixels[t]) / 255.0, Float(texture.pixels[t + 1]) / 255.0,
                                  Float(texture.pixels[t + 2]) / 255.0)
                    } else if let lut {
                        c = lut[Int(counts[s])]
                    } else if let u {
                        c = sampleColor(p, formula: formula, palette: palette, count: counts[s], mag2: mags[s],
                                        ur: u[2 * s], ui: u[2 * s + 1])
                    } else {
                        c = clamped(countColor(p, formula: formula, palette: palette, count: counts[s], mag2: mags[s]))
                    }
                    sum = sum + c
                }
            }
            let mean = SIMD3(sum.x / n, sum.y / n, sum.z / n)
            out[px * 4] = Color.to8Bit(mean.x)
            out[px * 4 + 1] = Color.to8Bit(mean.y)
            out[px * 4 + 2] = Color.to8Bit(mean.z)
            out[px * 4 + 3] = 255
            if let outF32 {
                outF32[px * 4] = mean.x
                outF32[px * 4 + 1] = mean.y
                outF32[px * 4 + 2] = mean.z
                outF32[px * 4 + 3] = 1
            }
        }
    }
}
