import GlintCore

/// The Swift CPU twin of Kernels/pulse.cl.
extension PulseRenderer {
    /// The Swift twin of `pulse_fill`.
    public static func fillCPU(width: Int, height: Int, hsv: SIMD3<Float>) -> Image8 {
        let c = Color.hsvToRGB(hsv.x, hsv.y, hsv.z)
        let pixel: [UInt8] = [Color.to8Bit(c.x), Color.to8Bit(c.y), Color.to8Bit(c.z), 255]
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        bytes.withUnsafeMutableBufferPointer { out in
            for i in 0 ..< width * height {
                out[i * 4] = pixel[0]; out[i * 4 + 1] = pixel[1]; out[i * 4 + 2] = pixel[2]; out[i * 4 + 3] = 255
            }
        }
        return Image8(width: width, height: height, pixels: bytes)
    }
}
