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
