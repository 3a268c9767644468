import Foundation
import Testing

/// The subcommands, `compare`, `bench` and `--then` all come from one list of workloads: every
/// workload must appear in each, under one name.
@Suite("workload registry")
struct WorkloadRegistryTests {
    static let expected = ["fractal", "rtow", "blur", "mist", "iso", "pulse"]

    /// The names in `glint bench --help`'s "Known: a, b, c." sentence.
    func benchNames(_ box: Sandbox) throws -> [String] {
        let help = try box.run(["bench", "--help"]).stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: " ")
        let known = try #require(help.range(of: "Known: "), "bench --help lists its workloads: \(help)")
        let list = help[known.upperBound...].prefix { $0 != "." }
        return list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test("every workload is a subcommand, a bench workload and a compare workload, in one order")
    func everyToolSeesEveryWorkload() throws {
        try withSandbox { box in
            #expect(try benchNames(box) == Self.expected)
            let top = try box.run(["--help"])
            let subcommands = top.stdoutLines.compactMap { line -> String? in
                let t = line.trimmingCharacters(in: .whitespaces)
                guard line.hasPrefix("  "), !line.hasPrefix("   "), let name = t.split(separator: " ").first else { return nil }
                return String(name)
            }
            // The workloads, in order, between `devices` and `merge` (then compare and bench).
            let between = Array(subcommands.drop { $0 != "devices" }.dropFirst().prefix { $0 != "merge" })
            #expect(between == Self.expected, "\(top)")
            let compareHelp = try box.run(["compare", "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for name in Self.expected {
                // compare's tolerance text names each workload's parity rule.
                #expect(compareHelp.contains("\(name) "), "compare --help names \(name)")
                let r = try box.run(["compare", "--a", "cpu", "--b", "cpu", name, "--help"])
                #expect(r.status == 0 && r.stdout.contains("takes the options of glint \(name)"), "\(r)")
                let own = try box.run([name, "--help"])
                #expect(own.status == 0 && own.stdout.contains("USAGE: glint \(name)"), "\(own)")
            }
        }
    }

    @Test("bench cases carry their workload's name")
    func benchCasesNameTheirWorkload() throws {
        try withSandbox { box in
            let r = try box.run(["bench", "--quick", "pulse", "iso", "--device", "cpu", "--seconds", "0.01", "--json", "-", "-q"])
            #expect(r.status == 0, "\(r)")
            let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let cases = try #require(doc["cases"] as? [[String: Any]])
            let workloads = Set(cases.compactMap { $0["workload"] as? String })
            #expect(workloads == ["pulse", "iso"], "\(cases.map { $0["id"] ?? "" })")
            for c in cases {
                let id = try #require(c["id"] as? String)
                let workload = try #require(c["workload"] as? String)
                #expect(id.hasPrefix(workload + "/"), "\(id)")
            }
        }
    }

    @Test("--then offers exactly the workloads that are passes, after the renders that take them")
    func passesComeFromTheList() throws {
        try withSandbox { box in
            let unknown = try box.run(["fractal", "julia", "--size", "8x6", "-o", "x.png", "--then", "mist"])
            #expect(unknown.status == 2 && unknown.stderr.contains("passes: blur, iso"), "\(unknown)")
            let notARender = try box.run(["pulse", "-o", "frames", "--then", "iso"])
            #expect(notARender.status == 2 && notARender.stderr.contains("glint fractal or rtow"), "\(notARender)")
            #expect(!box.exists("frames"))
        }
    }
}
