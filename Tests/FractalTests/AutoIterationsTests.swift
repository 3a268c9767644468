// --iterations auto: a view that the default limit leaves black gets the limit it needs, the
// same on every backend.

import GlintCore
import GlintTestSupport
import GlintWorkloads
import Testing

@Suite struct AutoIterationsTests {
    /// Seahorse valley at 1e9: with 128 iterations nearly every sample is still iterating.
    func seahorse(width: Int = 64, height: Int = 40) throws -> FractalJob {
        var job = FractalJob(formula: .mandelbrot)
        job.exactCenter = DeepComplex(re: try DeepNumber(parsing: "-0.743643887037158704752191506114774"),
                                      im: try DeepNumber(parsing: "0.131825904205311970493132056385139"))
        job.exactZoom = try DeepNumber(parsing: "1e9")
        (job.width, job.height) = (width, height)
        job.precision = .automatic(for: job)
        return job
    }

    func stillIterating(_ job: FractalJob, on backend: Backend) async throws -> Double {
        let counts = try await FractalRenderer.render(job, on: backend, outputs: .init(counts: true)).counts ?? []
        return Double(counts.filter { $0 >= UInt32(job.maxIterations) }.count) / Double(counts.count)
    }

    @Test("a view black at the default limit: auto raises it until the share still iterating stops changing")
    func blackView() async throws {
        let job = try seahorse()
        #expect(try await stillIterating(job, on: .cpu) > 0.9, "the view is black at \(job.maxIterations)")
        let cpu = try await AutoIterations.choose(for: job, on: .cpu)
        let cl = try await AutoIterations.choose(for: job, on: try openCL())
        #expect(cpu.iterations == cl.iterations && cpu.steps == cl.steps, "\(cpu.summary) vs \(cl.summary)")
        #expect(!cpu.capped && cpu.iterations > AutoIterations.start)
        // Each doubling before the answer let many samples escape; the last, almost none.
        let shares = cpu.steps.map(\.stillIterating)
        #expect(shares.last! < 0.01, "\(cpu.summary)")
        for (a, b) in zip(shares, shares.dropFirst().dropLast()) { #expect(a - b >= AutoIterations.threshold, "\(cpu.summary)") }
        var chosen = job
        chosen.maxIterations = cpu.iterations
        #expect(try await stillIterating(chosen, on: .cpu) < 0.01)
    }

    @Test("the probe is the same view, at most 256 samples across, one sample a pixel")
    func probeGrid() throws {
        var job = try seahorse(width: 1920, height: 1080)
        job.supersampling = 3
        let p = AutoIterations.probe(job)
        #expect((p.width, p.height, p.supersampling) == (256, 144, 1))
        #expect(p.exactCenter == job.exactCenter && p.exactZoom == job.exactZoom && p.precision == job.precision)
        let small = AutoIterations.probe(try seahorse(width: 40, height: 30))
        #expect((small.width, small.height) == (40, 30))
    }
}
