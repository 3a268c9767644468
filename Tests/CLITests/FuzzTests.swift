// A bounded, seeded fuzz run of every file format glint reads: PNG, PFM, scene JSON, wipes JSON
// and rtow checkpoints. Each case mutates a valid file (bit flips, truncation, inserted and
// repeated spans, edited header numbers and fields) and runs the command that reads it, then
// checks the promise made to users:
//
//   - no crash (exit 0, 1 or 2 only; no signal, no timeout);
//   - a refused file gives exactly one line on stderr, "error: ...", printable;
//   - a refused file writes nothing: the folder's listing is unchanged (no temporary left) and
//     the outputs that existed before the run are byte-identical;
//   - an accepted file (a mutation can leave it valid) gives complete outputs.
//
// GLINT_FUZZ_CASES (cases per format, default 60) and GLINT_FUZZ_SEED (default 1) change the
// run; scripts/ci/fuzz.sh runs thousands of cases this way. GLINT_FUZZ_KEEP=DIR keeps every case
// that broke a promise, with the command line, for reproduction.

import Foundation
import GlintCore
import GlintTestSupport
import Testing

/// The mutations: generic byte edits for every format, plus edits that understand each
/// format's header, so that cases get past the first check often enough to test the later ones.
enum Mutator {
    static let interestingBytes: [UInt8] = [0, 0xFF, 0x7F, 0x80, 0x2D, 0x39, 0x0A, 0x0D, 0x20, 0x22, 0x2C, 0x7B, 0x5D, 0x01]
    static let interestingNumbers = ["0", "-1", "1", "-0", "2147483648", "4294967297", "99999999999999999999", "1e309",
                                     "-1e309", "1e-400", "NaN", "Infinity", "020", "+20", ".5", "20.", "0x10", "32768",
                                     "16384", "65536", "3.4e38", "-2", "1e9", "7", "16"]

    static func bytes(_ input: [UInt8], _ r: inout SplitMix64) -> [UInt8] {
        var b = input
        guard !b.isEmpty else { return [r.pick(interestingBytes)] }
        switch r.below(7) {
        case 0:  // flip 1 to 8 bits
            for _ in 0...r.below(8) { b[r.below(b.count)] ^= UInt8(1 << r.below(8)) }
        case 1:  // overwrite bytes with interesting values, mostly near the start (the header)
            for _ in 0...r.below(4) {
                let at = r.below(2) == 0 ? r.below(min(b.count, 64)) : r.below(b.count)
                b[at] = r.pick(interestingBytes)
            }
        case 2:  // truncate
            b = Array(b.prefix(r.below(b.count)))
        case 3:  // insert 1 to 16 random bytes
            let at = r.below(b.count + 1)
            b.insert(contentsOf: (0...r.below(16)).map { _ in UInt8(truncatingIfNeeded: r.next()) }, at: at)
        case 4:  // delete a span
            let at = r.below(b.count)
            b.removeSubrange(at ..< min(b.count, at + 1 + r.below(32)))
        case 5:  // repeat a span
            let at = r.below(b.count)
            let span = Array(b[at ..< min(b.count, at + 1 + r.below(64))])
            b.insert(contentsOf: span, at: r.below(b.count + 1))
        default:  // append junk
            b += (0...r.below(64)).map { _ in UInt8(truncatingIfNeeded: r.next()) }
        }
        return b
    }

    /// Replaces one run of digits (with its sign, point and exponent) by an interesting number.
    static func number(_ input: [UInt8], _ r: inout SplitMix64, within limit: Int = .max) -> [UInt8] {
        let isNum: (UInt8) -> Bool = { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D || $0 == 0x65 || $0 == 0x2B }
        var starts: [Int] = []
        for i in 0 ..< min(input.count, limit) where input[i] >= 0x30 && input[i] <= 0x39 && (i == 0 || !isNum(input[i - 1])) {
            starts.append(i)
        }
        guard !starts.isEmpty else { return bytes(input, &r) }
        let s = r.pick(starts)
        var e = s
        while e < input.count && isNum(input[e]) { e += 1 }
        var b = input
        b.replaceSubrange(s ..< e, with: Array(r.pick(interestingNumbers).utf8))
        return b
    }

    /// JSON-aware edits: a number, a duplicated member, a control character in a string, a
    /// renamed key, a removed or repeated bracket.
    static func json(_ input: [UInt8], _ r: inout SplitMix64) -> [UInt8] {
        var b = input
        switch r.below(6) {
        case 0, 1: return number(input, &r)
        case 2:  // duplicate a line (often a member: a duplicate key)
            let lines = input.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
            var out = lines
            let i = r.below(lines.count)
            out.insert(lines[i], at: i)
            return Array(out.joined(separator: [0x0A]))
        case 3:  // a control character or escape inside a string
            let quotes = input.indices.filter { input[$0] == 0x22 }
            guard let q = quotes.isEmpty ? nil : r.pick(quotes) else { return bytes(input, &r) }
            b.insert(contentsOf: r.pick([[0x1B], [0x07], [0x00], [0x5C, 0x75, 0x30, 0x30, 0x31, 0x62], [0x5C, 0x78], [0xC3], [0x0A]]), at: q + 1)
        case 4:  // rename a key by changing a letter
            let letters = input.indices.filter { input[$0] >= 0x61 && input[$0] <= 0x7A }
            guard !letters.isEmpty else { return bytes(input, &r) }
            b[r.pick(letters)] = UInt8(0x61 + r.below(26))
        default:
            return bytes(input, &r)
        }
        return b
    }

    /// PNG-aware edits: IHDR fields rewritten with a valid CRC (so libpng reads on), or a chunk
    /// length changed.
    static func png(_ input: [UInt8], _ r: inout SplitMix64) -> [UInt8] {
        guard input.count > 33, r.below(2) == 0 else { return bytes(input, &r) }
        var b = input
        func put32(_ at: Int, _ v: UInt32) { for k in 0..<4 { b[at + k] = UInt8(truncatingIfNeeded: v >> (24 - 8 * k)) } }
        switch r.below(4) {
        case 0: put32(16, UInt32(r.pick([0, 1, 7, 16384, 32768, 32769, 65535, 1 << 31, UInt32.max].map { UInt32(truncatingIfNeeded: $0) })))
        case 1: put32(20, UInt32(r.pick([0, 1, 7, 16384, 32768, 32769, 65535, 1 << 31, UInt32.max].map { UInt32(truncatingIfNeeded: $0) })))
        case 2: b[24 + r.below(5)] = r.pick([0, 1, 2, 3, 4, 6, 8, 16, 255])  // depth, colour type, methods
        default: put32(33, UInt32(truncatingIfNeeded: r.next()))  // the first chunk after IHDR: its length
        }
        if b[12..<16].elementsEqual("IHDR".utf8) {
            put32(29, chunkCRC(Array(b[12..<29])))
        }
        return b
    }
}

/// One file format under test: its valid seed file and the command that reads it.
struct FuzzTarget {
    let name: String
    let fileName: String
    let seed: [UInt8]
    let mutate: ([UInt8], inout SplitMix64) -> [UInt8]
    let command: [String]
    /// Outputs the command writes on success (relative to the work folder): each must exist
    /// before a case (as a sentinel) and be untouched by a refused one.
    let outputs: [String]
}

/// What a fuzz run found.
struct FuzzTally: CustomStringConvertible {
    var cases = 0, accepted = 0, refused = 0
    var crashes = 0, unclear = 0, touched = 0
    var problems: [String] = []

    var description: String {
        "\(cases) cases: \(refused) refused, \(accepted) accepted; \(crashes) crashes, \(unclear) unclear errors, \(touched) with files touched"
    }
}

@Suite("fuzz")
struct FuzzTests {
    static let scene = """
    {
      "name": "fuzz",
      "camera": { "lookfrom": [13, 2, 3], "lookat": [0, 0, 0], "vup": [0, 1, 0],
                  "vfov": 20, "aperture": 0.1, "focus_dist": 10 },
      "sky": { "bottom": [1, 1, 1], "top": [0.5, 0.7, 1.0] },
      "materials": {
        "ground": { "type": "lambertian", "albedo": [0.5, 0.5, 0.5] },
        "gold":   { "type": "metal", "albedo": [0.8, 0.6, 0.2], "fuzz": 0.1 },
        "glass":  { "type": "dielectric", "ior": 1.5 }
      },
      "spheres": [
        { "center": [0, -1000, 0], "radius": 1000, "material": "ground" },
        { "center": [0, 1, 0], "radius": 1, "material": "glass" },
        { "center": [0, 1, 0], "radius": -0.9, "material": "glass" },
        { "center": [4, 1, 0], "radius": 1, "material": "gold" },
        { "center": [-4, 1, 0], "radius": 1, "material": { "type": "lambertian", "albedo": [0.4, 0.2, 0.1] } }
      ]
    }
    """

    static let wipes = """
    [
      {"start": 0, "radius": 0.08, "points": [[0.1, 0.5], [0.5, 0.45], [0.9, 0.5]]},
      {"start": 1, "points": [[0.5, 0.1], [0.5, 0.9]]}
    ]
    """

    /// The five targets, their seeds made by glint itself in `s`.
    static func targets(in s: Sandbox) throws -> [FuzzTarget] {
        func make(_ args: [String]) throws {
            let r = try s.run(args + ["--device", "cpu", "-q"])
            try #require(r.status == 0, "making a seed file: \(args.joined(separator: " ")): \(r)")
        }
        try make(["fractal", "julia", "--size", "12x8", "--iterations", "50", "-o", "seed.png"])
        try make(["rtow", "--scene", "ch8", "--size", "12x8", "--spp", "1", "--depth", "3", "-o", "seed-r.png",
                  "--pfm", "seed.pfm", "--checkpoint", "seed.ckpt"])
        let cpu = ["--device", "cpu", "-q"]
        return [
            FuzzTarget(name: "png", fileName: "case.png", seed: try s.bytes("seed.png"), mutate: Mutator.png,
                       command: ["blur", "case.png", "-o", "out.png", "--sigma", "1"] + cpu, outputs: ["out.png"]),
            FuzzTarget(name: "pfm", fileName: "case.pfm", seed: try s.bytes("seed.pfm"),
                       mutate: { b, r in r.below(2) == 0 ? Mutator.number(b, &r, within: 24) : Mutator.bytes(b, &r) },
                       command: ["blur", "case.pfm", "-o", "out.pfm", "--sigma", "1"] + cpu, outputs: ["out.pfm"]),
            FuzzTarget(name: "scene", fileName: "case.json", seed: Array(scene.utf8), mutate: Mutator.json,
                       command: ["rtow", "--scene", "case.json", "--size", "8x6", "--spp", "1", "--depth", "3", "-o", "out.png"] + cpu,
                       outputs: ["out.png"]),
            FuzzTarget(name: "wipes", fileName: "case.json", seed: Array(wipes.utf8), mutate: Mutator.json,
                       command: ["mist", "--input", "seed.png", "--frames", "2", "--wipes", "case.json", "-o", "frames"] + cpu,
                       outputs: ["frames/frame_00000.png", "frames/frame_00001.png"]),
            FuzzTarget(name: "checkpoint", fileName: "case.ckpt", seed: try s.bytes("seed.ckpt"),
                       mutate: { b, r in r.below(2) == 0 ? Mutator.number(b, &r, within: 200) : Mutator.bytes(b, &r) },
                       command: ["rtow", "--scene", "ch8", "--size", "12x8", "--spp", "2", "--depth", "3", "--resume", "case.ckpt",
                                 "-o", "out.png", "--checkpoint", "out.ckpt"] + cpu,
                       outputs: ["out.png", "out.ckpt"]),
        ]
    }

    static var casesPerFormat: Int {
        ProcessInfo.processInfo.environment["GLINT_FUZZ_CASES"].flatMap(Int.init).map { max(1, $0) } ?? 60
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["GLINT_FUZZ_SEED"].flatMap { UInt64($0) } ?? 1
    }

    /// Runs `count` cases of `target` and tallies what broke a promise.
    static func fuzz(_ target: FuzzTarget, count: Int, seed: UInt64, in s: Sandbox) throws -> FuzzTally {
        var random = SplitMix64(seed: seed ^ StableSeed.of(target.name))
        var tally = FuzzTally()
        let sentinel = Array("sentinel: an output that existed before the run\n".utf8)
        let fm = FileManager.default
        try fm.createDirectory(atPath: s.path("frames"), withIntermediateDirectories: true)
        for k in 0..<count {
            var input = target.mutate(target.seed, &random)
            for _ in 0..<random.below(3) { input = target.mutate(input, &random) }
            if input == target.seed { input = Mutator.bytes(input, &random) }
            try s.write(target.fileName, input)
            for o in target.outputs { try s.write(o, sentinel) }
            let before = s.listing()
            let r = try s.run(target.command, timeout: 60)
            tally.cases += 1
            var problem: String?
            if r.timedOut || ![0, 1, 2].contains(r.status) {
                tally.crashes += 1
                problem = r.timedOut ? "timed out" : "crashed (status \(r.status))"
            } else if r.status == 0 {
                tally.accepted += 1
                for o in target.outputs where (try? s.bytes(o)) == sentinel {
                    problem = "exit 0 but \(o) was not written"
                }
            } else {
                tally.refused += 1
                let lines = r.stderrLines
                if lines.count != 1 || !lines[0].hasPrefix("error: ")
                    || lines[0].unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                    tally.unclear += 1
                    problem = "not one clear line on stderr"
                }
                let after = s.listing()
                let changed = target.outputs.filter { (try? s.bytes($0)) != sentinel }
                if after != before || !changed.isEmpty {
                    tally.touched += 1
                    problem = (problem.map { $0 + "; " } ?? "") + "files touched: "
                        + (changed.isEmpty ? "listing \(before) -> \(after)" : changed.joined(separator: ", "))
                }
            }
            if let problem {
                tally.problems.append("\(target.name) case \(k): \(problem)\n\(r)")
                if let keep = ProcessInfo.processInfo.environment["GLINT_FUZZ_KEEP"] {
                    let dir = "\(keep)/\(target.name)-\(seed)-\(k)"
                    try? fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
                    try? Data(input).write(to: URL(fileURLWithPath: "\(dir)/\(target.fileName)"))
                    try? Data(("glint " + target.command.joined(separator: " ") + "\n\(problem)\n\(r)").utf8)
                        .write(to: URL(fileURLWithPath: "\(dir)/README.txt"))
                }
            }
            // Leave the folder as the next case expects it: only the seeds and the sentinels.
            for name in s.listing() where !before.contains(name) {
                try? fm.removeItem(atPath: s.path(name))
            }
        }
        return tally
    }

    @Test(arguments: ["png", "pfm", "scene", "wipes", "checkpoint"])
    func mutatedInputsNeverCrashOrTouchOutputs(format: String) throws {
        try withSandbox { s in
            let target = try #require(try Self.targets(in: s).first { $0.name == format })
            let tally = try Self.fuzz(target, count: Self.casesPerFormat, seed: Self.seed, in: s)
            print("fuzz \(format) (seed \(Self.seed)): \(tally)")
            #expect(tally.refused > 0, "no case was refused: the mutations do not reach the checks")
            #expect(tally.problems.isEmpty, "\(tally)\n\(tally.problems.prefix(5).joined(separator: "\n"))")
        }
    }
}

/// A seed per format that does not depend on Swift's per-process hash randomisation.
enum StableSeed {
    static func of(_ text: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
        return h
    }
}
