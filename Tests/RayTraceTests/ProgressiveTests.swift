import GlintCore
import GlintTestSupport
import GlintWorkloads
import Testing

/// Progressive rendering: pass and launch boundaries never change a pixel, and a render stopped
/// and resumed from its checkpoint equals an uninterrupted one bit for bit on the same backend.
@Suite struct RTProgressiveTests {
    @Test(arguments: ["cpu", "opencl"])
    func resumedEqualsUninterrupted(_ name: String) async throws {
        let b = try backend(name)
        let full = smallJob("ch10", 32, 24, spp: 5, seed: 4)
        let straight = try await render(full, on: b)

        var first = full
        first.samplesPerPixel = 2
        let part = try await render(first, on: b)
        // Through the checkpoint file format, as the CLI does.
        let saved = try RTAccumulation.decode(part.accumulation.encode(), name: "test.ckpt")
        #expect(saved == part.accumulation)
        let resumed = try await render(full, on: b, options: .init(resume: saved))
        #expect(resumed.accumulation.sums == straight.accumulation.sums, "resumed sums differ")
        #expect(resumed.image == straight.image)
        #expect(resumed.samples == 32 * 24 * 3, "only the missing samples are traced")
        #expect(resumed.samplesPerPixel == 5)
    }

    /// A render asked to stop keeps whole passes; resuming it completes the same image.
    @Test(arguments: ["cpu", "opencl"])
    func stoppedRenderResumes(_ name: String) async throws {
        let b = try backend(name)
        let job = smallJob("cover", 24, 16, spp: 6, seed: 2)
        let straight = try await render(job, on: b)
        let calls = Locked(0)
        var options = RTRenderer.Options()
        options.shouldStop = { calls.withLock { $0 += 1; return $0 } > 2 }
        let stopped = try await render(job, on: b, options: options)
        #expect(stopped.stoppedEarly)
        #expect(stopped.samplesPerPixel > 0 && stopped.samplesPerPixel < 6)
        let finished = try await render(job, on: b, options: .init(resume: stopped.accumulation))
        #expect(!finished.stoppedEarly)
        #expect(finished.accumulation.sums == straight.accumulation.sums)
    }

    /// Renders `job` on OpenCL with the default options and with `change` applied: the pair.
    func renderOnOpenCL(_ job: RTJob, andWith change: (inout RTRenderer.Options) -> Void) async throws -> (RTResult, RTResult) {
        let cl = try openCL()
        var options = RTRenderer.Options()
        change(&options)
        return (try await render(job, on: cl), try await render(job, on: cl, options: options))
    }

    /// One-row launches (a watchdog-shy shape) give the same sums as the adaptive ones.
    @Test func launchShapeDoesNotMatter() async throws {
        let (normal, sliced) = try await renderOnOpenCL(smallJob("ch8", 20, 12, spp: 3, seed: 5)) { $0.launchSeconds = 1e-9 }
        #expect(sliced.accumulation.sums == normal.accumulation.sums)
    }

    /// The kernel as GPUs build it (no x86 instructions) gives the same sums as the x86 build.
    @Test func portableKernelMatches() async throws {
        let (native, portable) = try await renderOnOpenCL(smallJob("cover", 40, 24, spp: 3, seed: 2)) { $0.portableKernel = true }
        #expect(portable.accumulation.sums == native.accumulation.sums)
        #expect(native.accumulation.sums.contains { $0 > 0 })
    }

    /// Snapshots come with whole passes, carry the job's identity and count samples.
    @Test func snapshotsArePartialAccumulations() async throws {
        let seen = Locked<[Int]>([])
        var options = RTRenderer.Options()
        options.snapshotInterval = 0
        options.snapshot = { acc in seen.withLock { $0.append(acc.samplesPerPixel) } }
        let result = try await render(smallJob("ch8", 16, 8, spp: 9, seed: 1), on: .cpu, options: options)
        let counts = seen.withLock { $0 }
        #expect(!counts.isEmpty && counts == counts.sorted() && counts.allSatisfy { $0 > 0 && $0 < 9 }, "\(counts)")
        #expect(result.accumulation.samplesPerPixel == 9)
    }

    @Test func aCheckpointOfAnotherJobIsRefused() async throws {
        let part = try await render(smallJob("ch10", 16, 12, spp: 1, seed: 1), on: .cpu)
        for other in [smallJob("ch10", 16, 12, spp: 2, seed: 2), smallJob("ch8", 16, 12, spp: 2, seed: 1),
                      smallJob("ch10", 16, 12, spp: 2, seed: 1) { $0.maxDepth = 10 },
                      smallJob("ch10", 16, 12, spp: 2, seed: 1) { $0.camera.vfov = 30 }] {
            await #expect(throws: GlintError.self) {
                _ = try await render(other, on: .cpu, options: .init(resume: part.accumulation))
            }
        }
        do {
            _ = try await render(smallJob("ch10", 16, 10, spp: 2, seed: 1), on: .cpu, options: .init(resume: part.accumulation))
            Issue.record("a checkpoint of another size was accepted")
        } catch let error as GlintError {
            #expect(error.message.contains("different job"), "\(error)")
        }
        // More samples than asked for.
        var more = smallJob("ch10", 16, 12, spp: 1, seed: 1)
        more.samplesPerPixel = 3
        let three = try await render(more, on: .cpu)
        await #expect(throws: GlintError.self) {
            _ = try await render(smallJob("ch10", 16, 12, spp: 2, seed: 1), on: .cpu, options: .init(resume: three.accumulation))
        }
    }

    @Test func damagedCheckpointsAreRefused() throws {
        let acc = RTAccumulation(jobID: "abc", width: 4, height: 3)
        let bytes = acc.encode()
        #expect(try RTAccumulation.decode(bytes, name: "c") == acc)
        for bad in [Array(bytes.prefix(bytes.count - 5)), Array("hello".utf8), [], Array(bytes.prefix(30))] {
            #expect(throws: GlintError.self) { _ = try RTAccumulation.decode(bad, name: "c.ckpt") }
        }
    }

    @Test func gammaTwoOutputIsTheBooks() {
        // sqrt, clamp to 0.999, times 256, truncated.
        #expect(RTAccumulation.gammaByte(0) == 0)
        #expect(RTAccumulation.gammaByte(0.25) == 128)
        #expect(RTAccumulation.gammaByte(1) == 255)
        #expect(RTAccumulation.gammaByte(4) == 255)
        #expect(RTAccumulation.gammaByte(.nan) == 0)
    }

    @Test func gammaImageIsGammaByteForEveryValue() throws {
        // Three pixels, RGB (the vector loop and its tail), of awkward sums; 2 samples per pixel.
        let values: [Float] = [0, 0.5, 2, .nan, -1, .infinity, 1e-30, 0.999 * 0.999 * 2, 0.3]
        var bytes = Array("GLINT-RTOW-CHECKPOINT 1\n".utf8)
        bytes += Array(#"{"job":"g","width":3,"height":1,"samples_per_pixel":2}"#.utf8) + [10]
        for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes += $0 } }
        let acc = try RTAccumulation.decode(bytes, name: "g")
        let image = acc.gammaImage()
        for (k, v) in values.enumerated() {
            let i = (k / 3) * 4 + k % 3
            #expect(image.pixels[i] == RTAccumulation.gammaByte(v / 2), "value \(v)")
        }
        #expect(image.pixels[3] == 255 && image.pixels[7] == 255 && image.pixels[11] == 255)
    }
}
