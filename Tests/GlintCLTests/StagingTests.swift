// Copies through pinned staging (PinnedStaging): on a GPU every large copy between host and
// device takes this path; here a queue is made to take it on the first OpenCL device (PoCL, or
// Oclgrind in its lane), and what arrives must be every byte that left, at every size around
// the pieces' boundaries.

@testable import GlintCL
import GlintCore
import GlintTestSupport
@testable import GlintWorkloads
import Testing

@Suite struct StagingTests {
    /// Bytes that differ from position to position (a piece copied to the wrong place shows).
    private func pattern(_ count: Int, seed: UInt32) -> [UInt8] {
        var x = seed | 1
        return (0..<count).map { _ in
            x ^= x << 13; x ^= x >> 17; x ^= x << 5
            return UInt8(truncatingIfNeeded: x)
        }
    }

    @Test("staged writes and reads give back every byte, across the pieces' boundaries",
          arguments: [1 << 20, 8 << 20, (8 << 20) + 1, 3 * (8 << 20) - 5, 5 * (8 << 20) + 4096])
    func roundTrip(bytes: Int) throws {
        let cc = try openCLContext()
        let queue = try CommandQueue(context: cc.context, staging: true)
        #expect(queue.usesStaging)
        let data = pattern(bytes, seed: UInt32(bytes & 0xffff_ffff))
        let buffer = try Buffer<UInt8>(context: cc.context, count: bytes)
        let before = queue.transferNanoseconds
        try buffer.write(data, queue: queue)
        let back = try buffer.read(queue: queue)
        #expect(back == data, "a staged copy of \(bytes) bytes changed them")
        #expect(queue.transferNanoseconds > before, "the copies' device time was not counted")
        // A partial read into a larger destination fills only its first elements.
        var part = [UInt8](repeating: 7, count: bytes)
        let n = bytes - 3
        try part.withUnsafeMutableBufferPointer { try buffer.read(into: $0, count: n, queue: queue) }
        #expect(Array(part[..<n]) == Array(data[..<n]) && part[n...].allSatisfy { $0 == 7 })
    }

    @Test("a device-side copy between the staged copies sees the written bytes")
    func stagedThenDevice() throws {
        let cc = try openCLContext()
        let queue = try CommandQueue(context: cc.context, staging: true)
        let count = (20 << 20) / 4 + 3
        let values = (0..<count).map { Float($0) * 0.5 }
        let a = try Buffer<Float>(queue: queue, copying: values)
        let b = try Buffer<Float>(context: cc.context, count: count)
        try a.copy(to: b, count: count, queue: queue)
        #expect(try b.read(queue: queue) == values)
    }

    @Test("GLINT_STAGING: 0 never, 1 always, unset where the device has memory of its own")
    func stagingChoice() {
        #expect(CommandQueue.stagingAllowed("0", unifiedMemory: false) == false)
        #expect(CommandQueue.stagingAllowed("1", unifiedMemory: true) == true)
        #expect(CommandQueue.stagingAllowed(nil, unifiedMemory: false) == true)
        #expect(CommandQueue.stagingAllowed(nil, unifiedMemory: true) == false)
        #expect(CommandQueue.stagingAllowed("yes", unifiedMemory: true) == false)
    }

    @Test("the device's peak rates are measured with positive, finite figures")
    func devicePeak() throws {
        let peak = try DevicePeak.measure(on: try openCLContext())
        #expect(peak.flops.isFinite && peak.flops > 0)
        #expect(peak.bytesPerSecond.isFinite && peak.bytesPerSecond > 0)
        #expect(peak.fmaLaunches >= 5 && peak.copyLaunches >= 5)
        #expect([1, 4, 8, 16].contains(peak.fmaWidth))
        #expect(peak.copyBytes >= 1 << 16 && peak.copyBytes % 16 == 0)
    }
}
