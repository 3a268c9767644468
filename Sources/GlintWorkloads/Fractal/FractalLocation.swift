import GlintCore

/// A fractal view as a location file holds it: a Glint PNG's view record, or a Kalles Fraktaler
/// location (.kfr text, or a KF PNG's "Comment" text). Each field is nil where the file does not
/// say; `over` lays one view on another (the command line's options over a file's) and
/// `FractalJob(view:)` renders the result.
///
/// The view record is one tEXt chunk, keyword `glint:view`, of `key=value` lines:
///
///     version=1
///     formula=mandelbrot
///     center=-0.743643887037158704752191506114774,0.131825904205311970493132056385139
///     c=-0.76,0.15
///     zoom=1e25
///     iterations=8000
///     bailout=2.0
///     palette=tutorial
///     smooth=false
///     size=1200x800
///     ss=1
///     precision=perturbation
///     power=3            (only past 2: Mandelbrot's z^power + c)
///     color=slope        (only when not count)
///     light=45,1.5       (with color: the slope's light, angle and height)
///
/// `center`, `c` and `zoom` are the exact decimal texts the render used (any number of digits);
/// `zoom` is Glint's (at zoom 1 the image height spans 2 units). Unknown keys are ignored.
///
/// Kalles Fraktaler's `Zoom` is twice Glint's: KF sets its view radius to 2/Zoom and its pixel
/// spacing to 2 × radius / height, so at KF Zoom Z the image height spans 4/Z units, where
/// Glint's spans 2/zoom: glint zoom = KF Zoom / 2 (fraktal_sft.cpp, CFraktalSFT::SetPosition).
public struct FractalLocation: Sendable {
    public var formula: FractalFormula?
    public var center: DeepComplex?
    public var zoom: DeepNumber?
    public var c: DeepComplex?
    public var iterations: Int?
    public var bailout: Double?
    public var palette: Color.Palette?
    public var smooth: Bool?
    public var size: (width: Int, height: Int)?
    public var supersampling: Int?
    public var precision: Precision?
    /// Mandelbrot's power; nil means 2 (records and .kfr files name it only past 2).
    public var power: Int?
    /// `--color` and `--light` (angle, height); records name them only past count.
    public var colouring: Colouring?
    public var light: (angle: Double, height: Double)?

    /// The PNG text keyword of the view record.
    public static let keyword = "glint:view"
    public static let version = 1
    /// The largest .kfr text file read.
    public static let maxTextBytes = 1 << 20
    /// The largest |re| and |im| of a centre or c read (as `glint fractal --center` and `--c`
    /// take them): float and double alike stay exact enough.
    public static let maxCoordinate = 1e9
    static let coordinateRange = "between -1e9 and 1e9"
    /// The smallest zoom read (as `--zoom` takes it), as a power of ten.
    static let minLog10Zoom = -9.0

    public init() {}

    /// The view `job` renders, every field set: what its PNG records and `kfrText` prints.
    public init(job: FractalJob) {
        (formula, center, zoom, c) = (job.formula, job.exactCenter, job.exactZoom, job.exactC)
        (iterations, bailout, palette, smooth) = (job.maxIterations, job.bailout, job.palette, job.smooth)
        (size, supersampling, precision) = ((job.width, job.height), job.supersampling, job.precision)
        power = job.power == 2 ? nil : job.power
        if job.colouring != .count { (colouring, light) = (job.colouring, (job.lightAngle, job.lightHeight)) }
    }

    /// This view with each field it leaves out taken from `other`.
    public func over(_ other: FractalLocation?) -> FractalLocation {
        guard let other else { return self }
        var v = self
        v.formula = formula ?? other.formula
        v.center = center ?? other.center
        v.zoom = zoom ?? other.zoom
        v.c = c ?? other.c
        v.iterations = iterations ?? other.iterations
        v.bailout = bailout ?? other.bailout
        v.palette = palette ?? other.palette
        v.smooth = smooth ?? other.smooth
        v.size = size ?? other.size
        v.supersampling = supersampling ?? other.supersampling
        v.precision = precision ?? other.precision
        v.power = power ?? other.power
        v.colouring = colouring ?? other.colouring
        v.light = light ?? other.light
        return v
    }

    // MARK: Reading

    /// The location in the file at `path`: a PNG (by its signature) or a .kfr text file. Errors
    /// are one line saying what is wrong with the file.
    public init(contentsOf path: String) throws(GlintError) {
        let head = try FileIO.readHead(path, count: 8)
        if head == PNG.signature {
            try self.init(pngText: try PNG.readText(path))
            return
        }
        try self.init(fileText: try FileIO.read(path, limit: Self.maxTextBytes))
    }

    /// The location in a file's bytes held in memory (an upload): a PNG (by its signature) or a
    /// .kfr text, read as `init(contentsOf:)` reads a file. `name` is only used in messages.
    public init(fileBytes bytes: [UInt8], name: String) throws(GlintError) {
        if bytes.starts(with: PNG.signature) {
            try self.init(pngText: try PNG.text(in: bytes, name: name))
            return
        }
        guard bytes.count <= Self.maxTextBytes else {
            throw GlintError("not a Glint PNG, and over the \(Self.maxTextBytes) bytes a .kfr text may have")
        }
        try self.init(fileText: bytes)
    }

    /// A location as text, in any form a file holds one: a view record (a `version=` line) or
    /// Kalles Fraktaler .kfr text (Re, Im and Zoom lines).
    public init(text: String) throws(GlintError) {
        if Self.lines(text).contains(where: { $0.trimmingCharacters().hasPrefix("version=") }) {
            try self.init(record: text)
        } else if Self.looksLikeKFR(text) {
            try self.init(kfr: text)
        } else {
            throw GlintError("not a view record (key=value lines from version=1) or a Kalles Fraktaler location (Re:, Im: and Zoom: lines)")
        }
    }

    /// The view of a PNG's text chunks: its view record, else a Kalles Fraktaler comment.
    private init(pngText entries: [PNG.TextEntry]) throws(GlintError) {
        if let record = entries.last(where: { $0.keyword == Self.keyword }) {
            try self.init(record: record.text)
            return
        }
        if let comment = entries.last(where: { $0.keyword == "Comment" }), Self.looksLikeKFR(comment.text) {
            try self.init(kfr: comment.text)
            return
        }
        throw GlintError("a PNG without a view record (no \(Self.keyword) text chunk, nor a Kalles Fraktaler comment)")
    }

    /// The view of a .kfr file's bytes.
    private init(fileText bytes: [UInt8]) throws(GlintError) {
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
            throw GlintError("not a Glint PNG or a Kalles Fraktaler .kfr file (binary data)")
        }
        guard Self.looksLikeKFR(text) else {
            throw GlintError("not a Glint PNG or a Kalles Fraktaler .kfr file (no Re, Im and Zoom lines)")
        }
        try self.init(kfr: text)
    }

    /// Lines without their line ends (LF, CRLF or CR; a CRLF is one Character).
    private static func lines(_ text: String) -> [Substring] {
        text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
    }

    /// `Key: value` pairs of a .kfr text (the first ": " splits; other lines are skipped).
    private static func kfrPairs(_ text: String) -> [String: String] {
        var pairs: [String: String] = [:]
        for line in lines(text) {
            guard let colon = line.indices.first(where: { line[$0] == ":" && line[line.index(after: $0)...].first == " " }) else { continue }
            let key = line[..<colon].trimmingCharacters()
            if pairs[key] == nil { pairs[key] = line[line.index(colon, offsetBy: 2)...].trimmingCharacters() }
        }
        return pairs
    }

    private static func looksLikeKFR(_ text: String) -> Bool {
        let pairs = kfrPairs(text)
        return pairs["Re"] != nil && pairs["Im"] != nil && pairs["Zoom"] != nil
    }

    /// A Kalles Fraktaler location: its Re, Im, Zoom and (if present) Iterations.
    public init(kfr text: String) throws(GlintError) {
        let pairs = Self.kfrPairs(text)
        guard let re = pairs["Re"], let im = pairs["Im"], let zoomText = pairs["Zoom"] else {
            throw GlintError("not a Kalles Fraktaler location (no Re, Im and Zoom lines)")
        }
        center = try Self.pair(re, im, key: "Re/Im")
        let kfZoom = try Self.decimal(zoomText, key: "Zoom")
        zoom = try Self.checkedZoom(DecimalText.half(kfZoom), key: "Zoom", given: zoomText)
        if let n = pairs["Iterations"] { iterations = try Self.count(n, key: "Iterations", FractalJob.maxIterationLimit) }
        if let n = pairs["Power"] { power = try Self.power(n, key: "Power") }
    }

    /// A power 2...FractalJob.maxPower.
    private static func power(_ text: String, key: String) throws(GlintError) -> Int {
        guard let n = Int(text), (2...FractalJob.maxPower).contains(n) else {
            throw GlintError("\(key): \(JSON.printable(text, limit: 20)) is not a power Glint renders (2 to \(FractalJob.maxPower))")
        }
        return n
    }

    /// A Glint view record (`key=value` lines).
    public init(record text: String) throws(GlintError) {
        do throws(GlintError) { try self.init(checkedRecord: text) } catch {
            throw error.message.hasPrefix("garbled") || error.message.hasPrefix("a view record") ? error
                : GlintError("garbled view record (\(error.message))")
        }
    }

    private init(checkedRecord text: String) throws(GlintError) {
        var seen: [String: String] = [:]
        for line in Self.lines(text) where !line.trimmingCharacters().isEmpty {
            guard let eq = line.firstIndex(of: "=") else {
                throw GlintError("garbled view record (a line without '=': \(JSON.printable(String(line), limit: 40)))")
            }
            let key = line[..<eq].trimmingCharacters(), value = line[line.index(after: eq)...].trimmingCharacters()
            guard seen[key] == nil else { throw GlintError("garbled view record (\(key) given twice)") }
            seen[key] = value
        }
        guard let version = seen["version"] else { throw GlintError("garbled view record (no version line)") }
        guard version == String(Self.version) else {
            throw GlintError("a view record of version \(JSON.printable(version, limit: 20)); this glint reads version \(Self.version)")
        }
        if let v = seen["formula"] {
            guard let f = FractalFormula(name: v) else { throw Self.bad("formula", v) }
            formula = f
        }
        if let v = seen["center"] { center = try Self.pair(v, key: "center") }
        if let v = seen["zoom"] { zoom = try Self.checkedZoom(Self.decimal(v, key: "zoom"), key: "zoom", given: v) }
        if let v = seen["c"] { c = try Self.pair(v, key: "c") }
        if let v = seen["iterations"] { iterations = try Self.count(v, key: "iterations", FractalJob.maxIterationLimit) }
        if let v = seen["bailout"] {
            guard let b = Double(v), b.isFinite, b > 1, b <= FractalJob.maxBailout else { throw Self.bad("bailout", v) }
            bailout = b
        }
        if let v = seen["palette"] {
            guard let p = Color.Palette(name: v) else { throw Self.bad("palette", v) }
            palette = p
        }
        if let v = seen["smooth"] {
            switch v {
            case "true", "1": smooth = true
            case "false", "0": smooth = false
            default: throw Self.bad("smooth", v)
            }
        }
        if let v = seen["size"] {
            guard let s = Self.size(v) else { throw Self.bad("size", v) }
            size = s
        }
        if let v = seen["ss"] { supersampling = try Self.count(v, key: "ss", FractalJob.maxSupersampling) }
        if let v = seen["precision"] {
            guard let p = Precision(rawValue: v) else { throw Self.bad("precision", v) }
            precision = p
        }
        if let v = seen["power"] { power = try Self.power(v, key: "power") }
        if let v = seen["color"] {
            guard let c = Colouring(rawValue: v) else { throw Self.bad("color", v) }
            colouring = c
        }
        if let v = seen["light"] {
            let parts = v.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
            guard parts.count == 2, let a = parts[0], let h = parts[1], a.isFinite, h.isFinite else { throw Self.bad("light", v) }
            light = (a, h)
        }
    }

    private static func bad(_ key: String, _ value: String) -> GlintError {
        GlintError("garbled view record (\(key)=\(JSON.printable(value, limit: 40)))")
    }

    private static func decimal(_ text: String, key: String) throws(GlintError) -> DeepNumber {
        do throws(GlintError) { return try DeepNumber(parsing: text, field: key) } catch {
            throw GlintError("\(key) \(JSON.printable(text, limit: 40)) is not a decimal number")
        }
    }

    /// A zoom of at least 1e-9 (as --zoom takes).
    private static func checkedZoom(_ z: DeepNumber, key: String, given: String) throws(GlintError) -> DeepNumber {
        guard !z.isNegative, !z.isZero, let l = z.log10Magnitude, l >= minLog10Zoom else {
            throw GlintError("\(key) \(JSON.printable(given, limit: 40)) is not a zoom glint draws (a positive number of at least 1e-9\(key == "Zoom" ? " after halving" : ""))")
        }
        // Checked here so that the file is named, rather than the --zoom it would become.
        guard let l2 = z.log2Magnitude, l2 < Double(DeepView.maxLog2Zoom) else {
            throw GlintError("\(key) \(JSON.printable(given, limit: 40)) is beyond the deepest zoom glint draws (2^\(DeepView.maxLog2Zoom), about 1e\(Int(Double(DeepView.maxLog2Zoom) * 0.30103)))")
        }
        return z
    }

    /// `RE,IM` in one text.
    private static func pair(_ text: String, key: String) throws(GlintError) -> DeepComplex {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw GlintError("\(key) \(JSON.printable(text, limit: 40)) is not two numbers RE,IM") }
        return try pair(String(parts[0]), String(parts[1]), key: key)
    }

    /// Two decimals, each within ±`maxCoordinate`, kept as written.
    private static func pair(_ re: String, _ im: String, key: String) throws(GlintError) -> DeepComplex {
        let (re, im) = (re[...].trimmingCharacters(), im[...].trimmingCharacters())
        let value = DeepComplex(re: try decimal(re, key: key), im: try decimal(im, key: key))
        guard [value.re, value.im].allSatisfy({ abs($0.nearestDouble) <= maxCoordinate }) else {
            throw GlintError("\(key) \(JSON.printable(re + "," + im, limit: 60)) is outside the plane glint draws (each number \(coordinateRange))")
        }
        return value
    }

    private static func count(_ text: String, key: String, _ limit: Int) throws(GlintError) -> Int {
        guard let n = Int(text), (1...limit).contains(n) else {
            throw GlintError("\(key) \(JSON.printable(text, limit: 40)) is not a whole number between 1 and \(limit)")
        }
        return n
    }

    /// `WxH` (either case of x, each side whole and signed at most by its sign) within ImageLimits.
    private static func size(_ text: String) -> (width: Int, height: Int)? {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        func side(_ s: Substring) -> Int? {
            let digits = s.first == "-" || s.first == "+" ? s.dropFirst() : s
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            // Sides too long for an Int are over the limit too.
            return Int(s)
        }
        guard parts.count == 2, let w = side(parts[0]), let h = side(parts[1]),
              (try? ImageLimits.check(width: w, height: h)) != nil else { return nil }
        return (w, h)
    }

    // MARK: Writing

    /// The view record's text (the fields that are set).
    public var recordText: String {
        var lines = ["version=\(Self.version)"]
        func add(_ key: String, _ value: String?) { if let value { lines.append("\(key)=\(value)") } }
        add("formula", formula?.name)
        add("center", center?.description)
        add("c", c?.description)
        add("zoom", zoom?.text)
        add("iterations", iterations.map { String($0) })
        add("bailout", bailout.map { "\($0)" })
        add("palette", palette?.name)
        add("smooth", smooth.map { $0 ? "true" : "false" })
        add("size", size.map { "\($0.width)x\($0.height)" })
        add("ss", supersampling.map { String($0) })
        add("precision", precision?.rawValue)
        add("power", power.flatMap { $0 == 2 ? nil : String($0) })
        add("color", colouring.flatMap { $0 == .count ? nil : $0.rawValue })
        add("light", colouring.flatMap { $0 == .count ? nil : light.map { "\($0.angle),\($0.height)" } })
        return lines.joined(separator: "\n") + "\n"
    }

    /// The view record as the PNG text chunk.
    public var textEntry: PNG.TextEntry { PNG.TextEntry(keyword: Self.keyword, text: recordText) }

    /// Kalles Fraktaler .kfr text: Re, Im, Zoom (KF's: twice Glint's) and Iterations, with KF's
    /// own CRLF line ends.
    public var kfrText: String {
        let kfZoom = zoom.map(DecimalText.double) ?? "2"
        let lines = ["Re: \(center?.re.text ?? "0")", "Im: \(center?.im.text ?? "0")", "Zoom: \(kfZoom)",
                     "Iterations: \(iterations ?? 128)"] + (power.flatMap { $0 == 2 ? nil : ["Power: \($0)"] } ?? [])
        return lines.map { $0 + "\r\n" }.joined()
    }
}

extension FractalJob {
    /// The job that renders `view`: each field the view leaves out at FractalJob's default
    /// (mandelbrot's whole-set view without a formula). The precision is `precision` when given;
    /// else the view's while it still draws this view faithfully (an option may have moved the
    /// view it was recorded for); else `Precision.automatic`.
    public init(view: FractalLocation, precision given: Precision? = nil) {
        self.init(formula: view.formula ?? .mandelbrot)
        if let s = view.size { (width, height) = s }
        if let center = view.center { exactCenter = center }
        if let zoom = view.zoom { exactZoom = zoom }
        if let c = view.c { exactC = c }
        if let n = view.iterations { maxIterations = n }
        if let n = view.power { power = n }
        if let c = view.colouring { colouring = c }
        if let l = view.light { (lightAngle, lightHeight) = l }
        if let b = view.bailout { bailout = b }
        if let p = view.palette { palette = p }
        if let s = view.smooth { smooth = s }
        if let ss = view.supersampling { supersampling = ss }
        if let given {
            precision = given
            return
        }
        if let recorded = view.precision {
            var j = self
            j.precision = recorded
            // image-julia's texture is read later; its size does not decide the precision.
            if j.formula == .imageJulia && j.texture == nil { j.texture = Image8(width: 1, height: 1) }
            if (try? j.validate()) != nil {
                precision = recorded
                return
            }
        }
        precision = .automatic(for: self)
    }
}

/// Exact decimal doubling and halving of `DeepNumber`s, for Kalles Fraktaler's zoom.
extension DeepNumber {
    /// The value written plainly where that is short (`39.4`, `-1.7548`), else as `d.ddde±N`.
    public var plainText: String { DecimalText.text(self, times: 1, shift: 0) }
}

enum DecimalText {
    /// 2 × n, as decimal text.
    static func double(_ n: DeepNumber) -> String { text(n, times: 2, shift: 0) }

    /// n / 2 (= 5 × n / 10), parsed back to a DeepNumber.
    static func half(_ n: DeepNumber) -> DeepNumber {
        // The text is plain digits and an exponent: always parses.
        (try? DeepNumber(parsing: text(n, times: 5, shift: -1))) ?? n
    }

    /// k × n × 10^shift for a small k, as decimal text.
    static func text(_ n: DeepNumber, times k: Int, shift: Int) -> String {
        var digits: [Int] = []
        var carry = 0
        for ch in n.significand.utf8.reversed() {
            let v = Int(ch - UInt8(ascii: "0")) * k + carry
            digits.append(v % 10)
            carry = v / 10
        }
        while carry > 0 { digits.append(carry % 10); carry /= 10 }
        return format(negative: n.isNegative, digits: digits.reversed(), exponent: n.exponent + shift)
    }

    /// The value ±0.d1d2... × 10^(count + exponent) of `digits` (most significant first) and
    /// `exponent`, written plainly when that is short and as `d.ddde±N` otherwise.
    static func format(negative: Bool, digits: [Int], exponent: Int) -> String {
        var d = Array(digits.drop { $0 == 0 })
        var e = exponent
        while d.last == 0 { d.removeLast(); e += 1 }
        if d.isEmpty { return "0" }
        let s = d.map { String($0) }.joined()
        let point = d.count + e  // digits before the decimal point
        let sign = negative ? "-" : ""
        if e >= 0 && point <= 21 { return sign + s + String(repeating: "0", count: e) }
        if e < 0 && point > 0 { return sign + s.prefix(point) + "." + s.dropFirst(point) }
        if e < 0 && point > -6 { return sign + "0." + String(repeating: "0", count: -point) + s }
        return sign + s.prefix(1) + (d.count > 1 ? "." + s.dropFirst() : "") + "e" + String(point - 1)
    }
}
