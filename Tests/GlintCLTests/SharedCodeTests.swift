import CGlintTypes
import GlintCL
import GlintCore
import GlintKernels
import GlintTestSupport
import GlintWorkloads
import Testing

/// The kernels and the Swift host read the same structs and draw the same random numbers.
@Suite struct SharedCodeTests {
    @Test func fractalParamsLayoutIsTheSameOnTheDevice() throws {
        typealias P = GlintFractalParams
        let fields: [(String, PartialKeyPath<P>)] = [
            ("center_re_bits", \P.center_re_bits), ("center_im_bits", \P.center_im_bits), ("scale_bits", \P.scale_bits),
            ("c_re_bits", \P.c_re_bits), ("c_im_bits", \P.c_im_bits), ("center_re_hi", \P.center_re_hi),
            ("center_re_lo", \P.center_re_lo), ("center_im_hi", \P.center_im_hi), ("center_im_lo", \P.center_im_lo),
            ("scale", \P.scale), ("c_re", \P.c_re), ("c_im", \P.c_im), ("bailout2", \P.bailout2),
            ("log_bailout2", \P.log_bailout2), ("power", \P.power), ("width", \P.width), ("height", \P.height),
            ("ss", \P.ss), ("max_iter", \P.max_iter), ("tex_width", \P.tex_width), ("tex_height", \P.tex_height),
            ("palette", \P.palette), ("smooth", \P.smooth), ("color", \P.color), ("light_x", \P.light_x),
            ("light_y", \P.light_y), ("light_h", \P.light_h),
        ]
        try expectDeviceLayout(P.self, "GlintFractalParams", size: 128, fields)
    }

    @Test func mistStructLayoutsAreTheSameOnTheDevice() throws {
        typealias P = GlintMistParams
        let params: [(String, PartialKeyPath<P>)] = [
            ("inv_width", \P.inv_width), ("fog_step", \P.fog_step), ("refraction", \P.refraction), ("bend", \P.bend),
            ("width", \P.width), ("height", \P.height), ("tile_size", \P.tile_size), ("tiles_x", \P.tiles_x),
            ("tiles_y", \P.tiles_y), ("shape_count", \P.shape_count), ("frame", \P.frame), ("pad0", \P.pad0),
        ]
        typealias S = GlintMistShape
        let shape: [(String, PartialKeyPath<S>)] = [
            ("ax", \S.ax), ("ay", \S.ay), ("bx", \S.bx), ("by", \S.by), ("radius", \S.radius),
            ("refract", \S.refract), ("shade", \S.shade), ("pad0", \S.pad0),
        ]
        try expectDeviceLayout(P.self, "GlintMistParams", size: 48, params)
        try expectDeviceLayout(S.self, "GlintMistShape", size: 32, shape)
    }

    /// Known-answer vectors of Philox-4x32-10 (Random123's kat_vectors), then a table of keys
    /// drawn on the device and in Swift.
    @Test func rngTwinGivesTheSameBitsAsTheKernel() throws {
        #expect(CounterRNG.philox(x: 0, y: 0, sample: 0, dim: 0, seed: 0) == SIMD4(0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8))
        #expect(CounterRNG.philox(x: .max, y: .max, sample: .max, dim: .max, seed: .max)
                == SIMD4(0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd))
        #expect(CounterRNG.philox(x: 0x243f_6a88, y: 0x85a3_08d3, sample: 0x1319_8a2e, dim: 0x0370_7344,
                                  seed: 0x299f_31d0_a409_3822) == SIMD4(0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1))

        var keys: [(UInt32, UInt32, UInt32, UInt32, UInt64)] = [
            (0, 0, 0, 0, 0), (1, 0, 0, 0, 0), (0, 1, 0, 0, 0), (0, 0, 1, 0, 0), (0, 0, 0, 1, 0), (0, 0, 0, 0, 1),
            (1919, 1079, 499, 7, 42), (.max, .max, .max, .max, .max), (12345, 678, 9, 10, 0xdead_beef_cafe_f00d),
        ]
        var s: UInt64 = 0x9e37_79b9_7f4a_7c15
        for _ in 0..<55 {
            s = s &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            keys.append((UInt32(truncatingIfNeeded: s >> 7), UInt32(truncatingIfNeeded: s >> 19) % 4096,
                         UInt32(truncatingIfNeeded: s >> 33) % 100_000, UInt32(truncatingIfNeeded: s >> 45) % 64, s))
        }
        var body = ""
        for (i, k) in keys.enumerated() {
            body += "{ uint4 r = Rng_Philox(\(k.0)u, \(k.1)u, \(k.2)u, \(k.3)u, \(k.4)ul);"
            body += " out[\(3 * i)] = ((ulong)r.x << 32) | r.y; out[\(3 * i + 1)] = ((ulong)r.z << 32) | r.w;"
            body += " out[\(3 * i + 2)] = (ulong)as_uint(Rng_Uniform(\(k.0)u, \(k.1)u, \(k.2)u, \(k.3)u, \(k.4)ul)); }\n"
        }
        let device = try runProbe(body, count: 3 * keys.count)
        for (i, k) in keys.enumerated() {
            let r = CounterRNG.philox(x: k.0, y: k.1, sample: k.2, dim: k.3, seed: k.4)
            #expect(device[3 * i] == UInt64(r.x) << 32 | UInt64(r.y), "key \(k)")
            #expect(device[3 * i + 1] == UInt64(r.z) << 32 | UInt64(r.w), "key \(k)")
            let u = CounterRNG.uniform(x: k.0, y: k.1, sample: k.2, dim: k.3, seed: k.4)
            #expect(device[3 * i + 2] == UInt64(u.bitPattern), "uniform for key \(k)")
            #expect(u >= 0 && u < 1)
        }
    }
}
