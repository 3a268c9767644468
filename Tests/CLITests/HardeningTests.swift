// Hardening: damaged state left by earlier runs never breaks a later one.

import Foundation
import Testing

@Suite("hardening")
struct HardeningTests {
    /// Every program-cache entry truncated, bit-flipped or swapped for another's: later OpenCL
    /// renders (`--device auto` included) still work, rebuild the entries and say so under --verbose.
    @Test func damagedProgramCacheEntriesAreRebuilt() throws {
        try withSandbox { s in
            let args = ["fractal", "julia", "--size", "32x20", "--iterations", "40"]
            let first = try s.run(args + ["--device", "opencl", "-o", "a.png", "-q"])
            try #require(first.status == 0, "\(first)")
            let fm = FileManager.default
            let dir = s.cache.appendingPathComponent("programs")
            let entries = try fm.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".bin") }.sorted()
            try #require(!entries.isEmpty, "no cache entries in \(dir.path)")
            let damages: [(String, ([UInt8]) -> [UInt8])] = [
                ("truncated to 50 bytes", { Array($0.prefix(50)) }),
                ("truncated by one byte", { Array($0.dropLast()) }),
                ("one bit flipped", { var b = $0; b[b.count / 2] ^= 1; return b }),
            ]
            for (what, damage) in damages {
                for name in entries {
                    let url = dir.appendingPathComponent(name)
                    try Data(damage([UInt8](try Data(contentsOf: url)))).write(to: url)
                }
                for device in ["opencl", "auto"] {
                    let r = try s.run(args + ["--device", device, "-o", "b.png", "--verbose"])
                    #expect(r.status == 0, "\(what), --device \(device): \(r)")
                    #expect(try s.bytes("a.png") == s.bytes("b.png"), "\(what): a different image")
                    if device == "opencl" {
                        #expect(r.stdout.contains("rebuilt from source"), "\(what): no note under --verbose\n\(r)")
                    }
                }
            }
        }
    }
}
