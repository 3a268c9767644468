#if Serve
import GlintCL
import GlintCore
import GlintKernels
import GlintWorkloads
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1

/// The HTTP side of `glint serve`: the page, its static files and the JSON/PNG API (docs/SERVE.md).
struct ServeRoutes: Sendable {
    let context: ServeContext

    /// The page's files, made once: name → (bytes, content type). The embedded text's UTF-8 is
    /// the file's bytes exactly (the build refuses a file that is not UTF-8 text).
    static let files: [String: (bytes: [UInt8], type: String)] = {
        var out: [String: (bytes: [UInt8], type: String)] = [:]
        for (name, text) in EmbeddedWeb.files {
            let ext = name.split(separator: ".").last.map(String.init) ?? ""
            let type = ["html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8",
                        "css": "text/css; charset=utf-8", "svg": "image/svg+xml"][ext] ?? "application/octet-stream"
            out[name] = (Array(text.utf8), type)
        }
        return out
    }()

    func add(to router: Router<BasicRequestContext>) {
        router.get("/") { _, _ in try Self.file("index.html") }
        // The page's files: only the names compiled in; a name is looked up, never joined to a path.
        router.group("static")
            .get(":name") { _, ctx in try Self.file(ctx.parameters.get("name") ?? "") }
        // The JSON/PNG API (docs/SERVE.md, "HTTP"). Errors thrown here become JSON through the
        // router's ServeErrorMiddleware.
        let api = router.group("api")
        api.get("info") { _, _ in Self.json(await info()) }
            .post("render") { request, _ in try await render(request) }
            .post("compare") { request, _ in try await compare(request) }
            .post("upload") { request, _ in try await upload(request) }
            .post("location") { request, _ in try await location(request) }
            .post("locate") { request, _ in try await locate(request) }
            .post("view") { request, _ in try await view(request) }
        addZoomVideo(to: api)
    }

    // MARK: Answers

    static func file(_ name: String) throws -> Response {
        guard let f = files[name] else {
            throw ServeError(status: 404, message: "no such file: \(JSON.printable(name, limit: 60))")
        }
        var headers = HTTPFields()
        headers[.contentType] = f.type
        headers[.cacheControl] = "no-cache"
        headers[.eTag] = "\"\(EmbeddedBuildInfo.gitCommit.prefix(16))-\(f.bytes.count)\""
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: f.bytes)))
    }

    static func json(_ doc: JSON, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: doc.serialized(pretty: false) + "\n")))
    }

    static func error(_ e: ServeError) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        if e.status == 503 { headers[.retryAfter] = "1" }
        if e.status == 401 { headers[.wwwAuthenticate] = "Bearer" }
        return Response(status: HTTPResponse.Status(code: e.status == 499 ? 500 : e.status), headers: headers,
                        body: .init(byteBuffer: ByteBuffer(string: JSON.errorBody(e) + "\n")))
    }

    func body(_ request: Request) async throws -> [UInt8] {
        var request = request
        do {
            let buffer = try await request.collectBody(upTo: context.maxBody)
            return Array(buffer.readableBytesView)
        } catch let e as HTTPError where e.status == .contentTooLarge {
            throw ServeError.tooLarge("the body is over the server's limit of \(context.maxBody) bytes (--max-body)")
        } catch is NIOTooManyBytesError {
            throw ServeError.tooLarge("the body is over the server's limit of \(context.maxBody) bytes (--max-body)")
        } catch let e as HTTPParserError {
            // The client's bytes, not the server, are at fault: a body cut short, or not HTTP.
            throw ServeError.bad("the request's body could not be read: \(e)")
        }
    }

    /// The job of a request body {"workload", "args"}.
    func job(_ doc: JSON) throws -> ServeJob {
        guard let workload = try doc.optionalString("workload") else {
            throw ServeError.bad("the body needs \"workload\" (\(ServeJob.allowed.keys.sorted().joined(separator: ", "))) and \"args\"")
        }
        return try ServeJob(workload: workload, args: try doc.argList(), uploads: context.uploads)
    }

    // MARK: Routes

    func info() async -> JSON {
        let described = try? await context.deviceDescription()
        var devices: [JSON] = [.object([("id", .string("cpu")), ("name", .string("Swift CPU path")), ("type", .string("cpu"))])]
        for d in described?.devices ?? [] {
            devices.append(.object([("id", .string(d.id)), ("name", .string(d.name)), ("type", .string(d.type))]))
        }
        let auto = described?.label ?? context.device
        let load = await context.gate.load
        return .object([
            ("version", .string("\(GlintBuild.version) (\(GlintBuild.commit.prefix(12)))")),
            ("device", .string(context.device)), ("device_label", .string(auto)),
            ("devices", .array(devices)),
            ("opencl_problem", described?.problem.map { .string($0) } ?? .null),
            ("workloads", .array(ServeJob.allowed.keys.sorted().map { .string($0) })),
            ("limits", .object([("max_pixels", .int(Int64(context.maxPixels))), ("max_body", .int(Int64(context.maxBody))),
                                ("max_renders", .int(Int64(context.gate.slots))), ("queue", .int(Int64(context.gate.queueLimit))),
                                ("render_timeout_s", .number(context.renderTimeout))])),
            ("load", .object([("running", .int(Int64(load.running))), ("waiting", .int(Int64(load.waiting))),
                              ("dropped_replies", .int(Int64(context.droppedMessages.withLock { $0 })))])),
        ])
    }

    func render(_ request: Request) async throws -> Response {
        let doc = try JSON.requestObject(try await body(request))
        let job = try job(doc)
        // "record": the PNG `glint fractal ... -o` writes, byte for byte (its view record, the
        // command line's compression), for the page's Save PNG.
        let record = try doc.optionalBool("record") ?? false
        if record && !(job.command is Fractal) {
            throw ServeError.bad("\"record\" asks for a fractal view's PNG as glint fractal writes it; this job is \(job.workload)")
        }
        let out = try await context.render(job, device: try doc.optionalString("device"))
        let png = record ? try out.filePNG() : try out.png()
        var headers = HTTPFields()
        headers[.contentType] = "image/png"
        headers[.cacheControl] = "no-store"
        headers[HTTPField.Name("X-Glint-Device")!] = out.device
        headers[HTTPField.Name("X-Glint-Wall-Ms")!] = fmt(out.wallSeconds * 1000, 2)
        headers[HTTPField.Name("X-Glint-Kernel-Ms")!] = fmt(out.kernelSeconds * 1000, 2)
        if let n = out.chosenIterations { headers[HTTPField.Name("X-Glint-Iterations")!] = String(n) }
        // Header values are ASCII: the command line's characters beyond it are escaped.
        headers[HTTPField.Name("X-Glint-Command")!] = String(job.cli.unicodeScalars.map { $0.isASCII && $0.value >= 32 ? Character($0) : "?" })
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: png)))
    }

    func compare(_ request: Request) async throws -> Response {
        let doc = try JSON.requestObject(try await body(request))
        let job = try job(doc)
        try context.checkSize(job)
        let a = try doc.optionalString("a") ?? "cpu", b = try doc.optionalString("b") ?? "opencl"
        let comparable: any ComparableJob
        do { comparable = try job.command.comparableJob() } catch { throw ServeError.from(error, preparing: true) }
        let devices = context.devices, deviceJob = DeviceJob(job)
        let sides: [DeviceRun]
        do {
            sides = try await context.gate.run(timeout: context.renderTimeout) {
                var out: [DeviceRun] = []
                for device in [a, b] { out.append(try await devices.run(deviceJob, device: device, detailed: true)) }
                return out
            }
        } catch {
            throw ServeError.from(error, preparing: false)
        }
        let runs = sides.map(\.run)
        let difference: ImageDifference
        if let fa = runs[0].floatImage, let fb = runs[1].floatImage {
            difference = try ImageCompare.compare(fa, fb)
        } else {
            difference = try ImageCompare.compare(runs[0].image, runs[1].image)
        }
        var verdicts = comparable.comparisonTolerance.evaluate(difference)
        if let ca = runs[0].counts, let cb = runs[1].counts {
            let differing = zip(ca, cb).reduce(0) { $0 + ($1.0 == $1.1 ? 0 : 1) } + abs(ca.count - cb.count)
            verdicts.insert((differing == 0, differing == 0 ? "escape counts identical (\(ca.count))"
                                                          : "escape counts: \(differing) of \(ca.count) differ (must be identical)"), at: 0)
        }
        let heat = ImageCompare.heatMap(difference, background: runs[0].image)
        func side(_ run: ComparisonRun, _ device: String) throws -> JSON {
            .object([("device", .string(device)), ("wall_ms", .number(run.wallSeconds * 1000)),
                     ("kernel_ms", .number(run.kernelSeconds * 1000)),
                     ("png", .string(try PNG.encode(run.image, alpha: false, compression: .fast).base64))])
        }
        let o = difference.overall
        return Self.json(.object([
            ("command", .string(job.cli)),
            ("a", try side(runs[0], sides[0].device)), ("b", try side(runs[1], sides[1].device)),
            ("speedup", runs[1].wallSeconds > 0 ? .number(runs[0].wallSeconds / runs[1].wallSeconds) : .null),
            ("max_abs", .number(o.maxAbs)), ("mean_abs", .number(o.meanAbs)),
            ("psnr_db", o.psnr.isFinite ? .number(o.psnr) : .null),
            ("pixels_over_threshold", .int(Int64(o.pixelsOver))),
            ("tolerance", .string(comparable.comparisonTolerance.description)),
            ("criteria", .array(verdicts.map { .object([("passed", .bool($0.passed)), ("text", .string($0.text))]) })),
            ("passed", .bool(verdicts.allSatisfy(\.passed))),
            ("diff_png", .string(try PNG.encode(heat, alpha: false, compression: .fast).base64)),
        ]))
    }

    func upload(_ request: Request) async throws -> Response {
        let bytes = try await body(request)
        let added = try context.uploads.add(bytes, maxPixels: context.maxPixels)
        return Self.json(.object([("id", .string(added.token)), ("width", .int(Int64(added.width))), ("height", .int(Int64(added.height)))]))
    }

    /// The minibrot or Misiurewicz point nearest a Mandelbrot view at any power (glint locate),
    /// found in a render slot within the render time limit: the view that shows it. Past the limit
    /// the reply is a 504 and the search is cancelled, which frees its slot.
    func locate(_ request: Request) async throws -> Response {
        let doc = try JSON.requestObject(try await body(request))
        let job = try job(doc)
        guard let fractal = job.command as? Fractal else { throw ServeError.bad("locate finds features of a fractal view; this job is \(job.workload)") }
        let feature = try doc.optionalString("feature") ?? ZoomTarget.minibrot.rawValue
        guard let target = ZoomTarget(rawValue: feature) else {
            throw ServeError.bad("\"feature\" is minibrot or misiurewicz (got \(JSON.printable(feature, limit: 20)))")
        }
        let view: FractalJob
        do {
            try fractal.loadLocation()
            view = fractal.baseJob()
        } catch { throw ServeError.from(error, preparing: true) }
        if let why = locateRefusal(view.formula) {
            throw ServeError.bad("locate finds the Mandelbrot set's features (z^N + c, any --power): \(why)")
        }
        let (re, im, zoom, power) = (view.exactCenter.re, view.exactCenter.im, view.exactZoom, view.power)
        let found: (center: DeepComplex, zoom: DeepNumber, iterations: Int, summary: String)
        do {
            // Past the time limit the gate cancels this task and the locator's loops, which look
            // at Task.isCancelled every few thousand steps, stop: the slot is free again at once.
            found = try await context.gate.run(timeout: context.renderTimeout) {
                do {
                    switch target {
                    case .minibrot:
                        let m = try MinibrotLocator.locate(centerRe: re, centerIm: im, zoom: zoom, power: power)
                        return (DeepComplex(re: m.centerRe, im: m.centerIm), m.zoom, 100 * m.period,
                                "minibrot of period \(m.period), size \(m.sizeMantissa)e\(m.sizeExponent10)")
                    case .misiurewicz:
                        let m = try MisiurewiczLocator.locate(centerRe: re, centerIm: im, zoom: zoom, power: power)
                        return (DeepComplex(re: m.re, im: m.im), m.zoom, m.iterations,
                                "Misiurewicz point M(\(m.preperiod),\(m.period)), multiplier \(m.multiplierText)")
                    }
                } catch let e as GlintError where e == Locator.cancelled {
                    // Cancelled (time limit, client gone, server stopping): not a refusal of the view.
                    throw CancellationError()
                }
            }
        } catch let e as GlintError {
            throw ServeError.bad(e.flagged.message)
        } catch { throw ServeError.from(error, preparing: false) }
        return Self.json(.object([("center", .string(found.center.description)), ("zoom", .string(found.zoom.plainText)),
                                  ("iterations", .int(Int64(min(found.iterations, FractalJob.maxIterationLimit)))),
                                  ("power", .int(Int64(power))), ("summary", .string(found.summary))]))
    }

    func location(_ request: Request) async throws -> Response {
        let doc = try JSON.requestObject(try await body(request))
        let job = try job(doc)
        guard let fractal = job.command as? Fractal else { throw ServeError.bad("a location is a fractal view's; this job is \(job.workload)") }
        // A location records a count, which auto only finds by rendering (in a render's slot).
        if fractal.autoIterations { throw ServeError.bad("a location records the iteration count: give --iterations N (auto finds it by rendering the view)") }
        let text: String
        do {
            try fractal.loadLocation()
            text = FractalLocation(job: fractal.baseJob()).kfrText
        } catch { throw ServeError.from(error, preparing: true) }
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
#endif
