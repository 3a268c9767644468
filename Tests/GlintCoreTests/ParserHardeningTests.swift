// Hardening of the file parsers (issue "Hardening", items 6 and 7): the PFM reader takes exactly
// the header the format defines, and the JSON reader (scene files, wipes files) follows RFC 8259
// strictly, refuses duplicate keys and never echoes raw control characters in its messages.

import GlintCore
import GlintWorkloads
import Testing

// MARK: - Helpers

/// The message of the GlintError `body` throws (recording an issue when it does not throw).
private func failure<T>(_ body: () throws(GlintError) -> T, sourceLocation: SourceLocation = #_sourceLocation) -> String {
    do {
        _ = try body()
        Issue.record("expected a GlintError", sourceLocation: sourceLocation)
        return ""
    } catch {
        #expect(!error.message.contains("\n") && !error.message.contains("\r"),
                "messages must be one line: \(error.message)", sourceLocation: sourceLocation)
        return error.message
    }
}

/// True when every character of `text` is safe to print on a terminal: no control, format,
/// separator, private-use, surrogate or unassigned scalars (ESC, DEL, C1 controls, bidi overrides...).
private func isTerminalSafe(_ text: String) -> Bool {
    text.unicodeScalars.allSatisfy { s in
        switch s.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned: false
        default: true
        }
    }
}

/// Little-endian float32 bytes.
private func le(_ values: [Float]) -> [UInt8] {
    values.flatMap { v -> [UInt8] in
        let bits = v.bitPattern
        return [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: bits >> UInt32($0)) }
    }
}

/// An 8x6 colour raster whose every float differs (pixel index + channel / 4), bottom row first.
private let raster86: [UInt8] = le((0..<(8 * 6 * 3)).map { Float($0) / 4 })

// MARK: - PFM

@Suite struct PFMStrictHeaderTests {
    /// The well-formed header reads back exactly (baseline for the refusals below).
    @Test func theCanonicalHeaderReads() throws {
        let image = try PFM.decode(Array("PF\n8 6\n-1\n".utf8) + raster86, name: "ok.pfm")
        #expect(image.width == 8 && image.height == 6)
        // Top-left pixel of the image is the first pixel of the last file row.
        let first = (5 * 8) * 3
        #expect(Array(image.pixels[0..<4]) == [Float(first) / 4, Float(first + 1) / 4, Float(first + 2) / 4, 1])
        let grey = try PFM.decode(Array("Pf\n8 6\n1.5e-3\n".utf8) + Array(repeating: 0, count: 8 * 6 * 4), name: "g.pfm")
        #expect(grey.width == 8 && grey.pixels[0] == 0)
    }

    /// Headers that today's tokenising reader accepts with the pixels shifted by a byte or more.
    @Test(arguments: [
        ("PF\r\n8 6\r\n-1\r\n", "\\r"),
        ("PF\n8 6\r\n-1\n", "\\r"),
        ("PF\n8 6\n-1\r\n", "\\r"),
        ("PF\n8 6 7\n-1\n", "size line"),
        ("PF\n8 6\n-1 2\n", "scale line"),
        ("PF\n8 6\n-1\n\n", "bytes"),
        ("PF\n8 6\n-1\n ", "bytes"),
        ("PF 8 6 -1\n", "PF"),
        ("PF\n8\n6\n-1\n", "size line"),
        ("PF\n 8 6\n-1\n", "size line"),
        ("PF\n8  6\n-1\n", "size line"),
        ("PF\n8 6\n -1\n", "scale line"),
        ("PF\n+8 6\n-1\n", "whole numbers"),
        ("PF\n8 6\n--1\n", "scale"),
        ("PF\n8 6\n-1\t", "scale line"),
    ])
    func malformedHeadersAreRefused(_ header: String, _ mention: String) {
        let message = failure { () throws(GlintError) in try PFM.decode(Array(header.utf8) + raster86, name: "bad.pfm") }
        #expect(message.hasPrefix("cannot read bad.pfm: "), "\(message)")
        #expect(message.contains(mention), "'\(header.debugDescription)': \(message) should mention \(mention)")
        #expect(isTerminalSafe(message), "\(message.debugDescription)")
    }

    /// The scale must be a finite, non-zero number; its sign is the byte order.
    @Test(arguments: ["0", "-0", "0.0", "inf", "-inf", "nan", "1e999", "-1e999", "x", "0x1p0", ""])
    func badScalesAreRefused(_ scale: String) {
        let message = failure { () throws(GlintError) in
            try PFM.decode(Array("PF\n8 6\n\(scale)\n".utf8) + raster86, name: "s.pfm")
        }
        #expect(message.contains("scale"), "\(scale): \(message)")
    }

    /// The file must be exactly header + width x height x channels x 4 bytes.
    @Test func theLengthMustBeExact() {
        let header = Array("PF\n8 6\n-1\n".utf8)
        let long = failure { () throws(GlintError) in try PFM.decode(header + raster86 + [0], name: "long.pfm") }
        #expect(long.contains("1 byte") && long.contains("after the pixel data"), "\(long)")
        let short = failure { () throws(GlintError) in try PFM.decode(header + raster86.dropLast(), name: "short.pfm") }
        #expect(short.contains("truncated"), "\(short)")
        // A grey map with a colour map's raster.
        let grey = failure { () throws(GlintError) in try PFM.decode(Array("Pf\n8 6\n-1\n".utf8) + raster86, name: "grey.pfm") }
        #expect(grey.contains("after the pixel data"), "\(grey)")
    }

    /// Sizes are checked before anything is allocated; implausible headers are refused cheaply.
    @Test func sizesAreCheckedFirst() {
        for header in ["PF\n32768 32768\n-1\n", "PF\n99999999999999999999 1\n-1\n", "PF\n0 6\n-1\n", "PF\n8 0\n-1\n"] {
            let message = failure { () throws(GlintError) in try PFM.decode(Array(header.utf8), name: "big.pfm") }
            #expect(message.hasPrefix("cannot read big.pfm: "), "\(message)")
        }
        // A header that never ends (binary junk) is refused without scanning megabytes.
        let junk = failure { () throws(GlintError) in try PFM.decode(Array("PF\n".utf8) + Array(repeating: 0x31, count: 1 << 20), name: "junk.pfm") }
        #expect(junk.contains("size line"), "\(junk)")
        #expect(junk.count < 200, "\(junk)")
    }

    /// Binary junk in the header is quoted safely (escaped, capped).
    @Test func headerJunkIsQuotedSafely() {
        let message = failure { () throws(GlintError) in
            try PFM.decode(Array("PF\n8 6 \u{1b}[2J\n-1\n".utf8) + raster86, name: "esc.pfm")
        }
        #expect(isTerminalSafe(message), "\(message.debugDescription)")
        #expect(message.contains("\\u001b"), "\(message)")
    }
}

// MARK: - JSON (RFC 8259)

@Suite struct JSONStrictTests {
    @Test(arguments: ["0", "-0", "20", "-20", "0.5", "-0.5", "20.25", "1e3", "1E3", "1e+3", "1e-3", "-2.5E-3", "123456789012345678901234567890"])
    func numbersOfTheGrammarRead(_ text: String) throws {
        let v = try JSON.parse("[\(text)]")
        #expect(v.arrayValue?.first?.doubleValue == Double(text), "\(text)")
    }

    /// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?, and nothing else.
    @Test(arguments: ["020", "+20", ".5", "20.", "-", "-.5", "00", "-01", "1e", "1e+", "1E-", "1.e3", "0x10", "1.5.2",
                      "1e3e4", "--1", "- 1", "Infinity", "-Infinity", "NaN", "1_000", "0.5e", "2e3.5", "1e400", "01.5"])
    func numbersOutsideTheGrammarAreRefused(_ text: String) {
        for doc in ["[\(text)]", "{\"n\": \(text)}", text] {
            let message = failure { () throws(GlintError) in try JSON.parse(doc) }
            #expect(message.hasPrefix("JSON line 1"), "\(doc): \(message)")
        }
    }

    @Test func integersAndDoublesKeepTheirKinds() throws {
        #expect(try JSON.parse("7") == .int(7))
        #expect(try JSON.parse("-0") == .int(0))
        #expect(try JSON.parse("9223372036854775807") == .int(.max))
        #expect(try JSON.parse("9223372036854775808") == .number(9223372036854775808))
        #expect(try JSON.parse("2.5e3") == .number(2500))
    }

    /// Unescaped U+0000...U+001F inside strings is refused; escaped it reads; DEL is allowed.
    @Test func controlCharactersInStrings() throws {
        for c in [0x00, 0x01, 0x09, 0x0A, 0x0D, 0x1B, 0x1F] as [UInt8] {
            let text = String(decoding: Array("[\"a".utf8) + [c] + Array("b\"]".utf8), as: UTF8.self)
            let message = failure { () throws(GlintError) in try JSON.parse(text) }
            #expect(message.contains("control character"), "\(c): \(message)")
            #expect(isTerminalSafe(message), "\(message.debugDescription)")
        }
        #expect(try JSON.parse(#"["a\u001bb\t"]"#) == .array([.string("a\u{1b}b\t")]))
        #expect(try JSON.parse("[\"a\u{7f}b\"]") == .array([.string("a\u{7f}b")]))
    }

    @Test func duplicateKeysAreRefusedByName() {
        for (doc, key) in [(#"{"a": 1, "a": 2}"#, #""a""#),
                           (#"{"x": {"deep": 1, "b": 2, "deep": 3}}"#, #""deep""#),
                           (#"{"a": 1, "\u0061": 2}"#, #""a""#),  // the same key once unescaped
                           (#"[{"k": 1}, {"k": 2, "k": 2}]"#, #""k""#)] {
            let message = failure { () throws(GlintError) in try JSON.parse(doc) }
            #expect(message.contains("duplicate key") && message.contains(key), "\(doc): \(message)")
        }
        // Keys that differ only in case or by escapes of different characters are distinct.
        #expect((try? JSON.parse(#"{"a": 1, "A": 2, "\u00e9": 3, "é ": 4}"#)) != nil)
    }

    /// Keys naming control characters are quoted escaped, and long ones are cut short.
    @Test func messagesQuoteKeysSafely() {
        let evil = #"\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202e"#
        let message = failure { () throws(GlintError) in try JSON.parse("{\"\(evil)\": 1, \"\(evil)\": 2}") }
        #expect(isTerminalSafe(message), "\(message.debugDescription)")
        #expect(message.contains("\\u001b") && message.contains("\\u202e"), "\(message)")
        let long = String(repeating: "k", count: 10_000)
        let capped = failure { () throws(GlintError) in try JSON.parse("{\"\(long)\": 1, \"\(long)\": 2}") }
        #expect(capped.count < 200, "\(capped.count) characters")
    }

    /// Errors at stray bytes show them escaped.
    @Test func strayBytesAreShownEscaped() {
        for doc in ["[1, \u{1b}[31m]", "{\"a\": tru\u{1b}}", "[1] \u{9b}", "\u{202e}[1]", "[1 \u{7f}]"] {
            let message = failure { () throws(GlintError) in try JSON.parse(doc) }
            #expect(message.hasPrefix("JSON line "), "\(message)")
            #expect(isTerminalSafe(message), "\(doc.debugDescription): \(message.debugDescription)")
        }
    }

    @Test func theHelperEscapesAndCaps() {
        #expect(JSON.printable("plain text é") == "plain text é")
        #expect(JSON.printable("a\u{1b}b\u{7f}\u{9b}\u{202e}\u{2028}") == "a\\u001bb\\u007f\\u009b\\u202e\\u2028")
        #expect(JSON.printable("\u{E0001}x") == "\\udb40\\udc01x")
        let long = JSON.printable(String(repeating: "x", count: 500), limit: 20)
        #expect(long.count <= 24 && long.hasSuffix("..."), "\(long)")
        #expect(JSON.quotedForMessage("k\"\u{1b}") == #""k\"\u001b""#)
    }
}

// MARK: - Scene files

@Suite struct SceneFileStrictTests {
    @Test(arguments: [
        (#"{"spheres": [{"center": [0, 020, 0], "radius": 1, "material": {"type": "lambertian", "albedo": [1, 1, 1]}}]}"#, "not valid JSON"),
        (#"{"spheres": [{"center": [0, 0, 0], "radius": +1, "material": {"type": "lambertian", "albedo": [1, 1, 1]}}]}"#, "not valid JSON"),
        (#"{"spheres": [{"center": [0, 0, 0], "radius": .5, "material": {"type": "lambertian", "albedo": [1, 1, 1]}}]}"#, "not valid JSON"),
        (#"{"spheres": [{"center": [0, 0, 0], "radius": 20., "material": {"type": "lambertian", "albedo": [1, 1, 1]}}]}"#, "not valid JSON"),
        (#"{"spheres": [], "spheres": [{"center": [0, 0, 0], "radius": 1, "material": "x"}]}"#, #""spheres""#),
        (#"{"materials": {"m": {"type": "lambertian", "albedo": [1, 1, 1]}, "m": {"type": "metal", "albedo": [1, 1, 1]}}, "spheres": []}"#, #""m""#),
        (#"{"spheres": [{"center": [0, 0, 0], "radius": 1, "radius": 2, "material": {"type": "lambertian", "albedo": [1, 1, 1]}}]}"#, #""radius""#),
        (#"{"camera": {"vfov": 20, "vfov": 30}, "spheres": []}"#, #""vfov""#),
    ])
    func nonJSONAndDuplicatesAreRefused(_ text: String, _ mention: String) {
        let message = failure { () throws(GlintError) in try RTScene.parse(text, name: "s.json") }
        #expect(message.hasPrefix("s.json: "), "\(message)")
        #expect(message.contains(mention), "\(message) should mention \(mention)")
    }

    /// File content in scene errors (field names, material names and types, the scene's name)
    /// is escaped and capped.
    @Test(arguments: [
        #"{"spheres": [], "\u001b[2Jname": 1}"#,
        #"{"camera": {"\u001b]0;x\u0007": 1}, "spheres": []}"#,
        #"{"materials": {"m\u009b": {"type": "lambertian", "albedo": [1, 1, 1], "\u202ex": 1}}, "spheres": []}"#,
        #"{"materials": {"m": {"type": "plastic\u001b[5m"}}, "spheres": []}"#,
        #"{"materials": {"m\u001b": {"type": "lambertian", "albedo": [1, 1, 1]}}, "spheres": [{"center": [0, 0, 0], "radius": 1, "material": "\u001bm"}]}"#,
        #"{"materials": {"m": {"type": "lambertian", "albedo": [1, 1, "\u001b[2J"]}}, "spheres": []}"#,
        #"{"name": "demo\u001b[2J", "spheres": []}"#,
        #"{"name": "demo\u202e", "spheres": []}"#,
        #"{"spheres": [], "\u007f": 1}"#,
    ])
    func sceneErrorsPrintContentSafely(_ text: String) {
        let message = failure { () throws(GlintError) in try RTScene.parse(text, name: "evil.json") }
        #expect(message.hasPrefix("evil.json: "), "\(message)")
        #expect(isTerminalSafe(message), "\(message.debugDescription)")
    }

    @Test func longNamesAndLongListsAreCapped() {
        let long = String(repeating: "n", count: 5000)
        let key = failure { () throws(GlintError) in try RTScene.parse("{\"spheres\": [], \"\(long)\": 1}", name: "l.json") }
        #expect(key.count < 300, "\(key.count) characters")
        // A missing material among many known ones: the list of known names is cut short.
        var materials: [String] = []
        for i in 0..<2000 { materials.append("\"material-number-\(i)\": {\"type\": \"lambertian\", \"albedo\": [1, 1, 1]}") }
        let text = "{\"materials\": {\(materials.joined(separator: ", "))}, \"spheres\": [{\"center\": [0, 0, 0], \"radius\": 1, \"material\": \"\(long)\"}]}"
        let missing = failure { () throws(GlintError) in try RTScene.parse(text, name: "m.json") }
        #expect(missing.contains("spheres[0].material") && missing.contains("no material named"), "\(missing.prefix(300))")
        #expect(missing.count < 600, "\(missing.count) characters")
    }

    /// A scene of 100k materials and 100k spheres parses completely and correctly (the parse is
    /// linear in the number of materials; it used to be quadratic, 26-30 s at this size).
    @Test func aHundredThousandMaterialsAndSpheres() throws {
        let n = 100_000
        var text = "{\"materials\": {"
        text.reserveCapacity(n * 140)
        for i in 0..<n {
            if i > 0 { text += ", " }
            text += "\"m\(i)\": {\"type\": \"metal\", \"albedo\": [\(i % 7), 0.5, 0.25], \"fuzz\": 0.\(i % 10)}"
        }
        text += "}, \"spheres\": ["
        for i in 0..<n {
            if i > 0 { text += ", " }
            text += "{\"center\": [\(i), \(-i), 0.5], \"radius\": \(i % 9 + 1), \"material\": \"m\(n - 1 - i)\"}"
        }
        text += "]}"
        let scene = try RTScene.parse(text, name: "big.json")
        #expect(scene.materials.count == n && scene.spheres.count == n)
        for i in [0, 1, 4_321, 77_777, n - 1] {
            let s = scene.spheres[i]
            #expect(s.center == SIMD3(Double(i), Double(-i), 0.5) && s.radius == Double(i % 9 + 1), "sphere \(i)")
            #expect(s.material == n - 1 - i, "sphere \(i) uses material \(s.material)")
            let m = n - 1 - i
            #expect(scene.materials[s.material] == .metal(albedo: SIMD3(Double(m % 7), 0.5, 0.25), fuzz: Double(m % 10) / 10),
                    "material \(m)")
        }
    }
}

// MARK: - Wipes files (glint mist --wipes)

@Suite struct WipesFileStrictTests {
    @Test func goodWipesStillRead() throws {
        let wipes = try MistJob.parseWipes(#"[{"start": 1, "radius": 0.1, "points": [[0.2, 0.5], [0.6, -0.5e-1]]}]"#, name: "w.json")
        #expect(wipes.count == 1 && wipes[0].start == 1 && wipes[0].radius == 0.1)
        #expect(wipes[0].points == [SIMD2(0.2, 0.5), SIMD2(0.6, -0.05)])
    }

    @Test(arguments: [
        (#"[{"start": 020, "points": [[0.2, 0.5]]}]"#, "not valid JSON"),
        (#"[{"start": +2, "points": [[0.2, 0.5]]}]"#, "not valid JSON"),
        (#"[{"start": 2, "points": [[.2, 0.5]]}]"#, "not valid JSON"),
        (#"[{"start": 2, "points": [[0.2, 5.]]}]"#, "not valid JSON"),
        (#"[{"start": 0, "start": 5, "points": [[0.2, 0.5]]}]"#, #""start""#),
        (#"[{"start": 0, "points": [[0.2, 0.5]], "points": [[0.9, 0.9]]}]"#, #""points""#),
    ])
    func nonJSONAndDuplicatesAreRefused(_ text: String, _ mention: String) {
        let message = failure { () throws(GlintError) in try MistJob.parseWipes(text, name: "w.json") }
        #expect(message.hasPrefix("w.json: "), "\(message)")
        #expect(message.contains(mention), "\(message) should mention \(mention)")
    }

    @Test func wipesErrorsPrintContentSafely() {
        for text in ["[{\"start\": 0, \"points\": [[0.2, 0.5]], \"\\u001b[2J\": 1, \"\\u001b[2J\": 2}]",
                     "[{\"start\": 0, \"points\": [[0.2, \u{1b}[31m]]}]", "\u{9b}31m"] {
            let message = failure { () throws(GlintError) in try MistJob.parseWipes(text, name: "w.json") }
            #expect(isTerminalSafe(message), "\(message.debugDescription)")
        }
    }
}
