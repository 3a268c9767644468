import ArgumentParser
import GlintCore
import GlintWorkloads

/// `glint locate misiurewicz`: a Misiurewicz point near a Mandelbrot view (MisiurewiczLocator).
struct LocateMisiurewicz: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "misiurewicz",
        abstract: "A Misiurewicz point near the view: preperiod, period, the point, its multiplier and the view centred on it.",
        discussion: """
        A Misiurewicz point is a c whose critical orbit z0 = 0, z(n+1) = z(n)^2 + c (z(n)^N + c with \
        --power N) lands on a cycle: z(q+p) = z(q), q the preperiod and p the period, both the \
        smallest. Numbered from z0 = 0 (so z1 = c): c = i is M(2,2), c = -2 is M(2,1), and no point \
        has preperiod 1.

        Preperiod and period (unless both are given): with g_i = z(i+p) - z(i) and \
        h = g_q / (g_0 g_1 ... g_(q-1)), whose roots are the points of preperiod exactly q, the \
        first pair (in order of q + p, nearest first) for which Newton's first step on h from the \
        centre is shorter than the view radius 1/zoom, g_q's own term outweighs the others and h is \
        near enough linear over that step (its second derivative says so). The search stops when the centre's orbit escapes or falls onto an attracting cycle (the centre \
        is inside the set). --preperiod or --period alone restricts it.

        The point: Newton's method on h (lower periods divided out too) in MPFR at the view's \
        precision plus 64 bits; refused when it lands more than \(Format.short(MisiurewiczLocator.maxDistance)) view radii \
        from the centre, on an attracting cycle, or on a lower preperiod or period. Up to \
        \(MisiurewiczLocator.maxTries) candidates are tried.

        Multiplier: lambda = 2 z(q) 2 z(q+1) ... 2 z(q+p-1), the cycle's derivative (|lambda| > 1; \
        past power 2 each factor is N z^(N-1)). \
        About the point the picture repeats, ever more closely, when zoomed by |lambda| and turned \
        by arg lambda (the rotation). The view printed is centred on the point at the given zoom, \
        with the iterations it needs: 1.25 (q + p (log2 zoom + 16) / log2 |lambda|) + 1000.

        Prints "key value" lines (power past 2, preperiod, period, point, multiplier, rotation, \
        center, zoom, iterations, newton-steps) or, with --kfr FILE, also writes the view as a .kfr location \
        for glint fractal --location.

        Examples:
          glint locate misiurewicz --center -0.75,0.1 --zoom 10
          glint locate misiurewicz --center -0.1011,0.9563 --zoom 1000 --digits 120 --kfr m41.kfr
          glint fractal --location m41.kfr --zoom 1e100 --iterations auto -o m41.png
          glint locate misiurewicz --center 0,1 --zoom 5 --preperiod 2 --period 2
          glint locate misiurewicz --power 3 --center 0.3,1.2 --zoom 10
        """)

    @OptionGroup var view: LocateView

    @Option(help: ArgumentHelp("The preperiod q, when known (2 to \(MisiurewiczLocator.limit)); with --period it skips the search.",
                               valueName: "q"),
            transform: wholeNumber("--preperiod", 2...MisiurewiczLocator.limit))
    var preperiod: Int?

    @Option(help: ArgumentHelp("The period p, when known (1 to \(MisiurewiczLocator.limit)); with --preperiod it skips the search.",
                               valueName: "p"),
            transform: wholeNumber("--period", 1...MisiurewiczLocator.limit))
    var period: Int?

    @Option(name: .customLong("max-preperiod"),
            help: ArgumentHelp("The largest preperiod searched for (2 to \(MisiurewiczLocator.limit)).", valueName: "n"),
            transform: wholeNumber("--max-preperiod", 2...MisiurewiczLocator.limit))
    var maxPreperiod = MisiurewiczLocator.defaultMaxPreperiod

    @Option(name: .customLong("max-period"),
            help: ArgumentHelp("The longest period searched for (1 to \(MisiurewiczLocator.maxPeriodLimit)).", valueName: "n"),
            transform: wholeNumber("--max-period", 1...MisiurewiczLocator.maxPeriodLimit))
    var maxPeriod = MisiurewiczLocator.defaultMaxPeriod

    @Option(help: ArgumentHelp("Significant digits of the point (17 to 100000; default: what the zoom needs plus 12). More let glint fractal zoom deeper into it.",
                               valueName: "d"),
            transform: wholeNumber("--digits", 17...100_000))
    var digits: Int?

    @Option(help: ArgumentHelp("Iterations recorded in the .kfr (default: the estimate above).", valueName: "n"),
            transform: wholeNumber("--iterations", 1...FractalJob.maxIterationLimit))
    var iterations: Int?

    func run() throws {
        let m = try MisiurewiczLocator.locate(centerRe: view.center.re, centerIm: view.center.im, zoom: view.zoom,
                                              power: view.power, preperiod: preperiod, period: period, maxPreperiod: maxPreperiod,
                                              maxPeriod: maxPeriod, digits: digits ?? 0)
        let point = "\(m.re.plainText),\(m.im.plainText)"
        let n = iterations ?? m.iterations
        var lines = view.powerLines + [
            "preperiod \(m.preperiod)",
            "period \(m.period)",
            "point \(point)",
            "multiplier \(m.multiplierText)",
            "rotation \(degreesText(m.rotationDegrees)) degrees",
            "center \(point)",
            "zoom \(m.zoom.plainText)",
            "iterations \(n)",
            "newton-steps \(m.newtonSteps)",
        ]
        lines += try view.writeLocation(center: DeepComplex(re: m.re, im: m.im), zoom: m.zoom, iterations: n)
        print(lines.joined(separator: "\n"))
    }
}

extension MisiurewiczLocator.Point {
    /// |λ| to 6 significant digits: plainly up to 999999, else as mantissa and exponent.
    var multiplierText: String {
        let (m, e) = (multiplierMantissa, multiplierExponent10)
        guard (0...5).contains(e) else { return Format.fixed(m, 5) + "e" + String(e) }
        var scaled = m
        for _ in 0..<e { scaled *= 10 }
        return Format.fixed(scaled, 5 - e)
    }
}
