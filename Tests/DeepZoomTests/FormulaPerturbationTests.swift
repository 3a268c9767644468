import CMPFR
import Foundation
import GlintCore
import GlintWorkloads
import Testing

/// Deep-zoom views of Julia sets and the Burning Ship where perturbation (double deltas, a main
/// and a critical reference orbit, Zhuoran rebasing) must give the escape counts of direct
/// arbitrary-precision iteration (DirectMPFRFormula): at most 1% of samples may differ. One view
/// at a time: each comparison already spreads over every core, and prints its times.
@Suite(.serialized) struct FormulaPerturbationTests {
    typealias Location = PerturbationTests.Location

    /// Julia of c = M(4,1), the Misiurewicz point of PerturbationTests (its critical orbit lands
    /// on a repelling fixed point, so the Julia set is a dendrite with no interior), centred on c
    /// itself, which is on the Julia set: around c the Julia set looks like the Mandelbrot set
    /// around c (three-armed branch points). Every sample escapes; the main orbit (from c) is
    /// the critical orbit shifted by one step.
    static func misiurewiczJulia(_ zoom: String, iterations: Int) -> Location {
        Location(name: "julia, c = M(4,1), centre c, \(zoom)", formula: .julia,
                 re: PerturbationTests.misiurewiczRe, im: PerturbationTests.misiurewiczIm,
                 cRe: PerturbationTests.misiurewiczRe, cIm: PerturbationTests.misiurewiczIm,
                 zoom: zoom, maxIterations: iterations)
    }

    /// The Douady rabbit: c the centre of the period-3 component (root of c³ + 2c² + c + 1), to
    /// 120 digits; its critical orbit is a superattracting 3-cycle, so the filled Julia set has
    /// interior. The view centre is its alpha fixed point (1 - sqrt(1 - 4c)) / 2, where the three
    /// components of the cycle meet (|2 alpha| = 1.107: weakly repelling): a third to two thirds of
    /// the samples are interior (count = maxIterations), the rest escape through the channels
    /// between the components after ~440 (1e20) or ~2250 (1e100) iterations.
    static let rabbitC = (
        re: "-0.122561166876653619975245551820735654052696691113603428005358014676959672435959454630886453578874848175811316043593288531",
        im: "0.744861766619744236593170428604392367240163084906824574201847592154415217837839767791143754932964159039252804873377366033")
    static let rabbitAlpha = (
        re: "-0.2763376235931174165515313807292051890683630462797931279008351528684494187555469260314741879347767638260027619360605",
        im: "0.4797279843093951091373594360594429143540192923757372489542526200937764252983668961247593721878201441637334676150425")
    static func rabbit(_ zoom: String, iterations: Int) -> Location {
        Location(name: "julia, rabbit, centre alpha (interior), \(zoom)", formula: .julia, re: rabbitAlpha.re,
                 im: rabbitAlpha.im, cRe: rabbitC.re, cIm: rabbitC.im, zoom: zoom, maxIterations: iterations)
    }

    /// Burning Ship, in the armada (the row of small ships along the negative real axis): a
    /// pre-periodic point below its largest ship (z4 = z3 in Glint's orbit, z0 = c; Newton's
    /// method in MPFR on z4 - z3, the abs() taken with the signs the orbit has there, 135
    /// digits). Counts 34-91 at 1e20 and 171-228 at 1e100 (16x12), around a copy of the ships'
    /// hanging structure.
    ///
    /// Not here: the ships' streaked rigging (e.g. the pre-periodic point z8 = z7 at
    /// -1.7255061683920713795775, -0.0151879638152838913138), which is nearly chaotic: once a
    /// sample leaves the reference its count depends on more bits than a Double carries, so 5-10%
    /// of the counts differ from direct MPFR at the reference's precision (which itself differs
    /// from 100 more bits in 1-3%). The CLI tests check the Swift path and OpenCL agree there.
    static let armadaShip = (
        re: "-1.75300805237627141898296246847745925970403779974557767247241501267848438146686242475772476145294778802864294623353841859788006346805403",
        im: "-0.07286028226955921300445350201281591238315244851348176861614437632751720862011254618479376097407831093770671197769681662212031855006534")
    static func ship(_ name: String, _ point: (re: String, im: String), _ zoom: String, iterations: Int) -> Location {
        Location(name: "burning-ship, \(name), \(zoom)", formula: .burningShip, re: point.re, im: point.im, zoom: zoom,
                 maxIterations: iterations)
    }

    @Test(arguments: [misiurewiczJulia("1e20", iterations: 3000), misiurewiczJulia("1e100", iterations: 5000)])
    func juliaMisiurewicz(_ l: Location) async throws {
        let r = try await compare(l)
        #expect(r.interior == 0, "a dendrite: every sample escapes")
        #expect(r.distinctCounts > 10, "distinct counts in \(l.name)")
    }

    @Test(arguments: [rabbit("1e20", iterations: 1000), rabbit("1e100", iterations: 3000)])
    func juliaWithInterior(_ l: Location) async throws {
        let r = try await compare(l)
        #expect(r.interior > 20, "interior samples (count = maxIterations)")
        #expect(r.samples - r.interior > 20, "escaping samples")
        #expect(r.orbit.criticalEscaped == false, "the rabbit's critical orbit is attracted by its 3-cycle")
    }

    /// The rabbit and the armada ship past Double's range, where the deltas start in the tiny
    /// phase (mantissa and exponent): centres and c to 1150 digits (DeepLocations).
    static func deepRabbit(_ zoom: String, iterations: Int) -> Location {
        Location(name: "julia, rabbit, centre alpha (interior), \(zoom)", formula: .julia,
                 re: DeepLocations.rabbitAlpha.re, im: DeepLocations.rabbitAlpha.im,
                 cRe: DeepLocations.rabbitC.re, cIm: DeepLocations.rabbitC.im, zoom: zoom, maxIterations: iterations)
    }

    @Test(arguments: [deepRabbit("1e300", iterations: 8000), deepRabbit("1e1000", iterations: 25000)])
    func juliaBeyondDouble(_ l: Location) async throws {
        let r = try await compare(l)
        #expect(r.interior > 20, "interior samples (count = maxIterations)")
        #expect(r.samples - r.interior > 20, "escaping samples")
    }

    @Test(arguments: [ship("armada ship", DeepLocations.armadaShip, "1e300", iterations: 3000),
                      ship("armada ship", DeepLocations.armadaShip, "1e1000", iterations: 5000)])
    func burningShipBeyondDouble(_ l: Location) async throws {
        let r = try await compare(l)
        #expect(r.interior == 0, "every sample escapes")
        #expect(r.distinctCounts > 10, "distinct counts in \(l.name)")
    }

    @Test(arguments: [ship("armada ship", armadaShip, "1e20", iterations: 2000),
                      ship("armada ship", armadaShip, "1e100", iterations: 3000)])
    func burningShip(_ l: Location) async throws {
        let r = try await compare(l)
        #expect(r.interior == 0, "every sample escapes")
        #expect(r.distinctCounts > 10, "distinct counts in \(l.name)")
    }

    /// Supersampled and shallow, where the main orbit is far from most samples and rebasing to
    /// the critical orbit happens at once and often: the whole rabbit, and the Burning Ship's
    /// stern and deck along the real axis (with interior; its rigging below is as chaotic for
    /// plain Double iteration as for perturbation, so not this test's).
    @Test func shallowSupersampled() async throws {
        let julia = try await compare(Location(name: "julia, whole rabbit", formula: .julia, re: "0", im: "0",
                                               cRe: Self.rabbitC.re, cIm: Self.rabbitC.im, zoom: "0.8",
                                               maxIterations: 300), supersampling: 2)
        #expect(julia.interior > 20 && julia.distinctCounts > 10)
        let ship = try await compare(Location(name: "burning-ship, stern and deck", formula: .burningShip, re: "-0.6",
                                              im: "0", zoom: "3", maxIterations: 300), supersampling: 2)
        #expect(ship.interior > 20 && ship.distinctCounts > 10)
    }

    // MARK: the pieces

    /// |s + w| - |s| for every sign case, exact where the arithmetic is.
    @Test func foldDelta() {
        let cases: [(s: Double, w: Double, want: Double)] = [
            (3, 1, 1),          // both >= 0: w
            (3, -1, -1),
            (-3, -1, 1),        // both < 0: -w
            (-3, 1, -1),
            (-1, 3, 1),         // s < 0 <= s + w: 2s + w = |2| - |-1|
            (1, -3, 1),         // s >= 0 > s + w: -(2s + w) = |-2| - |1|
            (-1, 1, -1),        // s + w = 0: |0| - |-1|
            (0, -2, 2),         // s = 0: |w|
            (0, 2, 2),
        ]
        for c in cases {
            let a = c.s + c.w
            #expect(BurningShipDelta.fold(c.s, a, c.w) == c.want, "s \(c.s), w \(c.w)")
            #expect(abs(a) - abs(c.s) == c.want, "the case itself: s \(c.s), w \(c.w)")
        }
        // Without cancellation: a delta of 1e-300 against a reference value of order 1.
        #expect(BurningShipDelta.fold(-1.5, -1.5 + 1e-300, 1e-300) == -1e-300)
        #expect(BurningShipDelta.fold(1.5, 1.5 - 1e-300, -1e-300) == -1e-300)
    }

    @Test func orbits() throws {
        func n(_ t: String) throws -> DeepNumber { try DeepNumber(parsing: t) }
        // Julia: the main orbit from the centre, then the critical orbit from 0; both full length.
        let j = try FormulaOrbit(formula: .julia, centerRe: n("0.1"), centerIm: n("0.2"), zoom: n("1e30"),
                                 cRe: n("-0.12"), cIm: n("0.74"), height: 10, bailout: 2, maxIterations: 40)
        #expect(j.mainCount == 41 && j.count == 82)
        #expect(j.re[0] == 0.1 && j.im[0] == 0.2)
        #expect(abs(j.re[1] - (0.01 - 0.04 - 0.12)) < 1e-16 && abs(j.im[1] - (2 * 0.1 * 0.2 + 0.74)) < 1e-16)
        #expect(j.re[41] == 0 && j.im[41] == 0)
        #expect(j.re[42] == -0.12 && j.im[42] == 0.74)
        #expect(!j.mainEscaped && !j.criticalEscaped)
        #expect(j.precisionBits == 99 + 64)
        #expect(abs(j.pixelSpacing - 2e-31) <= 2e-31 * 1e-15)

        // Burning Ship: the values before the abs(), signed; the critical orbit's second point is C.
        let b = try FormulaOrbit(formula: .burningShip, centerRe: n("-1.5"), centerIm: n("-0.25"), zoom: n("1e30"),
                                 cRe: n("0"), cIm: n("0"), height: 10, bailout: 2, maxIterations: 40)
        #expect(b.re[0] == -1.5 && b.im[0] == -0.25)
        // (-1.5 - 0.25i)² + C = 2.25 - 0.0625 - 1.5 + i(0.75 - 0.25)
        #expect(b.re[1] == 0.6875 && b.im[1] == 0.5)
        #expect(b.re[b.mainCount] == 0 && b.im[b.mainCount] == 0)
        #expect(b.re[b.mainCount + 1] == -1.5 && b.im[b.mainCount + 1] == -0.25)
        // Next from |0.6875 + 0.5i|: 0.47265625 - 0.25 - 1.5, 2 * 0.6875 * 0.5 - 0.25.
        #expect(b.re[2] == 0.47265625 - 0.25 - 1.5 && b.im[2] == 0.6875 - 0.25)

        // A centre that escapes at once: 2 points (the start and the first beyond the radius).
        let far = try FormulaOrbit(formula: .julia, centerRe: n("3"), centerIm: n("0"), zoom: n("1e30"),
                                   cRe: n("0"), cIm: n("0"), height: 10, bailout: 2, maxIterations: 40)
        #expect(far.mainCount == 2 && far.mainEscaped)
        // A sample there still gets the direct count (0) and |z|² (81).
        #expect(PerturbationFormulas.escape(orbit: far, dRe: 0, dIm: 0) == (0, 81))
        // One below it, z0 = 1: z stays 1 through every step, following the critical orbit.
        #expect(PerturbationFormulas.escape(orbit: far, dRe: -2, dIm: 0) == (40, 0))

        #expect(throws: (any Error).self) {
            try FormulaOrbit(formula: .sierpinskiJulia, centerRe: n("0"), centerIm: n("0"), zoom: n("1e30"),
                             cRe: n("0"), cIm: n("0"), height: 10, bailout: 2, maxIterations: 40)
        }
    }

    // MARK: comparison

    struct Result {
        let samples: Int
        let differing: Int
        let interior: Int
        let distinctCounts: Int
        let orbit: FormulaOrbit
    }

    /// Every sample of the view by perturbation and by direct MPFR iteration; fails if over 1%
    /// of the counts differ, and prints the share and the times.
    func compare(_ l: Location, supersampling ss: Int = 1, bailout: Double = 2) async throws -> Result {
        let t0 = Date()
        let orbit = try FormulaOrbit(formula: l.formula, centerRe: DeepNumber(parsing: l.re), centerIm: DeepNumber(parsing: l.im),
                                     zoom: DeepNumber(parsing: l.zoom), cRe: DeepNumber(parsing: l.cRe),
                                     cIm: DeepNumber(parsing: l.cIm), height: l.height, bailout: bailout,
                                     maxIterations: l.maxIterations)
        let sw = l.width * ss, sh = l.height * ss
        let gotCounts = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: sw * sh)
        let gotMags = UnsafeMutableBufferPointer<Float>.allocate(capacity: sw * sh)
        defer { gotCounts.deallocate(); gotMags.deallocate() }
        let gc = SharedBuffer(gotCounts), gm = SharedBuffer(gotMags)
        await CPUParallel.forEach(sh) { sy in
            PerturbationFormulas.row(orbit: orbit, width: l.width, height: l.height, supersampling: ss, sy: sy,
                                     counts: gc.base + sy * sw, mags: gm.base + sy * sw)
        }
        let perturbationSeconds = Date().timeIntervalSince(t0)

        let precision = DirectMPFR.precision(zoom: l.zoom)
        #expect(orbit.precisionBits == precision, "precision of \(l.name)")
        let spacing = DirectMPFR.spacing(zoom: l.zoom, height: l.height, precision: precision)
        #expect(orbit.pixelSpacing == spacing, "pixel spacing of \(l.name)")
        let parts = DirectMPFR.spacingParts(zoom: l.zoom, height: l.height, precision: precision)
        #expect(orbit.spacingMantissa == parts.mantissa && orbit.spacingExponent == parts.exponent, "spacing of \(l.name)")
        let direct = DirectMPFRFormula(formula: l.formula == .julia ? .julia : .burningShip, centerRe: l.re, centerIm: l.im,
                                       cRe: l.cRe, cIm: l.cIm, precision: precision,
                                       bailout2: Double(Float(bailout * bailout)), maxIterations: l.maxIterations)
        let c = await DirectComparison(width: l.width, height: l.height, supersampling: ss, spacing: parts,
                                       maxIterations: l.maxIterations, bailout: bailout,
                                       gotCounts: Array(gotCounts), gotMags: Array(gotMags)) { direct.escape(dRe: $0, dIm: $1, exponent: $2) }
        let line = "\(l.name): \(c.summary); " +
            "orbits \(orbit.mainCount) + \(orbit.count - orbit.mainCount) points at \(precision) bits" +
            "\(orbit.mainEscaped ? " (main escapes)" : "")\(orbit.criticalEscaped ? " (critical escapes)" : ""), " +
            "perturbation \(String(format: "%.3f", perturbationSeconds)) s"
        print(line)
        c.check(line)
        return Result(samples: c.samples, differing: c.differing, interior: c.interior,
                      distinctCounts: c.distinctCounts, orbit: orbit)
    }
}
