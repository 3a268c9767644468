#if Serve
import GlintCore
import GlintWorkloads
import Hummingbird
import NIOCore

/// POST /api/view: a fractal location in any form Glint writes one, read by the command line's
/// own readers and answered as the view's fields, so the page takes a saved PNG, a .kfr file or
/// pasted text without a parser of its own (and keeps every digit of a deep centre).
extension ServeRoutes {
    func view(_ request: Request) async throws -> Response {
        let bytes = try await body(request)
        let (kind, view) = try Self.readView(bytes, uploads: context.uploads)
        return Self.json(Self.viewJSON(kind: kind, view))
    }

    /// The view of a body: a PNG's view record (or Kalles Fraktaler comment), or text that is a
    /// view record, .kfr text, `glint fractal` options, or a centre `RE,IM`; with its form's name.
    static func readView(_ bytes: [UInt8], uploads: Uploads) throws -> (kind: String, view: FractalLocation) {
        if bytes.starts(with: PNG.signature) {
            do { return ("png", try FractalLocation(fileBytes: bytes, name: "the PNG")) } catch { throw ServeError.bad(error.message) }
        }
        guard bytes.count <= FractalLocation.maxTextBytes else {
            throw ServeError.tooLarge("a location as text is at most \(FractalLocation.maxTextBytes) bytes (this one is \(bytes.count))")
        }
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
            throw ServeError.bad("not a location: a Glint PNG, or text (a .kfr file, a view record, --center X,Y --zoom Z, or X,Y)")
        }
        guard text.contains(where: { !$0.isWhitespace }) else {
            throw ServeError.bad("the location is empty: give a .kfr text, a view record, --center X,Y --zoom Z, or X,Y")
        }
        // A record's and a .kfr's lines are keys and values; command-line words and a bare
        // centre have neither a "version=" line nor a "Re: " one, so the file forms are tried first.
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters() }
        let record = lines.contains { $0.hasPrefix("version=") }
        if record || lines.contains(where: { ["Re:", "Im:", "Zoom:"].contains(where: $0.hasPrefix) }) {
            do { return (record ? "record" : "kfr", try FractalLocation(text: text)) } catch { throw ServeError.bad(error.message) }
        }
        return ("options", try optionsView(text, uploads: uploads))
    }

    /// The view of `glint fractal` options (what the page's Copy gives, or a whole command line,
    /// `glint fractal` and `-o FILE` skipped), or of a bare centre `RE,IM`: only the fields given.
    static func optionsView(_ text: String, uploads: Uploads) throws -> FractalLocation {
        var words = try shellWords(text)
        if words.first == "glint" { words.removeFirst() }
        if words.first == "fractal" { words.removeFirst() }
        var kept: [String] = []
        var i = 0
        while i < words.count {
            // The page renders to no file of the server's: an output named in a pasted command is dropped.
            if words[i] == "-o" || words[i] == "--output" { i += 2; continue }
            if words[i].hasPrefix("--output=") { i += 1; continue }
            kept.append(words[i])
            i += 1
        }
        words = kept
        if words.count == 1, words[0].contains(","), !words[0].hasPrefix("--") { words = ["--center", words[0]] }
        guard !words.isEmpty else { throw ServeError.bad("the location is empty: give --center X,Y --zoom Z, or X,Y") }
        // fractal's command line needs a formula: one is lent for reading and not reported.
        let formulaGiven = words.first.map { FractalFormula(name: $0) != nil } ?? false
        if !formulaGiven && !words[0].hasPrefix("-") {
            throw ServeError.bad("not a location: give a .kfr text, a view record, --center X,Y --zoom Z, or X,Y (got \(JSON.quotedForMessage(words[0], limit: 40)))")
        }
        let job = try ServeJob(workload: "fractal", args: formulaGiven ? words : ["mandelbrot"] + words, uploads: uploads)
        guard let fractal = job.command as? Fractal else { throw ServeError.bad("not a fractal view") }
        var view: FractalLocation
        do {
            try fractal.loadLocation()
            view = fractal.view
        } catch { throw ServeError.from(error, preparing: true) }
        if !formulaGiven && fractal.location == nil { view.formula = nil }
        if fractal.autoIterations { view.iterations = nil }
        return view
    }

    /// Words as a POSIX shell splits them: blanks separate; '...' is literal; "..." and a
    /// backslash escape; a backslash-newline joins lines (a command copied over several lines).
    static func shellWords(_ text: String) throws -> [String] {
        var words: [String] = []
        var word = "", inWord = false
        var it = text.makeIterator()
        while let ch = it.next() {
            switch ch {
            case " ", "\t", "\n", "\r", "\r\n":
                if inWord { words.append(word); word = ""; inWord = false }
            case "'":
                inWord = true
                var closed = false
                while let q = it.next() { if q == "'" { closed = true; break }; word.append(q) }
                if !closed { throw ServeError.bad("the location's text has a ' without its closing '") }
            case "\"":
                inWord = true
                var closed = false
                while let q = it.next() {
                    if q == "\"" { closed = true; break }
                    if q == "\\", let next = it.next() { if next != "\n" { word.append(next) }; continue }
                    word.append(q)
                }
                if !closed { throw ServeError.bad("the location's text has a \" without its closing \"") }
            case "\\":
                if let next = it.next(), next != "\n", next != "\r\n" { word.append(next); inWord = true }
            default:
                word.append(ch)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return words
    }

    /// The view's fields under the view record's keys, only those the location gives. The
    /// precision only where it is not what the view would take by itself, so a page does not
    /// pin a precision that a deeper zoom would outgrow.
    static func viewJSON(kind: String, _ v: FractalLocation) -> JSON {
        var fields: [(String, JSON)] = [("kind", .string(kind))]
        let standard = FractalJob(formula: .mandelbrot)
        func add(_ key: String, _ value: JSON?) { if let value { fields.append((key, value)) } }
        add("formula", v.formula.map { .string($0.name) })
        add("center", v.center.map { .string($0.description) })
        add("zoom", v.zoom.map { .string($0.text) })
        add("c", v.c.map { .string($0.description) })
        add("iterations", v.iterations.map { .int(Int64($0)) })
        // A file names Mandelbrot's power only past 2, and a Glint record its colouring only
        // past count: there, a field left out is that default (the page's own would stay).
        let file = kind != "options", glintRecord = file && v.formula != nil
        add("power", (v.power ?? (file ? 2 : nil)).map { .int(Int64($0)) })
        add("palette", v.palette.map { .string($0.name) })
        add("smooth", v.smooth.map { .bool($0) })
        add("size", v.size.map { .string("\($0.width)x\($0.height)") })
        add("ss", v.supersampling.map { .int(Int64($0)) })
        // A record names every field; the page's controls show the bailout only past its default.
        add("bailout", v.bailout.flatMap { $0 == standard.bailout ? nil : .number($0) })
        add("color", (v.colouring ?? (glintRecord ? .count : nil)).map { .string($0.rawValue) })
        add("light", v.colouring.flatMap { $0 == .count ? nil : v.light.flatMap { l in
            l.angle == standard.lightAngle && l.height == standard.lightHeight ? nil : .string("\(l.angle),\(l.height)")
        } })
        if let p = v.precision {
            var probe = v
            probe.precision = nil
            if p != FractalJob(view: probe).precision { add("precision", .string(p.rawValue)) }
        }
        return .object(fields)
    }
}
#endif
