import GlintCL
import GlintCore
import GlintTestSupport
import GlintWorkloads
import Testing
#if canImport(Glibc)
import Glibc
#endif

func floatPicture(_ w: Int, _ h: Int) -> ImageF { TestPicture.make(width: w, height: h).toFloat() }

/// CPU (Swift) and OpenCL give matching blurs (docs/DESIGN.md: 8-bit within 1 level, float within a
/// relative error of 1e-5). Both paths in fact agree exactly: integers on the exact 8-bit path, the
/// same float operations in the same order elsewhere; the tolerance is the contract.
@Suite struct BlurParityTests {
    static let cases: [(Double, BlurMethod, BorderMode)] = [
        (0.8, .exact, .reflect101), (2, .exact, .clamp), (3.5, .exact, .wrap), (5, .exact, .zero),
        (2, .recursive, .reflect101), (6, .recursive, .clamp), (12, .recursive, .wrap), (30, .recursive, .zero),
    ]

    @Test(arguments: cases)
    func eightBitWithinOneLevel(_ c: (Double, BlurMethod, BorderMode)) async throws {
        let image = TestPicture.make(width: 61, height: 37)
        let job = BlurJob(sigma: c.0, method: c.1, border: c.2)
        let cpu = try await BlurRenderer.blur(image, job, on: .cpu)
        let cl = try await BlurRenderer.blur(image, job, on: try openCL())
        #expect(cpu.method == c.1 && cl.method == c.1)
        #expect(try maxDifference(cpu.image, cl.image) <= 1)
    }

    @Test(arguments: cases)
    func floatWithinRelativeError(_ c: (Double, BlurMethod, BorderMode)) async throws {
        let image = floatPicture(45, 29)
        let job = BlurJob(sigma: c.0, method: c.1, border: c.2)
        let cpu = try await BlurRenderer.blur(image, job, on: .cpu)
        let cl = try await BlurRenderer.blur(image, job, on: try openCL())
        #expect(try maxRelative(cpu.image, cl.image) <= 1e-5)
    }
}

/// The recursive method's Swift sweeps (the extended line, stage 0 reading its window's far end from
/// the line, four pixels a step through the transposes) give the kernel's very values: every
/// operation is the kernel's, in its order. Sizes with a last row group short of 4 rows, a last
/// column strip short of 8 pixels, widths not a multiple of 4, and images smaller than the border;
/// sigma 0.3 gives boxes of width 1 and no border, where a sweep's results cannot be written over
/// its line (BoxPasses.Line.output).
@Suite struct RecursiveExactTests {
    static let cases: [(Int, Int, Double, BorderMode)] = [
        (61, 37, 2, .reflect101), (203, 7, 25, .zero), (5, 131, 60, .wrap), (64, 64, 9, .clamp), (3, 2, 40, .reflect101),
        (43, 9, 0.3, .clamp),
    ]

    @Test(arguments: cases)
    func eightBitAndFloatEqualTheKernels(_ c: (Int, Int, Double, BorderMode)) async throws {
        let job = BlurJob(sigma: c.2, method: .recursive, border: c.3)
        let image = TestPicture.make(width: c.0, height: c.1)
        let cpu = try await BlurRenderer.blur(image, job, on: .cpu)
        let cl = try await BlurRenderer.blur(image, job, on: try openCL())
        let bytes = zip(cpu.image.pixels, cl.image.pixels).count { $0 != $1 }
        let float = image.toFloat()
        let cpuF = try await BlurRenderer.blur(float, job, on: .cpu)
        let clF = try await BlurRenderer.blur(float, job, on: try openCL())
        let floats = zip(cpuF.image.pixels, clF.image.pixels).count { $0 != $1 }
        #expect(cpu.image.pixels.count == cl.image.pixels.count && cpuF.image.pixels.count == clF.image.pixels.count)
        #expect(bytes == 0 && floats == 0, "\(bytes) bytes and \(floats) floats differ")
    }
}

/// `BlurSession`, a blur repeated between preallocated buffers: on a CPU device its kernels work
/// in the session's host memory (no copies), elsewhere, or when asked, it copies. Every way gives
/// the Swift path's values, run after run and after a new image is loaded.
@Suite struct BlurSessionTests {
    @Test(arguments: [(BlurMethod.recursive, 12.0), (.exact, 2.0)])
    func everyWayEqualsTheSwiftPath(_ method: BlurMethod, _ sigma: Double) async throws {
        guard case .opencl(let cc) = try openCL() else { return }
        let (w, h) = (131, 37)
        let first = TestPicture.make(width: w, height: h), second = TestPicture.make(width: w, height: h, seed: 5, shift: 9)
        let job = BlurJob(sigma: sigma, method: method, border: .reflect101)
        for format in [PixelFormat.u8, .f32] {
            let plan = BlurPlan(job: job, format: format, width: w, height: h)
            let swift = try BlurSession(plan: plan, backend: .cpu)
            let shared = try BlurSession(plan: plan, backend: .opencl(cc))
            let copying = try BlurSession(plan: plan, backend: .opencl(cc), keepCopies: true)
            // A CPU device (PoCL in CI) works in host memory; a GPU (Oclgrind's) does not.
            let unified = try cc.device.hostUnifiedMemory
            let allowed = getenv("GLINT_ZERO_COPY").map { String(cString: $0) } != "0"
            #expect(shared.sharesHostMemory == (cc.kind == .cpu && unified && allowed) && shared.sharesHostMemory == cc.sharesHostMemory)
            #expect(!copying.sharesHostMemory && !swift.sharesHostMemory)
            for image in [first, second] {
                for session in [swift, shared, copying] {
                    if format == .u8 { try session.load(image.pixels) } else { try session.load(image.toFloat().pixels) }
                    for _ in 0..<2 { _ = try await session.run() }
                }
                if format == .u8 {
                    let want = try swift.output(UInt8.self)
                    #expect(try shared.output(UInt8.self) == want, "\(method) 8-bit, shared")
                    #expect(try copying.output(UInt8.self) == want, "\(method) 8-bit, copying")
                    #expect(want != image.pixels)
                } else {
                    let want = try swift.output(Float.self)
                    #expect(try shared.output(Float.self) == want, "\(method) float, shared")
                    #expect(try copying.output(Float.self) == want, "\(method) float, copying")
                }
            }
        }
    }

    /// Host memory shared with a device must be aligned as the device's own buffers are (kernels
    /// may use whole-vector accesses): anything else is refused with the routine's name.
    @Test func sharedHostMemoryMustBeAligned() throws {
        let cc = try openCLContext()
        let memory = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 4096)
        defer { memory.deallocate() }
        #expect(throws: CLError.self) { try Buffer<UInt8>(context: cc.context, sharing: memory + 16, count: 1024, access: .readWrite) }
        do {
            _ = try Buffer<UInt8>(context: cc.context, sharing: memory + 16, count: 1024, access: .readWrite)
        } catch {
            #expect(error.routine == "clCreateBuffer" && error.status == .invalidHostPtr)
        }
        let buffer = try Buffer<UInt8>(context: cc.context, sharing: memory, count: 1024, access: .readWrite)
        try buffer.withHostAccess(queue: cc.queue, forWriting: true) { $0.update(repeating: 7) }
        #expect(try buffer.read(queue: cc.queue) == [UInt8](repeating: 7, count: 1024))
    }
}

/// The blur kernels in every form and work-item shape (blur.cl: LANES values per vector, 1 the
/// GPU forms; CHUNKS vectors of a row per recursive column item; a device uses one, so these run
/// them all on this one: GPUs take 1 x 1, PoCL 16 x 4), on
/// images that narrow the wider shapes and leave a last item overlapping the one before it, and
/// for the recursive method with each pass split into one launch per work-group (rings limited
/// to one work-group's): the bytes and floats of the Swift path, exactly.
@Suite struct BlurKernelShapeTests {
    static let shapes: [(Int, Int)] = [(1, 1), (1, 4), (4, 1), (4, 4), (8, 2), (16, 1), (16, 4)]
    /// Recursive: odd widths (a last item moved back), widths whose rows keep vectors aligned
    /// (whole-vector stores), images that narrow the wider shapes.
    static let images: [(Int, Int, Double, BorderMode)] = [
        (203, 7, 25, .zero), (37, 130, 9, .reflect101), (3, 2, 40, .reflect101), (9, 5, 2, .wrap), (1, 1, 3, .clamp),
        (48, 21, 5, .clamp), (64, 4, 12, .reflect101),
    ]
    /// Exact: radii 3 to 15 (8-bit: those up to 9 have loops of their own on the Swift path, 10
    /// and 15 take the general one) and 3 to 20 (float), images narrower than a tap's reach, a
    /// last vector overlapping the one before it, widths whose rows keep vectors aligned, rows
    /// whose kernel steps end with a single step moved back to the row's end (150 pixels: 9
    /// double steps of 64 bytes, then one of 32 ending at byte 600), rows not a multiple of the band.
    static let exactImages: [(Int, Int, Double, BorderMode)] = [
        (203, 37, 3, .reflect101), (37, 5, 0.8, .zero), (5, 19, 2, .wrap), (3, 2, 3, .clamp), (1, 1, 1.5, .reflect101),
        (66, 20, 2.5, .clamp), (64, 9, 2, .reflect101), (16, 3, 1.2, .wrap), (150, 11, 5, .reflect101), (41, 6, 3.4, .zero),
    ]

    func onDevice<T: BitwiseCopyable & Numeric>(_ pixels: [T], _ plan: BlurPlan, _ cc: ComputeContext, ringBytes: Int?,
                                                shape: (Int, Int)) throws -> (pixels: [T], launches: Int) {
        let blur = try CLBlur(plan: plan, on: cc, ringBytes: ringBytes, shape: (lanes: shape.0, chunks: shape.1))
        let src = try Buffer<T>(queue: cc.queue, copying: pixels)
        let dst = try Buffer<T>(context: cc.context, count: pixels.count)
        let events = try blur.encode(src: src, dst: dst)
        return (try dst.read(queue: cc.queue), events.count)
    }

    /// The test picture `w` x `h` blurred by `job` on the Swift path and by the kernels of
    /// `shape` (8-bit and float): the values that differ, and the 8-bit blur's launches.
    func differences(_ job: BlurJob, _ w: Int, _ h: Int, _ cc: ComputeContext, ringBytes: Int? = nil,
                     shape: (Int, Int)) async throws -> (bytes: Int, floats: Int, launches: Int) {
        let image = TestPicture.make(width: w, height: h)
        let float = image.toFloat()
        let cpu = try await BlurRenderer.blur(image, job, on: .cpu).image.pixels
        let cpuF = try await BlurRenderer.blur(float, job, on: .cpu).image.pixels
        let cl = try onDevice(image.pixels, BlurPlan(job: job, format: .u8, width: w, height: h), cc, ringBytes: ringBytes, shape: shape)
        let clF = try onDevice(float.pixels, BlurPlan(job: job, format: .f32, width: w, height: h), cc, ringBytes: ringBytes, shape: shape)
        return (zip(cpu, cl.pixels).count { $0 != $1 }, zip(cpuF, clF.pixels).count { $0 != $1 }, cl.launches)
    }

    @Test(arguments: [1, 4, 8, 16])
    func exactFormsEqualTheSwiftPath(_ lanes: Int) async throws {
        guard case .opencl(let cc) = try openCL() else { return }
        for (w, h, sigma, border) in Self.exactImages {
            let d = try await differences(BlurJob(sigma: sigma, method: .exact, border: border), w, h, cc, shape: (lanes, 1))
            #expect(d.bytes == 0 && d.floats == 0, "\(w)x\(h) sigma \(sigma): \(d.bytes) bytes, \(d.floats) floats differ")
        }
    }

    @Test(arguments: shapes)
    func everyRecursiveShapeEqualsTheSwiftPath(_ shape: (Int, Int)) async throws {
        guard case .opencl(let cc) = try openCL() else { return }
        for (w, h, sigma, border) in Self.images {
            let job = BlurJob(sigma: sigma, method: .recursive, border: border)
            for ringBytes in [nil, 1] as [Int?] {
                let d = try await differences(job, w, h, cc, ringBytes: ringBytes, shape: shape)
                #expect(d.bytes == 0 && d.floats == 0,
                        "\(w)x\(h) sigma \(sigma), rings \(ringBytes.map { "\($0) B" } ?? "default"): \(d.bytes) bytes, \(d.floats) floats differ")
                // One launch per pass, or (rings of one work-group) one per work-group.
                #expect(ringBytes == 1 ? d.launches > 2 || w * h == 1 : d.launches == 2, "\(d.launches) launches")
            }
        }
    }
}

/// `CPUBlur.run(then:)` hands over each band of rows once, already final (the mist composes its
/// frame band by band this way): a copy of each band taken when it is handed over equals the
/// finished image, and the bands cover every row exactly once. (How soon a band comes, a matter
/// of speed only, is not checked.)
@Suite struct BlurBandTests {
    @Test(arguments: [(BlurMethod.exact, 2.0), (.recursive, 9.0), (.recursive, 0.3)])
    func bandsAreFinalWhenHandedOver(_ c: (BlurMethod, Double)) async throws {
        let (w, h) = (67, 45)
        let n = w * h * 4
        let image = TestPicture.make(width: w, height: h)
        let blur = CPUBlur(plan: BlurPlan(job: BlurJob(sigma: c.1, method: c.0), format: .u8, width: w, height: h))
        let src = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: n), dst = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: n)
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: n)
        defer { src.deallocate(); dst.deallocate(); copy.deallocate() }
        _ = src.initialize(from: image.pixels)
        dst.initialize(repeating: 0)
        copy.initialize(repeating: 0)
        let (shared, taken) = (SharedBuffer(dst), SharedBuffer(copy))
        let handed = Locked([Int](repeating: 0, count: h))
        await blur.run(src: UnsafeRawPointer(src.baseAddress!), dst: UnsafeMutableRawPointer(dst.baseAddress!)) { rows in
            (taken.base + rows.lowerBound * w * 4).update(from: shared.base + rows.lowerBound * w * 4, count: rows.count * w * 4)
            handed.withLock { for y in rows { $0[y] += 1 } }
        }
        #expect(handed.withLock { $0 } == [Int](repeating: 1, count: h))
        #expect(Array(copy) == Array(dst))
        let whole = try await BlurRenderer.blur(image, BlurJob(sigma: c.1, method: c.0), on: .cpu)
        #expect(whole.image.pixels == Array(dst))
    }
}

/// Facts that hold whatever the path.
@Suite struct BlurPropertyTests {
    /// The exact blur of one bright pixel is the sampled Gaussian: out(x, y) = g(x) g(y).
    @Test(arguments: [Backend.cpu], [0.7, 1.5, 3.0])
    func singleBrightPixelIsTheSampledGaussian(_ backend: Backend, _ sigma: Double) async throws {
        let n = 41, c = 20
        var image = ImageF(width: n, height: n)
        image[c, c] = SIMD4(1, 1, 1, 1)
        let out = try await BlurRenderer.blur(image, BlurJob(sigma: sigma, method: .exact), on: backend).image
        let size = BlurPlan.kernelSize(sigma: sigma, format: .f32)
        let g = BlurPlan.gaussian(n: size, sigma: sigma)
        let r = size / 2
        for dy in -r...r {
            for dx in -r...r {
                let want = g[dx + r] * g[dy + r]
                #expect(abs(Double(out[c + dx, c + dy].x) - want) <= 1e-6, "at (\(dx), \(dy))")
            }
        }
        // Beyond the kernel: nothing.
        #expect(out[c + r + 1, c].x == 0 && out[c, c - r - 1].x == 0)
        // And the Gaussian itself: symmetric, summing to 1, shaped exp(-x^2 / 2 sigma^2).
        #expect(abs(g.reduce(0, +) - 1) < 1e-12)
        #expect(abs(g[r + 1] / g[r] - exp(-1 / (2 * sigma * sigma))) < 1e-12)
    }

    /// The exact 8-bit blur is OpenCV's fixed-point sum, out = (sum of kx*ky*p + 2^15) >> 16 over
    /// the (2r+1)^2 taps in 1/256 (borders by the plan's maps, 0 outside under `zero`), here
    /// summed pixel by pixel, apart from the Swift path's 16-bit halves and unrolled loops: radii
    /// 1 to 10 (each radius with a loop of its own, and the general loop), and rows of 164 bytes
    /// (two 64-byte vertical steps, a 32-byte one, then single bytes), 96 bytes and 12 bytes.
    @Test(arguments: [0.3, 0.5, 0.8, 1.2, 1.5, 2, 2.2, 2.5, 3, 3.4])
    func exactEightBitIsTheFixedPointSum(_ sigma: Double) async throws {
        let borders: [BorderMode] = [.reflect101, .zero, .wrap, .clamp]
        for (k, (w, h)) in [(41, 9), (24, 5), (3, 7)].enumerated() {
            let image = TestPicture.make(width: w, height: h)
            let job = BlurJob(sigma: sigma, method: .exact, border: borders[(k + Int(sigma * 10)) % 4])
            let plan = BlurPlan(job: job, format: .u8, width: w, height: h)
            let taps = plan.fixedTaps.map(Int.init), r = plan.radius
            #expect(taps.count == 2 * r + 1 && taps.reduce(0, +) == 256)
            var want = [UInt8](repeating: 0, count: w * h * 4)
            for y in 0..<h {
                for x in 0..<w {
                    for c in 0..<4 {
                        var sum = 0
                        for dy in 0...(2 * r) where plan.rowMap[y + dy] >= 0 {
                            for dx in 0...(2 * r) where plan.colMap[x + dx] >= 0 {
                                sum += taps[dx] * taps[dy] * Int(image.pixels[(Int(plan.rowMap[y + dy]) * w + Int(plan.colMap[x + dx])) * 4 + c])
                            }
                        }
                        want[(y * w + x) * 4 + c] = UInt8((sum + 32768) >> 16)
                    }
                }
            }
            let out = try await BlurRenderer.blur(image, job, on: .cpu)
            #expect(out.method == .exact && plan.radius == BlurPlan.kernelSize(sigma: sigma, format: .u8) / 2)
            let differing = zip(out.image.pixels, want).count { $0 != $1 }
            #expect(differing == 0, "\(w)x\(h) sigma \(sigma) (radius \(r), \(job.border)): \(differing) values differ")
        }
    }

    /// OpenCV's kernel sizes; the 8-bit fixed-point taps sum to 1 (256/256) and are symmetric.
    @Test func kernelSizesAndFixedPointTapsFollowOpenCV() {
        #expect(BlurPlan.kernelSize(sigma: 2, format: .u8) == 13)
        #expect(BlurPlan.kernelSize(sigma: 2, format: .f32) == 17)
        #expect(BlurPlan.kernelSize(sigma: 10, format: .u8) == 61)
        #expect(BlurPlan.kernelSize(sigma: 0.25, format: .u8) == 3)  // round(2.5) = 2 (half to even), | 1
        for sigma in [0.5, 1, 2, 3.3, 10, 40] {
            let taps = BlurPlan.fixedPoint(BlurPlan.gaussian(n: BlurPlan.kernelSize(sigma: sigma, format: .u8), sigma: sigma))
            #expect(taps.reduce(0) { $0 + Int($1) } == 256)
            #expect(taps == taps.reversed())
        }
    }

    /// Away from the borders a blur moves light around but keeps all of it.
    @Test(arguments: [BlurMethod.exact, .recursive], [BorderMode.reflect101, .zero])
    func blurKeepsTheImageTotalAwayFromBorders(_ method: BlurMethod, _ border: BorderMode) async throws {
        let n = 96
        var image = ImageF(width: n, height: n)
        for y in 40..<56 { for x in 38..<60 { image[x, y] = SIMD4(Float(x % 7) / 7, 1, Float(y % 3) / 2, 0.5) } }
        let out = try await BlurRenderer.blur(image, BlurJob(sigma: 4, method: method, border: border), on: .cpu).image
        for c in 0..<4 {
            let before = stride(from: c, to: image.pixels.count, by: 4).reduce(0.0) { $0 + Double(image.pixels[$1]) }
            let after = stride(from: c, to: out.pixels.count, by: 4).reduce(0.0) { $0 + Double(out.pixels[$1]) }
            #expect(abs(after - before) <= 1e-4 * before, "channel \(c): \(before) -> \(after)")
        }
    }

    /// The recursive method's documented error against exact (docs/BLUR-MIST.md): on the test picture (hard
    /// edges, noise), 8-bit, at most 6 levels and on average under 0.5 of a level, for sigma >= 2.
    @Test(arguments: [2.0, 3.5, 8, 20])
    func recursiveStaysWithinItsDocumentedErrorOfExact(_ sigma: Double) async throws {
        let image = TestPicture.make(width: 120, height: 90)
        let exact = try await BlurRenderer.blur(image, BlurJob(sigma: sigma, method: .exact), on: .cpu).image
        let fast = try await BlurRenderer.blur(image, BlurJob(sigma: sigma, method: .recursive), on: .cpu).image
        #expect(try maxDifference(exact, fast) <= 6)
        #expect(try meanDifference(exact, fast) < 0.5)
        // The box widths reproduce the Gaussian's sigma to within 6%.
        let plan = BlurPlan(job: BlurJob(sigma: sigma, method: .recursive), format: .u8, width: 8, height: 8)
        #expect(abs(plan.boxSigma - sigma) <= 0.06 * sigma)
    }

    @Test func autoPicksExactForSmallSigmaAndRecursiveForLarge() {
        #expect(BlurJob(sigma: BlurJob.autoRecursiveAbove).resolvedMethod == .exact)
        #expect(BlurJob(sigma: BlurJob.autoRecursiveAbove + 0.1).resolvedMethod == .recursive)
        #expect(BlurJob(sigma: 40, method: .exact).resolvedMethod == .exact)
    }

    @Test func borderModesMapAsOpenCVDoes() {
        #expect((-3...8).map { BorderMode.reflect101.map($0, 6) } == [3, 2, 1, 0, 1, 2, 3, 4, 5, 4, 3, 2])
        #expect((-2...7).map { BorderMode.clamp.map($0, 6) } == [0, 0, 0, 1, 2, 3, 4, 5, 5, 5])
        #expect((-2...7).map { BorderMode.wrap.map($0, 6) } == [4, 5, 0, 1, 2, 3, 4, 5, 0, 1])
        #expect((-1...6).map { BorderMode.zero.map($0, 6) } == [-1, 0, 1, 2, 3, 4, 5, -1])
        // Reflection repeats for lines shorter than the kernel.
        #expect(BorderMode.reflect101.map(-7, 3) == 1 && BorderMode.reflect101.map(5, 1) == 0)
    }

    @Test func badSigmasAreRefused() {
        for sigma in [0, -1, .nan, .infinity, 1e9] {
            #expect(throws: GlintError.self) { try BlurJob(sigma: sigma).validate() }
        }
    }

    /// A blur larger than the image still works (reflection repeats) and is flat-ish, not garbage.
    @Test func tinyImagesAndHugeSigma() async throws {
        let image = TestPicture.make(width: 3, height: 2)
        for method in [BlurMethod.exact, .recursive] {
            let cpu = try await BlurRenderer.blur(image, BlurJob(sigma: 9, method: method), on: .cpu)
            let cl = try await BlurRenderer.blur(image, BlurJob(sigma: 9, method: method), on: try openCL())
            #expect(try maxDifference(cpu.image, cl.image) <= 1)
        }
    }

    /// Wide and tall lines at large sigma on OpenCL. The kernels once kept kilobytes of private
    /// rings per work-item, and a work-group as wide as the line overflowed PoCL's stack (a crash
    /// at 3840 pixels, sigma 40, where PoCL picked groups of 1920); the rings are in global memory
    /// now, the launches sized by the host.
    @Test func wideImagesAtLargeSigmaRunOnOpenCL() async throws {
        let image = TestPicture.make(width: 3840, height: 3)
        let job = BlurJob(sigma: 40, method: .recursive)
        let cpu = try await BlurRenderer.blur(image, job, on: .cpu)
        let cl = try await BlurRenderer.blur(image, job, on: try openCL())
        #expect(try maxDifference(cpu.image, cl.image) <= 1)
        let tall = TestPicture.make(width: 3, height: 3840)
        let cpuTall = try await BlurRenderer.blur(tall, job, on: .cpu)
        let clTall = try await BlurRenderer.blur(tall, job, on: try openCL())
        #expect(try maxDifference(cpuTall.image, clTall.image) <= 1)
    }
}
