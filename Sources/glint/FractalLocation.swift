import GlintCore
import GlintWorkloads

/// A fractal view as a location file holds it (`glint fractal --location FILE`): a Glint PNG's
/// view record, or a Kalles Fraktaler location (.kfr text, or a KF PNG's "Comment" text).
/// Each field is nil where the file does not say; the command line's options override the rest.
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
///
/// `center` and `zoom` are the exact decimal texts the render used (any number of digits);
/// `zoom` is Glint's (at zoom 1 the image height spans 2 units). Unknown keys are ignored.
///
/// Kalles Fraktaler's `Zoom` is twice Glint's: KF sets its view radius to 2/Zoom and its pixel
/// spacing to 2 × radius / height, so at KF Zoom Z the image height spans 4/Z units, where
/// Glint's spans 2/zoom: glint zoom = KF Zoom / 2 (fraktal_sft.cpp, CFraktalSFT::SetPosition).
struct FractalLocation: Sendable {
    var formula: FractalFormula?
    var center: NumberPair?
    var zoom: DeepNumber?
    var c: NumberPair?
    var iterations: Int?
    var bailout: Double?
    var palette: Color.Palette?
    var smooth: Bool?
    var size: ImageSize?
    var supersampling: Int?
    var precision: Precision?

    /// The PNG text keyword of the view record.
    static let keyword = "glint:view"
    static let version = 1
    /// The largest .kfr text file read.
    static let maxTextBytes = 1 << 20

    init() {}

    // MARK: Reading

    /// Locations already read, by path: a file is read once per run (the options are checked,
    /// then the job is built), and both see the same view.
    private static let cache = Locked<[String: Result<FractalLocation, GlintError>]>([:])

    /// The location in `path`: a PNG (by its signature) or a .kfr text file. Errors are one line
    /// naming the file (`--location FILE: ...`).
    static func load(_ path: String) throws(GlintError) -> FractalLocation {
        if let known = cache.withLock({ $0[path] }) { return try known.get() }
        let result: Result<FractalLocation, GlintError>
        do throws(GlintError) { result = .success(try read(path)) } catch {
            result = .failure(GlintError("--location \(path): \(error.message)"))
        }
        cache.withLock { $0[path] = result }
        return try result.get()
    }

    private static func read(_ path: String) throws(GlintError) -> FractalLocation {
        let head = try FileIO.readHead(path, count: 8)
        if head == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] {
            let entries = try PNG.readText(path)
            if let record = entries.last(where: { $0.keyword == keyword }) {
                return try FractalLocation(record: record.text)
            }
            if let comment = entries.last(where: { $0.keyword == "Comment" }), Self.looksLikeKFR(comment.text) {
                return try FractalLocation(kfr: comment.text)
            }
            throw GlintError("a PNG without a view record (no \(keyword) text chunk, nor a Kalles Fraktaler comment)")
        }
        let bytes = try FileIO.read(path, limit: maxTextBytes)
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
            throw GlintError("not a Glint PNG or a Kalles Fraktaler .kfr file (binary data)")
        }
        guard looksLikeKFR(text) else {
            throw GlintError("not a Glint PNG or a Kalles Fraktaler .kfr file (no Re, Im and Zoom lines)")
        }
        return try FractalLocation(kfr: text)
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
    init(kfr text: String) throws(GlintError) {
        let pairs = Self.kfrPairs(text)
        guard let re = pairs["Re"], let im = pairs["Im"], let zoomText = pairs["Zoom"] else {
            throw GlintError("not a Kalles Fraktaler location (no Re, Im and Zoom lines)")
        }
        center = try Self.pair(re, im, key: "Re/Im")
        let kfZoom = try Self.decimal(zoomText, key: "Zoom")
        zoom = try Self.checkedZoom(DecimalText.half(kfZoom), key: "Zoom", given: zoomText)
        if let n = pairs["Iterations"] { iterations = try Self.count(n, key: "Iterations", FractalJob.maxIterationLimit) }
    }

    /// A Glint view record (`key=value` lines).
    init(record text: String) throws(GlintError) {
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
            guard let b = Double(v), Limits.bailout.contains(b) else { throw Self.bad("bailout", v) }
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
            do { let (w, h) = try parseSize(v); size = ImageSize(width: w, height: h) } catch { throw Self.bad("size", v) }
        }
        if let v = seen["ss"] { supersampling = try Self.count(v, key: "ss", FractalJob.maxSupersampling) }
        if let v = seen["precision"] {
            guard let p = Precision(rawValue: v) else { throw Self.bad("precision", v) }
            precision = p
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
        guard !z.isNegative, !z.isZero, let l = z.log10Magnitude, l >= -9 else {
            throw GlintError("\(key) \(JSON.printable(given, limit: 40)) is not a zoom glint draws (a positive number of at least 1e-9\(key == "Zoom" ? " after halving" : ""))")
        }
        return z
    }

    /// `RE,IM` in one text.
    private static func pair(_ text: String, key: String) throws(GlintError) -> NumberPair {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw GlintError("\(key) \(JSON.printable(text, limit: 40)) is not two numbers RE,IM") }
        return try pair(String(parts[0]), String(parts[1]), key: key)
    }

    /// Two decimals, each within the plane's limits; the description keeps their exact text.
    private static func pair(_ re: String, _ im: String, key: String) throws(GlintError) -> NumberPair {
        let (re, im) = (re[...].trimmingCharacters(), im[...].trimmingCharacters())
        _ = try decimal(re, key: key)
        _ = try decimal(im, key: key)
        guard let x = Double(re), let y = Double(im), Limits.planeCoordinate.contains(x), Limits.planeCoordinate.contains(y) else {
            throw GlintError("\(key) \(JSON.printable(re + "," + im, limit: 60)) is outside the plane glint draws (each number \(Limits.planeCoordinate.text))")
        }
        return NumberPair(x: x, y: y, description: re + "," + im)
    }

    private static func count(_ text: String, key: String, _ limit: Int) throws(GlintError) -> Int {
        guard let n = Int(text), (1...limit).contains(n) else {
            throw GlintError("\(key) \(JSON.printable(text, limit: 40)) is not a whole number between 1 and \(limit)")
        }
        return n
    }

    // MARK: Writing

    /// The view record's text (every field must be set).
    var recordText: String {
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
        add("size", size?.description)
        add("ss", supersampling.map { String($0) })
        add("precision", precision?.rawValue)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The view record as the PNG text chunk.
    var textEntry: PNG.TextEntry { PNG.TextEntry(keyword: Self.keyword, text: recordText) }

    /// Kalles Fraktaler .kfr text: Re, Im, Zoom (KF's: twice Glint's) and Iterations, with KF's
    /// own CRLF line ends.
    var kfrText: String {
        let parts = (center?.description ?? "0,0").split(separator: ",", maxSplits: 1).map(String.init)
        let kfZoom = zoom.map(DecimalText.double) ?? "2"
        return ["Re: \(parts.first ?? "0")", "Im: \(parts.count > 1 ? parts[1] : "0")", "Zoom: \(kfZoom)",
                "Iterations: \(iterations ?? 128)"].map { $0 + "\r\n" }.joined()
    }
}

/// Exact decimal doubling and halving of `DeepNumber`s, for Kalles Fraktaler's zoom.
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
