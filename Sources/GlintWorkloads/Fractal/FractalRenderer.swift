import CGlintTypes
import GlintCL
import GlintCore

/// Renders a `FractalJob` on a backend. Both paths compute escape counts per sample of the
/// ss-times-finer sample grid, then colour each pixel as the mean of its samples' colours.
public enum FractalRenderer {
    /// What to return beyond the image.
    public struct Outputs: Sendable {
        /// Escape counts at the pixel centres (an extra 1-sample pass when supersampling).
        public var counts = false
        /// The sum of all escape counts (costs a read-back on OpenCL).
        public var iterations = false
        /// OpenCL samples per work-item (1, 4, 8 or 16) instead of the device's default: lets a
        /// CPU device run the shape GPUs get (1), so tests cover it where no GPU is at hand.
        public var lanes: Int?
        /// Each pixel's colour as floats, before the 8-bit rounding (`FractalResult.colour`): for
        /// 16-bit output. On OpenCL it costs the fused one-pass colouring and a larger read-back.
        public var colour = false
        /// Only these rows of the image (a shard's band); every output then holds just them,
        /// each pixel exactly as in the whole render. nil: every row.
        public var rows: Range<Int>?
        /// Each pixel's distance estimate in pixels (`FractalResult.distance`; mandelbrot and
        /// julia): the derivative is carried whatever the colouring.
        public var distance = false
        public init(counts: Bool = false, iterations: Bool = false, lanes: Int? = nil, colour: Bool = false,
                    rows: Range<Int>? = nil, distance: Bool = false) {
            self.distance = distance
            self.counts = counts
            self.iterations = iterations
            self.lanes = lanes
            self.colour = colour
            self.rows = rows
        }

        /// The rows rendered for a job of `height` rows.
        func band(_ height: Int) throws(GlintError) -> Range<Int> {
            guard let rows else { return 0 ..< height }
            guard !rows.isEmpty, rows.lowerBound >= 0, rows.upperBound <= height else {
                throw GlintError("rows \(rows.lowerBound)..<\(rows.upperBound) lie outside an image of \(height) rows")
            }
            return rows
        }
    }

    public typealias Progress = @Sendable (Double) -> Void

    public static func render(_ job: FractalJob, on backend: Backend, outputs: Outputs = Outputs(),
                              progress: Progress? = nil) async throws -> FractalResult {
        try job.validate()
        if outputs.distance {
            // A strip's distances are in its own pixels, each row's side its radius times 2π/columns.
            guard job.formula == .mandelbrot || job.formula == .julia else {
                throw GlintError(field: "de", "distances are mandelbrot's and julia's (got \(job.formula.name))")
            }
        }
        let start = Clock.now()
        var result: FractalResult
        switch backend {
        case .cpu:
            result = try await renderCPU(job, outputs: outputs, progress: progress)
        case .opencl(let cc):
            result = try renderCL(job, on: cc, outputs: outputs, progress: progress)
        }
        if outputs.counts && job.supersampling > 1 {
            var centres = job
            centres.supersampling = 1
            let extra = try await render(centres, on: backend, outputs: Outputs(counts: true, lanes: outputs.lanes, rows: outputs.rows))
            result.counts = extra.counts
            result.kernelSeconds += extra.kernelSeconds
        }
        result.wallSeconds = Clock.now() - start
        return result
    }

    // MARK: Swift CPU path

    static func renderCPU(_ job: FractalJob, outputs: Outputs, progress: Progress?) async throws -> FractalResult {
        let (p, orbit, table) = try deepParams(job)
        let formulaOrbit = try formulaOrbit(job)   // julia, burning-ship perturbation (FractalRenderer+Formulas)
        let w = job.width, ss = job.supersampling, sw = w * ss
        // `h` rows from `y0`: the whole image, or a shard's band.
        let band = try outputs.band(job.height)
        let y0 = band.lowerBound, h = band.count
        // The image is rendered straight into the array it is returned in (no copy of 4 bytes a
        // pixel at the end): every byte is written below, and the array is neither copied nor
        // changed while the workers write it.
        var pixels = LargeArrays.uninitialized(UInt8.self, count: w * h * 4)
        let image = pixels.withUnsafeMutableBufferPointer { $0 }
        let wantCounts = outputs.counts && ss == 1
        let counts = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: wantCounts ? w * h : 1)
        let rowIterations = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: h)
        let colour = UnsafeMutableBufferPointer<Float>.allocate(capacity: outputs.colour ? w * h * 4 : 1)
        defer { counts.deallocate(); rowIterations.deallocate(); colour.deallocate() }
        let out = SharedBuffer(image), countOut = SharedBuffer(counts), iterOut = SharedBuffer(rowIterations)
        let colourOut = outputs.colour ? SharedBuffer(colour) : nil
        let distance = UnsafeMutableBufferPointer<Float>.allocate(capacity: outputs.distance ? w * h : 1)
        defer { distance.deallocate() }
        let distanceOut = SharedBuffer(distance)
        let formula = job.formula, precision = job.precision, skip = job.skipInterior
        let deriv = job.colouring != .count || outputs.distance
        let strip = job.expMap.map { ExpMapTables($0) }
        let palette = job.palette, texture = job.texture
        let lut = FractalCPU.usesLUT(p) ? FractalCPU.paletteLUT(p, formula: formula, palette: palette) : nil
        // One sample per pixel from the palette table, no texture and no float colour: each
        // pixel is its count's finished RGBA8 value.
        let packed = lut != nil && ss == 1 && texture == nil && formula != .imageJulia && !outputs.colour
            ? FractalCPU.packedLUT(lut!) : nil

        await CPUParallel.forEach(h, progress: progress.map { report in { @Sendable done in report(Double(done) / Double(h)) } }) { row in
            let py = y0 + row
            let n = ss * sw
            let sampleCounts = UnsafeMutablePointer<UInt32>.allocate(capacity: n)
            let mags = UnsafeMutablePointer<Float>.allocate(capacity: n)
            let texels: UnsafeMutablePointer<Int32>? = formula == .imageJulia ? .allocate(capacity: n) : nil
            // z/d at escape, two floats a sample, for distance and slope colouring
            let u: UnsafeMutablePointer<Float>? = deriv ? .allocate(capacity: 2 * n) : nil
            defer { sampleCounts.deallocate(); mags.deallocate(); texels?.deallocate(); u?.deallocate() }
            for j in 0..<ss {
                let sy = py * ss + j
                let o = j * sw
                if formula == .imageJulia, let texture, let texels {
                    switch precision {
                    case .float:
                        FractalCPU.escapeTextureRow(FractalCPU.View<Float>(p), p, texture: texture, sy: sy,
                                                    counts: sampleCounts + o, mags: mags + o, texels: texels + o)
                    case .double, .perturbation:   // image-julia is never perturbed (validate)
                        FractalCPU.escapeTextureRow(FractalCPU.View<Double>(p), p, texture: texture, sy: sy,
                                                    counts: sampleCounts + o, mags: mags + o, texels: texels + o)
                    }
                } else if let formulaOrbit {
                    PerturbationFormulas.row(orbit: formulaOrbit, width: w, height: h, supersampling: ss, sy: sy,
                                             counts: sampleCounts + o, mags: mags + o, u: u.map { $0 + 2 * o })
                } else if let orbit {
                    PerturbationCPU.row(orbit: orbit, table: table, width: w, height: h, supersampling: ss, sy: sy,
                                        counts: sampleCounts + o, mags: mags + o, u: u.map { $0 + 2 * o }, strip: strip)
                } else {
                    FractalCPU.escapeRow(p, formula: formula, precision: precision, skip: skip, sy: sy,
                                         counts: sampleCounts + o, mags: mags + o, u: u.map { $0 + 2 * o })
                }
            }
            if let packed {
                packed.withUnsafeBufferPointer { FractalCPU.colorRow(packed: $0, counts: sampleCounts, width: w, out: out.base + row * w * 4) }
            } else {
                FractalCPU.colorRow(p, formula: formula, palette: palette, texture: texture, lut: lut,
                                    counts: sampleCounts, mags: mags, texels: texels.map { UnsafePointer($0) },
                                    out: out.base + row * w * 4, outF32: colourOut.map { $0.base + row * w * 4 },
                                    u: u.map { UnsafePointer($0) })
            }
            if wantCounts {
                for x in 0..<w { countOut[row * w + x] = sampleCounts[x] }
            }
            if outputs.distance, let u {
                FractalCPU.distanceRow(counts: sampleCounts, mags: mags, u: u, width: w, supersampling: ss,
                                       maxIterations: job.maxIterations, out: distanceOut.base + row * w)
            }
            if outputs.iterations {
                var total: UInt64 = 0
                for i in 0..<n { total &+= UInt64(sampleCounts[i]) }
                iterOut[row] = total
            }
        }
        return FractalResult(image: Image8(width: w, height: h, pixels: pixels),
                             colour: outputs.colour ? ImageF(width: w, height: h, pixels: Array(colour)) : nil,
                             counts: wantCounts ? Array(counts) : nil,
                             iterations: outputs.iterations ? rowIterations.reduce(0, &+) : nil,
                             distance: outputs.distance ? Array(distance) : nil,
                             kernelSeconds: 0, wallSeconds: 0)
    }

    /// The kernels' params and, for perturbation, the reference orbit of the centre (computed in
    /// MPFR) with the pixel spacing from it (the zoom may be past Double's range), and its BLA
    /// table unless the job turns BLA off.
    static func deepParams(_ job: FractalJob) throws -> (GlintFractalParams, ReferenceOrbit?, BLATable?) {
        var p = job.params
        guard job.precision == .perturbation else { return (p, nil, nil) }
        if job.formula != .mandelbrot { return (try formulaParams(job), nil, nil) }   // julia, burning-ship: formulaOrbit
        let view = job.deepView()
        let orbit = try OrbitCache.shared.orbit(centerRe: view.centerRe, centerIm: view.centerIm, zoom: view.zoom,
                                       height: view.height, bailout: view.bailout, maxIterations: view.maxIterations,
                                       power: job.power)
        p.scale_bits = orbit.spacingMantissa.bitPattern
        p.scale = 0
        // A strip's samples reach out to its top radius (a segment's own: deeper segments skip more).
        let dcMax = job.expMap.map { $0.topRadius } ?? PerturbationCPU.dcMax(orbit: orbit, width: view.width, height: view.height)
        let table = job.bla ? BLATable(orbit: orbit, dcMax: dcMax) : nil
        return (p, orbit, table)
    }

    // MARK: OpenCL path

    /// Samples per work-item: 1 on GPUs (a warp is the vector); on CPUs a vector of one
    /// AVX-512 register (16 floats or 8 doubles), since PoCL leaves the escape loop scalar.
    /// `GLINT_KERNEL_LANES` (1, 4, 8 or 16) sets them on any device, as for the blur and mist
    /// kernels (the Oclgrind tests run the CPU forms on the simulator this way).
    static func lanes(for job: FractalJob, on cc: ComputeContext, override: Int?) -> Int {
        if job.formula == .imageJulia { return 1 }
        if let override, [1, 4, 8, 16].contains(override) { return override }
        if let n = ComputeContext.kernelLanesOverride { return n }
        if cc.kind == .gpu { return 1 }
        // As wide as the device's native vectors (8 floats with AVX2, 16 with AVX-512): wider
        // vectors measured no faster with AVX2 (docs/PERFORMANCE.md).
        let native = job.precision == .double ? cc.nativeDoubleVectorWidth : cc.nativeFloatVectorWidth
        return [16, 8, 4].first { $0 <= max(native, 4) } ?? 4
    }

    /// The kernels' POWER and, past power 2, the bits of the Float log2(power) the Swift twin's
    /// smooth colouring divides by.
    static func powerDefines(_ power: Int) -> [String] {
        power == 2 ? [] : ["POWER=\(power)", "LOG2_POWER_BITS=0x\(String(FractalJob.log2Power(power).bitPattern, radix: 16))u"]
    }

    /// Largest sample count one strip holds: bounds device memory and keeps launches short.
    static let stripSamples = 1 << 22

    /// Renders on the device and leaves the RGBA image there (for `--then` passes that follow it
    /// on the same device): no host round trip. Returns the buffer and the kernel time.
    public static func renderOnDevice(_ job: FractalJob, on cc: ComputeContext) throws -> (image: Buffer<UInt8>, kernelSeconds: Double) {
        try job.validate()
        let image = try Buffer<UInt8>(context: cc.context, count: job.width * job.height * 4)
        let r = try renderCL(job, on: cc, outputs: Outputs(), progress: nil, device: image)
        return (image, r.kernelSeconds)
    }

    /// Escape steps per test in the kernel's loop (fractal.cl, BLOCK): 8 for float on a device
    /// that runs one sample per work-item (a GPU), where it measured faster on every float bench
    /// case; 1 for double there (no faster) and for the CPU forms (PoCL's vector loops ran 3x
    /// slower with it). `GLINT_FRACTAL_BLOCK` (1, 2, 4, 8 or 16) overrides it.
    static func escapeBlock(lanes: Int, double: Bool) -> Int {
        if let v = FileIO.environment("GLINT_FRACTAL_BLOCK"), let n = Int(v), [1, 2, 4, 8, 16].contains(n) { return n }
        return lanes == 1 && !double ? 8 : 1
    }

    static func renderCL(_ job: FractalJob, on cc: ComputeContext, outputs: Outputs,
                         progress: Progress?, device: Buffer<UInt8>? = nil) throws -> FractalResult {
        if job.precision != .float && !cc.supportsFP64 {
            throw GlintError(field: "precision", "\(job.precision.rawValue) needs fp64, which \(cc.deviceName) lacks; use float or another device")
        }
        let (p, orbit, table) = try deepParams(job)
        let formulaOrbit = try formulaOrbit(job)   // julia, burning-ship perturbation (FractalRenderer+Formulas)
        let w = job.width, ss = job.supersampling, sw = w * ss
        // `h` rows from `y0`: the whole image, or a shard's band.
        let band = try outputs.band(job.height)
        let y0 = band.lowerBound, h = band.count
        let lanes = lanes(for: job, on: cc, override: outputs.lanes)
        let isTexture = job.formula == .imageJulia
        let useLUT = FractalCPU.usesLUT(p)
        let wantColour = outputs.colour && device == nil
        let deriv = job.colouring != .count || outputs.distance
        let fused = useLUT && ss == 1 && !isTexture && !wantColour && orbit == nil && formulaOrbit == nil && !deriv
        let program = try cc.program("fractal.cl", defines: [
            "FUSED_COLOR=\(fused ? 1 : 0)", "COLOR_F32=\(wantColour ? 1 : 0)",
            "FORMULA=\(job.formula.rawValue)", "DOUBLE=\(job.precision == .double ? 1 : 0)",
            "LANES=\(lanes)", "SKIP=\(job.skipInterior && job.power == 2 ? 1 : 0)",
            "TRACK_MAG=\(job.smooth || deriv ? 1 : 0)", "DERIV=\(deriv ? 1 : 0)",
            // Blocks rely on z²'s orbit passing inf before NaN; a higher power can overflow to NaN
            // in one step, which a block's peak would miss.
            "BLOCK=\(job.power == 2 ? escapeBlock(lanes: lanes, double: job.precision == .double) : 1)",
        ] + powerDefines(job.power))
        let formulaEscape = try formulaOrbit.map { try formulaKernel($0, on: cc, derivative: deriv) }
        let perturbDefines = PerturbationCPU.kernelDefines + powerDefines(job.power) + ["DERIV=\(deriv ? 1 : 0)"]
            + (job.expMap == nil ? [] : ["EXPMAP=1"])
        // An exp-map strip's per-column angles and per-row radii, uploaded only for a strip.
        let stripArguments: [any KernelArgument] = try job.expMap.map { layout in
            let t = ExpMapTables(layout)
            return [try Buffer<Double>(queue: cc.queue, copying: t.columns), try Buffer<Double>(queue: cc.queue, copying: t.rowMantissa),
                    try Buffer<Int32>(queue: cc.queue, copying: t.rowExponent)]
        } ?? []
        let escape = try formulaEscape ?? (orbit == nil ? try program.kernel(isTexture ? "fractal_escape_texture" : "fractal_escape")
                                                        : try cc.program("perturb.cl", defines: perturbDefines).kernel("perturb_escape"))
        // The reference orbit, uploaded once for every strip.
        let orbitRe = try Buffer<Double>(queue: cc.queue, copying: orbit?.re ?? formulaOrbit?.re ?? [0])
        let orbitIm = try Buffer<Double>(queue: cc.queue, copying: orbit?.im ?? formulaOrbit?.im ?? [0])
        // The BLA table (one dummy element each when there is none).
        let t = table ?? BLATable.empty
        let blaReals = try Buffer<Double>(queue: cc.queue, copying: t.reals.isEmpty ? [0] : t.reals)
        let blaInts = try Buffer<Int32>(queue: cc.queue, copying: t.ints.isEmpty ? [0] : t.ints)
        let blaLevels = try Buffer<Int32>(queue: cc.queue, copying: t.levels == 0 ? [0, 0] : t.levelOffsets + t.levelCounts)
        // The colour pass's CPU form (LANES pixels per work-item) where the escape kernel has one.
        let colorV = lanes > 1 && !isTexture && !deriv
        let color = try program.kernel(colorV ? "fractal_color_v" : "fractal_color")

        let stripRows = max(1, min(h, stripSamples / (sw * ss)))
        let samples = stripRows * ss * sw
        let q = cc.queue
        let counts = try Buffer<UInt32>(context: cc.context, count: samples)
        let mags = try Buffer<Float>(context: cc.context, count: samples)
        let u: Buffer<Float>? = deriv ? try Buffer<Float>(context: cc.context, count: 2 * samples) : nil
        let texels = try Buffer<Int32>(context: cc.context, count: isTexture ? samples : 1)
        let texture = try Buffer<UInt8>(queue: q, copying: job.texture?.pixels ?? [0, 0, 0, 0])
        let strip = try Buffer<UInt8>(context: cc.context, count: stripRows * w * 4, access: .writeOnly)
        let stripF32 = try Buffer<Float>(context: cc.context, count: wantColour ? stripRows * w * 4 : 4, access: .writeOnly)
        let lut = try Buffer<SIMD4<Float>>(context: cc.context, count: useLUT && !fused ? job.maxIterations + 1 : 1)
        let lut8 = try Buffer<UInt8>(context: cc.context, count: fused ? 4 * (job.maxIterations + 1) : 4)
        var kernelNs: UInt64 = 0
        if useLUT {
            let table = try program.kernel(fused ? "fractal_palette8" : "fractal_palette")
            if fused { try table.setArguments(lut8, StructArgument(p)) } else { try table.setArguments(lut, StructArgument(p)) }
            kernelNs += try cc.launch(table, items: [job.maxIterations + 1]).durationNanoseconds()
        }

        let wantCounts = outputs.counts && ss == 1
        // The colour pass reads the counts; a fused render needs them only when asked for.
        let writeCounts: Int32 = !fused || wantCounts || outputs.iterations ? 1 : 0
        // Every strip's read-back fills its rows, so the arrays start uninitialised (no pass of
        // zeros over 4 bytes a pixel first); a render that stops early throws and returns neither.
        let imageCount = device == nil ? w * h * 4 : 0, colourCount = wantColour ? w * h * 4 : 0
        var image = LargeArrays.uninitialized(UInt8.self, count: imageCount)
        var colour = LargeArrays.uninitialized(Float.self, count: colourCount)
        var centreCounts: [UInt32] = wantCounts ? [UInt32](repeating: 0, count: w * h) : []
        var distance: [Float] = outputs.distance ? [Float](repeating: 0, count: w * h) : []
        var iterations: UInt64 = 0

        var row = 0
        while row < h {
            // A cancelled task (a view the server's client left) launches no more strips.
            if Task.isCancelled { throw CancellationError() }
            let rows = min(stripRows, h - row)
            let sampleRows = Int32(rows * ss)
            let firstSampleRow = Int32((y0 + row) * ss)
            // The derivative's output, for distance and slope colouring.
            let uArgument: [any KernelArgument] = (u.map { [$0] } ?? []) + stripArguments
            if let formulaOrbit {
                try escape.setArguments([counts, mags] + uArgument + [orbitRe, orbitIm, Int32(formulaOrbit.mainCount),
                                        Int32(formulaOrbit.count), Int32(formulaOrbit.spacingExponent), StructArgument(p),
                                        firstSampleRow, sampleRows])
            } else if let orbit {
                try escape.setArguments([counts, mags] + uArgument + [orbitRe, orbitIm, Int32(orbit.count), blaReals, blaInts,
                                        blaLevels, Int32(t.levels), Int32(orbit.spacingExponent), StructArgument(p),
                                        firstSampleRow, sampleRows])
            } else if isTexture {
                try escape.setArguments(counts, mags, texels, texture, StructArgument(p), firstSampleRow, sampleRows)
            } else if fused {
                try escape.setArguments(counts, mags, lut8, strip, StructArgument(p), firstSampleRow, sampleRows, writeCounts)
            } else if let u {
                try escape.setArguments(counts, mags, u, StructArgument(p), firstSampleRow, sampleRows, writeCounts)
            } else {
                try escape.setArguments(counts, mags, StructArgument(p), firstSampleRow, sampleRows, writeCounts)
            }
            var events = [try cc.launch(escape, items: [orbit == nil && formulaOrbit == nil ? (sw + lanes - 1) / lanes : sw, rows * ss])]
            if wantColour || !fused {
                // fractal_color's arguments; its CPU form takes no texels (no image-julia), and
                // out_f32 is there only with COLOR_F32.
                var arguments: [any KernelArgument] = [counts, mags] + (u.map { [$0] } ?? []) + (colorV ? [] : [texels, texture]) + [lut, strip]
                if wantColour { arguments.append(stripF32) }
                try color.setArguments(arguments + [StructArgument(p), Int32(rows), Int32(useLUT ? 1 : 0)])
                events.append(try cc.launch(color, items: [colorV ? (w + lanes - 1) / lanes : w, rows]))
            }
            if let device {
                try strip.copy(to: device, destinationOffset: row * w * 4, count: rows * w * 4, queue: q)
            } else {
                try image.withUnsafeMutableBufferPointer { (all) throws(CLError) in
                    let part = UnsafeMutableBufferPointer(rebasing: all[row * w * 4 ..< (row + rows) * w * 4])
                    try strip.read(into: part, count: rows * w * 4, queue: q)
                }
                if wantColour {
                    try colour.withUnsafeMutableBufferPointer { (all) throws(CLError) in
                        let part = UnsafeMutableBufferPointer(rebasing: all[row * w * 4 ..< (row + rows) * w * 4])
                        try stripF32.read(into: part, count: rows * w * 4, queue: q)
                    }
                }
            }
            for e in events { kernelNs += try e.durationNanoseconds() }
            if outputs.distance, let u {
                // Every sample's count, |z|² and u for the pixels' distances.
                let (c, m, uv) = (try counts.read(queue: q), try mags.read(queue: q), try u.read(queue: q))
                c.withUnsafeBufferPointer { cp in
                    m.withUnsafeBufferPointer { mp in
                        uv.withUnsafeBufferPointer { up in
                            distance.withUnsafeMutableBufferPointer { dp in
                                for r in 0..<rows {
                                    let s = r * ss * sw
                                    FractalCPU.distanceRow(counts: cp.baseAddress! + s, mags: mp.baseAddress! + s,
                                                           u: up.baseAddress! + 2 * s, width: w, supersampling: ss,
                                                           maxIterations: job.maxIterations, out: dp.baseAddress! + (row + r) * w)
                                }
                            }
                        }
                    }
                }
            }
            if wantCounts || outputs.iterations {
                let c = try counts.read(queue: q)
                let n = rows * ss * sw
                if wantCounts { centreCounts.replaceSubrange(row * w ..< (row + rows) * w, with: c[0 ..< rows * w]) }
                if outputs.iterations { for i in 0..<n { iterations &+= UInt64(c[i]) } }
            }
            row += rows
            progress?(Double(row) / Double(h))
        }
        return FractalResult(image: device == nil ? Image8(width: w, height: h, pixels: image) : Image8(width: 0, height: 0),
                             colour: wantColour ? ImageF(width: w, height: h, pixels: colour) : nil,
                             counts: wantCounts ? centreCounts : nil,
                             iterations: outputs.iterations ? iterations : nil,
                             distance: outputs.distance ? distance : nil,
                             kernelSeconds: Double(kernelNs) * 1e-9, wallSeconds: 0)
    }
}
