// Numeric options, black-box: every numeric option of every command refuses out-of-range,
// non-finite and unparsable values while the command line is read, before any work and before
// any file or folder is made: one line `error: --X ...` on stderr, exit status 2, no crash.
// Negative values are values (`--roll -10`), not options; where they are legal they work.

import Foundation
import GlintCore
import Testing

/// One refused value: `args` with `value` after `option` (or `--option=value`).
struct BadNumber: Sendable, CustomTestStringConvertible {
    /// The command line before the option; "@IN" stands for a 20x20 PNG outside the work folder.
    let base: [String]
    let option: String
    let value: String
    /// Extra arguments after the value (e.g. a compare workload after --runs).
    var after: [String] = []
    /// `--option=value` instead of two words.
    var joined = false
    /// What the error line must name (default: the option).
    var mentions: String? = nil

    var args: [String] { base + (joined ? ["\(option)=\(value)"] : [option, value]) + after }
    var testDescription: String { (args).joined(separator: " ") }
}

// MARK: Values that no option of the kind accepts

/// Not numbers, not finite, or far out of any range.
private let garbage = ["nan", "-inf", "1e300", "abc", "99999999999999999999"]
/// Counts that start at 1.
private let badCounts = ["0", "-5", "-1", "1e-30", "2.5"] + garbage
/// Positive real quantities.
private let badPositive = ["0", "-5", "-1e-30"] + garbage
/// The pulse bug's frame rates (SIGILL, "infinite or NaN", run for ever).
private let badFPS = ["0", "-5", "1e-30", "1e-300", "4.9e-324", "1e-17", "0.0009", "1000.5"] + garbage
/// Values in [0, 1].
private let badUnit = ["-0.1", "-5", "1.5", "1e-30x"] + garbage
/// Sizes WxH.
private let badSizes = ["0x10", "-5x10", "10x-5", "100000x100000", "99999999999999999999x5", "abc", "10x", "nanxnan", "1e300x1", "20000x20000"]
/// Pairs X,Y of finite numbers within +-1e9 (or +-1e6 for angles): never these.
private let badPairs = ["nan,0", "0,-inf", "1e300,0", "0,-1e300", "1", "a,b", "1,2,3", "1,"]
/// Triples X,Y,Z.
private let badTriples = ["nan,0,0", "0,inf,0", "0,0,-1e300", "1,2", "1,2,3,4"]
/// Seeds (0 to 2^64 - 1).
private let badSeeds = ["-1", "-5", "18446744073709551616", "1e300", "nan", "abc", "1.5"]

private func cases(_ base: [String], _ option: String, _ values: [String], after: [String] = [], mentions: String? = nil) -> [BadNumber] {
    values.map { BadNumber(base: base, option: option, value: $0, after: after, mentions: mentions) }
        // The `--option=value` spelling for the first value too.
        + values.prefix(1).map { BadNumber(base: base, option: option, value: $0, after: after, joined: true, mentions: mentions) }
}

// MARK: The table

private let fractal = ["fractal", "mandelbrot", "--size", "16x12", "-o", "out.png", "--device", "cpu"]
private let fractalFrames = ["fractal", "mandelbrot", "--size", "16x12", "--frames", "2", "-o", "frames", "--device", "cpu"]
private let rtow = ["rtow", "--size", "8x6", "--spp", "1", "--depth", "2", "-o", "out.png", "--device", "cpu"]
private let rtowFrames = ["rtow", "--size", "8x6", "--spp", "1", "--frames", "2", "-o", "frames", "--device", "cpu"]
private let blur = ["blur", "@IN", "-o", "out.png", "--device", "cpu"]
private let mist = ["mist", "--input", "@IN", "-o", "frames", "--frames", "2", "--device", "cpu"]
private let iso = ["iso", "@IN", "-o", "out.png", "--device", "cpu"]
private let pulse = ["pulse", "-o", "frames", "--frames", "2", "--size", "8x6", "--device", "cpu"]
private let compareJob = ["fractal", "mandelbrot", "--size", "8x6", "--iterations", "8"]
private let thenIso = ["fractal", "julia", "--size", "16x12", "--device", "cpu", "-o", "out.png", "--then", "iso"]
private let thenBlur = ["fractal", "julia", "--size", "16x12", "--device", "cpu", "-o", "out.png", "--then", "blur"]

let badNumbers: [BadNumber] = {
    var all: [BadNumber] = []
    // fractal
    all += cases(fractal, "--size", badSizes)
    // Any positive decimal of at least 1e-9 is a zoom (deep zoom: DeepZoomCLITests); these are not.
    all += cases(fractal, "--zoom", ["0", "-5", "-1e-30", "nan", "-inf", "abc", "1e-30", "1e", "0x10", "1e5x"])
    all += cases(fractal, "--iterations", badCounts + ["16777217"])
    all += cases(fractal, "--bailout", ["1", "0.5", "-2", "1e10"] + garbage)
    all += cases(fractal, "--ss", badCounts + ["17"])
    all += cases(fractal, "--bit-depth", ["0", "-8", "12", "32", "8.5"] + garbage)
    all += cases(fractal, "--center", badPairs)
    all += cases(["fractal", "julia", "--size", "16x12", "-o", "out.png", "--device", "cpu"], "--c", badPairs)
    all += cases(fractal, "--frames", badCounts + ["1000001"])
    all += cases(fractalFrames, "--fps", badFPS)
    all += cases(fractalFrames, "--ramp", ["zoom=0:2", "zoom=-1:2", "zoom=1:1e100000001", "zoom=1e-30:1", "zoom=nan:1",
                                           "zoom=1:inf", "center=1e300,0:0,0", "center=nan,0:0,0", "c=0,0:0,-1e300",
                                           "center=1:2", "zoom", "-5"])
    all += cases(fractal + ["--precision", "float"], "--zoom", ["1e14"], mentions: "--zoom")  // past float precision at this size
    // rtow
    all += cases(rtow, "--size", badSizes)
    all += cases(rtow, "--spp", badCounts + ["16777217"])
    all += cases(rtow, "--depth", badCounts + ["10001"])
    all += cases(rtow, "--bit-depth", ["0", "12", "16.0"] + garbage)
    all += cases(rtow, "--seed", badSeeds)
    all += cases(rtow, "--lookfrom", badTriples)
    all += cases(rtow, "--lookat", badTriples)
    all += cases(rtow, "--vup", badTriples)
    all += cases(rtow, "--vfov", ["0", "180", "-10", "1e-400x"] + garbage)
    all += cases(rtow, "--aperture", ["-1", "-1e-30", "1e9"] + garbage)
    all += cases(rtow, "--focus-dist", badPositive)
    all += cases(rtow, "--orbit", badPairs + ["1e7,0"])
    all += cases(rtow, "--turn", badPairs + ["0,-1e7"])
    all += cases(rtow, "--roll", ["-64", "64", "-63.5"] + garbage)
    all += cases(rtow, "--distance", badPositive)
    all += cases(rtow, "--partial", badPositive + ["1e-30", "0.05", "86401"])
    all += cases(rtow, "--frames", badCounts)
    all += cases(rtowFrames, "--fps", badFPS)
    all += cases(rtowFrames, "--ramp", ["orbit=0,0:1e300,0", "orbit=nan,0:0,0", "orbit=0:1", "orbit=0,0:0,inf"])
    // rtow: the camera the options make together
    all += cases(rtow + ["--lookat", "1,2,3"], "--lookfrom", ["1,2,3"], mentions: "lookfrom")
    all += cases(rtow, "--vup", ["0,0,0"], mentions: "vup")
    // blur
    all += cases(blur, "--sigma", badPositive + ["2000.5"])
    all += cases(blur, "--repeat-runs", badCounts + ["10001"])
    all += cases(blur, "--bit-depth", ["0", "12"] + garbage)
    // mist
    all += cases(mist, "--frames", badCounts + ["1000001"])
    all += cases(mist, "--fps", badFPS)
    all += cases(mist, "--sigma", badPositive + ["2001"])
    all += cases(mist, "--drops", ["-1", "-5", "10001", "2.5"] + garbage)
    all += cases(mist, "--gravity", badPairs + ["1e7,0"])
    all += cases(mist, "--seed", badSeeds)
    // iso
    all += cases(iso, "--depth", ["-1", "-3", "4097", "-1e-30"] + garbage)
    all += cases(iso, "--corner-radius", ["-1", "-1e-30", "11", "500"] + garbage)
    all += cases(iso, "--ss", badCounts + ["9"])
    // pulse
    all += cases(pulse, "--frames", badCounts + ["1000001"])
    all += cases(pulse, "--fps", badFPS)
    // pulse: a long sequence at a low rate spans too many oscillator ticks (ran for hours)
    all += cases(["pulse", "-o", "frames", "--frames", "1000000", "--size", "8x6", "--device", "cpu"], "--fps", ["0.001", "0.05"], mentions: "oscillator ticks")
    all += cases(pulse, "--hue", badUnit)
    all += cases(pulse, "--purity-center", badUnit)
    all += cases(pulse, "--purity-range", badUnit)
    all += cases(pulse, "--size", badSizes)
    all += cases(pulse, "--ramp", ["hue=0:3", "hue=-1:0", "hue=nan:1", "hue=0:1e300", "zoom=1:2", "-5"])
    // --then passes
    all += cases(thenIso, "--depth", ["-4", "4097", "nan", "1e300"], mentions: "--then iso")
    all += cases(thenIso, "--corner-radius", ["-1", "nan", "inf"], mentions: "--then iso")
    all += cases(thenIso, "--ss", ["0", "-1", "9", "nan"], mentions: "--then iso")
    all += cases(thenBlur, "--sigma", ["0", "-1", "nan", "inf", "1e300", "2001"], mentions: "--then blur")
    // compare: its own options before and after the workload, and the workload's
    all += cases(["compare", "--a", "cpu", "--b", "cpu"], "--runs", badCounts + ["1001"], after: compareJob)
    all += cases(["compare", "--a", "cpu", "--b", "cpu"] + compareJob, "--runs", badCounts + ["1001"])
    all += cases(["compare", "--a", "cpu", "--b", "cpu"] + compareJob, "--tolerance", ["-1", "nan", "max:-1", "mean:inf%"], mentions: "tolerance")
    all += cases(["compare", "--a", "cpu", "--b", "cpu", "fractal", "mandelbrot", "--size", "8x6"], "--iterations", ["0", "-5", "nan"])
    all += cases(["compare", "--a", "cpu", "--b", "cpu", "pulse", "--size", "8x6"], "--fps", ["1e-30", "-1"])
    // bench (a workload and a backend, so a value let through would run little)
    all += cases(["bench", "--quick", "pulse", "--device", "cpu"], "--seconds", badPositive + ["1e-30", "0.001", "601"])
    return all
}()

/// Legal negative (and other signed) values: each command must run and exit 0.
let goodSignedValues: [[String]] = [
    ["fractal", "julia", "--size", "16x12", "--device", "cpu", "-o", "out.png", "--c", "-0.8,0.156", "--center", "-0.1,-0.2"],
    ["fractal", "mandelbrot", "--size", "16x12", "--device", "cpu", "-o", "out.png", "--center", "-0.75,0.1", "--zoom", "1e-3"],
    ["fractal", "mandelbrot", "--size", "16x12", "--device", "cpu", "-o", "out.png", "--center=-0.75,-0.1", "--iterations", "+64"],
    ["fractal", "burning-ship", "--size", "16x12", "--device", "cpu", "--frames", "2", "--fps", "0.001", "-o", "frames",
     "--ramp", "center=-1.755,-0.03:-1.75,-0.02", "--ramp", "c=-0.8,0.156:-0.7,-0.27"],
    ["rtow", "--size", "8x6", "--spp", "1", "--depth", "2", "-o", "out.png", "--device", "cpu",
     "--roll", "-10", "--orbit", "-30,10", "--turn", "-5,-2", "--lookfrom", "-13,2,-3", "--lookat", "-1,0,-1", "--vup", "-0.1,1,0",
     "--distance", "0.5", "--roll=-63"],
    ["rtow", "--size", "8x6", "--spp", "1", "--depth", "2", "-o", "frames", "--device", "cpu", "--frames", "2",
     "--ramp", "orbit=-30,-10:30,10"],
    ["mist", "--input", "@IN", "-o", "frames", "--frames", "2", "--device", "cpu", "--gravity", "-0.3,-1", "--drops", "0", "--fps", "1000"],
    ["iso", "@IN", "-o", "out.png", "--device", "cpu", "--depth", "0", "--corner-radius", "10", "--ss", "1"],
    ["pulse", "-o", "frames", "--frames", "2", "--size", "8x6", "--device", "cpu", "--fps", "0.001", "--hue", "1", "--ramp", "hue=1:0"],
    ["compare", "--a", "cpu", "--b", "cpu", "--runs", "1", "fractal", "julia", "--size", "8x6", "--c", "-0.8,-0.156"],
]

/// A 20x20 opaque PNG beside (not in) the work folder, so a failed run must leave work/ empty.
private func inputPNG(_ box: Sandbox) throws -> String {
    let url = box.root.appendingPathComponent("in.png")
    var image = Image8(width: 20, height: 20)
    for y in 0..<20 { for x in 0..<20 { image[x, y] = SIMD4(UInt8(x * 12), UInt8(y * 12), 90, 255) } }
    try Data(try PNG.encode(image, alpha: false)).write(to: url)
    return url.path
}

@Suite("numeric options")
struct NumericOptionTests {
    @Test("a bad numeric value: one line 'error: --X ...', exit 2, no crash, nothing written", arguments: badNumbers)
    func badValue(_ bad: BadNumber) throws {
        try withSandbox { box in
            let input = bad.args.contains("@IN") ? try inputPNG(box) : ""
            let r = try box.run(bad.args.map { $0 == "@IN" ? input : $0 }, timeout: 60)
            #expect(!r.timedOut, "timed out\n\(r)")
            #expect(r.status == 2, "a bad value is a usage error: exit 2\n\(r)")
            #expect(r.stderrLines.count == 1, "exactly one line on stderr\n\(r)")
            let line = r.stderrLines.first ?? ""
            #expect(line.hasPrefix("error: "), "the line starts with 'error: '\n\(r)")
            #expect(line.contains(bad.mentions ?? bad.option), "the line names \(bad.mentions ?? bad.option)\n\(r)")
            #expect(!r.stderr.contains("Fatal error") && !r.stderr.contains("Usage:"), "\(r)")
            #expect(r.stdout.isEmpty, "nothing on stdout\n\(r)")
            #expect(box.listing().isEmpty, "nothing may be created: \(box.listing())")
        }
    }

    @Test("the message names the range and the value given")
    func messages() throws {
        try withSandbox { box in
            let expected: [([String], String)] = [
                (["pulse", "-o", "p", "--fps", "1e-30"], "error: --fps must be between 0.001 and 1000, got 1e-30"),
                (["fractal", "mandelbrot", "--iterations", "-5"], "error: --iterations must be between 1 and 16777216, got -5"),
                (["fractal", "mandelbrot", "--iterations", "2.5"], "error: --iterations must be a whole number between 1 and 16777216, got 2.5"),
                (["rtow", "--spp", "0"], "error: --spp must be between 1 and 16777216, got 0"),
                (["rtow", "--roll", "-70"], "error: --roll must be between -63 and 63, got -70"),
                (["blur", "x.png", "--sigma", "nan"], "error: --sigma must be above 0 and at most 2000, got nan"),
            ]
            for (args, line) in expected {
                let r = try box.run(args)
                #expect(r.status == 2 && r.stderrLines == [line], "\(args)\n\(r)")
            }
            #expect(box.listing().isEmpty, "\(box.listing())")
        }
    }

    @Test("argument-parser's own usage errors: one line, exit 2, pointing to --help", arguments: [
        ["fractal", "mandelbrot", "--bogus"],
        ["fractal", "mandelbrot", "--iterations"],
        ["fractal"],
        ["rtow", "--spp"],
        ["nosuchcommand"],
        ["pulse", "-o", "p", "extra"],
    ])
    func parserErrors(_ args: [String]) throws {
        try withSandbox { box in
            let r = try box.run(args)
            #expect(r.status == 2, "\(r)")
            #expect(r.stderrLines.count == 1 && r.stderr.hasPrefix("error: ") && r.stderr.contains("--help"), "\(r)")
            #expect(box.listing().isEmpty, "\(box.listing())")
        }
    }

    @Test("failures that are not usage errors keep exit 1", arguments: [
        ["iso", "missing.png", "-o", "out.png"],
        ["fractal", "image-julia", "--texture", "missing.png", "--size", "8x6", "-o", "out.png", "--device", "cpu"],
        ["blur", "missing.png", "-o", "out.png"],
    ])
    func runtimeFailures(_ args: [String]) throws {
        try withSandbox { box in
            let r = try box.run(args)
            #expect(r.status == 1 && r.stderrLines.count == 1 && r.stderr.hasPrefix("error: "), "\(r)")
        }
    }

    @Test("legal negative values are values, not options", arguments: goodSignedValues)
    func goodSigned(_ args: [String]) throws {
        try withSandbox { box in
            let input = try inputPNG(box)
            let r = try box.run(args.map { $0 == "@IN" ? input : $0 }, timeout: 120)
            #expect(r.status == 0, "\(r)")
            #expect(r.stderr.isEmpty, "\(r)")
        }
    }
}
