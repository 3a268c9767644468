/// A small JSON value with a deterministic writer (keys keep their order), so machine-readable
/// output needs no Foundation.
public indirect enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case number(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    public static func == (a: JSON, b: JSON) -> Bool { a.serialized() == b.serialized() }

    public func serialized(pretty: Bool = true) -> String {
        var out = ""
        write(into: &out, indent: pretty ? 0 : nil)
        return out
    }

    private func write(into out: inout String, indent: Int?) {
        let nl = indent == nil ? "" : "\n"
        let pad = { (n: Int) in String(repeating: "  ", count: n) }
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .number(let d):
            if d.isFinite { out += "\(d)" } else { out += "null" }
        case .string(let s): out += JSON.quote(s)
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "[" + nl
            for (i, item) in items.enumerated() {
                if let indent { out += pad(indent + 1) }
                item.write(into: &out, indent: indent.map { $0 + 1 })
                out += (i + 1 < items.count ? "," : "") + nl
            }
            if let indent { out += pad(indent) }
            out += "]"
        case .object(let fields):
            if fields.isEmpty { out += "{}"; return }
            out += "{" + nl
            for (i, (key, value)) in fields.enumerated() {
                if let indent { out += pad(indent + 1) }
                out += JSON.quote(key) + (indent == nil ? ":" : ": ")
                value.write(into: &out, indent: indent.map { $0 + 1 })
                out += (i + 1 < fields.count ? "," : "") + nl
            }
            if let indent { out += pad(indent) }
            out += "}"
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }

    // MARK: Quoting file content in messages

    /// Whether `s` can be shown on a terminal as it is: not a control (C0, DEL, C1), format
    /// (bidi overrides, zero-width), separator other than the plain space, private-use, surrogate
    /// or unassigned scalar.
    static func isPrintable(_ s: Unicode.Scalar) -> Bool {
        if s.value >= 0x20 && s.value < 0x7F { return true }
        switch s.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator,
             .privateUse, .surrogate, .unassigned:
            return false
        default:
            return true
        }
    }

    private static func appendEscape(_ value: UInt32, to out: inout String) {
        func hex4(_ v: UInt32) -> String {
            let h = String(v, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - h.count) + h
        }
        if value > 0xFFFF {
            let v = value - 0x10000
            out += hex4(0xD800 + (v >> 10)) + hex4(0xDC00 + (v & 0x3FF))
        } else {
            out += hex4(value)
        }
    }

    /// `text` made safe to print in a message: every scalar that is not printable (see
    /// `isPrintable`: ESC, DEL, C1 controls, bidi overrides...) written as a JSON escape
    /// (`\u001b`), and at most `limit` scalars of it kept, "..." marking a cut.
    public static func printable(_ text: String, limit: Int = 60) -> String {
        escaped(text, limit: limit, quoting: false)
    }

    /// `text` in double quotes for a message: quotes and backslashes escaped as in JSON, the
    /// rest as `printable`; "..." after the closing quote marks a cut.
    public static func quotedForMessage(_ text: String, limit: Int = 60) -> String {
        "\"" + escaped(text, limit: limit, quoting: true)
    }

    private static func escaped(_ text: String, limit: Int, quoting: Bool) -> String {
        var out = ""
        var kept = 0
        var cut = false
        for u in text.unicodeScalars {
            if kept >= limit { cut = true; break }
            kept += 1
            if quoting && (u == "\"" || u == "\\") {
                out += "\\"
                out.unicodeScalars.append(u)
            } else if isPrintable(u) {
                out.unicodeScalars.append(u)
            } else {
                appendEscape(u.value, to: &out)
            }
        }
        if quoting { out += "\"" }
        return cut ? out + "..." : out
    }
}

// MARK: Reading

extension JSON {
    /// Parses JSON text, strictly as RFC 8259 defines it: numbers only of the grammar
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` (and within a Double's range),
    /// no unescaped U+0000...U+001F in strings, and no key twice in one object (a duplicate is an
    /// error naming the key, never "first wins"). Integers without a fraction or exponent that fit
    /// in 64 bits become `.int`; other numbers `.number`. Errors name the line and column, and
    /// quote the text there escaped and cut short (safe to print on a terminal).
    public static func parse(_ text: String) throws(GlintError) -> JSON {
        var parser = JSONParser(bytes: Array(text.utf8))
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.at == parser.bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    /// The value of `key` in an object; nil for a missing key or a non-object.
    public subscript(key: String) -> JSON? {
        guard case .object(let fields) = self else { return nil }
        return fields.first { $0.0 == key }?.1
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var arrayValue: [JSON]? { if case .array(let a) = self { a } else { nil } }
    public var objectValue: [(String, JSON)]? { if case .object(let o) = self { o } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    /// Any number as a Double.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .number(let d): d
        default: nil
        }
    }
    /// An integer (a whole `.number` too).
    public var intValue: Int64? {
        switch self {
        case .int(let i): i
        case .number(let d) where d == d.rounded() && abs(d) < 9.0e18: Int64(d)
        default: nil
        }
    }
    /// The JSON type name, for messages and schema checks.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int: "integer"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    var at = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// An error at `at` (or `position`): line and column, then `what`.
    func error(_ what: String, at position: Int? = nil) -> GlintError {
        let end = min(position ?? at, bytes.count)
        var line = 1, column = 1
        for b in bytes[..<end] {
            if b == UInt8(ascii: "\n") { line += 1; column = 1 } else { column += 1 }
        }
        return GlintError("JSON line \(line), column \(column): \(what)")
    }

    /// `what`, followed by the text at the current place, escaped and cut short.
    func unexpected(_ what: String) -> GlintError {
        guard at < bytes.count else { return error("\(what), found the end of the text") }
        let text = String(decoding: bytes[at ..< min(at + 64, bytes.count)], as: UTF8.self)
        return error("\(what), found \(JSON.quotedForMessage(text, limit: 16))")
    }

    mutating func skipSpace() {
        while at < bytes.count {
            switch bytes[at] {
            case 0x20, 0x09, 0x0A, 0x0D: at += 1
            default: return
            }
        }
    }

    mutating func literal(_ word: StaticString, _ value: JSON) throws(GlintError) -> JSON {
        let n = word.utf8CodeUnitCount
        let matches = at + n <= bytes.count && word.withUTF8Buffer { w in (0..<n).allSatisfy { bytes[at + $0] == w[$0] } }
        guard matches else { throw unexpected("invalid literal (expected \(word))") }
        at += n
        return value
    }

    /// After a member of an object or array (`what`): skips space, then takes the ',' before
    /// the next member (false) or the `close` bracket that ends it (true).
    mutating func endOfMembers(_ close: Unicode.Scalar, in what: String) throws(GlintError) -> Bool {
        skipSpace()
        guard at < bytes.count else { throw error("unexpected end of text in \(what)") }
        if bytes[at] == UInt8(ascii: ",") { at += 1; return false }
        if bytes[at] == UInt8(ascii: close) { at += 1; return true }
        throw unexpected("expected ',' or '\(close)' in \(what)")
    }

    mutating func value(depth: Int) throws(GlintError) -> JSON {
        guard depth < 256 else { throw error("nested too deeply") }
        skipSpace()
        guard at < bytes.count else { throw error("unexpected end of text") }
        switch bytes[at] {
        case UInt8(ascii: "{"):
            at += 1
            var fields: [(String, JSON)] = []
            // Keys seen so far: a linear search while the object is small, a set beyond.
            var seen: Set<String>? = nil
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return .object(fields) }
            while true {
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw unexpected("expected a quoted key") }
                let keyStart = at
                let key = try string()
                let duplicate: Bool
                if seen != nil {
                    duplicate = !seen!.insert(key).inserted
                } else {
                    duplicate = fields.contains { $0.0 == key }
                    if fields.count == 16 { seen = Set(fields.map(\.0) + [key]) }
                }
                guard !duplicate else {
                    throw error("duplicate key \(JSON.quotedForMessage(key)) in an object (each key may appear once)", at: keyStart)
                }
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { throw unexpected("expected ':' after a key") }
                at += 1
                fields.append((key, try value(depth: depth + 1)))
                if try endOfMembers("}", in: "an object") { return .object(fields) }
            }
        case UInt8(ascii: "["):
            at += 1
            var items: [JSON] = []
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
            while true {
                items.append(try value(depth: depth + 1))
                if try endOfMembers("]", in: "an array") { return .array(items) }
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0") ... UInt8(ascii: "9"):
            return try number()
        default:
            throw unexpected("expected a value")
        }
    }

    func isDigit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9") }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, exactly.
    mutating func number() throws(GlintError) -> JSON {
        let start = at
        func bad(_ why: String) -> GlintError {
            // The number as far as it goes, for the message.
            var end = at
            while end < bytes.count, end - start < 40, "0123456789+-.eE".utf8.contains(bytes[end]) { end += 1 }
            let text = String(decoding: bytes[start ..< max(end, at)], as: UTF8.self)
            return error("invalid number \(JSON.quotedForMessage(text, limit: 24)): \(why)", at: start)
        }
        if bytes[at] == UInt8(ascii: "-") { at += 1 }
        guard isDigit(at) else { throw bad("a digit must follow '-'") }
        if bytes[at] == UInt8(ascii: "0") {
            at += 1
            if isDigit(at) { throw bad("no leading zeros in JSON numbers") }
        } else {
            while isDigit(at) { at += 1 }
        }
        var integral = true
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            integral = false
            at += 1
            guard isDigit(at) else { throw bad("a digit must follow '.'") }
            while isDigit(at) { at += 1 }
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            integral = false
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard isDigit(at) else { throw bad("a digit must follow the exponent's 'e'") }
            while isDigit(at) { at += 1 }
        }
        let text = String(decoding: bytes[start..<at], as: UTF8.self)
        if integral, let i = Int64(text) { return .int(i) }
        guard let d = Double(text), d.isFinite else { throw bad("out of range") }
        return .number(d)
    }

    mutating func hex4() throws(GlintError) -> UInt32 {
        var v: UInt32 = 0
        for i in 0..<4 {
            guard at + i < bytes.count, let digit = Self.hexValue(bytes[at + i]) else { throw unexpected("invalid \\u escape (4 hex digits expected)") }
            v = v << 4 | digit
        }
        at += 4
        return v
    }

    static func hexValue(_ b: UInt8) -> UInt32? {
        switch b {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): UInt32(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): UInt32(b - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A") ... UInt8(ascii: "F"): UInt32(b - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    mutating func string() throws(GlintError) -> String {
        let open = at
        at += 1  // opening quote
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flush() { scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars); raw.removeAll() }
        while true {
            guard at < bytes.count else { throw error("unterminated string", at: open) }
            let b = bytes[at]
            if b < 0x20 {
                let hex = String(b, radix: 16)
                throw error("control character U+\(String(repeating: "0", count: 4 - hex.count) + hex.uppercased()) in a string (write it escaped)")
            }
            at += 1
            if b == UInt8(ascii: "\"") { break }
            if b != UInt8(ascii: "\\") { raw.append(b); continue }
            guard at < bytes.count else { throw error("unterminated string", at: open) }
            let e = bytes[at]
            at += 1
            switch e {
            case UInt8(ascii: "\""): raw.append(e)
            case UInt8(ascii: "\\"): raw.append(e)
            case UInt8(ascii: "/"): raw.append(e)
            case UInt8(ascii: "b"): raw.append(0x08)
            case UInt8(ascii: "f"): raw.append(0x0C)
            case UInt8(ascii: "n"): raw.append(0x0A)
            case UInt8(ascii: "r"): raw.append(0x0D)
            case UInt8(ascii: "t"): raw.append(0x09)
            case UInt8(ascii: "u"):
                flush()
                var v = try hex4()
                if v >= 0xD800 && v < 0xDC00, at + 6 <= bytes.count, bytes[at] == UInt8(ascii: "\\"), bytes[at + 1] == UInt8(ascii: "u") {
                    at += 2
                    let low = try hex4()
                    guard low >= 0xDC00 && low < 0xE000 else { throw error("invalid surrogate pair", at: at - 12) }
                    v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let s = Unicode.Scalar(v) else { throw error("invalid \\u escape (a lone surrogate)", at: at - 6) }
                scalars.append(s)
            default:
                at -= 2
                throw unexpected("invalid escape in a string")
            }
        }
        flush()
        return String(scalars)
    }
}
