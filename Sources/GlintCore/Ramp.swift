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
        guard let eq = text.firstIndex(of: "=") else {
            throw GlintError("--ramp '\(text)' is not NAME=FROM:TO (e.g. zoom=1:1e4 or center=-0.75,0:-0.74,0.13)")
        }
        let name = String(text[..<eq]).lowercased()
        let ends = text[text.index(after: eq)...].split(separator: ":", omittingEmptySubsequences: false)
        guard ends.count == 2 else { throw GlintError("--ramp '\(text)': give two values FROM:TO") }
        func values(_ s: Substring) throws(GlintError) -> [Double] {
            var out: [Double] = []
            for part in s.split(separator: ",", omittingEmptySubsequences: false) {
                guard let v = Double(part.trimmingCharacters()), v.isFinite else {
                    throw GlintError("--ramp '\(text)': '\(s)' is not a number or a pair X,Y")
                }
                out.append(v)
            }
            return out
        }
        let from = try values(ends[0]), to = try values(ends[1])
        guard from.count == to.count else { throw GlintError("--ramp '\(text)': FROM and TO must have as many numbers") }
        self.init(name: name, from: from, to: to)
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
