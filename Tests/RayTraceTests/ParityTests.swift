import GlintCore
import GlintTestSupport
import GlintWorkloads
import Testing

/// The Swift CPU path and the OpenCL kernel render the same images (docs/DESIGN.md, Parity: mean
/// absolute difference < 0.5% of full scale, PSNR >= 40 dB, the fraction of differing pixels
/// reported). Both follow the same float steps in the same order, so on PoCL the images are
/// expected to be identical; the tolerance is the contract for devices whose sqrt or division
/// rounding differs.
@Suite struct RTParityTests {
    @Test(arguments: ["ch8", "ch10", "cover"])
    func cpuAndOpenCLAgree(_ scene: String) async throws {
        let job = smallJob(scene, 48, 32, spp: 4, seed: 3)
        let cpu = try await render(job, on: .cpu)
        let cl = try await render(job, on: try openCL())
        let cmp = try ImageComparison(cpu.image, cl.image)
        print("rtow parity \(scene) 48x32 4 spp: \(cmp)")
        #expect(cmp.meanAbsolute < 0.005, "\(scene): \(cmp)")
        #expect(cmp.psnr >= 40, "\(scene): \(cmp)")
        #expect(cpu.samples == 48 * 32 * 4 && cl.samples == cpu.samples)
        // Not flat: the scene was drawn.
        #expect(Set(cpu.image.pixels).count > 20)
    }

    /// Depth of field, a moved camera and the app's glass: the same agreement.
    @Test func gesturesAndLensAgree() async throws {
        let job = smallJob("cover", 40, 24, spp: 3, seed: 9) {
            $0.scene.useAppGlass()
            $0.camera.aperture = 0.4
            $0.camera.orbit(longitude: 25, latitude: 10)
            $0.camera.scaleDistance(0.7)
            $0.camera.turn(yaw: 3, pitch: -2)
            $0.camera.roll(12)
        }
        let cpu = try await render(job, on: .cpu)
        let cl = try await render(job, on: try openCL())
        let cmp = try ImageComparison(cpu.image, cl.image)
        #expect(cmp.meanAbsolute < 0.005 && cmp.psnr >= 40, "\(cmp)")
    }
}
