import GlintCL
import GlintCore

/// Fills pulse frames on a backend.
public enum PulseRenderer {
    /// Frame `k` of `job`: the whole frame in the oscillator's colour, opaque.
    public static func render(_ job: PulseJob, frame k: Int, on backend: Backend) throws -> (image: Image8, kernelSeconds: Double) {
        try job.validate()
        let hsv = job.color(frame: k)
        switch backend {
        case .cpu:
            return (fillCPU(width: job.width, height: job.height, hsv: hsv), 0)
        case .opencl(let cc):
            return try fillCL(width: job.width, height: job.height, hsv: hsv, on: cc)
        }
    }

    /// Renders the frames in `frames` (default: all) in order, handing each to `body` (frame index,
    /// image, kernel seconds).
    /// The program, kernel and frame buffer are made once for the whole sequence.
    public static func renderSequence(_ job: PulseJob, on backend: Backend, frames: Range<Int>? = nil,
                                      body: (Int, Image8, Double) throws -> Void) throws {
        try job.validate()
        let all = job.colors()
        // Each frame's colour depends on its time alone: any run of frames renders on its own.
        let range = (frames ?? 0 ..< all.count).clamped(to: 0 ..< all.count)
        let colors = zip(range, all[range]).map { $0 }
        switch backend {
        case .cpu:
            for (k, hsv) in colors { try body(k, fillCPU(width: job.width, height: job.height, hsv: hsv), 0) }
        case .opencl(let cc):
            let fill = try CLFill(width: job.width, height: job.height, on: cc)
            for (k, hsv) in colors {
                let (image, seconds) = try fill.run(hsv)
                try body(k, image, seconds)
            }
        }
    }

    /// Work-items for `count` pixels: PULSE_RUN (64) pixels each, in whole groups of 16.
    static func items(_ count: Int) -> Int { ((count + 63) / 64 + 15) / 16 * 16 }

    static func fillCL(width: Int, height: Int, hsv: SIMD3<Float>, on cc: ComputeContext) throws -> (image: Image8, kernelSeconds: Double) {
        try CLFill(width: width, height: height, on: cc).run(hsv)
    }

    /// `pulse_fill` on one device: the kernel and the frame buffer, made once for any number of frames.
    struct CLFill {
        let cc: ComputeContext
        let kernel: Kernel
        let out: Buffer<UInt8>
        let width: Int, height: Int

        init(width: Int, height: Int, on cc: ComputeContext) throws {
            self.cc = cc
            self.width = width
            self.height = height
            kernel = try cc.program("pulse.cl").kernel("pulse_fill")
            out = try Buffer<UInt8>(context: cc.context, count: width * height * 4, access: .writeOnly)
        }

        /// One frame in colour `hsv`, read back; and the kernel's time.
        func run(_ hsv: SIMD3<Float>) throws -> (image: Image8, kernelSeconds: Double) {
            let count = width * height
            try kernel.setArguments(out, hsv.x, hsv.y, hsv.z, Int32(count))
            let event = try cc.queue.enqueue(kernel, global: [PulseRenderer.items(count)], local: [16])
            let pixels = try out.read(queue: cc.queue)
            return (Image8(width: width, height: height, pixels: pixels), Double(try event.durationNanoseconds()) * 1e-9)
        }
    }
}
