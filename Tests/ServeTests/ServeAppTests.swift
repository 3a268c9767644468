// `glint serve` in process: the application `buildApplication(context:configuration:)` makes,
// driven by HummingbirdTesting's router client (no port, no child process, no argv) over the
// HTTP table of docs/SERVE.md. The real server over TCP is Tests/CLITests/ServeCLITests.swift.
#if Serve
import GlintCore
import GlintWorkloads
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
@testable import glint

@Suite struct ServeAppTests {
    /// A fresh context on the CPU path in its own temporary folder, the application built from
    /// it, and the folder removed afterwards.
    func withApp(maxPixels: Int = 1 << 20, maxBody: Int = 1 << 20, slots: Int = 2, renderTimeout: Double = 60,
                 _ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await withContext(maxPixels: maxPixels, maxBody: maxBody, slots: slots, renderTimeout: renderTimeout) { client, _ in
            try await body(client)
        }
    }

    /// `withApp` that also hands the body the context (its render gate's load).
    func withContext(maxPixels: Int = 1 << 20, maxBody: Int = 1 << 20, slots: Int = 2, renderTimeout: Double = 60,
                     _ body: @Sendable (any TestClientProtocol, ServeContext) async throws -> Void) async throws {
        let folder = try FileIO.makeTemporaryFolder(prefix: "glint-serve-test")
        defer { FileIO.removeTree(folder) }
        let context = try ServeContext(device: "cpu", slots: slots, queue: 4, renderTimeout: renderTimeout, maxPixels: maxPixels,
                                       maxBody: maxBody, folder: folder, verbose: false)
        let app = buildApplication(context: context, configuration: ApplicationConfiguration(serverName: "glint"))
        try await app.test(.router) { client in try await body(client, context) }
    }

    static func jobBody(_ workload: String, _ args: [String], extra: [(String, JSON)] = []) -> ByteBuffer {
        let doc = JSON.object([("workload", .string(workload)), ("args", .array(args.map { .string($0) }))] + extra)
        return ByteBuffer(string: doc.serialized(pretty: false))
    }

    static func text(_ response: TestResponse) -> String { String(buffer: response.body) }

    static func json(_ response: TestResponse) -> JSON? { try? JSON.parse(text(response)) }

    /// An error answer: JSON `{"error": one line, "status": N}` with the status and content type.
    static func expectError(_ response: TestResponse, _ status: Int, _ fragment: String,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Int(response.status.code) == status, "\(response.status): \(text(response))", sourceLocation: sourceLocation)
        #expect(response.headers[.contentType] == "application/json", sourceLocation: sourceLocation)
        let doc = json(response)
        let message = doc?["error"]?.stringValue ?? ""
        #expect(message.contains(fragment), "\(text(response))", sourceLocation: sourceLocation)
        #expect(!message.isEmpty && !message.contains("\n"), sourceLocation: sourceLocation)
        #expect(doc?["status"]?.intValue == Int64(status), "\(text(response))", sourceLocation: sourceLocation)
    }

    @Test func pageIsHTMLWithTheModuleScript() async throws {
        try await withApp { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                #expect(Self.text(response).contains("<script type=\"module\" src=\"/static/main.js\">"))
            }
        }
    }

    @Test func staticFilesAndTheir404() async throws {
        try await withApp { client in
            try await client.execute(uri: "/static/main.js", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
                #expect(response.body.readableBytes > 0)
                #expect(response.body.readableBytes == ServeRoutes.files["main.js"]?.bytes.count)
            }
            try await client.execute(uri: "/static/nope.js", method: .get) { response in
                Self.expectError(response, 404, "no such file")
            }
            try await client.execute(uri: "/nothing/here", method: .get) { response in
                Self.expectError(response, 404, "no such page")
            }
        }
    }

    @Test func infoListsTheDevices() async throws {
        try await withApp { client in
            try await client.execute(uri: "/api/info", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                let doc = try #require(Self.json(response), "\(Self.text(response))")
                let ids = doc["devices"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
                #expect(ids.contains("cpu"), "\(Self.text(response))")
                #expect(doc["device"]?.stringValue == "cpu")
                #expect(doc["workloads"]?.arrayValue?.contains(.string("fractal")) == true)
                #expect(doc["limits"]?["max_pixels"]?.intValue == 1 << 20)
            }
        }
    }

    /// The mist still's frame cap holds for the value the parser reads: 1e6, " 1000000" and
    /// 6.01e2 are numbers over 600 too, not text that slips past it.
    @Test func mistFrameCapReadsTheNumber() throws {
        let folder = try FileIO.makeTemporaryFolder(prefix: "glint-mist-cap")
        defer { FileIO.removeTree(folder) }
        let picture = folder + "/last.png"
        try PNG.write(Image8(width: 8, height: 6), to: picture, alpha: false)
        let uploads = Uploads(folder: folder)
        func job(_ frames: String) throws -> ServeJob {
            try ServeJob(workload: "mist", args: ["--input", "upload:last", "--frames", frames], uploads: uploads, last: { picture })
        }
        for over in ["601", "1e6", " 1000000", "6.01e2", "1000000.0"] {
            #expect { try job(over) } throws: { ($0 as? ServeError)?.message.contains("at most 600 mist frames") == true }
        }
        for fine in ["600", "6e2", " 12"] { _ = try job(fine) }
    }

    @Test func renderIsAPNG() async throws {
        try await withApp { client in
            try await client.execute(uri: "/api/render", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "--size", "32x24"], extra: [("device", .string("cpu"))])) { response in
                #expect(response.status == .ok, "\(Self.text(response))")
                #expect(response.headers[.contentType] == "image/png")
                let bytes = Array(response.body.readableBytesView)
                #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
                let image = try PNG.decode(bytes, name: "served")
                #expect(image.width == 32 && image.height == 24)
                #expect(response.headers[HTTPField.Name("X-Glint-Device")!] != nil)
                #expect(response.headers[HTTPField.Name("X-Glint-Command")!] == "glint fractal mandelbrot --size 32x24 -o fractal.png")
            }
        }
    }

    /// `--iterations auto`: the count found comes back in X-Glint-Iterations, and the job with
    /// that count given renders the same picture (the page's .kfr records it).
    @Test func autoIterationsReportTheCount() async throws {
        let view = ["mandelbrot", "--size", "48x32", "--center", "-0.743643887037158704752191506114774,0.131825904205311970493132056385139",
                    "--zoom", "1e9"]
        try await withApp { client in
            var found = 0
            var auto: Image8?
            try await client.execute(uri: "/api/render", method: .post,
                                     body: Self.jobBody("fractal", view + ["--iterations", "auto"])) { response in
                #expect(response.status == .ok, "\(Self.text(response))")
                found = Int(response.headers[HTTPField.Name("X-Glint-Iterations")!] ?? "") ?? 0
                auto = try PNG.decode(Array(response.body.readableBytesView), name: "auto")
            }
            #expect(found > 128 && found <= AutoIterations.cap)
            try await client.execute(uri: "/api/render", method: .post,
                                     body: Self.jobBody("fractal", view + ["--iterations", String(found)])) { response in
                #expect(response.status == .ok, "\(Self.text(response))")
                #expect(response.headers[HTTPField.Name("X-Glint-Iterations")!] == nil)
                let fixed = try PNG.decode(Array(response.body.readableBytesView), name: "fixed")
                #expect(fixed.pixels == auto?.pixels)
            }
        }
    }

    /// POST /api/locate: the period-3 minibrot near −1.75, and a one-line refusal off mandelbrot.
    @Test func locateFindsTheMinibrot() async throws {
        try await withApp { client in
            try await client.execute(uri: "/api/locate", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "--center", "-1.75,0", "--zoom", "10"],
                                                        extra: [("feature", .string("minibrot"))])) { response in
                #expect(response.status == .ok, "\(Self.text(response))")
                let doc = try #require(Self.json(response))
                #expect(doc["summary"]?.stringValue?.contains("period 3") == true, "\(Self.text(response))")
                #expect(doc["center"]?.stringValue?.hasPrefix("-1.7") == true, "\(Self.text(response))")
                #expect((doc["iterations"]?.intValue ?? 0) >= 300)
            }
            try await client.execute(uri: "/api/locate", method: .post,
                                     body: Self.jobBody("fractal", ["julia"], extra: [("feature", .string("minibrot"))])) { response in
                Self.expectError(response, 400, "Mandelbrot set")
            }
            try await client.execute(uri: "/api/locate", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot"], extra: [("feature", .string("bulb"))])) { response in
                Self.expectError(response, 400, "minibrot or misiurewicz")
            }
        }
    }

    /// POST /api/locate at power 3: the period-4 minibrot of z³ + c on the upper antenna, framed
    /// about its nucleus; Burning Ship refused, saying why.
    @Test func locateAtPowerThree() async throws {
        try await withApp { client in
            try await client.execute(uri: "/api/locate", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "--power", "3", "--center", "-0.2437,1.3221",
                                                                    "--zoom", "2000"],
                                                        extra: [("feature", .string("minibrot"))])) { response in
                #expect(response.status == .ok, "\(Self.text(response))")
                let doc = try #require(Self.json(response))
                #expect(doc["summary"]?.stringValue?.contains("period 4") == true, "\(Self.text(response))")
                #expect(doc["center"]?.stringValue?.hasPrefix("-0.2439653592334836") == true, "\(Self.text(response))")
                #expect(doc["power"]?.intValue == 3, "\(Self.text(response))")
            }
            try await client.execute(uri: "/api/locate", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "--power", "3", "--center", "0.3405,1.2714",
                                                                    "--zoom", "2000"],
                                                        extra: [("feature", .string("misiurewicz"))])) { response in
                #expect(response.status == .ok, "\(Self.text(response))")
                let doc = try #require(Self.json(response))
                #expect(doc["summary"]?.stringValue?.contains("M(2,1)") == true, "\(Self.text(response))")
                #expect(doc["center"]?.stringValue?.hasPrefix("0.34062501931660664") == true, "\(Self.text(response))")
            }
            try await client.execute(uri: "/api/locate", method: .post,
                                     body: Self.jobBody("fractal", ["burning-ship"], extra: [("feature", .string("minibrot"))])) { response in
                Self.expectError(response, 400, "not holomorphic")
            }
        }
    }

    /// A locate past the time limit: the reply is a 504 at the limit and the search is cancelled,
    /// so its slot is free again at once. The search here (at −7/4, the period-3 window's parabolic
    /// point, at 1e20000 the ball never holds 0: 100000 steps at about 66000 bits) runs for 12 s
    /// uncancelled in a debug build; the next request, which needs the only slot, is answered
    /// well before that.
    @Test func locatePastItsLimitFreesItsSlot() async throws {
        try await withContext(slots: 1, renderTimeout: 0.5) { client, context in
            let start = ContinuousClock.now
            try await client.execute(uri: "/api/locate", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "--center", "-1.75,0", "--zoom", "1e20000"],
                                                        extra: [("feature", .string("minibrot"))])) { response in
                Self.expectError(response, 504, "limit")
            }
            // The cancelled search stops within milliseconds; allow a generous second (20 looks 50 ms
            // apart, counted rather than timed: other tests may slow this one's turns).
            var freed = false
            for _ in 0..<20 {
                if await context.gate.load.running == 0 {
                    freed = true
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            let waited = ContinuousClock.now - start
            #expect(freed, "the slot is still taken \(waited) after the request")
            try await client.execute(uri: "/api/locate", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "--center", "-1.75,0", "--zoom", "10"],
                                                        extra: [("feature", .string("minibrot"))])) { response in
                #expect(response.status == .ok, "\(Self.text(response))")
            }
        }
    }

    /// A deep render past its time limit: the reference orbit (hours of steps at 1e100000 with
    /// 16 million iterations) ends within a step of the cancellation, so the slot is free at once.
    @Test func deepRenderPastItsLimitFreesItsSlot() async throws {
        try await withContext(slots: 1, renderTimeout: 0.5) { client, context in
            let start = ContinuousClock.now
            try await client.execute(uri: "/api/render", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "--center", "-1.75,0", "--zoom", "1e100000",
                                                                    "--iterations", "16777216", "--size", "16x12"])) { response in
                Self.expectError(response, 504, "--render-timeout")
            }
            var freed = false
            for _ in 0..<40 {
                if await context.gate.load.running == 0 {
                    freed = true
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(freed, "the slot is still taken \(ContinuousClock.now - start) after the request")
            try await client.execute(uri: "/api/render", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "--size", "16x12"])) { response in
                #expect(response.status == .ok, "\(Self.text(response))")
            }
        }
    }

    @Test func refusalsAreOneLineJSON() async throws {
        try await withApp(maxPixels: 20000, maxBody: 4096) { client in
            try await client.execute(uri: "/api/render", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "--iterations", "0"])) { response in
                Self.expectError(response, 400, "--iterations must be between 1")
            }
            try await client.execute(uri: "/api/render", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "-o", "/tmp/x.png"])) { response in
                Self.expectError(response, 400, "\"-o\" is not available")
            }
            try await client.execute(uri: "/api/render", method: .post, body: ByteBuffer(string: "{not json")) { response in
                Self.expectError(response, 400, "not valid JSON")
            }
            try await client.execute(uri: "/api/render", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "--size", "200x200"])) { response in
                Self.expectError(response, 413, "over the server's limit of 20000")
            }
            try await client.execute(uri: "/api/render", method: .post,
                                     body: ByteBuffer(bytes: [UInt8](repeating: 32, count: 5000))) { response in
                Self.expectError(response, 413, "--max-body")
            }
            try await client.execute(uri: "/api/upload", method: .post, body: ByteBuffer(string: "hello")) { response in
                Self.expectError(response, 400, "not a PNG")
            }
        }
    }

    @Test func compareLocationAndUpload() async throws {
        try await withApp { client in
            let compare = JSON.object([("workload", .string("fractal")), ("args", .array(["mandelbrot", "--size", "32x24"].map { .string($0) })),
                                       ("a", .string("cpu")), ("b", .string("cpu"))])
            try await client.execute(uri: "/api/compare", method: .post, body: ByteBuffer(string: compare.serialized(pretty: false))) { response in
                #expect(response.status == .ok, "\(Self.text(response).prefix(300))")
                #expect(response.headers[.contentType] == "application/json")
                let doc = try #require(Self.json(response))
                #expect(doc["passed"]?.boolValue == true, "\(Self.text(response).prefix(300))")
                #expect(doc["a"]?["device"]?.stringValue != nil && doc["diff_png"]?.stringValue != nil)
            }
            try await client.execute(uri: "/api/location", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "--center", "-0.75,0.1", "--zoom", "1e30"])) { response in
                #expect(response.status == .ok, "\(Self.text(response))")
                #expect(response.headers[.contentType] == "text/plain; charset=utf-8")
                #expect(Self.text(response).contains("Zoom:"), "\(Self.text(response))")
            }
            try await client.execute(uri: "/api/location", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "--iterations", "auto"])) { response in
                Self.expectError(response, 400, "a location records the iteration count")
            }
            let picture = try PNG.encode(Image8(width: 8, height: 6), alpha: false)
            let id = try await client.execute(uri: "/api/upload", method: .post, body: ByteBuffer(bytes: picture)) { response in
                #expect(response.status == .ok, "\(Self.text(response))")
                let doc = try #require(Self.json(response))
                #expect(doc["width"]?.intValue == 8 && doc["height"]?.intValue == 6)
                return try #require(doc["id"]?.stringValue)
            }
            #expect(id.hasPrefix("upload:"))
            // A picture without a view record, as a location: the error names the upload, not
            // where the server keeps it.
            try await client.execute(uri: "/api/render", method: .post, body: Self.jobBody("fractal", ["--location", id])) { response in
                Self.expectError(response, 400, "--location \(id): a PNG without a view record")
                #expect(!Self.text(response).contains("glint-serve-test"), "\(Self.text(response))")
            }
        }
    }
}
#endif
