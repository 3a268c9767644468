// The page's Save PNG (POST /api/render with "record") and its location reader (POST /api/view),
// driven in process: the saved PNG is byte for byte the one `glint fractal -o` writes, and every
// location form Glint writes comes back as the view's fields, digits kept.
#if Serve
import GlintCore
import GlintWorkloads
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
@testable import glint

extension ServeAppTests {
    /// The PNG of `glint fractal ARGS -o FILE` on the CPU path, run through the command's own
    /// parser and run(), as the command line runs it.
    static func cliPNG(_ args: [String]) async throws -> [UInt8] {
        let folder = try FileIO.makeTemporaryFolder(prefix: "glint-view-test")
        defer { FileIO.removeTree(folder) }
        let file = folder + "/view.png"
        let command = try Fractal.parse(args + ["-o", file, "-q", "--device", "cpu"])
        try await command.run()
        return try FileIO.read(file, limit: 1 << 26)
    }

    static func savedPNG(_ client: any TestClientProtocol, _ args: [String]) async throws -> [UInt8] {
        try await client.execute(uri: "/api/render", method: .post,
                                 body: jobBody("fractal", args, extra: [("record", .bool(true)), ("device", .string("cpu"))])) { response in
            #expect(response.status == .ok, "\(text(response))")
            #expect(response.headers[.contentType] == "image/png")
            return Array(response.body.readableBytesView)
        }
    }

    static func view(_ client: any TestClientProtocol, _ body: [UInt8]) async throws -> TestResponse {
        try await client.execute(uri: "/api/view", method: .post, body: ByteBuffer(bytes: body)) { $0 }
    }

    static func view(_ client: any TestClientProtocol, _ text: String) async throws -> JSON {
        let response = try await view(client, Array(text.utf8))
        #expect(response.status == .ok, "\(Self.text(response))")
        return try #require(json(response))
    }

    /// Save PNG gives the command line's file exactly: a fixed count, and `auto` (whose count
    /// found is the one the record names); read back by /api/view, the view is the same.
    @Test func savedPNGIsTheCommandLinesFile() async throws {
        let center = "-0.743643887037158704752191506114774,0.131825904205311970493132056385139"
        let fixed = ["mandelbrot", "--size", "48x32", "--center", center, "--zoom", "1e9", "--iterations", "600", "--smooth"]
        let auto = ["mandelbrot", "--size", "40x30", "--center", "-0.75,0.1", "--zoom", "1e20", "--iterations", "auto"]
        try await withApp { client in
            for args in [fixed, auto] {
                let saved = try await Self.savedPNG(client, args)
                let cli = try await Self.cliPNG(args)
                #expect(saved == cli, "\(args): \(saved.count) bytes served, \(cli.count) written by the command line")
                let record = try #require(try PNG.text(in: saved, name: "saved").first { $0.keyword == FractalLocation.keyword })
                #expect(record.text.contains("center=\(args[4])"))
            }
            let saved = try await Self.savedPNG(client, fixed)
            let doc = try #require(Self.json(try await Self.view(client, saved)))
            #expect(doc["kind"]?.stringValue == "png")
            #expect(doc["center"]?.stringValue == center)
            #expect(doc["zoom"]?.stringValue == "1e9")
            #expect(doc["iterations"]?.intValue == 600 && doc["smooth"]?.boolValue == true)
            #expect(doc["size"]?.stringValue == "48x32" && doc["formula"]?.stringValue == "mandelbrot")
            #expect(doc["power"]?.intValue == 2 && doc["color"]?.stringValue == "count")
            // The precision is the one the view takes by itself: not pinned.
            #expect(doc["precision"] == nil, "\(doc.serialized(pretty: false))")
            // Another workload has no view record.
            try await client.execute(uri: "/api/render", method: .post,
                                     body: Self.jobBody("rtow", ["--size", "16x8", "--spp", "1"], extra: [("record", .bool(true))])) { response in
                Self.expectError(response, 400, "\"record\" asks for a fractal view's PNG")
            }
            try await client.execute(uri: "/api/render", method: .post,
                                     body: Self.jobBody("fractal", ["mandelbrot", "--size", "16x8"], extra: [("record", .string("yes"))])) { response in
                Self.expectError(response, 400, "\"record\" must be true or false")
            }
        }
    }

    /// Each text form: the page's Copy, a bare centre, a whole command line, .kfr text and a
    /// view record; a 2,000-digit centre comes back whole.
    @Test func viewReadsEveryForm() async throws {
        try await withApp { client in
            var doc = try await Self.view(client, "--center -0.75,0.1 --zoom 1e30 --iterations 500")
            #expect(doc["kind"]?.stringValue == "options")
            #expect(doc["center"]?.stringValue == "-0.75,0.1" && doc["zoom"]?.stringValue == "1e30")
            #expect(doc["iterations"]?.intValue == 500)
            // Only what was given: the page keeps its formula, palette and power.
            #expect(doc["formula"] == nil && doc["palette"] == nil && doc["power"] == nil)

            doc = try await Self.view(client, "  -1.25,0.02\n")
            #expect(doc["center"]?.stringValue == "-1.25,0.02" && doc["zoom"] == nil)

            doc = try await Self.view(client, "glint fractal julia --c '0.1,-0.6' --palette fire --iterations auto -o view.png")
            #expect(doc["formula"]?.stringValue == "julia" && doc["c"]?.stringValue == "0.1,-0.6")
            #expect(doc["palette"]?.stringValue == "fire" && doc["iterations"] == nil)

            doc = try await Self.view(client, "Re: -0.75\r\nIm: 0.1\r\nZoom: 2e30\r\nIterations: 700\r\n")
            #expect(doc["kind"]?.stringValue == "kfr")
            #expect(doc["center"]?.stringValue == "-0.75,0.1" && doc["zoom"]?.stringValue == "1e30")
            #expect(doc["iterations"]?.intValue == 700 && doc["power"]?.intValue == 2)

            doc = try await Self.view(client, "version=1\nformula=burning-ship\ncenter=-1.75,-0.03\nzoom=40\npower=2\n")
            #expect(doc["kind"]?.stringValue == "record" && doc["formula"]?.stringValue == "burning-ship")
            #expect(doc["zoom"]?.stringValue == "40")

            let digits = String(repeating: "7", count: 2000)
            doc = try await Self.view(client, "--center -0.\(digits),0.1 --zoom 1e1900")
            #expect(doc["center"]?.stringValue == "-0.\(digits),0.1")
        }
    }

    /// What is not a location is a one-line 400 saying what is wanted.
    @Test func viewRefusals() async throws {
        try await withApp { client in
            Self.expectError(try await Self.view(client, Array("  \n".utf8)), 400, "the location is empty")
            Self.expectError(try await Self.view(client, [0xFF, 0x00, 0x12]), 400, "not a location")
            Self.expectError(try await Self.view(client, Array("--device opencl".utf8)), 400, "is not available here")
            Self.expectError(try await Self.view(client, Array("--center 1,2,3".utf8)), 400, "--center")
            Self.expectError(try await Self.view(client, Array("Re: 0\nIm: 0\nZoom: -4\n".utf8)), 400, "is not a zoom glint draws")
            Self.expectError(try await Self.view(client, Array("version=2\ncenter=0,0\n".utf8)), 400, "this glint reads version 1")
            Self.expectError(try await Self.view(client, Array("--center '0,0".utf8)), 400, "without its closing '")
            let plain = try PNG.encode(Image8(width: 4, height: 3), alpha: false)
            Self.expectError(try await Self.view(client, plain), 400, "a PNG without a view record")
        }
    }
}
#endif
