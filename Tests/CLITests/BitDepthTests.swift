// --bit-depth 16 (fractal, rtow, blur of a PFM): 16-bit PNGs of linear light holding precision the
// 8-bit output rounds away, on both backends.

import CPNG
import Foundation
import GlintCore
import Testing

/// A 16-bit RGB PNG's samples as libpng's simplified API reads them in its linear format: for the
/// linear (gAMA 1.0) files glint writes, the stored values unchanged. Also the IHDR depth and the gAMA.
private func read16(_ png: [UInt8]) throws -> (width: Int, height: Int, rgb: [UInt16]) {
    let header = try #require(pngHeader(png), "not a PNG")
    #expect(header.bitDepth == 16 && header.colorType == 2, "\(header)")
    // gAMA 1.0 (100000 in the chunk): the samples are linear light.
    let gama = Array("gAMA".utf8) + [0x00, 0x01, 0x86, 0xA0]
    #expect((0...(png.count - gama.count)).contains { Array(png[$0 ..< $0 + gama.count]) == gama }, "no gAMA 1.0 chunk")
    var image = png_image()
    image.version = UInt32(PNG_IMAGE_VERSION)
    defer { png_image_free(&image) }
    let rgb = png.withUnsafeBytes { raw -> [UInt16]? in
        guard png_image_begin_read_from_memory(&image, raw.baseAddress, raw.count) != 0 else { return nil }
        image.format = UInt32(PNG_FORMAT_FLAG_LINEAR) | UInt32(PNG_FORMAT_FLAG_COLOR)
        var out = [UInt16](repeating: 0, count: Int(image.width) * Int(image.height) * 3)
        let ok = out.withUnsafeMutableBytes { png_image_finish_read(&image, nil, $0.baseAddress, Int32(Int(image.width) * 3), nil) }
        return ok != 0 ? out : nil
    }
    return (header.width, header.height, try #require(rgb, "libpng could not read the 16-bit PNG"))
}

/// R, G, B of an RGBA image's pixels.
private func rgbOnly<T>(_ rgba: [T]) -> [T] { rgba.indices.filter { $0 % 4 != 3 }.map { rgba[$0] } }

/// The sRGB curve (IEC 61966-2-1) applied to linear light in [0, 1].
private func srgbEncode(_ linear: Double) -> Double {
    linear <= 0.0031308 ? linear * 12.92 : 1.055 * pow(linear, 1 / 2.4) - 0.055
}

@Suite("--bit-depth 16", .serialized)
struct BitDepthTests {
    /// CPU and OpenCL 16-bit samples of one render differ by at most this (of 65535): the
    /// palettes' sin, cos and log differ by a few ulps between glibc and a device (measured: at
    /// most 1 on PoCL 3.1).
    static let parityTolerance = 2

    @Test("fractal --smooth --bit-depth 16: the 8-bit picture's colours with finer steps, CPU and OpenCL alike")
    func smoothFractal() throws {
        try withSandbox { s in
            let view = ["fractal", "mandelbrot", "--smooth", "--palette", "ocean", "--center", "-0.7435669,0.1314023",
                        "--zoom", "300", "--iterations", "800", "--bailout", "256", "--ss", "2", "--size", "96x64"]
            var sixteen: [String: [UInt16]] = [:]
            for device in ["cpu", "opencl"] {
                let r16 = try s.run(view + ["--bit-depth", "16", "-o", "\(device)16.png", "--device", device])
                try #require(r16.status == 0, "\(r16)")
                let r8 = try s.run(view + ["-o", "\(device)8.png", "--device", device])
                try #require(r8.status == 0, "\(r8)")
                let deep = try read16(try s.bytes("\(device)16.png"))
                let eight = rgbOnly(try PNG.read(s.path("\(device)8.png")).pixels)
                #expect(deep.width == 96 && deep.height == 64 && deep.rgb.count == eight.count)
                sixteen[device] = deep.rgb

                // Precision: thousands of levels where 8 bits have at most 256 a channel, and not
                // 8-bit values times 257.
                let distinct = Set(deep.rgb).count
                #expect(distinct > 4 * Set(eight).count && distinct > 2000, "\(device): \(distinct) distinct 16-bit values")
                let off257 = deep.rgb.filter { $0 % 257 != 0 }.count
                #expect(off257 * 10 > deep.rgb.count * 9, "\(device): only \(off257) of \(deep.rgb.count) samples off the 8-bit levels")

                // The same picture: the 16-bit linear value, sRGB-encoded, rounds to the 8-bit byte
                // (within half a level plus the 16-bit step, 12.92 x 0.5/65535 at the dark end).
                var worst = 0.0
                for (v16, v8) in zip(deep.rgb, eight) {
                    worst = max(worst, abs(srgbEncode(Double(v16) / 65535) * 255 - Double(v8)))
                }
                #expect(worst <= 0.53, "\(device): 16-bit and 8-bit outputs differ by \(worst) levels")
            }
            let cpu = try #require(sixteen["cpu"]), opencl = try #require(sixteen["opencl"])
            let worst = zip(cpu, opencl).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(worst <= Self.parityTolerance, "CPU and OpenCL 16-bit samples differ by \(worst)")
        }
    }

    @Test("compare fractal --bit-depth 16 compares the 16-bit values (within 2 of 65535)")
    func compareSixteen() throws {
        try withSandbox { s in
            let r = try s.run(["compare", "--a", "cpu", "--b", "opencl", "--runs", "1", "--json", "-", "fractal", "julia",
                               "--smooth", "--palette", "ocean", "--size", "48x32", "--bit-depth", "16"])
            #expect(r.status == 0, "\(r)")
            let doc = try JSON.parse(r.stdout)
            #expect(doc["job"]?.stringValue == "fractal julia 48x32 16-bit", "\(r)")
            #expect(doc["tolerance"]?.stringValue?.hasPrefix("max:") == true, "\(r)")
            #expect(doc["passed"]?.boolValue == true, "\(r)")
            #expect((doc["overall"]?["max_abs"]?.doubleValue ?? 1) <= 2.0 / 65535, "\(r)")
        }
    }

    @Test("rtow --bit-depth 16: the linear sums, rounded to 16 bits", arguments: ["cpu", "opencl"])
    func rtowLinearSums(device: String) throws {
        try withSandbox { s in
            let r = try s.run(["rtow", "--scene", "ch10", "--size", "48x32", "--spp", "4", "--bit-depth", "16",
                               "-o", "r.png", "--pfm", "r.pfm", "--device", device])
            try #require(r.status == 0, "\(r)")
            let deep = try read16(try s.bytes("r.png"))
            let linear = rgbOnly(try PFM.decode(try s.bytes("r.pfm"), name: "r.pfm").pixels)
            #expect(deep.rgb.count == linear.count)
            var worst = 0.0
            for (v16, v) in zip(deep.rgb, linear) {
                worst = max(worst, abs(Double(v16) / 65535 - Double(min(max(v, 0), 1))))
            }
            #expect(worst <= 0.5 / 65535 + 1e-7, "16-bit samples off the PFM's linear values by \(worst * 65535) of 65535")
            #expect(Set(deep.rgb).count > 256, "\(Set(deep.rgb).count) distinct values")
        }
    }

    @Test("blur of a PFM with --bit-depth 16: the float result as a 16-bit PNG", arguments: ["cpu", "opencl"])
    func blurFloat(device: String) throws {
        try withSandbox { s in
            // A smooth ramp in fine float steps, with a hard edge.
            var input = ImageF(width: 40, height: 24)
            for y in 0..<24 {
                for x in 0..<40 {
                    let v = Float(x) / 39 * (x < 20 ? 0.3 : 1) + Float(y) / 2000
                    input[x, y] = SIMD4(v, v * v, 1 - v, 1)
                }
            }
            try s.write("in.pfm", try PFM.encode(input))
            let args = ["blur", "in.pfm", "--sigma", "2.5", "--device", device]
            let f = try s.run(args + ["-o", "out.pfm"])
            try #require(f.status == 0, "\(f)")
            let p = try s.run(args + ["-o", "out.png", "--bit-depth", "16"])
            try #require(p.status == 0, "\(p)")
            let deep = try read16(try s.bytes("out.png"))
            let blurred = rgbOnly(try PFM.decode(try s.bytes("out.pfm"), name: "out.pfm").pixels)
            #expect(deep.rgb == blurred.map { ImageF.quantize16($0) })
            #expect(Set(deep.rgb).count > 256, "\(Set(deep.rgb).count) distinct values")
        }
    }

    @Test("--bit-depth 16 where there is no 16-bit image to write is a usage error")
    func refused() throws {
        try withSandbox { s in
            try s.write("in.png", try PNG.encode(Image8(width: 4, height: 4, pixels: [UInt8](repeating: 200, count: 64))))
            try s.write("in.pfm", try PFM.encode(ImageF(width: 4, height: 4)))
            let before = s.listing()
            let cpu = ["--device", "cpu"]
            let lines: [([String], String)] = [
                (["blur", "in.png", "-o", "o.png", "--bit-depth", "16"] + cpu, "needs a .pfm input"),
                (["blur", "in.pfm", "-o", "o.pfm", "--bit-depth", "16"] + cpu, "writes a .png output"),
                (["blur", "in.pfm", "-o", "o.png"] + cpu, "with --bit-depth 16"),
                (["fractal", "julia", "--size", "8x8", "--frames", "2", "-o", "fr", "--bit-depth", "16"] + cpu, "--frames"),
                (["fractal", "julia", "--size", "8x8", "-o", "o.png", "--bit-depth", "16"] + cpu + ["--then", "iso"], "--then"),
                (["rtow", "--size", "8x8", "--spp", "1", "--frames", "2", "-o", "fr", "--bit-depth", "16"] + cpu, "--frames"),
                (["rtow", "--size", "8x8", "--spp", "1", "-o", "o.png", "--bit-depth", "16"] + cpu + ["--then", "blur"], "--then"),
                (["compare", "--a", "cpu", "--b", "cpu", "rtow", "--size", "8x8", "--spp", "1", "--bit-depth", "16"], "--bit-depth"),
                (["compare", "--a", "cpu", "--b", "cpu", "blur", "in.pfm", "--bit-depth", "16"], "--bit-depth"),
            ]
            for (args, mention) in lines {
                let r = try s.run(args)
                #expect(r.status == 2, "\(args.joined(separator: " ")): \(r)")
                #expect(r.stderrLines.count == 1 && r.stderr.contains(mention), "\(args.joined(separator: " ")): \(r)")
            }
            #expect(s.listing() == before)
        }
    }
}
