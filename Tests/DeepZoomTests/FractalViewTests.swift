import GlintCore
import GlintWorkloads
import Testing

/// A fractal view as the library holds it: FractalJob's exact centre, zoom and c with the
/// Doubles the kernels read, location files (the PNG view record, .kfr) and animation frames.
@Suite struct FractalViewTests {
    static func number(_ text: String) -> DeepNumber { try! DeepNumber(parsing: text) }

    static let longRe = "-0.743643887037158704752191506114774521893"
    static let longIm = "0.131825904205311970493132056385139"

    @Test("the Doubles are the nearest to the exact numbers; a Double sets its shortest text")
    func exactAndNearest() {
        var job = FractalJob(formula: .julia)
        #expect(job.exactCenter.description == "0.0,0.0" && job.exactZoom.text == "1.0")
        #expect(job.exactC.description == "-0.76,0.15")
        job.exactCenter = DeepComplex(re: Self.number(Self.longRe), im: Self.number(Self.longIm))
        #expect(job.centerRe == Double(Self.longRe)! && job.centerIm == Double(Self.longIm)!)
        #expect(job.deepView().centerRe.text == Self.longRe)
        job.exactZoom = Self.number("1e400")
        #expect(job.zoom == .infinity && job.deepView().zoom.text == "1e400")
        job.zoom = 1e300
        #expect(job.exactZoom.text == "1e+300" && job.zoom == 1e300)
        job.centerRe += 0.25
        #expect(job.exactCenter.re.text == "\(Double(Self.longRe)! + 0.25)")
        #expect(job.exactCenter.im.text == Self.longIm, "the other part keeps its digits")
        job.cIm = -0.0
        #expect(job.exactC.im.text == "-0.0" && job.cIm.sign == .minus)
        #expect(job.params.center_im_bits == Double(Self.longIm)!.bitPattern)
    }

    @Test("a view record reads back to the job that wrote it")
    func recordRoundTrip() throws {
        var job = FractalJob(formula: .burningShip)
        (job.width, job.height, job.maxIterations, job.supersampling) = (320, 200, 5000, 2)
        job.exactCenter = DeepComplex(re: Self.number(Self.longRe), im: Self.number("-1e-30"))
        job.exactZoom = Self.number("3.5e120")
        job.exactC = DeepComplex(re: Self.number("0.25"), im: Self.number("1E-3"))
        (job.smooth, job.palette, job.bailout, job.precision) = (true, .fire, 256, .perturbation)
        let record = FractalLocation(job: job).recordText
        #expect(record.contains("center=\(Self.longRe),-1e-30\n") && record.contains("c=0.25,1E-3\n"))
        let read = FractalJob(view: try FractalLocation(record: record))
        #expect(FractalLocation(job: read).recordText == record)
        #expect(read.exactCenter == job.exactCenter && read.exactZoom == job.exactZoom && read.exactC == job.exactC)
        #expect(read.params.center_re_bits == job.params.center_re_bits && read.params.scale_bits == job.params.scale_bits)
    }

    @Test("the recorded precision is kept while it draws the view; a given one always")
    func precisionOfAView() throws {
        var view = try FractalLocation(record: "version=1\nformula=mandelbrot\nzoom=1e5\nprecision=double\n")
        #expect(FractalJob(view: view).precision == .double)
        view.zoom = Self.number("1e40")
        #expect(FractalJob(view: view).precision == .perturbation, "double no longer draws it: auto's choice")
        #expect(FractalJob(view: view, precision: .float).precision == .float)
        view.precision = nil
        view.zoom = nil
        #expect(FractalJob(view: view).precision == .float)
    }

    @Test("Kalles Fraktaler's zoom is twice Glint's, exactly, at any depth")
    func kfr() throws {
        let view = try FractalLocation(kfr: "Re: -1.25\r\nIm: 0.5\r\nZoom: 3e10001\r\nIterations: 900\r\n")
        #expect(view.zoom?.text == "1.5e10001" && view.center?.description == "-1.25,0.5" && view.iterations == 900)
        #expect(view.kfrText == "Re: -1.25\r\nIm: 0.5\r\nZoom: 3e10001\r\nIterations: 900\r\n")
        #expect(throws: GlintError.self) { try FractalLocation(kfr: "Re: 2e9\r\nIm: 0\r\nZoom: 1\r\n") }
        #expect(throws: GlintError.self) { try FractalLocation(record: "version=1\nsize=40x0\n") }
    }

    @Test("one view over another: the first's fields win")
    func over() throws {
        var options = FractalLocation()
        options.zoom = Self.number("1e9")
        options.size = (64, 48)
        let file = try FractalLocation(record: "version=1\nformula=julia\nzoom=2\nc=0.1,0.2\nsize=10x10\n")
        let job = FractalJob(view: options.over(file))
        #expect(job.formula == .julia && job.exactZoom.text == "1e9" && job.exactC.description == "0.1,0.2")
        #expect(job.width == 64 && job.height == 48)
    }

    @Test("animation frames: exact zoom and centre per frame, c as Doubles, the ends as given")
    func frames() {
        var ramps = FractalRamps()
        ramps.zoom = (Self.number("1"), Self.number("1e30"))
        ramps.center = (DeepComplex(re: Self.number("-0.75"), im: Self.number("0")),
                        DeepComplex(re: Self.number(Self.longRe), im: Self.number(Self.longIm)))
        ramps.c = Ramp(name: "c", from: [-0.8, 0.156], to: [-0.7, 0.27])
        let base = FractalJob(formula: .julia)
        let n = 4
        let jobs = (0..<n).map { ramps.job(base, frame: $0, of: n, automaticPrecision: true) }
        #expect(jobs[0].exactZoom.text == "1" && jobs[n - 1].exactZoom.text == "1e30")
        #expect(jobs[n - 1].exactCenter.re.text == Self.longRe)
        #expect(jobs[1].exactZoom.text == DeepRamp.zoom(from: Self.number("1"), to: Self.number("1e30"), frame: 1, of: n))
        #expect(jobs[1].exactC.re.text == "\(jobs[1].cRe)" && jobs[0].exactC.description == "-0.8,0.156")
        #expect(jobs[0].precision == .float && jobs[n - 1].precision == .perturbation)
        #expect(ramps.job(base, frame: n - 1, of: n, automaticPrecision: false).precision == base.precision)
    }
}
