import GlintCore
import GlintWorkloads
import Testing

/// Zoom animations to any depth: the frames' exact zoom and centre texts (DeepRamp), the
/// precision rule that lets the frames at one centre share a reference orbit, and the cache
/// that computes it once (OrbitCache).
@Suite struct AnimationTests {
    static func number(_ text: String) -> DeepNumber { try! DeepNumber(parsing: text) }

    /// The zooms of every frame of an n-frame ramp.
    static func zooms(_ from: String, _ to: String, frames n: Int) -> [String] {
        (0..<n).map { DeepRamp.zoom(from: number(from), to: number(to), frame: $0, of: n) }
    }

    @Test("zoom ramps are geometric, exact decimal text at any depth; the ends are as given")
    func zoomTexts() {
        #expect(Self.zooms("1", "1e300", frames: 4) == ["1", "1e100", "1e200", "1e300"])
        #expect(Self.zooms("1", "1e300", frames: 7) == ["1", "1e50", "1e100", "1e150", "1e200", "1e250", "1e300"])
        // Past Double's range and far past it.
        #expect(Self.zooms("1", "1e400", frames: 3) == ["1", "1e200", "1e400"])
        #expect(Self.zooms("1e10", "1e2000010", frames: 3) == ["1e10", "1e1000010", "1e2000010"])
        // 20 significant digits, rounded to nearest (checked with Python's decimal at 80 digits):
        // 10^(20 + 40/3) = 2.15443469003188372175929...e33, 10^(20 + 80/3) = 4.64158883361277889241007...e46.
        #expect(Self.zooms("1e20", "1e60", frames: 4) == ["1e20", "2.1544346900318837218e33", "4.6415888336127788924e46", "1e60"])
        // sqrt(6) = 2.44948974278317809819728...; 10^(4/3) = 21.5443469003188372175929...
        #expect(Self.zooms("2", "3", frames: 3) == ["2", "2.4494897427831780982", "3"])
        #expect(Self.zooms("1", "1e4", frames: 4)[1] == "21.544346900318837218")
        #expect(Self.zooms("1", "100", frames: 3) == ["1", "10", "100"])
        // Zooming out, below 1, and one frame.
        #expect(Self.zooms("1e300", "1", frames: 4) == ["1e300", "1e200", "1e100", "1"])
        #expect(Self.zooms("1e-8", "1e-2", frames: 4) == ["1e-8", "0.000001", "0.0001", "1e-2"])
        #expect(Self.zooms("+5e3", "1e9", frames: 1) == ["+5e3"])
        // Each text reads back as a decimal number.
        for z in Self.zooms("3", "7.7e299", frames: 9) { #expect((try? DeepNumber(parsing: z)) != nil, "\(z)") }
    }

    @Test("centre ramps are linear, exact in decimal, rounded to the frame zoom's digits + 20 after the point")
    func centerTexts() {
        func at(_ a: String, _ b: String, _ k: Int, _ n: Int, zoom: String = "1") -> String {
            DeepRamp.coordinate(from: Self.number(a), to: Self.number(b), frame: k, of: n, zoom: Self.number(zoom))
        }
        #expect(DeepRamp.fractionDigits(zoom: Self.number("1")) == 21)
        #expect(DeepRamp.fractionDigits(zoom: Self.number("1e20")) == 41)
        #expect(DeepRamp.fractionDigits(zoom: Self.number("2.5e-3")) == 20)
        #expect(at("-0.75", "-0.7435669", 2, 5, zoom: "10") == "-0.74678345")
        #expect(at("0", "0.1314023", 2, 5) == "0.06570115")
        #expect(at("-1", "1", 1, 3) == "0")
        #expect(at("-1", "0.5", 1, 3) == "-0.25")
        // 1/3 and 2/3 at 21 digits, rounded to nearest.
        #expect(at("0", "1", 1, 4) == "0.333333333333333333333")
        #expect(at("0", "1", 2, 4) == "0.666666666666666666667")
        #expect(at("1", "0", 1, 4) == "0.666666666666666666667")
        #expect(at("0", "-1", 2, 4) == "-0.666666666666666666667")
        // Deeper frames carry more digits: 1/3 at zoom 1e30 has 51 after the point.
        #expect(at("0", "1", 1, 4, zoom: "1e30") == "0." + String(repeating: "3", count: 51))
        // A tie rounds away from zero: -0.5e-21 at 21 digits.
        #expect(at("0", "-1e-21", 1, 3) == "-1e-21")
        #expect(at("0", "1e-21", 1, 3) == "1e-21")
        // The ends are the given texts, whatever their form.
        #expect(at("-.750", "2", 0, 3) == "-.750")
        #expect(at("-.750", "2e0", 2, 3) == "2e0")
        // A long centre at a shallow frame: rounded to the 26 digits that frame needs.
        let long = "-0.743643887037158704752191506114774"
        #expect(at(long, long, 1, 3, zoom: "1e5") == "-0.74364388703715870475219151")
    }

    /// Significant digits of the Misiurewicz centre's longer coordinate: ⌈345 × log2 10⌉ = 1147.
    @Test("the orbit's precision: the zoom's, or the centre's digits' when more")
    func precisionRule() {
        let m = (re: Self.number(PerturbationTests.misiurewiczRe), im: Self.number(PerturbationTests.misiurewiczIm))
        #expect(max(m.re.significand.count, m.im.significand.count) == 345)
        for zoom in ["1", "1e20", "1e100", "1e300", "1e345"] {
            let bits = ReferenceOrbit.precisionBits(zoom: Self.number(zoom), centerRe: m.re, centerIm: m.im)
            #expect(bits == 1147 + 64, "zoom \(zoom)")
            #expect(bits == DirectMPFR.precision(zoom: zoom, centerRe: PerturbationTests.misiurewiczRe,
                                                 centerIm: PerturbationTests.misiurewiczIm))
        }
        // Past the centre's digits the zoom decides: log2(1e400) = 1328.77.
        #expect(ReferenceOrbit.precisionBits(zoom: Self.number("1e400"), centerRe: m.re, centerIm: m.im) == 1328 + 64)
        // The seahorse centre has 33 digits (110 bits + 64); trailing zeros and the exponent do not count.
        let s = PerturbationTests.seahorse
        #expect(ReferenceOrbit.precisionBits(zoom: Self.number("1e20"), centerRe: Self.number(s.re), centerIm: Self.number(s.im)) == 174)
        #expect(ReferenceOrbit.precisionBits(zoom: Self.number("1e20"), centerRe: Self.number("-0.7500000"), centerIm: Self.number("0e5")) == 130)
        #expect(ReferenceOrbit.precisionBits(zoom: Self.number("1"), centerRe: Self.number("1234567890123456789012345e-30"),
                                             centerIm: Self.number("0")) == 84 + 64)
        for digits in [1, 2, 28, 59, 146, 643, 4004] {
            let text = "0." + String(repeating: "7", count: digits)
            #expect(ReferenceOrbit.precisionBits(zoom: Self.number("1"), centerRe: Self.number(text), centerIm: Self.number("0"))
                    == DirectMPFR.precision(zoom: "1", centerRe: text, centerIm: "0"), "\(digits) digits")
        }
    }

    @Test("a cached orbit serves shorter requests and escaped ones, equal to a fresh computation")
    func cachedOrbitsEqualFreshOnes() throws {
        let cache = OrbitCache(byteLimit: 1 << 20)
        func fresh(_ re: String, _ im: String, _ zoom: String, _ height: Int, _ n: Int) throws -> ReferenceOrbit {
            try ReferenceOrbit(centerRe: re, centerIm: im, zoom: zoom, height: height, bailout: 2, maxIterations: n)
        }
        func cached(_ re: String, _ im: String, _ zoom: String, _ height: Int, _ n: Int) throws -> ReferenceOrbit {
            try cache.orbit(centerRe: Self.number(re), centerIm: Self.number(im), zoom: Self.number(zoom), height: height,
                            bailout: 2, maxIterations: n)
        }
        func same(_ a: ReferenceOrbit, _ b: ReferenceOrbit) -> Bool {
            a.re == b.re && a.im == b.im && a.escaped == b.escaped && a.maxIterations == b.maxIterations
                && a.precisionBits == b.precisionBits && a.pixelSpacing.bitPattern == b.pixelSpacing.bitPattern
        }
        let s = PerturbationTests.seahorse
        // A long orbit, then shorter ones at other zooms and heights: served, equal to fresh ones.
        #expect(same(try cached(s.re, s.im, "1e20", 12, 3000), try fresh(s.re, s.im, "1e20", 12, 3000)))
        for (zoom, height, n) in [("1e20", 12, 3000), ("3e25", 100, 1000), ("1e30", 7, 1), ("1e22", 12, 2999)] {
            #expect(same(try cached(s.re, s.im, zoom, height, n), try fresh(s.re, s.im, zoom, height, n)), "\(zoom) \(n)")
        }
        #expect(cache.computed == 1 && cache.hits == 4)
        // A longer request computes again and replaces it; the same value written otherwise is one key.
        #expect(same(try cached(s.re, s.im, "1e20", 12, 4000), try fresh(s.re, s.im, "1e20", 12, 4000)))
        #expect(same(try cached(s.re + "000", "+" + s.im, "1e20", 12, 3500), try fresh(s.re, s.im, "1e20", 12, 3500)))
        #expect(cache.computed == 2 && cache.count == 1)
        let key = OrbitCache.Key.mandelbrot(centerRe: Self.number(s.re), centerIm: Self.number(s.im), zoom: Self.number("1e20"), bailout: 2)
        #expect(cache.computations(for: key) == 2)
        // A deeper zoom that needs more bits than the centre's digits is another orbit.
        _ = try cached(s.re, s.im, "1e40", 12, 100)
        #expect(cache.computed == 3 && cache.count == 2)

        // An orbit that escaped serves any limit: the whole orbit, or its prefix below it.
        let out = try cached("0.26", "0.0015", "1e20", 12, 50)
        #expect(out.escaped && out.count < 52)
        for n in [50, 10_000, out.count - 2, out.count - 3, 1] {
            #expect(same(try cached("0.26", "0.0015", "1e20", 12, n), try fresh("0.26", "0.0015", "1e20", 12, n)), "\(n)")
        }
        #expect(cache.computed == 4)
        // A different bailout is another orbit.
        _ = try cache.orbit(centerRe: Self.number("0.26"), centerIm: Self.number("0.0015"), zoom: Self.number("1e20"),
                            height: 12, bailout: 3, maxIterations: 50)
        #expect(cache.computed == 5)
        // Errors are the orbit's own, cached or not.
        #expect(throws: GlintError.self) { try cached(s.re, s.im, "0", 12, 10) }
        #expect(throws: GlintError.self) { try cached(s.re, s.im, "1e20", 12, 0) }
    }

    @Test("the cache holds at most its byte limit, dropping the least recently used")
    func leastRecentlyUsed() throws {
        // Room for two orbits of 1000 iterations (16 bytes a point).
        let cache = OrbitCache(byteLimit: 2 * 16 * 1002)
        func get(_ re: String, _ n: Int = 1000) throws {
            _ = try cache.orbit(centerRe: Self.number(re), centerIm: Self.number("0.1"), zoom: Self.number("1e20"), height: 10,
                                bailout: 2, maxIterations: n)
        }
        try get("-0.1"); try get("-0.2")
        try get("-0.1")                      // a hit: -0.2 is now the least recently used
        try get("-0.3")                      // evicts -0.2
        #expect(cache.count == 2 && cache.bytes == 2 * 16 * 1002 && cache.computed == 3)
        try get("-0.1")
        #expect(cache.computed == 3, "-0.1 was kept")
        try get("-0.2")
        #expect(cache.computed == 4, "-0.2 was dropped")
        // An orbit larger than the whole budget is computed but not kept.
        try get("-0.4", 5000)
        #expect(cache.computed == 5 && cache.count == 2 && cache.bytes <= cache.byteLimit)
        try get("-0.4", 5000)
        #expect(cache.computed == 6)
        cache.removeAll()
        #expect(cache.count == 0 && cache.bytes == 0)
    }

    /// A Misiurewicz centre cut to 199 digits (an orbit no other test asks for): its 726 bits
    /// serve every zoom to about 1e199.
    static let centre = (re: String(PerturbationTests.misiurewiczRe.prefix(202)), im: String(PerturbationTests.misiurewiczIm.prefix(201)))

    @Test("an animation at one centre computes the reference orbit once; its frames are the single renders")
    func animationSharesOneOrbit() async throws {
        let n = 4
        var jobs: [FractalJob] = []
        for k in 0..<n {
            var job = FractalJob(formula: .mandelbrot)
            (job.width, job.height, job.maxIterations) = (24, 16, 1500)
            job.exactCenter = DeepComplex(re: Self.number(Self.centre.re), im: Self.number(Self.centre.im))
            job.exactZoom = Self.number(DeepRamp.zoom(from: Self.number("1e20"), to: Self.number("1e150"), frame: k, of: n))
            job.precision = .automatic(for: job)
            #expect(job.precision == .perturbation)
            jobs.append(job)
        }
        let key = OrbitCache.Key.mandelbrot(centerRe: Self.number(Self.centre.re), centerIm: Self.number(Self.centre.im),
                                            zoom: Self.number("1e150"), bailout: 2)
        #expect(key.precisionBits == 662 + 64)
        #expect(key.precisionBits == DirectMPFR.precision(zoom: "1e20", centerRe: Self.centre.re, centerIm: Self.centre.im))
        let before = OrbitCache.shared.computations(for: key)
        var images: [Image8] = []
        for job in jobs { images.append(try await FractalRenderer.render(job, on: .cpu).image) }
        #expect(OrbitCache.shared.computations(for: key) == max(before, 1), "one orbit for \(n) frames")
        // Each frame is what an orbit computed afresh for that frame's view gives.
        for (k, job) in jobs.enumerated() {
            let view = job.deepView()
            let orbit = try ReferenceOrbit(centerRe: view.centerRe, centerIm: view.centerIm, zoom: view.zoom,
                                           height: view.height, bailout: view.bailout, maxIterations: view.maxIterations)
            #expect(orbit.precisionBits == key.precisionBits)
            let direct = await PerturbationCPU.render(view, orbit: orbit, table: table(orbit, view))
            let cached = try OrbitCache.shared.orbit(
                centerRe: view.centerRe, centerIm: view.centerIm, zoom: view.zoom, height: view.height,
                bailout: view.bailout, maxIterations: view.maxIterations)
            let shared = await PerturbationCPU.render(view, orbit: cached, table: table(cached, view))
            #expect(direct.counts == shared.counts && direct.mags == shared.mags, "frame \(k)")
            #expect(Set(direct.counts).count > 5, "frame \(k) shows filaments")
        }
        #expect(images[0].pixels != images[n - 1].pixels)
    }

    /// The BLA table a render of `view` builds for `orbit`.
    func table(_ orbit: ReferenceOrbit, _ view: DeepView) -> BLATable {
        BLATable(orbit: orbit, dcMax: PerturbationCPU.dcMax(orbit: orbit, width: view.width, height: view.height))
    }
}
