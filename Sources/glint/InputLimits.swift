import ArgumentParser
import GlintCore

/// --max-pixels, for the commands that read images (blur, iso, mist, fractal --texture,
/// compare of two files): the largest image they decode. The default, 8192 x 8192, keeps a
/// forged or unexpectedly large input from taking gigabytes and minutes; a user who means it
/// raises the limit here or with $GLINT_MAX_PIXELS (docs/LIMITS.md).
struct InputLimitOptions: ParsableArguments {
    @Option(name: .customLong("max-pixels"), parsing: .unconditional,
            help: ArgumentHelp("Largest input image to read, in pixels (1 to \(ImageLimits.maxPixels); default $GLINT_MAX_PIXELS, else \(ImageLimits.defaultInputPixels), 8192x8192).",
                               valueName: "n"),
            transform: wholeNumber("--max-pixels", 1...ImageLimits.maxPixels))
    var maxPixels: Int?

    /// Checks $GLINT_MAX_PIXELS and sets the limit the image decoders apply. Runs while the
    /// command line is validated, before any file is read.
    func validate() throws {
        if let text = FileIO.environment("GLINT_MAX_PIXELS") {
            guard let n = Int(text), (1...ImageLimits.maxPixels).contains(n) else {
                throw ValidationError("GLINT_MAX_PIXELS must be a whole number between 1 and \(ImageLimits.maxPixels), got \(JSON.quotedForMessage(text, limit: 24))")
            }
        }
        if let maxPixels { ImageLimits.setInputPixels(maxPixels) }
    }
}
