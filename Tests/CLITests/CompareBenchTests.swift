// `glint compare` and `glint bench`, black-box: exit statuses, metrics, and the bench JSON
// checked against its documented schema (docs/bench-schema.json).

import Foundation
import GlintCore
import GlintWorkloads
import GlintTestSupport
import Testing

/// The repository's docs/bench-schema.json, found from this file's path.
private func benchSchema() throws -> JSON {
    let here = URL(fileURLWithPath: #filePath)
    let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let text = try String(contentsOf: root.appendingPathComponent("docs/bench-schema.json"), encoding: .utf8)
    return try JSON.parse(text)
}

/// The JSON Schema keywords the bench schema uses: type, const, enum, required, properties,
/// items, minimum and local $ref. Returns every violation with its path.
func schemaViolations(_ value: JSON, _ schema: JSON, root: JSON, path: String = "$") -> [String] {
    var schema = schema
    if let ref = schema["$ref"]?.stringValue, ref.hasPrefix("#/") {
        var target: JSON? = root
        for part in ref.dropFirst(2).split(separator: "/") { target = target?[String(part)] }
        guard let t = target else { return ["\(path): unresolved $ref \(ref)"] }
        schema = t
    }
    var problems: [String] = []
    if let type = schema["type"] {
        let allowed = type.arrayValue?.compactMap(\.stringValue) ?? [type.stringValue ?? ""]
        let actual = value.typeName
        let ok = allowed.contains(actual) || (actual == "integer" && allowed.contains("number"))
        if !ok { return ["\(path): \(actual), want \(allowed.joined(separator: " or "))"] }
    }
    if let c = schema["const"], c != value { problems.append("\(path): must be \(c.serialized(pretty: false))") }
    if let e = schema["enum"]?.arrayValue, !e.contains(value) {
        problems.append("\(path): \(value.serialized(pretty: false)) is not one of \(JSON.array(e).serialized(pretty: false))")
    }
    if let m = schema["minimum"]?.doubleValue, let v = value.doubleValue, v < m { problems.append("\(path): \(v) < \(m)") }
    if case .object(let fields) = value {
        for key in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where !fields.contains(where: { $0.0 == key }) {
            problems.append("\(path): missing \(key)")
        }
        if let props = schema["properties"]?.objectValue {
            for (key, sub) in props { if let v = value[key] { problems += schemaViolations(v, sub, root: root, path: "\(path).\(key)") } }
        }
    }
    if case .array(let items) = value, let itemSchema = schema["items"] {
        for (i, item) in items.enumerated() { problems += schemaViolations(item, itemSchema, root: root, path: "\(path)[\(i)]") }
    }
    return problems
}

/// A test picture as an opaque RGB PNG.
private func writePicture(_ box: Sandbox, _ name: String, shift: Int = 0, bump: (Int, Int)? = nil) throws {
    var image = makeImage(width: 48, height: 32) { x, y in
        let sx = (x + shift) % 48
        return SIMD4(UInt8(sx * 5), UInt8(y * 7), sx > 24 ? 200 : 30, 255)
    }
    if let (x, y) = bump { image.pixels[image.index(x: x, y: y)] &+= 1 }
    try box.write(name, try PNG.encode(image, alpha: false))
}

@Suite("glint compare", .serialized)
struct CompareTests {
    @Test("identical images: exit 0, zero difference, infinite PSNR (null in JSON)")
    func identical() throws {
        try withSandbox { box in
            try writePicture(box, "a.png")
            try writePicture(box, "b.png")
            let r = try box.run(["compare", "--images", "a.png", "b.png", "--json", "c.json"])
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains("within tolerance"), "\(r)")
            let doc = try JSON.parse(String(decoding: try box.bytes("c.json"), as: UTF8.self))
            #expect(doc["passed"] == .bool(true))
            #expect(doc["overall"]?["max_abs"]?.doubleValue == 0)
            #expect(doc["overall"]?["psnr_db"] == .null)
            #expect(doc["channels"]?.arrayValue?.count == 3)
        }
    }

    @Test("a single 1-level change passes the default tolerance and fails --tolerance exact")
    func oneLevel() throws {
        try withSandbox { box in
            try writePicture(box, "a.png")
            try writePicture(box, "b.png", bump: (5, 6))
            let loose = try box.run(["compare", "--images", "a.png", "b.png", "--json", "-"])
            #expect(loose.status == 0, "\(loose)")
            let doc = try JSON.parse(loose.stdout)
            #expect(doc["overall"]?["max_abs"]?.doubleValue == 1)
            #expect(doc["overall"]?["pixels_over_threshold"]?.intValue == 0)
            #expect(doc["channels"]?.arrayValue?[0]["max_abs"]?.doubleValue == 1)
            #expect(doc["channels"]?.arrayValue?[1]["max_abs"]?.doubleValue == 0)
            let strict = try box.run(["compare", "--images", "a.png", "b.png", "--tolerance", "exact"])
            #expect(strict.status == 1, "\(strict)")
            #expect(strict.stdout.contains("OUTSIDE tolerance"), "\(strict)")
        }
    }

    @Test("a shifted image: exit 1, metrics that show it, and a heat map")
    func shifted() throws {
        try withSandbox { box in
            try writePicture(box, "a.png")
            try writePicture(box, "b.png", shift: 1)
            let r = try box.run(["compare", "--images", "a.png", "b.png", "--diff", "heat.png", "--json", "c.json"])
            #expect(r.status == 1, "\(r)")
            let doc = try JSON.parse(String(decoding: try box.bytes("c.json"), as: UTF8.self))
            #expect(doc["passed"] == .bool(false))
            #expect((doc["overall"]?["pixels_over_threshold"]?.intValue ?? 0) > 48 * 32 / 2)
            #expect((doc["overall"]?["psnr_db"]?.doubleValue ?? 99) < 30)
            let heat = try PNG.decode(try box.bytes("heat.png"), name: "heat.png")
            #expect(heat.width == 48 && heat.height == 32)
            #expect(!box.listing().contains { $0.contains(".tmp") }, "no temporary file left: \(box.listing())")
        }
    }

    @Test("--tsv: a header and one line of the JSON's figures, for scripts; empty where a figure does not apply")
    func tsv() throws {
        try withSandbox { box in
            func table(_ name: String) throws -> [String: String] {
                let lines = String(decoding: try box.bytes(name), as: UTF8.self).split(separator: "\n").map(String.init)
                #expect(lines.count == 2, "\(lines)")
                let head = lines[0].split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                let values = lines[1].split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                #expect(head.count == values.count, "\(lines)")
                return Dictionary(uniqueKeysWithValues: zip(head, values))
            }
            let job = try box.run(["compare", "--a", "cpu", "--b", "opencl", "--json", "c.json", "--tsv", "c.tsv",
                                   "fractal", "julia", "--size", "48x32", "--iterations", "80"])
            #expect(job.status == 0, "\(job)")
            let doc = try JSON.parse(String(decoding: try box.bytes("c.json"), as: UTF8.self))
            let row = try table("c.tsv")
            #expect(row["mode"] == "job" && row["passed"] == "true", "\(row)")
            #expect(row["counts_total"] == String(48 * 32) && row["counts_differing"] == "0", "\(row)")
            #expect(Double(row["max_abs"] ?? "") == doc["overall"]?["max_abs"]?.doubleValue, "\(row)")
            #expect(row["a_kernel_ms"] == "" && Double(row["b_kernel_ms"] ?? "").map { $0 > 0 } == true, "\(row)")
            // Two image files: no counts, no timings; a shifted picture fails.
            try writePicture(box, "a.png")
            try writePicture(box, "b.png", shift: 1)
            let images = try box.run(["compare", "--images", "a.png", "b.png", "--tsv", "i.tsv"])
            #expect(images.status == 1, "\(images)")
            let i = try table("i.tsv")
            #expect(i["mode"] == "images" && i["passed"] == "false" && i["counts_total"] == "" && i["a_wall_ms"] == "", "\(i)")
            #expect((Int(i["pixels_over_threshold"] ?? "") ?? 0) > 48 * 32 / 2, "\(i)")
            // Not standard output, and not a file another output also names.
            for bad in [["--tsv", "-"], ["--tsv", "x.json", "--json", "x.json"]] {
                let r = try box.run(["compare", "--images", "a.png", "b.png"] + bad)
                #expect(r.status == 2 && r.stderr.contains("--tsv"), "\(bad): \(r)")
            }
        }
    }

    @Test("no comparison possible: exit 2 with one line, and no files written",
          arguments: [
            ["compare", "--images", "a.png", "missing.png", "--diff", "d.png"],
            ["compare", "--images", "a.png", "small.png", "--diff", "d.png"],
            ["compare", "--images", "a.png"],
            ["compare", "--images", "a.png", "a.png", "--tolerance", "fast"],
            ["compare", "--a", "cpu", "fractal", "mandelbrot"],
            ["compare", "--a", "cpu", "--b", "opencl", "nosuchworkload"],
            ["compare", "--a", "cpu", "--b", "opencl", "fractal", "mandelbrot", "--device", "cpu"],
            ["compare", "--a", "cpu", "--b", "warp-drive", "fractal", "mandelbrot", "--diff", "d.png"],
            ["compare", "--a", "cpu", "--b", "opencl", "fractal", "mandelbrot", "--size", "0x10"],
            ["compare"],
          ])
    func unusable(args: [String]) throws {
        try withSandbox { box in
            try writePicture(box, "a.png")
            var small = Image8(width: 4, height: 4)
            for i in stride(from: 3, to: small.pixels.count, by: 4) { small.pixels[i] = 255 }
            try box.write("small.png", try PNG.encode(small, alpha: false))
            let before = box.listing()
            let r = try box.run(args)
            #expect(r.status == 2, "\(r)")
            #expect(r.stderrLines.first?.lowercased().hasPrefix("error") == true, "\(r)")
            #expect(box.listing() == before, "nothing may be written: \(box.listing())")
        }
    }

    @Test("compare --help teaches both modes and the exit statuses; after a workload it shows the workload's options")
    func help() throws {
        try withSandbox { box in
            let r = try box.run(["compare", "--help"])
            #expect(r.status == 0, "\(r)")
            for needle in ["--images", "--a", "--diff", "--tolerance", "Exit status", "mean:0.5%,psnr:40"] {
                #expect(r.stdout.contains(needle), "help lacks \(needle)")
            }
            let w = try box.run(["compare", "--a", "cpu", "--b", "opencl", "fractal", "--help"])
            #expect(w.status == 0 && w.stdout.contains("--iterations") && w.stdout.contains("--palette"), "\(w)")
        }
    }

    @Test("every workload's job compares within its tolerance on the Swift CPU path and PoCL", arguments: [
        ["rtow", "--scene", "ch10", "--size", "48x32", "--spp", "2"],
        ["iso", "in.png", "--depth", "9", "--corner-radius", "4"],
        ["pulse", "--frames", "40", "--size", "16x16", "--hue", "0.7"],
    ])
    func workloads(args: [String]) throws {
        try withSandbox { box in
            #expect(try box.run(["fractal", "julia", "--size", "40x30", "-o", "in.png", "-q"]).status == 0)
            let r = try box.run(["compare", "--a", "cpu", "--b", "opencl", "--json", "c.json"] + args)
            #expect(r.status == 0, "\(r)")
            let doc = try JSON.parse(String(decoding: try box.bytes("c.json"), as: UTF8.self))
            #expect(doc["passed"] == .bool(true) && doc["mode"]?.stringValue == "job")
            if args[0] == "rtow" { #expect(doc["tolerance"]?.stringValue == "mean:0.5%,psnr:40") }
        }
    }

    @Test("a fractal job on the Swift CPU path and PoCL: within tolerance, counts identical, timings and speed-up")
    func job() throws {
        try withSandbox { box in
            let r = try box.run(["compare", "--a", "cpu", "--b", "opencl", "--json", "c.json", "fractal", "julia",
                                 "--size", "96x64", "--iterations", "100", "--smooth", "--palette", "fire", "--diff", "d.png"])
            #expect(r.status == 0, "\(r)")
            let doc = try JSON.parse(String(decoding: try box.bytes("c.json"), as: UTF8.self))
            #expect(doc["mode"]?.stringValue == "job" && doc["passed"] == .bool(true))
            #expect(doc["counts"]?["differing"]?.intValue == 0 && doc["counts"]?["total"]?.intValue == 96 * 64)
            #expect((doc["overall"]?["max_abs"]?.doubleValue ?? 9) <= 1)
            #expect(doc["a"]?["kernel_ms"] == .null, "the Swift path has no kernel time")
            #expect((doc["b"]?["kernel_ms"]?["median"]?.doubleValue ?? 0) > 0, "PoCL's kernel time comes from profiling")
            #expect((doc["speedup"]?.doubleValue ?? 0) > 0)
            #expect(box.exists("d.png"), "the --diff after the workload is compare's, not the workload's")
        }
    }
}

@Suite("glint bench", .serialized)
struct BenchTests {
    @Test("bench --quick: every case on cpu and PoCL, OpenCL validated, JSON valid against docs/bench-schema.json, CSV/Markdown/SVG written")
    func quickSuite() throws {
        try withSandbox { box in
            let r = try box.run(["bench", "--quick", "--json", "q.json", "--csv", "q.csv", "--markdown", "q.md", "--chart", "q.svg"],
                                timeout: 300)
            #expect(r.status == 0, "\(r)")
            let schema = try benchSchema()
            let doc = try JSON.parse(String(decoding: try box.bytes("q.json"), as: UTF8.self))
            let problems = schemaViolations(doc, schema, root: schema)
            #expect(problems.isEmpty, "schema violations:\n\(problems.joined(separator: "\n"))")
            // The checker itself must catch a broken document.
            if case .object(var fields) = doc {
                fields.removeAll { $0.0 == "environment" }
                fields = fields.map { $0.0 == "suite" ? ("suite", .string("medium")) : $0 }
                #expect(schemaViolations(.object(fields), schema, root: schema).count >= 2)
            }
            let cases = doc["cases"]?.arrayValue ?? []
            let opencl = cases.filter { $0["backend"]?.stringValue?.hasPrefix("opencl") == true }
            let cpu = cases.filter { $0["backend"]?.stringValue == "cpu" }
            #expect(cpu.count >= 4 && opencl.count == cpu.count, "fractal float, double, smooth, supersampled on both")
            for workload in ["fractal", "rtow", "blur", "mist", "iso", "pulse"] {
                #expect(opencl.contains { $0["workload"]?.stringValue == workload }, "\(workload) in the quick suite")
            }
            for c in cpu { #expect(c["status"]?.stringValue == "reference") }
            for c in opencl {
                #expect(c["status"]?.stringValue == "pass", "\(c.serialized())")
                if c["workload"]?.stringValue == "fractal" {
                    #expect(c["validation"]?["metrics"]?["counts_differing"]?.intValue == 0)
                }
                // rtow validates statistically (mean and PSNR); blur, mist, iso and pulse within 1 level.
                if !["fractal", "rtow"].contains(c["workload"]?.stringValue ?? "") {
                    #expect((c["validation"]?["metrics"]?["max_abs"]?.doubleValue ?? 9) <= 1)
                }
                #expect((c["kernel_ms"]?["median"]?.doubleValue ?? 0) > 0)
                #expect((c["repetitions"]?.intValue ?? 0) >= 3)
            }
            for c in cases {
                let wall = c["wall_ms"]
                let lo = wall?["min"]?.doubleValue ?? -1, mid = wall?["median"]?.doubleValue ?? -1, hi = wall?["max"]?.doubleValue ?? -1
                #expect(lo > 0 && lo <= mid && mid <= hi, "\(c["id"]?.stringValue ?? ""): min <= median <= max")
                #expect((c["throughput"]?["value"]?.doubleValue ?? 0) > 0)
            }
            #expect(doc["environment"]?["git_commit"]?.stringValue?.isEmpty == false)
            #expect((doc["environment"]?["opencl_devices"]?.arrayValue?.count ?? 0) >= 1)
            #expect(doc["builds"]?.arrayValue?.count == 1)
            let csv = RunResult.lines(String(decoding: try box.bytes("q.csv"), as: UTF8.self))
            #expect(csv.count == cases.count + 1 && csv[0].hasPrefix("id,workload,case,"))
            let md = String(decoding: try box.bytes("q.md"), as: UTF8.self)
            #expect(md.contains("| backend | auto | case |") && md.contains("fractal mandelbrot-float"))
            // Each case names the one backend --device auto runs it on: on this GPU-less machine,
            // PoCL for the plain escape-time fractals where AutoChoice's table sends them there (as
            // measured, it does not), else the Swift path.
            let fractalsOnCL = AutoChoice.prefersOpenCLCPU(.fractal)
            for id in Set(cases.compactMap { $0["id"]?.stringValue }) {
                let picked = cases.filter { $0["id"]?.stringValue == id && $0["auto"]?.boolValue == true }
                #expect(picked.count == 1, "\(id): one auto pick")
                let floatOrDouble = id.hasPrefix("fractal/") && !id.contains("smooth") && !id.contains("deep")
                #expect(picked.first?["backend"]?.stringValue == (floatOrDouble && fractalsOnCL ? "opencl:0" : "cpu"), "\(id)")
            }
            // Memory: every case's job peak within DESIGN's bound (4x its images' bytes + 100 MB),
            // measured, and checked where no sanitizer's shadow memory is in the resident size.
            for c in cases {
                let peak = c["job_peak_bytes"]?.intValue ?? -1, bound = c["memory_bound_bytes"]?.intValue ?? -1
                #expect(peak > 0 && bound > 100_000_000, "\(c["id"]?.stringValue ?? ""): job peak and bound reported")
                if !underSanitizer {
                    #expect(peak <= bound, "\(c["id"]?.stringValue ?? "") on \(c["backend"]?.stringValue ?? ""): \(peak) > \(bound)")
                }
            }
            if !underSanitizer { #expect(r.stdout.contains("memory: every case's job peak within its bound"), "\(r)") }
            // The OpenCL driver's own memory at start (PoCL: its LLVM, tens of MB) is reported once
            // and left out of the job peaks.
            let driver = doc["summary"]?["opencl_driver_resident_bytes"]?.intValue ?? 0
            #expect(driver > 5_000_000, "opencl_driver_resident_bytes: \(driver)")
            #expect(r.stdout.contains("the OpenCL drivers' own"), "\(r)")
            // --device auto: each case once, on auto's pick.
            let auto = try box.run(["bench", "--quick", "--device", "auto", "--case", "mandelbrot-float", "--case", "smooth",
                                    "--seconds", "0.05", "--json", "-"], timeout: 300)
            #expect(auto.status == 0, "\(auto)")
            let picks = try JSON.parse(auto.stdout)["cases"]?.arrayValue ?? []
            #expect(picks.map { $0["backend"]?.stringValue ?? "" } == [fractalsOnCL ? "opencl:0" : "cpu", "cpu"], "\(auto)")
            #expect(picks.allSatisfy { $0["auto"]?.boolValue == true })
            let svg = String(decoding: try box.bytes("q.svg"), as: UTF8.self)
            #expect(svg.hasPrefix("<svg") && svg.contains("fractal/mandelbrot-float@320x240") && svg.hasSuffix("</svg>\n"))
        }
    }

    @Test("--baseline prints each case's change; --results reports a saved run without running")
    func baseline() throws {
        try withSandbox { box in
            func record(_ backend: String, _ device: String, _ ms: Double) -> JSON {
                .object([
                    ("id", .string("fractal/mandelbrot-float@320x240")), ("workload", .string("fractal")),
                    ("case", .string("mandelbrot-float")), ("width", .int(320)), ("height", .int(240)),
                    ("parameters", .object([])), ("backend", .string(backend)), ("device", .string(device)),
                    ("status", .string(backend == "cpu" ? "reference" : "pass")), ("skip_reason", .null),
                    ("repetitions", .int(5)), ("warmup_ms", .number(ms)),
                    ("wall_ms", .object([("median", .number(ms)), ("min", .number(ms)), ("max", .number(ms))])),
                    ("kernel_ms", .null), ("work", .number(1e9)),
                    ("throughput", .object([("value", .number(1000 / ms)), ("unit", .string("Giter/s"))])),
                    ("kernel_throughput", .null), ("peak_rss_bytes", .null),
                    ("validation", .object([("tolerance", .string("t")), ("passed", .null), ("summary", .null), ("metrics", .null)])),
                ])
            }
            func file(_ records: [JSON]) -> [UInt8] {
                Array(JSON.object([("schema", .string("glint-bench/1")), ("suite", .string("quick")), ("cases", .array(records))])
                    .serialized().utf8)
            }
            try box.write("old.json", file([record("cpu", "Swift CPU", 20), record("opencl:0", "Some GPU", 4)]))
            try box.write("new.json", file([record("cpu", "Swift CPU", 10), record("opencl:0", "Some GPU", 5)]))
            let r = try box.run(["bench", "--results", "new.json", "--baseline", "old.json"])
            #expect(r.status == 0, "\(r)")
            let lines = r.stdoutLines.filter { $0.hasPrefix("fractal/mandelbrot-float@320x240") }
            #expect(lines.count == 2, "\(r)")
            #expect(lines.contains { $0.contains("Swift CPU") && $0.contains("+100.0% faster") }, "\(r)")
            #expect(lines.contains { $0.contains("Some GPU") && $0.contains("-20.0% SLOWER") }, "\(r)")
        }
    }

    @Test("bench errors: unknown workload or device (exit 2), unreadable or foreign baseline (one line, before any run)",
          arguments: [
            (["bench", "--quick", "raytracer9000"], Int32(2)),
            (["bench", "--quick", "--device", "quantum"], Int32(2)),
            (["bench", "--quick", "--full"], Int32(2)),
            (["bench", "--quick", "--baseline", "missing.json"], Int32(1)),
            (["bench", "--quick", "--baseline", "notbench.json"], Int32(1)),
            (["bench", "--quick", "--baseline", "broken.json"], Int32(1)),
          ])
    func errors(args: [String], status: Int32) throws {
        try withSandbox { box in
            try box.write("notbench.json", Array(#"{"schema": "something-else"}"#.utf8))
            try box.write("broken.json", Array(#"{"schema": "glint-bench/1", "cases": [{"id": 3}]}"#.utf8))
            let r = try box.run(args)
            #expect(r.status == status, "\(r)")
            #expect(r.stderrLines.first?.lowercased().hasPrefix("error") == true, "\(r)")
            #expect(r.stdout.isEmpty, "nothing may run before the error: \(r)")
            if args.contains("broken.json") { #expect(r.stderr.contains("cases[0]"), "the bad field is named: \(r)") }
        }
    }
}
