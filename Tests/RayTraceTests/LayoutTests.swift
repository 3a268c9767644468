import CGlintTypes
import GlintCL
import GlintCore
import GlintKernels
import GlintTestSupport
import GlintWorkloads
import Testing

/// The ray tracer's structs (Kernels/common/types.h) have the same size and offsets on the
/// device as Swift sees them.
@Suite struct RTLayoutTests {
    @Test func paramsLayout() throws {
        typealias P = GlintRTParams
        try expectDeviceLayout(P.self, "GlintRTParams", size: 152, [
            ("seed", \P.seed), ("origin_x", \P.origin_x), ("origin_y", \P.origin_y), ("origin_z", \P.origin_z),
            ("lens_radius", \P.lens_radius), ("corner_x", \P.corner_x), ("corner_y", \P.corner_y), ("corner_z", \P.corner_z),
            ("t_min", \P.t_min), ("horizontal_x", \P.horizontal_x), ("horizontal_y", \P.horizontal_y),
            ("horizontal_z", \P.horizontal_z), ("pad0", \P.pad0), ("vertical_x", \P.vertical_x), ("vertical_y", \P.vertical_y),
            ("vertical_z", \P.vertical_z), ("pad1", \P.pad1), ("u_x", \P.u_x), ("u_y", \P.u_y), ("u_z", \P.u_z),
            ("pad2", \P.pad2), ("v_x", \P.v_x), ("v_y", \P.v_y), ("v_z", \P.v_z), ("pad3", \P.pad3),
            ("sky_bottom_r", \P.sky_bottom_r), ("sky_bottom_g", \P.sky_bottom_g), ("sky_bottom_b", \P.sky_bottom_b),
            ("pad4", \P.pad4), ("sky_top_r", \P.sky_top_r), ("sky_top_g", \P.sky_top_g), ("sky_top_b", \P.sky_top_b),
            ("pad5", \P.pad5), ("width", \P.width), ("height", \P.height), ("max_depth", \P.max_depth), ("pad6", \P.pad6),
        ])
    }

    @Test func nodeBlockSphereMaterialLayout() throws {
        typealias N = GlintRTNode
        try expectDeviceLayout(N.self, "GlintRTNode", size: 224, [
            ("min_x", \N.min_x), ("min_y", \N.min_y), ("min_z", \N.min_z), ("max_x", \N.max_x),
            ("max_y", \N.max_y), ("max_z", \N.max_z), ("child", \N.child),
        ])
        typealias B = GlintRTSphereBlock
        try expectDeviceLayout(B.self, "GlintRTSphereBlock", size: 128, [
            ("center_x", \B.center_x), ("center_y", \B.center_y), ("center_z", \B.center_z), ("radius2", \B.radius2),
        ])
        typealias S = GlintRTSphere
        try expectDeviceLayout(S.self, "GlintRTSphere", size: 32, [
            ("center_x", \S.center_x), ("center_y", \S.center_y), ("center_z", \S.center_z), ("radius", \S.radius),
            ("inv_radius", \S.inv_radius), ("material", \S.material), ("pad0", \S.pad0), ("pad1", \S.pad1),
        ])
        typealias M = GlintRTMaterial
        try expectDeviceLayout(M.self, "GlintRTMaterial", size: 32, [
            ("albedo_r", \M.albedo_r), ("albedo_g", \M.albedo_g), ("albedo_b", \M.albedo_b), ("fuzz", \M.fuzz),
            ("ior", \M.ior), ("kind", \M.kind), ("pad0", \M.pad0), ("pad1", \M.pad1),
        ])
        #expect(GLINT_RT_EMPTY < 0 && GLINT_RT_WIDTH == 8)
    }
}
