import Foundation
import GlintWorkloads
import Testing

/// Deep zoom from the command line: decimal centres and zooms of any length, precision chosen
/// from the zoom, and escape counts identical on the Swift path and OpenCL (PoCL) by perturbation.
@Suite("glint fractal: deep zoom")
struct DeepZoomCLITests {
    /// The Misiurewicz point M(4,1) to 345 digits (Tests/DeepZoomTests checks it is pre-periodic):
    /// any zoom into it shows filaments with a spread of counts.
    static let misiurewicz =
        "-0.101096363845622161025785445738622565463805442826253483876931177660780840740470584274821"
        + "219810516779033404531908556741193971546144260911882355703907680301615758418143435454482306"
        + "810666402941937826741189160781952644899539699533446682339312669900981755715042520653886699"
        + "186134433396160061056277538514425960956070356822164327995613303692671476037780,"
        + "0.9562865108091415007710960577299774358098333365105291700343143215005246590657167325269784"
        + "107873398072043444724926469284366752406567465722656200815719741551313831228054884443810571"
        + "677870203738395055477279309548311953190385170024877917670113105649462054553485859930615004"
        + "42739744776204598008597391597760386427667074404225333535432356685940471232746"

    /// Beside the period-8007 minibrot near the seahorse point: a third of the samples interior.
    static let minibrot = "-0.74364388703715870475219150611577977821525620794818128981688390181856073578379647863478782251,"
        + "0.13182590420531197049313205638594067897295227932891896620912767746551348173829833723473896427"

    /// A view of one formula (DeepZoomFormulaCLITests' too).
    struct View: Sendable, CustomTestStringConvertible {
        let name: String
        var formula = "mandelbrot"
        let center: String
        let zoom: String
        let iterations: Int
        var extra: [String] = []
        var testDescription: String { name }
    }

    static let views: [View] = [
        View(name: "seahorse 1e20", center: "-0.743643887037158704752191506114774,0.131825904205311970493132056385139",
             zoom: "1e20", iterations: 12000),
        View(name: "minibrot 1e30 (interior pixels)", center: minibrot, zoom: "1e30", iterations: 30000),
        View(name: "Misiurewicz 1e100, smooth, ss 2", center: misiurewicz, zoom: "1e100", iterations: 5000,
             extra: ["--smooth", "--palette", "rainbow", "--ss", "2"]),
        View(name: "Misiurewicz 1e290", center: misiurewicz, zoom: "1e290", iterations: 8000),
        View(name: "Misiurewicz 1e300 without BLA", center: misiurewicz, zoom: "1e300", iterations: 3000,
             extra: ["--no-bla"]),
        View(name: "Misiurewicz 1e1000, smooth", center: DeepLocations.misiurewicz41.re + "," + DeepLocations.misiurewicz41.im,
             zoom: "1e1000", iterations: 9000, extra: ["--smooth", "--palette", "ocean"]),
        View(name: "M(30,1) 1e100, 33,000 iterations", center: DeepLocations.elephant30.re + "," + DeepLocations.elephant30.im,
             zoom: "1e100", iterations: 40000),
    ]

    @Test("counts identical on the Swift path and OpenCL", arguments: views)
    func parity(_ view: View) throws { try Self.checkParity(view) }

    /// `glint compare` of the view at 24x16 on the Swift path and OpenCL: every count identical.
    static func checkParity(_ view: View) throws {
        try withSandbox { box in
            let r = try box.run(["compare", "--a", "cpu", "--b", "opencl", "--runs", "1", "--json", "cmp.json",
                                 "fractal", view.formula, "--center", view.center, "--zoom", view.zoom,
                                 "--iterations", String(view.iterations), "--size", "24x16"] + view.extra, timeout: 600)
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains("escape counts identical (384)"), "\(r)")
            let doc = try #require(try JSONSerialization.jsonObject(with: Data(try box.bytes("cmp.json"))) as? [String: Any])
            let counts = try #require(doc["counts"] as? [String: Any])
            #expect(counts["differing"] as? Int == 0, "\(counts)")
        }
    }

    @Test("auto precision: float at 1e3, double at 1e8, perturbation at 1e20; the render says so")
    func automaticPrecision() throws {
        try withSandbox { box in
            for (zoom, deep) in [("1e3", false), ("1e8", false), ("1e20", true)] {
                let r = try box.run(["fractal", "mandelbrot", "--center", "-0.743643887037158704752191506114774,0.131825904205311970493132056385139",
                                     "--zoom", zoom, "--iterations", "500", "--size", "16x12", "--device", "cpu", "-o", "z.png"])
                #expect(r.status == 0, "\(r)")
                #expect(r.stdout.contains(", perturbation,") == deep, "\(r)")
            }
            // Forcing float at 1e8 is refused (neighbouring pixels would coincide), naming the flag.
            let float = try box.run(["fractal", "mandelbrot", "--center", "-0.7436438870371587,0.1318259042053119",
                                     "--zoom", "1e8", "--precision", "float", "--size", "16x12", "-o", "f.png"])
            #expect(float.status == 2 && float.stderr.contains("--zoom") && float.stderr.contains("float precision"), "\(float)")
        }
    }

    @Test("deep zoom refusals are one line and exit 2", arguments: [
        (["--zoom", "1e1000001"], "beyond the deepest zoom"),
        (["--zoom", "1e5x"], "--zoom"),
        (["--zoom", "-1e20"], "--zoom"),
        (["--zoom", "1e30", "--precision", "perturbation", "--ss", "2"], nil as String?),
    ])
    func refusals(args: [String], mentions: String?) throws {
        try withSandbox { box in
            let r = try box.run(["fractal", "mandelbrot", "--size", "16x12", "--iterations", "100", "--device", "cpu", "-o", "r.png"] + args)
            if let mentions {
                #expect(r.status == 2 && r.stderrLines.count == 1 && r.stderr.contains(mentions), "\(r)")
                #expect(!box.exists("r.png"))
            } else {
                #expect(r.status == 0 && r.stdout.contains(", perturbation,"), "supersampling works at depth: \(r)")
            }
        }
    }

    @Test("sierpinski-julia at a zoom past double names the formulas that deep zoom renders")
    func sierpinskiBeyondDouble() throws {
        try withSandbox { box in
            let r = try box.run(["fractal", "sierpinski-julia", "--zoom", "1e400", "--size", "16x12", "-o", "j.png"])
            #expect(r.status == 2 && r.stderr.contains("perturbation") && r.stderr.contains("mandelbrot, julia and burning-ship"), "\(r)")
        }
    }
}
