// Hardening of rtow checkpoints (issue "Hardening", item 5): a checkpoint carries a checksum of
// its header and sums, and every field is validated on load, so an edited or damaged checkpoint
// is refused with one clear line instead of resuming into a wrong image.

import Foundation
import GlintCore
@testable import GlintWorkloads
import Testing

@Suite struct CheckpointHardeningTests {
    /// A real checkpoint: 8 samples per pixel of a small ch10 render (16x12).
    static func eight() async throws -> RTAccumulation {
        try await RTRenderer.render(smallJob("ch10", 16, 12, spp: 8, seed: 3), on: .cpu).accumulation
    }

    /// The message of the GlintError that decoding `bytes` throws; "" (and an issue) when accepted.
    func refusal(_ bytes: [UInt8], name: String = "c.ckpt", sourceLocation: SourceLocation = #_sourceLocation) -> String {
        do {
            let acc = try RTAccumulation.decode(bytes, name: name)
            Issue.record("accepted: \(acc.samplesPerPixel) spp", sourceLocation: sourceLocation)
            return ""
        } catch {
            #expect(error.message.hasPrefix("\(name): "), "\(error.message)", sourceLocation: sourceLocation)
            #expect(!error.message.contains("\n") && error.message.count < 400, "\(error.message)", sourceLocation: sourceLocation)
            return error.message
        }
    }

    /// The bytes with the first `from` in the header line replaced by `to`.
    func editHeader(_ bytes: [UInt8], _ from: String, _ to: String) -> [UInt8] {
        let nl1 = bytes.firstIndex(of: 10)!
        let nl2 = bytes[(nl1 + 1)...].firstIndex(of: 10)!
        let header = String(decoding: bytes[(nl1 + 1) ..< nl2], as: UTF8.self)
        #expect(header.contains(from), "\(header) lacks \(from)")
        let edited = header.replacingOccurrences(of: from, with: to)
        return Array(bytes[...nl1]) + Array(edited.utf8) + Array(bytes[nl2...])
    }

    /// Offset of the first sum byte: after the last header line.
    func sumsStart(_ bytes: [UInt8]) -> Int { bytes.count - 16 * 12 * 12 }

    @Test func aGoodCheckpointReadsBackExactly() async throws {
        let acc = try await Self.eight()
        #expect(acc.samplesPerPixel == 8 && acc.sums.contains { $0 > 0 })
        let back = try RTAccumulation.decode(acc.encode(), name: "c.ckpt")
        #expect(back == acc)
        #expect(back.sums.map(\.bitPattern) == acc.sums.map(\.bitPattern))
    }

    /// samples_per_pixel edited to 0/1/7/9/16 over 8 samples of sums: refused.
    @Test(arguments: [0, 1, 7, 9, 16, -1, 16_777_217])
    func editedSampleCountsAreRefused(_ n: Int) async throws {
        let bytes = editHeader(try await Self.eight().encode(), "\"samples_per_pixel\":8", "\"samples_per_pixel\":\(n)")
        _ = refusal(bytes)
    }

    @Test(arguments: [Float.nan, -Float.nan, .infinity, -.infinity, -1, -0.5, .signalingNaN])
    func nonFiniteOrNegativeSumsAreRefused(_ value: Float) async throws {
        var bytes = try await Self.eight().encode()
        let at = sumsStart(bytes) + 12 * 37 + 4  // pixel 37, green
        withUnsafeBytes(of: value.bitPattern.littleEndian) { for (i, b) in $0.enumerated() { bytes[at + i] = b } }
        _ = refusal(bytes)
    }

    @Test func unknownOrEditedHeaderFieldsAreRefused() async throws {
        let bytes = try await Self.eight().encode()
        for (from, to) in [("\"width\":16", "\"width\":16,\"note\":\"hi\""),
                           ("\"width\":16", "\"width\":16,\"samples_per_pixel\":8"),  // a duplicate key
                           ("\"width\":16", "\"width\": 16"),                         // re-spaced
                           ("\"width\":16", "\"width\":16.0"),
                           ("\"height\":12", "\"height\":6"),
                           ("\"job\":\"", "\"job\":\"0")] {
            _ = refusal(editHeader(bytes, from, to))
        }
    }

    @Test func aFlippedBitOrAWrongLengthIsRefused() async throws {
        let bytes = try await Self.eight().encode()
        for at in [sumsStart(bytes), sumsStart(bytes) + 500, bytes.count - 1] {
            var flipped = bytes
            flipped[at] ^= 0x01  // a tiny change of one sum, still finite and >= 0
            _ = refusal(flipped)
        }
        _ = refusal(bytes + [0])
        _ = refusal(Array(bytes.dropLast()))
        _ = refusal(Array(bytes.dropLast(12)))
    }

    /// A checkpoint of the old format (no checksum) cannot be verified: `read` refuses it and
    /// says to render again, and the renderer will not resume it.
    @Test func oldCheckpointsWithoutAChecksumAreRefused() async throws {
        let acc = try await Self.eight()
        var v1 = Array("GLINT-RTOW-CHECKPOINT 1\n".utf8)
        v1 += Array("{\"job\":\"\(acc.jobID)\",\"width\":16,\"height\":12,\"samples_per_pixel\":7}".utf8) + [10]
        for i in stride(from: 0, to: acc.sums.count, by: 4) {
            for c in 0..<3 { withUnsafeBytes(of: acc.sums[i + c].bitPattern.littleEndian) { v1 += $0 } }
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("glint-ckpt-\(UUID().uuidString).ckpt").path
        try Data(v1).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let read = try RTAccumulation.read(path)
            Issue.record("an old checkpoint was read: \(read.samplesPerPixel) spp")
        } catch {
            #expect(error.message.hasPrefix("\(path): "), "\(error.message)")
            #expect(error.message.contains("checksum") && error.message.contains("render"), "\(error.message)")
        }
        if let legacy = try? RTAccumulation.decode(v1, name: "old.ckpt") {
            await #expect(throws: GlintError.self, "an unverified checkpoint must not be resumed") {
                _ = try await RTRenderer.render(smallJob("ch10", 16, 12, spp: 8, seed: 3), on: .cpu, options: .init(resume: legacy))
            }
        }
    }

    /// Resuming a good checkpoint read from a file is bit-exact with an uninterrupted render.
    @Test func resumingAGoodCheckpointFileIsBitExact() async throws {
        let job = smallJob("ch10", 16, 12, spp: 8, seed: 3)
        var three = job
        three.samplesPerPixel = 3
        let part = try await RTRenderer.render(three, on: .cpu)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("glint-ckpt-\(UUID().uuidString).ckpt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try part.accumulation.write(to: path)
        let resumed = try await RTRenderer.render(job, on: .cpu, options: .init(resume: try RTAccumulation.read(path)))
        let straight = try await Self.eight()
        #expect(resumed.accumulation.sums.map(\.bitPattern) == straight.sums.map(\.bitPattern))
        #expect(resumed.samplesPerPixel == 8 && resumed.samples == 16 * 12 * 5)
    }

    // MARK: Forged checksums

    /// A checkpoint whose checksum was recomputed after an edit, as a deliberate forger would:
    /// the field checks still refuse what no render can produce.
    func forged(_ acc: RTAccumulation, samplesPerPixel n: Int, sums: [Float], extraField: String = "") -> [UInt8] {
        let bytes = le(sums, acc.width * acc.height)
        let sum = RTAccumulation.checksum(job: acc.jobID, width: acc.width, height: acc.height, samplesPerPixel: n, sums: bytes[...])
        var header = RTAccumulation.header(job: acc.jobID, width: acc.width, height: acc.height, samplesPerPixel: n, checksum: sum)
        if !extraField.isEmpty { header.removeLast(); header += ",\(extraField)}" }
        return RTAccumulation.magic + Array(header.utf8) + [10] + bytes
    }

    /// RGB sums (alpha dropped) as little-endian float32.
    func le(_ sums: [Float], _ pixels: Int) -> [UInt8] {
        var out: [UInt8] = []
        for p in 0..<pixels {
            for c in 0..<3 { withUnsafeBytes(of: sums[p * 4 + c].bitPattern.littleEndian) { out += $0 } }
        }
        return out
    }

    @Test func forgedCheckpointsAreStillChecked() async throws {
        let acc = try await Self.eight()
        #expect(try RTAccumulation.decode(forged(acc, samplesPerPixel: 8, sums: acc.sums), name: "c.ckpt") == acc,
                "the forging helper writes what encode writes")
        for bad in [Float.nan, .infinity, -2] {
            var sums = acc.sums
            sums[4 * 50 + 2] = bad
            let message = refusal(forged(acc, samplesPerPixel: 8, sums: sums))
            #expect(message.contains("finite and >= 0") && message.contains("blue sum of pixel (2, 3)"), "\(message)")
        }
        let zero = refusal(forged(acc, samplesPerPixel: 0, sums: acc.sums))
        #expect(zero.contains("\"samples_per_pixel\" is 0"), "\(zero)")
        let unknown = refusal(forged(acc, samplesPerPixel: 8, sums: acc.sums, extraField: #""note\u001b":1"#))
        #expect(unknown.contains("unknown checkpoint header field \"note\\u001b\""), "\(unknown)")
        #expect(!unknown.unicodeScalars.contains("\u{1b}"))
    }

    /// A render stopped before its first pass checkpoints zero samples of zero sums: that reads.
    @Test func anEmptyCheckpointReads() throws {
        let empty = RTAccumulation(jobID: "0123abcd", width: 5, height: 4)
        let back = try RTAccumulation.decode(empty.encode(), name: "e.ckpt")
        #expect(back == empty && back.samplesPerPixel == 0 && back.verified)
    }
}
