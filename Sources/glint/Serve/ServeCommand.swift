#if Serve
import ArgumentParser
import Dispatch
import Glibc
import GlintCore
import GlintKernels
import GlintWorkloads
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the interactive views in a browser: the server renders on its device, the page shows it.",
        discussion: """
            One page (compiled into glint) with a view per workload: the fractal explorer (drag, \
            wheel or pinch; deep zoom kept as decimal text), the ray tracer (drag to orbit, wheel \
            for distance, shift-drag to roll; passes streamed as they finish), the misty window \
            (an uploaded or rendered picture or the browser's camera; wipe with the mouse), the \
            pulse, iso of the current view, and a CPU-vs-OpenCL comparison. Every view is a \
            workload's command line, rendered by the same code as `glint <workload>`, and the page \
            shows that command.

            Loopback only unless --host says otherwise. On a remote GPU box keep the default and \
            tunnel from your machine: ssh -N -L 8080:127.0.0.1:8080 gpu-box, then open \
            http://127.0.0.1:8080/. The HTTP and WebSocket API: docs/SERVE.md.

            Other web pages open in your browser cannot use the server: a request whose Host is \
            not one of its names (localhost, 127.x, ::1, the --host address, each --allow-host) \
            is refused, and so are WebSockets and changes sent by another site's page. Beyond \
            loopback every request also needs a token: --token, or one made up at start-up and \
            printed in the address (http://HOST:PORT/?token=...). Opening that address keeps \
            the page working (a cookie); a script sends Authorization: Bearer TOKEN.

            SIGINT or SIGTERM stops it: renders in flight are cancelled and its temporary folder \
            removed. Renders run in worker processes of its own: should an OpenCL driver abort \
            one, only the request it was rendering fails (503), and the next request starts a new \
            worker.

            Examples:
              glint serve
              glint serve --port 9000 --device opencl
              glint serve --port 0 --max-renders 1 --queue 4    # a free port, printed at start-up
              glint serve --host 0.0.0.0 --allow-host gpu-box  # the token is in the printed address
            """)

    @Option(parsing: .unconditional, help: "TCP port (0: any free port, printed at start-up). (default: 8080)",
            transform: wholeNumber("--port", 0...65535))
    var port = 8080

    @Option(help: "Address to listen on: 127.0.0.1 (loopback only), ::1, or 0.0.0.0 for every interface (then a token is required).")
    var host = "127.0.0.1"

    @Option(name: .customLong("allow-host"),
            help: ArgumentHelp("Another name the server answers to (repeatable); a request whose Host names anything else is refused.",
                               valueName: "name"))
    var allowHost: [String] = []

    @Option(help: ArgumentHelp("The secret every request must carry (16 to 256 letters, digits, - . _ ~). Required beyond loopback: when not given, one is made up and printed in the address.",
                               valueName: "token"))
    var token: String?

    @Option(parsing: .unconditional, help: "Renders at once (1 to 64). (default: 2)", transform: wholeNumber("--max-renders", 1...64))
    var maxRenders = 2

    @Option(parsing: .unconditional, help: "Requests waiting for a render slot before more are answered 503 (0 to 10000). (default: 16)",
            transform: wholeNumber("--queue", 0...10000))
    var queue = 16

    @Option(name: .customLong("render-timeout"), parsing: .unconditional,
            help: "Seconds one render may take (1 to 86400); past it the render is stopped and answered 504. (default: 120)",
            transform: number("--render-timeout", .closed(1, 86400)))
    var renderTimeout = 120.0

    @Option(name: .customLong("video-timeout"), parsing: .unconditional,
            help: "Seconds one zoom video (POST /api/zoomvideo) may take, its strip and every frame (1 to 86400); past it the video is stopped. (default: 600)",
            transform: number("--video-timeout", .closed(1, 86400)))
    var videoTimeout = 600.0

    @Option(name: .customLong("max-pixels"), parsing: .unconditional,
            help: "Largest image a request may render or upload, in pixels (1 to \(ImageLimits.maxPixels)). (default: 16777216)",
            transform: wholeNumber("--max-pixels", 1...ImageLimits.maxPixels))
    var maxPixels = 1 << 24

    @Option(name: .customLong("max-body"), parsing: .unconditional,
            help: "Largest request body or WebSocket message, in bytes (1024 to 1073741824). (default: 33554432)",
            transform: wholeNumber("--max-body", 1024...(1 << 30)))
    var maxBody = 32 << 20

    @Option(name: .customLong("max-connections"), parsing: .unconditional,
            help: "Connections open at once (HTTP and WebSocket, 8 to 65536; at most the open-file limit less 64); past it a new one gets a 503. (default: 256)",
            transform: wholeNumber("--max-connections", 8...65536))
    var maxConnections = 256

    @Option(name: .customLong("idle-timeout"), parsing: .unconditional,
            help: "Seconds a connection may stay with no request in progress, or with a request whose head is still arriving, before it is closed (1 to 3600; a WebSocket is not idle while open). (default: 30)",
            transform: wholeNumber("--idle-timeout", 1...3600))
    var idleTimeout = 30

    @OptionGroup var device: DeviceOptions

    @Flag(name: .shortAndLong, help: "Log every request.")
    var verbose = false

    func validate() throws {
        // A device worker is started by a server whose options were checked.
        if DeviceWorkerMain.replyDescriptor != nil { return }
        guard ["127.0.0.1", "::1", "0.0.0.0", "::", "localhost"].contains(host) || host.split(separator: ".").count == 4
                || host.contains(":") else {
            throw ValidationError("--host \(host): give an IP address to listen on (127.0.0.1, ::1, 0.0.0.0)")
        }
        for name in allowHost {
            // An IPv6 address may be given without its brackets.
            let bracketed = !name.hasPrefix("[") && name.filter({ $0 == ":" }).count > 1 ? "[\(name)]" : name
            if let parsed = ServeAccess.splitAuthority(bracketed[...]), parsed.port == nil { continue }
            throw ValidationError("--allow-host \(JSON.printable(name, limit: 60)): give a host name or address without a port (gpu-box, 192.168.1.5, [fe80::1])")
        }
        if let token, let problem = ServeAccess.tokenProblem(token) { throw ValidationError(problem) }
        if let d = device.device { do { _ = try DeviceChoice(parsing: d) } catch { throw error.usage } }
        // Each connection is a file descriptor; the server keeps some for its own files.
        var files = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0, files.rlim_cur != rlim_t.max, maxConnections > Int(files.rlim_cur) - 64 {
            throw ValidationError("--max-connections \(maxConnections) is over what this process may open: its open-file limit is \(files.rlim_cur) (ulimit -n), and the server keeps 64 for its own files")
        }
    }

    func run() async throws {
        if let fd = DeviceWorkerMain.replyDescriptor {
            ImageLimits.setInputPixels(maxPixels)
            await DeviceWorkerMain.run(replyDescriptor: fd)
        }
        try await reportingErrors(verbose: false, buildReport: false) { try await serve() }
    }

    private func serve() async throws {
        // Everything the server writes lives in one temporary folder; it also becomes the
        // working directory (the device workers' too), so that no job can write beside the
        // user's files.
        Self.removeAbandonedFolders()
        let folder = try FileIO.makeTemporaryFolder(prefix: "\(Self.folderPrefix)\(getpid())")
        defer { FileIO.removeTree(folder) }
        guard chdir(folder) == 0 else { throw GlintError("cannot enter \(folder): \(FileIO.errnoText())") }
        ImageLimits.setInputPixels(maxPixels)
        // A device worker that has ended is written to as its request fails: an error, not a signal.
        signal(SIGPIPE, SIG_IGN)

        // Device work runs in worker processes of this command (DeviceWorkers): a driver that
        // aborts ends one of them and fails its request, never the server.
        let workers = DeviceWorkers(arguments: ["serve", "--max-pixels", String(maxPixels)], keepIdle: maxRenders, maxPixels: maxPixels)
        defer { workers.stopAll() }
        let deviceText = device.device ?? FileIO.environment("GLINT_DEVICE") ?? "auto"
        let context = try ServeContext(device: deviceText, slots: maxRenders, queue: queue, renderTimeout: renderTimeout,
                                       maxPixels: maxPixels, maxBody: maxBody, folder: folder, verbose: verbose,
                                       videoTimeout: videoTimeout, maxConnections: maxConnections, idleSeconds: idleTimeout,
                                       devices: workers)
        // A device that cannot be opened is said now, not at the first request.
        let startDevice: String
        do { startDevice = try await context.deviceDescription().label } catch let e as ServeError { throw GlintError(e.message) }

        // Beyond loopback anyone who reaches the machine reaches the server: a token is required.
        let loopback = ServeAccess.isLoopback(host)
        let secret = token ?? (loopback ? nil : ServeAccess.generatedToken())
        let access = ServeAccess(bind: host, allowedHosts: allowHost, token: secret)

        var logger = Logger(label: "glint-serve")
        logger.logLevel = verbose ? .info : .error
        let app = buildApplication(
            context: context, access: access,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "glint"),
            logger: logger,
            onServerRunning: { [host, maxRenders, queue] channel in
                let bound = channel.localAddress?.port ?? 0
                let shown = host.contains(":") ? "[\(host)]" : host
                let query = secret.map { "?token=\($0)" } ?? ""
                var line = "glint serve: http://\(shown):\(bound)/\(query) (device \(startDevice) unless a view picks one; \(maxRenders) render\(maxRenders == 1 ? "" : "s") at once, queue \(queue); Ctrl-C stops)"
                if !loopback {
                    line += "\nwarning: listening on \(host): anyone who can reach this machine can reach the server; every request needs the token in the address above"
                }
                // Straight to the descriptor: a script waiting for the address reads it at once.
                let text = Array((line + "\n").utf8)
                _ = text.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            })
        // On SIGINT or SIGTERM the server stops taking connections and waits for those open:
        // the renders in flight are cancelled and every page's connection closed, so it ends
        // at once; if something still holds on after 10 s, the folder goes and the process ends.
        let watchers = [Int32(SIGINT), Int32(SIGTERM)].map { (sig: Int32) -> any DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                for close in context.sessions.withLock({ Array($0.values) }) { close() }
                context.videos.cancelAll()
                Task { await context.gate.cancelAll() }
                DispatchQueue.global().asyncAfter(deadline: .now() + 10) {
                    workers.stopAll()
                    FileIO.removeTree(folder)
                    let text = Array("glint serve: stopped (connections still open after 10 s)\n".utf8)
                    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
                    Glibc.exit(0)
                }
            }
            source.resume()
            return source
        }
        defer { for w in watchers { w.cancel() } }
        do {
            try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch let error as IOError {
            // The system's words for the failed call (bind's "Cannot assign requested address"
            // for an address this machine does not have), not the library's.
            let hint = error.errnoCode == EADDRNOTAVAIL ? " (is it an address of this machine?)" : ""
            throw GlintError("cannot serve on \(host):\(port): \(String(cString: strerror(error.errnoCode)))\(hint)")
        } catch {
            throw GlintError("cannot serve on \(host):\(port): \(error)")
        }
        print("glint serve: stopped")
    }
}

extension Serve {
    /// A server's temporary folder is `glint-serve-HOST-PID-XXXXXX` in $TMPDIR (else /tmp).
    static var folderPrefix: String { "glint-serve-\(StagedFolder.host)-" }

    /// Removes the temporary folders of servers on this machine that ended without removing
    /// theirs (killed, or crashed): those whose pid is no process. A live server's, and another
    /// machine's in a shared $TMPDIR, are left alone.
    static func removeAbandonedFolders() {
        let base = FileIO.environment("TMPDIR").map { $0.isEmpty ? "/tmp" : $0 } ?? "/tmp"
        for name in (try? FileIO.folderEntries(base)) ?? [] where name.hasPrefix(folderPrefix) {
            let parts = name.dropFirst(folderPrefix.count).split(separator: "-")
            guard parts.count == 2, let pid = Int32(parts[0]), pid > 0, pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { FileIO.removeTree(base + "/" + name) }
        }
    }
}

/// The whole server of `glint serve` for `context`: the router (the page, `/static`, the `/api`
/// group), the access checks of `access`, the error middleware and the WebSocket `/ws`, without
/// binding a port or reading argv, so that tests can drive it in process (`app.test(.router)`,
/// Tests/ServeTests). `serve()` runs exactly this application.
func buildApplication(context: ServeContext, access: ServeAccess = ServeAccess(bind: "127.0.0.1"),
                      configuration: ApplicationConfiguration, logger: Logger? = nil,
                      onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }) -> some ApplicationProtocol {
    let logger = logger ?? {
        var l = Logger(label: "glint-serve")
        l.logLevel = context.verbose ? .info : .error
        return l
    }()
    let router = Router()
    router.middlewares.add(ServeAccessMiddleware(access: access))
    router.middlewares.add(ServeErrorMiddleware(verbose: context.verbose))
    ServeRoutes(context: context).add(to: router)

    // An upgrade the checks refuse never reaches `wsRouter` (see `UpgradeScreen`); its own
    // checks set the token's cookie, and stand in case the screen is ever bypassed.
    let wsRouter = Router(context: BasicWebSocketRequestContext.self)
    wsRouter.middlewares.add(ServeAccessMiddleware(access: access))
    wsRouter.ws("/ws") { _, _ in .upgrade([:]) } onUpgrade: { inbound, outbound, _ in
        await ServeSession(context: context).run(inbound: inbound, outbound: outbound)
    }
    let wsResponder = wsRouter.buildResponder()
    // A browser sends a camera frame as one WebSocket frame: frames up to --max-body are taken,
    // and those up to a MiB past it still reach the session, which answers with the limit in
    // JSON; only larger ones close the connection (1009) unread.
    // idleTimeout closes a connection with no request in progress after that long: between
    // requests, and while a request's head is still arriving (a half-sent request).
    let wsConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
        http1: .init(idleTimeout: .seconds(Int64(context.idleSeconds))),
        ws: .init(maxFrameSize: context.maxBody + (1 << 20), closeTimeout: .seconds(2)))
    return Application(
        router: router,
        server: HTTPServerBuilder { responder in
            ScreenedUpgradeChannel(inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: wsResponder,
                                                                       configuration: wsConfiguration),
                                   access: access, connections: context.connections, headSeconds: context.idleSeconds)
        },
        configuration: configuration,
        onServerRunning: onServerRunning,
        logger: logger)
}

/// Every error answered as JSON with one clear line; a request the router does not know is a 404.
struct ServeErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let verbose: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let e as ServeError {
            return ServeRoutes.error(e)
        } catch let e as HTTPError {
            let status = Int(e.status.code)
            let message: String = switch status {
            case 404: "no such page or API: \(request.method) \(JSON.printable(request.uri.path, limit: 80)) (see docs/SERVE.md)"
            case 405: "\(request.method) is not allowed on \(JSON.printable(request.uri.path, limit: 80))"
            case 413: "the body is over the server's limit (--max-body)"
            default: e.body ?? e.status.reasonPhrase
            }
            return ServeRoutes.error(ServeError(status: status, message: message))
        } catch {
            return ServeRoutes.error(ServeError.from(error, preparing: false))
        }
    }
}
#endif
