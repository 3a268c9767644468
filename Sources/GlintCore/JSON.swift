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
}

// MARK: Reading

extension JSON {
    /// Parses JSON text (RFC 8259). Integers without a fraction or exponent that fit in 64 bits
    /// become `.int`; other numbers `.number`. Errors name the line and column.
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

    func error(_ what: String) -> GlintError {
        var line = 1, column = 1
        for b in bytes[..<min(at, bytes.count)] {
            if b == UInt8(ascii: "\n") { line += 1; column = 1 } else { column += 1 }
        }
        return GlintError("JSON line \(line), column \(column): \(what)")
    }

    mutating func skipSpace() {
        while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
    }

    mutating func literal(_ word: String, _ value: JSON) throws(GlintError) -> JSON {
        let w = Array(word.utf8)
        guard at + w.count <= bytes.count, Array(bytes[at ..< at + w.count]) == w else { throw error("invalid literal") }
        at += w.count
        return value
    }

    mutating func value(depth: Int) throws(GlintError) -> JSON {
        guard depth < 256 else { throw error("nested too deeply") }
        skipSpace()
        guard at < bytes.count else { throw error("unexpected end of text") }
        switch bytes[at] {
        case UInt8(ascii: "{"):
            at += 1
            var fields: [(String, JSON)] = []
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return .object(fields) }
            while true {
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
                let key = try string()
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { throw error("expected ':' after a key") }
                at += 1
                fields.append((key, try value(depth: depth + 1)))
                skipSpace()
                guard at < bytes.count else { throw error("unexpected end of text in an object") }
                if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                if bytes[at] == UInt8(ascii: "}") { at += 1; return .object(fields) }
                throw error("expected ',' or '}' in an object")
            }
        case UInt8(ascii: "["):
            at += 1
            var items: [JSON] = []
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
            while true {
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard at < bytes.count else { throw error("unexpected end of text in an array") }
                if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                if bytes[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
                throw error("expected ',' or ']' in an array")
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default:
            return try number()
        }
    }

    mutating func number() throws(GlintError) -> JSON {
        let start = at
        var integral = true
        if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
        while at < bytes.count {
            let b = bytes[at]
            if b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") { at += 1; continue }
            if b == UInt8(ascii: ".") || b == UInt8(ascii: "e") || b == UInt8(ascii: "E")
                || b == UInt8(ascii: "+") || (b == UInt8(ascii: "-") && at > start) {
                integral = false; at += 1; continue
            }
            break
        }
        let text = String(decoding: bytes[start..<at], as: UTF8.self)
        guard !text.isEmpty, text != "-" else { throw error("expected a value") }
        if integral, let i = Int64(text) { return .int(i) }
        guard let d = Double(text), d.isFinite else { throw error("invalid number '\(text)'") }
        return .number(d)
    }

    mutating func hex4() throws(GlintError) -> UInt32 {
        guard at + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[at ..< at + 4], as: UTF8.self), radix: 16) else {
            throw error("invalid \\u escape")
        }
        at += 4
        return v
    }

    mutating func string() throws(GlintError) -> String {
        at += 1  // opening quote
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flush() { scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars); raw.removeAll() }
        while true {
            guard at < bytes.count else { throw error("unterminated string") }
            let b = bytes[at]
            at += 1
            if b == UInt8(ascii: "\"") { break }
            if b < 0x20 { throw error("control character in a string") }
            if b != UInt8(ascii: "\\") { raw.append(b); continue }
            guard at < bytes.count else { throw error("unterminated string") }
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
                    guard low >= 0xDC00 && low < 0xE000 else { throw error("invalid surrogate pair") }
                    v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let s = Unicode.Scalar(v) else { throw error("invalid \\u escape") }
                scalars.append(s)
            default:
                throw error("invalid escape in a string")
            }
        }
        flush()
        return String(scalars)
    }
}
