import ArgumentParser
import GlintCore
import GlintWorkloads

/// `glint locate`: finds a feature of the Mandelbrot set (or of a multibrot z^N + c) near a view,
/// to any depth.
struct Locate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find the minibrot or the Misiurewicz point nearest a Mandelbrot view (z^N + c with --power N), to any depth, and print the view that frames it.",
        discussion: """
        glint locate minibrot finds, near the view given by --center and --zoom, the period of the \
        nearest minibrot (a small copy of the set) by the ball method, its nucleus by Newton's \
        method in MPFR, and its size and rotation; it prints them and the view that frames it, \
        ready for glint fractal. Each answer is a step deeper: locate, render, pick a spot in the \
        picture, locate again.

        glint locate misiurewicz finds a Misiurewicz point near the view (a branch point or the \
        centre of a spiral, where the critical orbit lands on a repelling cycle): its preperiod \
        and period, the point by Newton's method in MPFR, and the cycle's multiplier, which says \
        how the picture repeats as it is zoomed. The view centred on it can be zoomed without end.

        Both take --power N (2 to \(FractalJob.maxPower)) for the multibrot z^N + c, as glint fractal \
        mandelbrot --power N draws it; the view and the .kfr they print record the power. Julia \
        and Burning Ship are not searched: a Julia set's c is fixed, so its picture holds no \
        minibrots of its own, and Burning Ship is not holomorphic, so the complex Newton's method \
        the search rests on does not apply.

        Examples:
          glint locate minibrot --center -1.75,0 --zoom 10
          glint locate minibrot --center -0.7436438870371587,0.1318259042053119 --zoom 1e10
          glint locate minibrot --center -1.75,0 --zoom 10 --kfr p3.kfr
          glint fractal --location p3.kfr -o p3.png
          glint locate misiurewicz --center -0.1011,0.9563 --zoom 1000 --kfr m41.kfr
          glint locate minibrot --power 3 --center -0.2437,1.3221 --zoom 2000 --kfr cubic.kfr
        """,
        subcommands: [LocateMinibrot.self, LocateMisiurewicz.self])
}

/// The view a locator starts from, and the .kfr it may write.
struct LocateView: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp("View centre X,Y: decimals of any length.", valueName: "x,y"),
            transform: complexNumber("--center", Limits.planeCoordinate, example: "-1.75,0"))
    var center: DeepComplex

    @Option(help: ArgumentHelp("The view's zoom (at 1 the height spans 2 units): any positive decimal, e.g. 1e100.",
                               valueName: "zoom"),
            transform: zoomValue)
    var zoom: DeepNumber

    @Option(help: ArgumentHelp("The formula's power N: z^N + c, the multibrot glint fractal mandelbrot --power N draws (2 to \(FractalJob.maxPower)).",
                               valueName: "n"),
            transform: wholeNumber("--power", 2...FractalJob.maxPower))
    var power = 2

    @Option(help: ArgumentHelp("Also write the view found as a .kfr location (with the iterations of --iterations, and the power past 2).",
                               valueName: "file"))
    var kfr: String?

    /// The report's line for the power: only past 2, as locations name it.
    var powerLines: [String] { power == 2 ? [] : ["power \(power)"] }

    /// With --kfr, writes the view (centre, zoom, iterations, power); the line that says so, if any.
    func writeLocation(center: DeepComplex, zoom: DeepNumber, iterations: Int) throws -> [String] {
        guard let kfr else { return [] }
        var location = FractalLocation()
        location.center = center
        location.zoom = zoom
        location.iterations = iterations
        location.power = power == 2 ? nil : power
        try FileIO.writeAtomically(kfr, Array(location.kfrText.utf8))
        return ["wrote \(kfr)"]
    }
}

/// An angle in degrees to two decimals, for the reports.
func degreesText(_ x: Double) -> String {
    let r = (x * 100).rounded() / 100
    return r == 0 ? "0" : String(r)
}

struct LocateMinibrot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "minibrot",
        abstract: "The nearest minibrot: period, nucleus, size, rotation and the framing view.",
        discussion: """
        Period: the first n at which the ball of radius 1/zoom around the centre, iterated to first \
        order, holds 0 (|z_n| < |dz_n/dc| / zoom, dz/dc <- N z^(N-1) dz/dc + 1). Nucleus: Newton's \
        method on z_p(c) = 0 from the centre, in MPFR at the precision the view and the minibrot's \
        size need. Size s = 1 / (b l^(N/(N-1))), with l the product of N z_i^(N-1) and b = 1 + the \
        sum of 1/l over the first p - 1 steps (1 / (b l^2) at power 2): the minibrot is about the \
        whole set scaled by |s| and turned by arg s (past power 2 within 180/(N-1) degrees: a turn \
        of 360/(N-1) leaves the multibrot unchanged). The framing view: at power 2 centre \
        nucleus - 0.75 s, zoom \(MinibrotLocator.framing) / |s|; past 2 centre the nucleus, zoom \
        \(MinibrotLocator.framingPowers) / |s|.

        Prints "key value" lines (power past 2, period, nucleus, size, rotation, center, zoom, \
        newton-steps) or, with --kfr FILE, also writes the framing view as a .kfr location for \
        glint fractal --location.
        """)

    @OptionGroup var view: LocateView

    @Option(help: ArgumentHelp("The minibrot's period, when known (skips the search; 1 to \(MinibrotLocator.maxPeriodLimit)).",
                               valueName: "p"),
            transform: wholeNumber("--period", 1...MinibrotLocator.maxPeriodLimit))
    var period: Int?

    @Option(name: .customLong("max-period"),
            help: ArgumentHelp("The longest period searched for (1 to \(MinibrotLocator.maxPeriodLimit)).", valueName: "n"),
            transform: wholeNumber("--max-period", 1...MinibrotLocator.maxPeriodLimit))
    var maxPeriod = MinibrotLocator.defaultMaxPeriod

    @Option(help: ArgumentHelp("Significant digits of the nucleus and the framing centre (17 to 100000; default: what the minibrot's size needs plus 10).",
                               valueName: "d"),
            transform: wholeNumber("--digits", 17...100_000))
    var digits: Int?

    @Option(help: ArgumentHelp("Iterations recorded in the .kfr (default: 100 × the period, at least 1000).", valueName: "n"),
            transform: wholeNumber("--iterations", 1...FractalJob.maxIterationLimit))
    var iterations: Int?

    func run() throws {
        let m = try MinibrotLocator.locate(centerRe: view.center.re, centerIm: view.center.im, zoom: view.zoom,
                                           power: view.power, period: period, maxPeriod: maxPeriod, digits: digits ?? 0)
        // Plain decimals where they are short, as --center and --zoom take them.
        func plain(_ n: DeepNumber) -> String { n.plainText }
        var lines = view.powerLines + [
            "period \(m.period)",
            "nucleus \(plain(m.nucleusRe)),\(plain(m.nucleusIm))",
            "size \(m.sizeMantissa)e\(m.sizeExponent10)",
            "rotation \(degreesText(m.orientationDegrees)) degrees",
            "center \(plain(m.centerRe)),\(plain(m.centerIm))",
            "zoom \(plain(m.zoom))",
            "newton-steps \(m.newtonSteps)",
        ]
        lines += try view.writeLocation(center: DeepComplex(re: m.centerRe, im: m.centerIm), zoom: m.zoom,
                                        iterations: iterations ?? min(FractalJob.maxIterationLimit, max(1000, 100 * m.period)))
        print(lines.joined(separator: "\n"))
    }
}
