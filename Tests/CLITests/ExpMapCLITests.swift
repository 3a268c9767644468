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

    @Test func refusals() throws {
        try withSandbox { box in
            let size = try box.run(["fractal", "mandelbrot", "--zoom", "1e6", "--exp-map", "64", "--size", "64x64", "-o", "s.png"])
            expectCleanFailure(size, kind: .validation, mentions: ["--exp-map"])
            let deep = try box.run(["fractal", "mandelbrot", "--zoom", "1e1000", "--exp-map", "1024", "-o", "s.png"])
            expectCleanFailure(deep, kind: .runtime, mentions: ["rows"])
            let julia = try box.run(["fractal", "julia", "--zoom", "1e6", "--exp-map", "64", "-o", "s.png"])
            expectCleanFailure(julia, kind: .runtime, mentions: ["mandelbrot"])
            let double = try box.run(["fractal", "mandelbrot", "--zoom", "1e6", "--exp-map", "64", "--precision", "double", "-o", "s.png"])
            expectCleanFailure(double, kind: .validation, mentions: ["perturbation"])
            #expect(!box.exists("s.png"))
        }
    }
}
