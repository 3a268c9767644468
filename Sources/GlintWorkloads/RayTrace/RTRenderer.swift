import CGlintTypes
import GlintCL
import GlintCore

/// Renders an `RTJob` progressively on a backend: passes of a few samples per pixel, each added to
/// the per-pixel sums in sample order, so that pass sizes, launch sizes and resumed runs never
/// change a pixel's value on a given backend.
public enum RTRenderer {
    /// Progressive-render controls beyond the job itself.
    public struct Options: Sendable {
        /// Sums to continue (a checkpoint of the same job); nil starts from zero.
        public var resume: RTAccumulation?
        /// Calls `snapshot` with the sums after the first pass that ends `snapshotInterval`
        /// seconds after the start or the previous snapshot (partial images, checkpoints).
        public var snapshotInterval: Double?
        public var snapshot: (@Sendable (RTAccumulation) throws -> Void)?
        /// Asked between launches; true ends the render after the current pass (the result
        /// has `stoppedEarly` set and whole passes only).
        public var shouldStop: (@Sendable () -> Bool)?
        /// Seconds one OpenCL launch aims at: short enough for any GPU watchdog.
        public var launchSeconds = 0.05
        /// Builds the kernel without its x86 instructions (RT_PORTABLE), as GPUs run it: lets a
        /// CPU device test the code path GPUs take.
        public var portableKernel = false
        /// Only these rows of the image (a shard's band): the sums, the checkpoints and the
        /// result hold just them, each pixel exactly as in the whole render. nil: every row.
        public var rows: Range<Int>?

        public init(resume: RTAccumulation? = nil, snapshotInterval: Double? = nil,
                    snapshot: (@Sendable (RTAccumulation) throws -> Void)? = nil,
                    shouldStop: (@Sendable () -> Bool)? = nil) {
            self.resume = resume
            self.snapshotInterval = snapshotInterval
            self.snapshot = snapshot
            self.shouldStop = shouldStop
        }
    }

    public typealias Progress = @Sendable (RTProgress) -> Void

    public static func render(_ job: RTJob, on backend: Backend, options: Options = Options(),
                              progress: Progress? = nil) async throws -> RTResult {
        try job.validate()
        let start = Clock.now()
        let bvh = try RTBVH(scene: job.scene)
        let band = options.rows ?? 0 ..< job.height
        guard !band.isEmpty, band.lowerBound >= 0, band.upperBound <= job.height else {
            throw GlintError("rows \(band.lowerBound)..<\(band.upperBound) lie outside an image of \(job.height) rows")
        }
        // A band's sums are a checkpoint of their own: its identity names the rows.
        let id = job.identity(bvh) + (options.rows == nil ? "" : RTAccumulation.bandSuffix(band, of: job.height))
        var acc: RTAccumulation
        if let resume = options.resume {
            guard resume.verified else { throw GlintError("the checkpoint is \(RTAccumulation.legacyMessage)") }
            guard resume.width == job.width, resume.height == band.count else {
                throw GlintError("the checkpoint is a \(resume.width)x\(resume.height) render, this job is \(job.width)x\(band.count): it belongs to a different job")
            }
            guard resume.jobID == id else {
                throw GlintError("the checkpoint belongs to a different job (scene, camera, size, depth or seed differ); render it with the options that made it")
            }
            guard resume.samplesPerPixel <= job.samplesPerPixel else {
                throw GlintError(field: "samplesPerPixel", "\(job.samplesPerPixel) is fewer than the \(resume.samplesPerPixel) samples per pixel the checkpoint already holds")
            }
            acc = resume
        } else {
            // Both paths zero their own buffers.
            acc = RTAccumulation(jobID: id, width: job.width, height: band.count, zeroed: false)
        }
        let first = acc.samplesPerPixel
        var run = Run(job: job, band: band, first: first, start: start, options: options, progress: progress)
        let kernelSeconds: Double
        switch backend {
        case .cpu:
            kernelSeconds = 0
            try await renderCPU(job, bvh, &acc, &run)
        case .opencl(let cc):
            kernelSeconds = try renderCL(job, bvh, on: cc, &acc, &run)
        }
        return RTResult(image: acc.gammaImage(),
                        samples: (acc.samplesPerPixel - first) * job.width * band.count,
                        samplesPerPixel: acc.samplesPerPixel, wallSeconds: Clock.now() - start,
                        kernelSeconds: kernelSeconds, accumulation: acc, stoppedEarly: run.stopped)
    }

    /// Book-keeping shared by both backends: progress, snapshots, stopping.
    struct Run {
        let job: RTJob
        /// The rows rendered.
        let band: Range<Int>
        let first: Int
        let start: Double
        let options: Options
        let progress: Progress?
        var lastSnapshot: Double
        var stopped = false

        init(job: RTJob, band: Range<Int>, first: Int, start: Double, options: Options, progress: Progress?) {
            self.job = job
            self.band = band
            self.first = first
            self.start = start
            self.options = options
            self.progress = progress
            lastSnapshot = start
        }

        var pixels: Int { job.width * band.count }

        /// `done` whole samples per pixel, plus `rows` rows of a pass of `n` samples.
        func report(done: Int, passSamples n: Int, rows: Int) {
            guard let progress else { return }
            let traced = (done - first) * pixels + n * rows * job.width
            let todo = max((job.samplesPerPixel - first) * pixels, 1)
            progress(RTProgress(samplesPerPixel: done, targetSamplesPerPixel: job.samplesPerPixel,
                                samplesTraced: traced, seconds: Clock.now() - start,
                                fraction: min(Double(traced) / Double(todo), 1)))
        }

        func wantsSnapshot() -> Bool {
            guard options.snapshot != nil, let interval = options.snapshotInterval else { return false }
            return Clock.now() - lastSnapshot >= interval
        }

        mutating func snapshot(_ acc: RTAccumulation) throws {
            try options.snapshot?(acc)
            lastSnapshot = Clock.now()
        }

        mutating func shouldStop() -> Bool {
            if options.shouldStop?() == true { stopped = true }
            return stopped
        }
    }

    /// A copy of an array in 64-byte aligned memory.
    static func aligned<T>(_ values: [T]) -> UnsafeMutableRawPointer {
        let bytes = max(values.count * MemoryLayout<T>.stride, 64)
        let p = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        values.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return p
    }

    // MARK: Swift CPU path

    static func renderCPU(_ job: RTJob, _ bvh: RTBVH, _ acc: inout RTAccumulation, _ run: inout Run) async throws {
        let w = job.width, h = run.band.count, y0 = run.band.lowerBound, target = job.samplesPerPixel
        let nodes = aligned(bvh.nodes), blocks = aligned(bvh.blocks.isEmpty ? [GlintRTSphereBlock()] : bvh.blocks)
        let spheres = aligned(bvh.spheres.isEmpty ? [GlintRTSphere()] : bvh.spheres)
        let materials = aligned(bvh.materials)
        let params = UnsafeMutablePointer<GlintRTParams>.allocate(capacity: 1)
        params.initialize(to: job.params)
        let sums = UnsafeMutableBufferPointer<Float>.allocate(capacity: w * h * 4)
        if acc.sums.isEmpty { sums.initialize(repeating: 0) } else { _ = sums.initialize(from: acc.sums) }
        defer {
            nodes.deallocate(); blocks.deallocate(); spheres.deallocate(); materials.deallocate()
            params.deallocate(); sums.deallocate()
        }
        let scene = RTSceneData(nodes: UnsafeRawPointer(nodes), blocks: UnsafeRawPointer(blocks),
                                spheres: UnsafePointer(spheres.assumingMemoryBound(to: GlintRTSphere.self)),
                                materials: UnsafePointer(materials.assumingMemoryBound(to: GlintRTMaterial.self)))
        let out = SharedBuffer(sums)
        let p = SharedBuffer(UnsafeMutableBufferPointer(start: params, count: 1))

        var done = acc.samplesPerPixel
        // Samples per pixel per pass: grows until a pass takes about half a second.
        var passSamples = 1
        while done < target {
            if run.shouldStop() { break }
            let n = min(passSamples, target - done)
            let t0 = Clock.now()
            let first = done
            let report = run
            await CPUParallel.forEach(h, progress: { rows in report.report(done: first, passSamples: n, rows: rows) }) { r in
                let stack = RTStack()
                defer { stack.deallocate() }
                RTTrace.trace(out.base, scene, UnsafePointer(p.base), row: y0 + r, band0: y0, sample0: first, samples: n, stack: stack)
            }
            done += n
            if Clock.now() - t0 < 0.25 { passSamples = min(passSamples * 2, 256) }
            if run.wantsSnapshot() && done < target {
                acc.sums = Array(sums)
                acc.samplesPerPixel = done
                try run.snapshot(acc)
            }
        }
        acc.sums = Array(sums)
        acc.samplesPerPixel = done
    }

    // MARK: OpenCL path

    /// Returns the kernel seconds (profiling events).
    /// Renders on the device and leaves the gamma-2 RGBA image there (for passes chained after
    /// the render): the sums never come back to the host. Returns the image and the kernel time.
    public static func renderOnDevice(_ job: RTJob, on cc: ComputeContext) throws -> (image: Buffer<UInt8>, kernelSeconds: Double) {
        try job.validate()
        let bvh = try RTBVH(scene: job.scene)
        var acc = RTAccumulation(jobID: job.identity(bvh), width: job.width, height: job.height, zeroed: false)
        var run = Run(job: job, band: 0 ..< job.height, first: 0, start: Clock.now(), options: Options(), progress: nil)
        let image = try Buffer<UInt8>(context: cc.context, count: job.width * job.height * 4)
        let seconds = try renderCL(job, bvh, on: cc, &acc, &run, resolveInto: image)
        return (image, seconds)
    }

    static func renderCL(_ job: RTJob, _ bvh: RTBVH, on cc: ComputeContext, _ acc: inout RTAccumulation,
                         _ run: inout Run, resolveInto image: Buffer<UInt8>? = nil) throws -> Double {
        let w = job.width, h = run.band.count, y0 = run.band.lowerBound, target = job.samplesPerPixel
        let program = try cc.program("raytrace.cl", defines: run.options.portableKernel ? ["RT_PORTABLE"] : [])
        let kernel = try program.kernel("rt_trace")
        let q = cc.queue
        let sums: Buffer<Float>
        if acc.sums.isEmpty {
            sums = try Buffer<Float>(context: cc.context, count: w * h * 4)
            try sums.zero(queue: q)
        } else {
            sums = try Buffer<Float>(queue: q, copying: acc.sums, access: .readWrite)
        }
        let nodes = try Buffer<GlintRTNode>(queue: q, copying: bvh.nodes)
        let blocks = try Buffer<GlintRTSphereBlock>(queue: q, copying: bvh.blocks.isEmpty ? [GlintRTSphereBlock()] : bvh.blocks)
        let spheres = try Buffer<GlintRTSphere>(queue: q, copying: bvh.spheres.isEmpty ? [GlintRTSphere()] : bvh.spheres)
        let materials = try Buffer<GlintRTMaterial>(queue: q, copying: bvh.materials)
        let params = job.params

        var kernelNs: UInt64 = 0
        var done = acc.samplesPerPixel
        // Launch shape: `bandRows` rows x `passSamples` samples, sized so that one launch takes
        // about `launchSeconds` at the cost measured last; the first launch is small. Two launches
        // are in flight: the device starts the next while the host waits for the one before.
        var passSamples = 1
        var bandRows = max(1, min(h, 8192 / w))
        let goal = run.options.launchSeconds
        var inFlight: [(event: Event, rows: Int, rowEnd: Int, done: Int, n: Int)] = []
        // Of the latest finished launch: seconds per row and sample, and its rows. Sizing lags
        // one launch (the one before is still running), so growth is capped against the rows
        // actually measured, never against an unmeasured band.
        var cost: Double?
        var measuredRows = 0
        func retire() throws {
            let l = inFlight.removeFirst()
            let ns = try l.event.durationNanoseconds()
            kernelNs += ns
            cost = max(Double(ns) * 1e-9 / Double(l.rows * l.n), 1e-12)
            measuredRows = l.rows
            run.report(done: l.done, passSamples: l.n, rows: l.rowEnd)
        }
        func drain() throws { while !inFlight.isEmpty { try retire() } }
        while done < target {
            if run.shouldStop() { break }
            let n = min(passSamples, target - done)
            var row = 0
            while row < h {
                // Rows that fit the goal at the measured cost, at most 4x the rows measured.
                if let cost {
                    let fit = min(Double(h), goal / (cost * Double(n)))
                    bandRows = max(1, min(h, measuredRows * 4, Int(fit)))
                }
                let rows = min(bandRows, h - row)
                try kernel.setArguments(sums, nodes, blocks, spheres, materials, StructArgument(params),
                                        Int32(y0 + row), Int32(y0), Int32(done), Int32(n))
                // One row per group on a GPU: a padded row would add samples to the next band's pixels.
                inFlight.append((try cc.launch(kernel, items: [w, rows], gpuGroup: [64, 1]), rows, row + rows, done, n))
                try q.flush()
                row += rows
                if inFlight.count > 1 { try retire() }
            }
            done += n
            if let cost {
                // A measured whole-image launch with room for twice the samples: more samples
                // per launch; one row over the goal: fewer.
                if measuredRows == h && cost * Double(h * passSamples * 2) <= goal && passSamples < 256 { passSamples *= 2 }
                else if cost * Double(passSamples) > goal && passSamples > 1 { passSamples /= 2 }
            }
            if run.wantsSnapshot() && done < target {
                try drain()
                acc.sums = try sums.read(queue: q)
                acc.samplesPerPixel = done
                try run.snapshot(acc)
            }
        }
        try drain()
        if let image {
            let resolve = try program.kernel("rt_resolve")
            try resolve.setArguments(sums, image, Int32(w * h), Float(max(done, 1)))
            kernelNs += try cc.launch(resolve, items: [w * h]).durationNanoseconds()
            acc.samplesPerPixel = done
            return Double(kernelNs) * 1e-9
        }
        acc.sums = try sums.read(queue: q)
        acc.samplesPerPixel = done
        return Double(kernelNs) * 1e-9
    }
}
