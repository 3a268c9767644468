/// `NAME=FROM:TO` split into the parameter's name and the texts of its two ends, each end one
/// value or a pair `X,Y` (the parts trimmed), not yet read as numbers: a workload reads them as
/// Doubles (`Ramp`) or, where Doubles are too short, as exact decimals (the fractal's zoom and
/// centre).
public struct RampText: Sendable, Equatable {
    /// The parameter, lowercased.
    public let name: String
    public let from: [String]
    public let to: [String]
    /// The whole ramp as given, and its FROM:TO part (for messages).
    public let text: String
    public let ends: String

    /// Splits `zoom=1:1e4` or `center=-0.75,0:-0.7435,0.1314`.
    public init(parsing text: String) throws(GlintError) {
        guard let eq = text.firstIndex(of: "=") else {
            throw GlintError("--ramp '\(text)' is not NAME=FROM:TO (e.g. zoom=1:1e4 or center=-0.75,0:-0.74,0.13)")
        }
        self.text = text
        name = String(text[..<eq]).lowercased()
        let rest = text[text.index(after: eq)...]
        let sides = rest.split(separator: ":", omittingEmptySubsequences: false)
        guard sides.count == 2 else { throw GlintError("--ramp '\(text)': give two values FROM:TO") }
        func parts(_ s: Substring) -> [String] {
            s.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters() }
        }
        from = parts(sides[0])
        to = parts(sides[1])
        ends = String(rest)
        guard from.count == to.count else { throw GlintError("--ramp '\(text)': FROM and TO must have as many numbers") }
    }
}

/// A parameter ramped between two values over an animation: `name=FROM:TO`, where each value is
/// a number or a pair `X,Y`. Zoom-like parameters move geometrically (equal ratios per frame),
/// the others linearly.
public struct Ramp: Sendable, Equatable {
    public let name: String
    public let from: [Double]
    public let to: [Double]

    public init(name: String, from: [Double], to: [Double]) {
        self.name = name
        self.from = from
        self.to = to
    }

    /// Parses `zoom=1:1e4` or `center=-0.75,0:-0.7435,0.1314`.
    public init(parsing text: String) throws(GlintError) {
        try self.init(RampText(parsing: text))
    }

    /// Reads the ends of `split` as finite Doubles.
    public init(_ split: RampText) throws(GlintError) {
        func values(_ parts: [String]) throws(GlintError) -> [Double] {
            var out: [Double] = []
            for part in parts {
                guard let v = Double(part), v.isFinite else {
                    throw GlintError("--ramp '\(split.text)': '\(parts.joined(separator: ","))' is not a number or a pair X,Y")
                }
                out.append(v)
            }
            return out
        }
        self.init(name: split.name, from: try values(split.from), to: try values(split.to))
    }

    /// The value at frame k of n (the first frame is FROM, the last TO).
    public func value(frame k: Int, of n: Int, geometric: Bool = false) -> [Double] {
        let t = n > 1 ? Double(k) / Double(n - 1) : 0
        return zip(from, to).map { a, b in
            if k == n - 1 && n > 1 { return b }
            if geometric { return a * pow(b / a, t) }
            return a + (b - a) * t
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
