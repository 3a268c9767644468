// glint fractal --exp-map into glint zoomvideo, end to end: assembled frames against the frames
// rendered directly at the same zooms.

import GlintCore
import GlintWorkloads
import Testing

@Suite("exp-map strips into zoom videos")
struct ExpMapCLITests {
    /// Near M(4,1), 60 digits: filaments at every zoom.
    static let centre = "-0.101096363845622161025785445738622565463805442826253483876931,"
        + "0.956286510809141500771096057729977435809833336510529170034314"
    static let look = ["--iterations", "3000", "--smooth", "--palette", "ocean", "--device", "opencl"]

    /// A 256-column strip from zoom 1 to 1e12, five 160x90 frames (zooms 1, 1e3, 1e6, 1e9,
    /// 1e12): each within 4% of full scale on average (10 levels) and 18 dB PSNR of the direct
    /// render. (The strip resamples: a 160x90 frame's rim would need 577 columns for one strip
    /// pixel a frame pixel, so the outer frame is softer; at 512 columns and 1e20 the measured
    /// figures were 1.9-6.3 levels and 21-25 dB.)
    @Test func assembledFramesMatchDirectRenders() throws {
        try withSandbox { box in
            let strip = try box.run(["fractal", "mandelbrot", "--center", Self.centre, "--zoom", "1e12", "--exp-map", "256",
                                     "-o", "strip.png"] + Self.look)
            try #require(strip.status == 0, "\(strip)")
            let record = try PNG.readText(box.path("strip.png")).first { $0.keyword == ExpMapStrip.keyword }
            #expect(record?.text.contains("columns=256") == true, "\(String(describing: record))")
            let video = try box.run(["zoomvideo", "strip.png", "--size", "160x90", "--frames", "5", "-o", "frames", "-q"])
            try #require(video.status == 0, "\(video)")
            let frames = try FileIO.folderEntries(box.path("frames")).filter { $0.hasSuffix(".png") }.sorted()
            try #require(frames.count == 5, "\(frames)")
            for (k, name) in frames.enumerated() {
                let zoom = "1e\(3 * k)"
                let direct = try box.run(["fractal", "mandelbrot", "--center", Self.centre, "--zoom", zoom, "--size", "160x90",
                                          "-o", "direct\(k).png", "-q"] + Self.look)
                try #require(direct.status == 0, "\(direct)")
                let d = try ImageCompare.compare(PNG.read(box.path("frames/" + name)), PNG.read(box.path("direct\(k).png")))
                #expect(d.overall.meanAbs <= 10 && d.overall.psnr >= 18, "frame \(k) at \(zoom): \(d.overall)")
            }
        }
    }

    /// A strip cut into segments (--segment-rows) on OpenCL, assembled by zoomvideo from its
    /// segments given in any order, makes the very frames the whole strip on the Swift path
    /// makes (BLA off: the segments' tables are sized to their own rows). A missing segment, or
    /// a strip of another zoom among them, is refused in one line.
    @Test func segmentsMakeTheWholeStripsFrames() throws {
        try withSandbox { box in
            let view = ["fractal", "mandelbrot", "--center", Self.centre, "--zoom", "1e30", "--exp-map", "32", "--no-bla",
                        "--iterations", "1500", "-q"]
            let whole = try box.run(view + ["--device", "cpu", "-o", "whole.png"])
            try #require(whole.status == 0, "\(whole)")
            let cut = try box.run(view + ["--device", "opencl", "--segment-rows", "120", "-o", "strip.png"])
            try #require(cut.status == 0, "\(cut)")
            let parts = try FileIO.folderEntries(box.path(".")).filter { $0.hasPrefix("strip-") }.sorted()
            #expect(parts == (1...parts.count).map { "strip-0\($0).png" } && parts.count >= 5, "\(parts)")
            #expect(!box.exists("strip.png"))
            let frames = ["--size", "80x45", "--frames", "12", "-q"]
            let a = try box.run(["zoomvideo", "whole.png", "-o", "fw"] + frames)
            let b = try box.run(["zoomvideo"] + parts.reversed() + ["-o", "fs"] + frames)
            try #require(a.status == 0 && b.status == 0, "\(a)\n\(b)")
            for k in 0..<12 {
                let name = "frame_" + String(repeating: "0", count: 5 - String(k).count) + String(k) + ".png"
                #expect(try PNG.read(box.path("fw/" + name)).pixels == PNG.read(box.path("fs/" + name)).pixels, "frame \(k)")
            }
            let gap = try box.run(["zoomvideo", parts[0], parts[2], "-o", "gap"] + frames)
            expectCleanFailure(gap, kind: .runtime, mentions: ["missing", parts[0], parts[2]])
            let end = try box.run(["zoomvideo"] + parts.dropLast() + ["-o", "end"] + frames)
            expectCleanFailure(end, kind: .runtime, mentions: ["last segment is missing"])
            let other = try box.run(["fractal", "mandelbrot", "--zoom", "1e4", "--exp-map", "32", "-q", "-o", "other.png"])
            try #require(other.status == 0, "\(other)")
            let mixed = try box.run(["zoomvideo", parts[0], "other.png", "-o", "mixed"] + frames)
            expectCleanFailure(mixed, kind: .runtime, mentions: ["not a segment"])
            #expect(!box.exists("gap") && !box.exists("end") && !box.exists("mixed"))
        }
    }

    @Test func refusals() throws {
        try withSandbox { box in
            let size = try box.run(["fractal", "mandelbrot", "--zoom", "1e6", "--exp-map", "64", "--size", "64x64", "-o", "s.png"])
            expectCleanFailure(size, kind: .validation, mentions: ["--exp-map"])
            let short = try box.run(["fractal", "mandelbrot", "--zoom", "1e1000", "--exp-map", "1024", "--segment-rows", "1500", "-o", "s.png"])
            expectCleanFailure(short, kind: .runtime, mentions: ["segment-rows", "14 octaves"])
            let alone = try box.run(["fractal", "mandelbrot", "--zoom", "1e6", "--segment-rows", "500", "-o", "s.png"])
            expectCleanFailure(alone, kind: .validation, mentions: ["--exp-map"])
            let julia = try box.run(["fractal", "julia", "--zoom", "1e6", "--exp-map", "64", "-o", "s.png"])
            expectCleanFailure(julia, kind: .runtime, mentions: ["mandelbrot"])
            let double = try box.run(["fractal", "mandelbrot", "--zoom", "1e6", "--exp-map", "64", "--precision", "double", "-o", "s.png"])
            expectCleanFailure(double, kind: .validation, mentions: ["perturbation"])
            #expect(!box.exists("s.png"))
        }
    }
}
