/// What this build of Glint is: reported by `glint --version` and in benchmark results.
public enum GlintBuild {
    /// The release version.
    public static let version = "0.2.0"
    /// The git commit built from, or "unknown".
    public static var commit: String { EmbeddedBuildInfo.gitCommit }
}
