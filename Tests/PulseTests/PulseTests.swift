import GlintCore
import GlintTestSupport
import GlintWorkloads
import Testing

@Suite struct PulseTests {
    @Test func theOscillatorFollowsTheSeedsRule() {
        var o = PulseOscillator()
        var values: [Double] = []
        var turns: [Int] = []
        var wasIncreasing = o.increasing
        for t in 1...1000 {
            o.tick()
            values.append(o.location)
            if o.increasing != wasIncreasing { turns.append(t); wasIncreasing = o.increasing }
        }
        #expect(abs(values[0] - 0.51) < 1e-12 && abs(values[1] - 0.52) < 1e-12)
        // From 0.5 up to 1 takes 50 steps, then 100 down to 0, 100 up, ...: it turns every ~100 ticks.
        #expect(turns.count >= 9)
        #expect(turns[0] >= 49 && turns[0] <= 51, "first turn at tick \(turns[0])")
        for (a, b) in zip(turns, turns.dropFirst()) { #expect(b - a >= 99 && b - a <= 101, "turns at \(a) and \(b)") }
        // Each step is 0.01 (up or down), and the location never strays past one step beyond [0, 1].
        for (a, b) in zip(values, values.dropFirst()) { #expect(abs(abs(b - a) - 0.01) < 1e-9) }
        #expect(values.allSatisfy { $0 > -0.011 && $0 < 1.011 })
    }

    @Test func purityMapsToSaturationAndValueAsTheSeedDoes() {
        func hsv(_ location: Double) -> (Double, Double) {
            let c = PulseJob.hsv(hue: 0, purityCenter: 0.5, purityRange: 0.7, location: location)
            return (c.s, c.v)
        }
        // purity = 0.15 + 0.7 * location: at 0.5 both saturation and value fold to 1.
        #expect(abs(hsv(0.5).0 - 1) < 1e-12 && abs(hsv(0.5).1 - 1) < 1e-12)
        // location 0: purity 0.15 sets saturation 0.3; value stays 0.5, folded to 1.
        #expect(abs(hsv(0).0 - 0.3) < 1e-12 && abs(hsv(0).1 - 1) < 1e-12)
        // location 1: purity 0.85 sets value 2 * (1 - 0.85) = 0.3; saturation stays 0.5 -> 1.
        #expect(abs(hsv(1).0 - 1) < 1e-12 && abs(hsv(1).1 - 0.3) < 1e-12)
        // No range: the centre alone decides.
        let still = PulseJob.hsv(hue: 0.2, purityCenter: 0.8, purityRange: 0, location: 0.9)
        #expect(still.h == 0.2 && abs(still.s - 1) < 1e-12 && abs(still.v - 0.4) < 1e-12)
    }

    @Test func frameKFollowsKPlusOneTicksAt60fpsAndTheSequenceMatchesSingleFrames() {
        var job = PulseJob()
        job.frames = 250
        #expect(job.ticks(frame: 0) == 1 && job.ticks(frame: 99) == 100)
        let all = job.colors()
        for k in [0, 1, 49, 50, 51, 149, 249] { #expect(all[k] == job.color(frame: k), "frame \(k)") }
        var slow = job
        slow.fps = 30
        #expect(slow.ticks(frame: 10) == 21, "at 30 fps two ticks pass between frames")
    }

    @Test(arguments: [0.0, 0.1666, 0.5, 0.9])
    func cpuAndOpenCLFramesAreIdentical(hue: Double) throws {
        var job = PulseJob()
        job.width = 33
        job.height = 7
        job.hue = hue
        job.purityCenter = 0.6
        let cl = try openCL()
        for k in [0, 10, 60, 120] {
            let a = try PulseRenderer.render(job, frame: k, on: .cpu).image
            let b = try PulseRenderer.render(job, frame: k, on: cl).image
            #expect(a == b, "frame \(k) hue \(hue)")
            let c = Color.hsvToRGB(job.color(frame: k).x, job.color(frame: k).y, job.color(frame: k).z)
            #expect(a[5, 3] == SIMD4(Color.to8Bit(c.x), Color.to8Bit(c.y), Color.to8Bit(c.z), 255))
        }
    }
}
