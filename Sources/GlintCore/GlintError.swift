/// A user-facing failure: one clear line, suitable for the CLI to print as `error: <message>`.
public struct GlintError: Error, Sendable, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
