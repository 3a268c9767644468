// Several tasks rendering at once through one shared context and queue (a library user rendering
// from several tasks): each image equals the one rendered alone.
//
// On PoCL this runs in this process. On Oclgrind, whose runtime is not thread-safe (GlintCL's
// CallGate serialises every call to it), it runs in a child: this test binary again, filtered to
// the one test, with a loader that sees only Oclgrind (the loader reads OCL_ICD_VENDORS once per
// process, and this process already uses PoCL). Without the gate the child aborts inside the
// simulator (`Assertion 'm_kernelInvocation == NULL' failed`) or crashes in a concurrent build.

import Foundation
import GlintCL
import GlintCore
import GlintTestSupport
import GlintWorkloads
import Testing

private let childVariable = "GLINT_TEST_OCLGRIND_CHILD"

/// Six different jobs rendered at once on `backend`, then one by one; the images must agree.
private func rendersAtOnceEqualRendersAlone(on backend: Backend, size: (Int, Int)) async throws {
    let jobs: [FractalJob] = (0..<6).map { i in
        job(i % 2 == 0 ? .julia : .mandelbrot, size.0, size.1) {
            $0.maxIterations = 40 + 8 * i
            $0.cRe = -0.8 + 0.02 * Double(i)
            $0.smooth = i % 3 == 0
        }
    }
    let together = try await withThrowingTaskGroup(of: (Int, FractalResult).self) { group in
        for (i, j) in jobs.enumerated() {
            group.addTask { (i, try await render(j, on: backend)) }
        }
        var results = [FractalResult?](repeating: nil, count: jobs.count)
        for try await (i, r) in group { results[i] = r }
        return results.compactMap { $0 }
    }
    try #require(together.count == jobs.count)
    for (i, j) in jobs.enumerated() {
        let alone = try await render(j, on: backend)
        #expect(together[i].image.pixels == alone.image.pixels, "job \(i): the concurrent render differs")
        #expect(together[i].counts == alone.counts, "job \(i): the concurrent counts differ")
    }
}

@Suite struct ConcurrentUseTests {
    /// `Locked` from many tasks at once, with a value and with none (`CallGate`'s `Locked<Void>`):
    /// no update is lost, and under `swift test --sanitize=thread` no race is reported (a stored
    /// zero-sized value made ThreadSanitizer report its header read as one; see `Locked`).
    @Test func lockedIsExclusiveFromManyTasks() async {
        let count = Locked(0)
        let gate = Locked<Void>(())
        let tasks = 8, rounds = 2000
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    for _ in 0..<rounds {
                        gate.withLock { _ in }
                        count.withLock { $0 += 1 }
                    }
                }
            }
        }
        #expect(count.withLock { $0 } == tasks * rounds)
    }

    @Test func concurrentRendersOnOneContextEqualSerialOnes() async throws {
        try await rendersAtOnceEqualRendersAlone(on: try openCL(), size: (48, 32))
    }

    @Test func concurrentRendersOnOclgrindAreSerialisedSafely() async throws {
        let environment = ProcessInfo.processInfo.environment
        if environment[childVariable] != nil {
            let device = try openCLDevice()
            let platform = try device.platform.name
            try #require(platform.contains("Oclgrind"), "the child sees \(platform), not Oclgrind")
            let cc = try ComputeContext.shared(for: device)
            #expect(cc.queue.isSerialized)
            try await rendersAtOnceEqualRendersAlone(on: .opencl(cc), size: (16, 12))
            return
        }

        let library = "/usr/lib/oclgrind/liboclgrind-rt-icd.so"
        try #require(FileManager.default.fileExists(atPath: library),
                     "\(library) not found: install Debian's `oclgrind` package")
        let vendors = FileManager.default.temporaryDirectory.appendingPathComponent("glint-concurrency-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: vendors, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: vendors) }
        try Data((library + "\n").utf8).write(to: vendors.appendingPathComponent("oclgrind.icd"))

        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--testing-library", "swift-testing",
                             "--filter", "concurrentRendersOnOclgrindAreSerialisedSafely"]
        var childEnvironment = environment
        childEnvironment[childVariable] = "1"
        childEnvironment["OCL_ICD_VENDORS"] = vendors.path
        childEnvironment["OCL_ICD_FILENAMES"] = nil
        childEnvironment["GLINT_CACHE_DIR"] = vendors.appendingPathComponent("cache").path
        childEnvironment["OCLGRIND_CHECK_API"] = "1"
        process.environment = childEnvironment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // A sanitizer's report (ThreadSanitizer's or AddressSanitizer's, when this runs under
        // `swift test --sanitize=...`) is shown from its start, not cut to the output's tail.
        let report = text.range(of: "WARNING: ThreadSanitizer").map { text[$0.lowerBound...] }
            ?? text.range(of: "ERROR: AddressSanitizer").map { text[$0.lowerBound...] }
            ?? text.suffix(3000)
        #expect(process.terminationReason == .exit && process.terminationStatus == 0,
                "the child on Oclgrind failed (status \(process.terminationStatus)):\n\(report.prefix(12000))")
        // The child really ran the test (a filter that matched nothing would also exit 0).
        #expect(text.contains("concurrentRendersOnOclgrindAreSerialisedSafely") && text.contains("passed"),
                "the child did not run the test:\n\(text.suffix(2000))")
    }
}
