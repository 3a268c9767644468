import GlintCore

/// A whole benchmark run: environment, settings, builds and cases; written as JSON, CSV,
/// Markdown, a terminal table or an SVG chart, and compared with a baseline.
public struct BenchReport: Sendable {
    public static let schema = "glint-bench/1"

    public var suite: String
    public var settings: BenchSettings
    public var environment: JSON
    public var builds: [BenchBuild]
    public var results: [BenchResult]
    public var seconds: Double
    /// The OpenCL drivers' resident memory before the first case, left out of every job peak
    /// (`BenchResult.jobPeakBytes`); nil without OpenCL, where not known, and in older results.
    public var driverResidentBytes: UInt64?

    public init(suite: String, settings: BenchSettings, environment: JSON, builds: [BenchBuild],
                results: [BenchResult], seconds: Double, driverResidentBytes: UInt64? = nil) {
        self.suite = suite
        self.settings = settings
        self.environment = environment
        self.builds = builds
        self.results = results
        self.seconds = seconds
        self.driverResidentBytes = driverResidentBytes
    }

    public var failures: Int { results.filter { $0.status == .fail }.count }

    /// The devices' measured peaks (`glint bench --peak`): one object per OpenCL backend with its
    /// name, device and `DevicePeak.json`; empty when not measured.
    public var devicePeaks: [JSON] = []

    public var json: JSON {
        let counts: [(String, JSON)] = [
            ("cases", .int(Int64(results.count))),
            ("reference", .int(Int64(results.filter { $0.status == .reference }.count))),
            ("passed", .int(Int64(results.filter { $0.status == .pass }.count))),
            ("failed", .int(Int64(failures))),
            ("skipped", .int(Int64(results.filter { $0.status == .skipped }.count))),
            ("unchecked", .int(Int64(results.filter { $0.status == .unchecked }.count))),
        ]
        let summary: JSON = .object(counts + [
            ("seconds", .number(seconds)),
            ("opencl_driver_resident_bytes", driverResidentBytes.map { .int(Int64($0)) } ?? .null),
        ])
        return .object([
            ("schema", .string(Self.schema)),
            ("suite", .string(suite)),
            ("settings", .object([
                ("target_seconds", .number(settings.targetSeconds)),
                ("min_repetitions", .int(Int64(settings.minRepetitions))),
                ("max_repetitions", .int(Int64(settings.maxRepetitions))),
            ])),
            ("environment", environment),
            ("device_peaks", .array(devicePeaks)),
            ("builds", .array(builds.map { b in
                .object([("backend", .string(b.backend)), ("device", .string(b.device)),
                         ("compiled", .int(Int64(b.compiled))), ("from_disk_cache", .int(Int64(b.fromDiskCache))),
                         ("ms", .number(b.seconds * 1000))])
            })),
            ("cases", .array(results.map(\.json))),
            ("summary", summary),
        ])
    }

    /// Reads bench JSON written by `glint bench --json`; `name` labels errors.
    public init(json text: String, name: String) throws(GlintError) {
        let root: JSON
        do { root = try JSON.parse(text) } catch { throw GlintError("\(name): not valid JSON (\(error.message))") }
        guard root["schema"]?.stringValue == Self.schema else {
            throw GlintError("\(name): not glint bench results (schema must be \"\(Self.schema)\")")
        }
        guard let cases = root["cases"]?.arrayValue else { throw GlintError("\(name): cases must be an array") }
        var results: [BenchResult] = []
        for (i, c) in cases.enumerated() {
            do { results.append(try BenchResult(json: c, at: "cases[\(i)]")) } catch {
                throw GlintError("\(name): \(error.message)")
            }
        }
        let s = root["settings"]
        self.init(suite: root["suite"]?.stringValue ?? "",
                  settings: BenchSettings(targetSeconds: s?["target_seconds"]?.doubleValue ?? 0,
                                          minRepetitions: Int(s?["min_repetitions"]?.intValue ?? 0),
                                          maxRepetitions: Int(s?["max_repetitions"]?.intValue ?? 0)),
                  environment: root["environment"] ?? .null,
                  builds: (root["builds"]?.arrayValue ?? []).map { b in
                      BenchBuild(backend: b["backend"]?.stringValue ?? "", device: b["device"]?.stringValue ?? "",
                                 compiled: Int(b["compiled"]?.intValue ?? 0),
                                 fromDiskCache: Int(b["from_disk_cache"]?.intValue ?? 0),
                                 seconds: (b["ms"]?.doubleValue ?? 0) / 1000)
                  },
                  results: results, seconds: root["summary"]?["seconds"]?.doubleValue ?? 0,
                  driverResidentBytes: root["summary"]?["opencl_driver_resident_bytes"]?.intValue.map { UInt64(max(0, $0)) })
        devicePeaks = root["device_peaks"]?.arrayValue ?? []
    }
}
