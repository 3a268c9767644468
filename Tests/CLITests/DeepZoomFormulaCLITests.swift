import Foundation
import GlintWorkloads
import Testing

/// Deep zoom of Julia sets and the Burning Ship from the command line: perturbation chosen past
/// double precision, --c with as many digits as --center, and escape counts identical on the
/// Swift path and OpenCL (PoCL).
@Suite("glint fractal: deep zoom of julia and burning-ship")
struct DeepZoomFormulaCLITests {
    /// The Douady rabbit's c (centre of the period-3 component) and its alpha fixed point, where
    /// the three interior components of its cycle meet (Tests/DeepZoomTests has the derivation).
    static let rabbitC = "-0.122561166876653619975245551820735654052696691113603428005358014676959672435959454630886453578874848175811316043593288531,"
        + "0.744861766619744236593170428604392367240163084906824574201847592154415217837839767791143754932964159039252804873377366033"
    static let rabbitAlpha = "-0.2763376235931174165515313807292051890683630462797931279008351528684494187555469260314741879347767638260027619360605,"
        + "0.4797279843093951091373594360594429143540192923757372489542526200937764252983668961247593721878201441637334676150425"
    /// Burning Ship: pre-periodic points in the armada, below its largest ship (z4 = z3) and in a
    /// smaller ship's rigging (z8 = z7).
    static let armadaShip = "-1.75300805237627141898296246847745925970403779974557767247241501267848438146686242475772476145294778802864294623353841859788006346805403,"
        + "-0.07286028226955921300445350201281591238315244851348176861614437632751720862011254618479376097407831093770671197769681662212031855006534"
    static let armadaRigging = "-1.72550616839207137957750443297476065844191106052673396008178399483750369943832035340561323678001660801887642845383773829986955594324668,"
        + "-0.0151879638152838913138047975733201155119699225406048444416506494005144817539364704269525066859965651268062106115639726914716832666624179"

    typealias View = DeepZoomCLITests.View

    static let views: [View] = [
        View(name: "julia c = M(4,1) 1e20", formula: "julia", center: DeepZoomCLITests.misiurewicz, zoom: "1e20",
             iterations: 3000, extra: ["--c", DeepZoomCLITests.misiurewicz]),
        View(name: "julia c = M(4,1) 1e100, smooth, ss 2", formula: "julia", center: DeepZoomCLITests.misiurewicz,
             zoom: "1e100", iterations: 5000,
             extra: ["--c", DeepZoomCLITests.misiurewicz, "--smooth", "--palette", "rainbow", "--ss", "2"]),
        View(name: "julia rabbit 1e20 (interior pixels)", formula: "julia", center: rabbitAlpha, zoom: "1e20",
             iterations: 1000, extra: ["--c", rabbitC]),
        View(name: "julia rabbit 1e100 (interior pixels)", formula: "julia", center: rabbitAlpha, zoom: "1e100",
             iterations: 3000, extra: ["--c", rabbitC]),
        View(name: "burning-ship armada 1e20", formula: "burning-ship", center: armadaShip, zoom: "1e20", iterations: 2000),
        View(name: "burning-ship armada 1e100, smooth, ss 2", formula: "burning-ship", center: armadaShip, zoom: "1e100",
             iterations: 3000, extra: ["--smooth", "--palette", "fire", "--ss", "2"]),
        View(name: "burning-ship armada rigging 1e20", formula: "burning-ship", center: armadaRigging, zoom: "1e20",
             iterations: 2000),
        View(name: "burning-ship armada rigging 1e100", formula: "burning-ship", center: armadaRigging, zoom: "1e100",
             iterations: 3000),
        // Past Double's range: the deltas start with their own exponent (DeepLocations: 1150 digits).
        View(name: "julia rabbit 1e1000 (interior pixels)", formula: "julia",
             center: DeepLocations.rabbitAlpha.re + "," + DeepLocations.rabbitAlpha.im, zoom: "1e1000",
             iterations: 25000, extra: ["--c", DeepLocations.rabbitC.re + "," + DeepLocations.rabbitC.im]),
        View(name: "burning-ship armada 1e1000, smooth", formula: "burning-ship",
             center: DeepLocations.armadaShip.re + "," + DeepLocations.armadaShip.im, zoom: "1e1000",
             iterations: 5000, extra: ["--smooth", "--palette", "fire"]),
    ]

    @Test("counts identical on the Swift path and OpenCL", arguments: views)
    func parity(_ view: View) throws { try DeepZoomCLITests.checkParity(view) }

    @Test("auto precision picks perturbation past double for julia and burning-ship; --precision perturbation is accepted",
          arguments: [("julia", rabbitAlpha, ["--c", rabbitC]), ("burning-ship", armadaShip, [])])
    func automaticPrecision(_ formula: String, _ center: String, _ extra: [String]) throws {
        try withSandbox { box in
            for (zoom, precision, deep) in [("1e3", nil, false), ("1e20", nil, true), ("10", "perturbation", true)] {
                let r = try box.run(["fractal", formula, "--center", center, "--zoom", zoom, "--iterations", "300",
                                     "--size", "16x12", "--device", "cpu", "-o", "z.png"]
                                    + (precision.map { ["--precision", $0] } ?? []) + extra)
                #expect(r.status == 0, "\(r)")
                #expect(r.stdout.contains("\(formula), perturbation,") == deep, "\(zoom): \(r)")
            }
            // The view the PNG records keeps --c's digits.
            if formula == "julia" {
                let printed = try box.run(["fractal", "--location", "z.png", "--print-location"])
                #expect(printed.status == 0, "\(printed)")
                let png = try box.bytes("z.png")
                #expect(String(decoding: png, as: UTF8.self).contains(Self.rabbitC.split(separator: ",")[0]), "c's digits in the PNG")
            }
        }
    }

    @Test("sierpinski-julia and image-julia stay refused with one line naming the formulas that perturb",
          arguments: ["sierpinski-julia", "image-julia"])
    func refusals(_ formula: String) throws {
        try withSandbox { box in
            let r = try box.run(["fractal", formula, "--precision", "perturbation", "--zoom", "1e20", "--size", "16x12",
                                 "--texture", "none.png", "-o", "r.png"])
            #expect(r.status == 2 && r.stderrLines.count == 1, "\(r)")
            #expect(r.stderr.contains("perturbation renders mandelbrot, julia and burning-ship")
                    && r.stderr.contains("deep zoom of \(formula) is not built yet"), "\(r)")
            #expect(!box.exists("r.png"))
        }
    }

    @Test("julia and burning-ship past the deepest zoom are refused in one line")
    func tooDeep() throws {
        try withSandbox { box in
            for formula in ["julia", "burning-ship"] {
                let r = try box.run(["fractal", formula, "--zoom", "1e1000001", "--size", "16x12", "-o", "j.png"])
                #expect(r.status == 2 && r.stderrLines.count == 1 && r.stderr.contains("beyond the deepest zoom Glint renders"), "\(r)")
                #expect(!box.exists("j.png"))
            }
        }
    }
}
