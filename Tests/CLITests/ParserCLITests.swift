// Hardened parsers at the command line (issue "Hardening", items 5 and 7): an edited checkpoint
// is refused with one line instead of resuming into a wrong image, and file content in error
// lines is escaped, never sent raw to the terminal.

import Foundation
import Testing

@Suite("hardened parsers at the command line", .serialized)
struct ParserCLITests {
    /// The bytes with the first `from` in the checkpoint's header line replaced by `to`.
    func editHeader(_ bytes: [UInt8], _ from: String, _ to: String) throws -> [UInt8] {
        let nl1 = try #require(bytes.firstIndex(of: 10))
        let nl2 = try #require(bytes[(nl1 + 1)...].firstIndex(of: 10))
        let header = String(decoding: bytes[(nl1 + 1) ..< nl2], as: UTF8.self)
        try #require(header.contains(from), "\(header)")
        return Array(bytes[...nl1]) + Array(header.replacingOccurrences(of: from, with: to).utf8) + Array(bytes[nl2...])
    }

    @Test("a checkpoint with an edited samples_per_pixel or sum is refused: one line, no image")
    func editedCheckpointIsRefused() throws {
        try withSandbox { box in
            let common = ["--scene", "ch8", "--seed", "2", "--device", "cpu"]
            let first = try box.run(smallRTOW(common + ["--spp", "2", "--checkpoint", "c.ckpt"], output: "part.png"))
            try #require(first.status == 0, "\(first)")
            let good = try box.bytes("c.ckpt")
            var nan = good
            nan[nan.count - 8] = 0xC0; nan[nan.count - 7] = 0xFF; nan[nan.count - 6] = 0xFF; nan[nan.count - 5] = 0x7F
            for (what, bytes) in [("samples_per_pixel 1", try editHeader(good, "\"samples_per_pixel\":2", "\"samples_per_pixel\":1")),
                                  ("samples_per_pixel 0", try editHeader(good, "\"samples_per_pixel\":2", "\"samples_per_pixel\":0")),
                                  ("an unknown field", try editHeader(good, "\"width\":64", "\"width\":64,\"x\":1")),
                                  ("a NaN sum", nan)] {
                try box.write("bad.ckpt", bytes)
                let r = try box.run(smallRTOW(common + ["--spp", "4", "--resume", "bad.ckpt"], output: "resumed.png"))
                expectCleanFailure(r, kind: .runtime, mentions: ["bad.ckpt"])
                #expect(!box.exists("resumed.png"), "\(what): an image was written")
            }
            // The untouched checkpoint still resumes.
            let resumed = try box.run(smallRTOW(common + ["--spp", "4", "--resume", "c.ckpt"], output: "resumed.png"))
            #expect(resumed.status == 0 && resumed.stdout.contains("(2 resumed)"), "\(resumed)")
        }
    }

    @Test("scene errors print file content escaped; duplicate keys are named")
    func fileContentInErrorsIsEscaped() throws {
        try withSandbox { box in
            try box.write("s.json", Array(#"{"spheres": [], "\u001b[2J\u001b]0;owned\u0007": 1}"#.utf8))
            let scene = try box.run(smallRTOW(["--scene", "s.json", "--device", "cpu"]))
            expectCleanFailure(scene, kind: .runtime, mentions: ["s.json", "\\u001b[2J"])
            #expect(!scene.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(scene.stderr.debugDescription)")

            try box.write("dup.json", Array(#"{"spheres": [], "spheres": []}"#.utf8))
            let dup = try box.run(smallRTOW(["--scene", "dup.json", "--device", "cpu"]))
            expectCleanFailure(dup, kind: .runtime, mentions: ["dup.json", "duplicate key \"spheres\""])
        }
    }
}
