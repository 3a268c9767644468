/// A user-facing failure: one clear line, suitable for the CLI to print as `error: <message>`.
///
/// An error about one field of a job names the field as the job spells it (`zoom`,
/// `maxIterations`): `field` holds it and `message` starts with it, so a front end can put its
/// own name for the setting in its place (the command line says `--iterations`).
public struct GlintError: Error, Sendable, CustomStringConvertible, Equatable {
    public let message: String
    /// The job field the message starts with, when it is about one.
    public let field: String?

    public init(_ message: String) {
        self.message = message
        field = nil
    }

    /// "`field` `problem`", e.g. `GlintError(field: "zoom", "must be positive (got 0)")`.
    public init(field: String, _ problem: String) {
        message = field + " " + problem
        self.field = field
    }

    public var description: String { message }

    /// The same error with the field called `name` (the message's first word replaced).
    public func naming(field name: String) -> GlintError {
        guard let field, message.hasPrefix(field) else { return self }
        return GlintError(name + message.dropFirst(field.count))
    }
}
