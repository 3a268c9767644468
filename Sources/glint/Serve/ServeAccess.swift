#if Serve
import GlintCore
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// Who may use the server (docs/SERVE.md, "Who may use it"). A browser runs pages of any site
/// on the user's machine; without these checks one of them could drive the server, either by
/// pointing a name of its own at this address (DNS rebinding: the browser then sends that name
/// as Host) or by sending requests to it from its own origin (cross-site requests).
struct ServeAccess: Sendable {
    /// The names a request's Host may give, lowercased, IPv6 addresses without brackets.
    let names: Set<String>
    /// Bound to every interface (0.0.0.0, ::): the machine's names cannot all be known, so the
    /// Host is not checked; the token, always required there, does that work.
    let anyName: Bool
    /// The secret every request must carry, or nil when none is asked for (loopback).
    let token: String?

    static let cookieName = "glint_token"
    static let host = HTTPField.Name("Host")!
    /// The WebSocket's path: a request for it is checked as an upgrade even when `UpgradeScreen`
    /// has taken its Upgrade header away.
    static let webSocketPath = "/ws"
    static let tokenCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
    static let tokenLength = 16...256

    init(bind: String, allowedHosts: [String] = [], token: String? = nil) {
        var names: Set<String> = ["localhost", "127.0.0.1", "::1"]
        names.insert(Self.normalized(bind))
        for name in allowedHosts { names.insert(Self.normalized(name)) }
        self.names = names
        anyName = ["0.0.0.0", "::"].contains(bind)
        self.token = token
    }

    /// Whether `host` reaches only this machine: 127.0.0.0/8, ::1, localhost.
    static func isLoopback(_ host: String) -> Bool {
        let h = normalized(host)
        return h == "localhost" || h == "::1" || isLoopbackIPv4(h)
    }

    static func isLoopbackIPv4(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { p in p.count <= 3 && UInt8(p) != nil }
    }

    /// A fresh token: 128 random bits from the system's generator, in hex.
    static func generatedToken() -> String {
        var rng = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for _ in 0..<16 {
            let b = UInt8.random(in: .min ... .max, using: &rng)
            out += [digits[Int(b >> 4)], digits[Int(b & 15)]]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Why `token` cannot be a --token, or nil when it can. The token itself is never repeated:
    /// it is a secret, and the message may end up in a log.
    static func tokenProblem(_ token: String) -> String? {
        let n = token.utf8.count
        guard tokenLength.contains(n) && token.utf8.allSatisfy(tokenCharacters.contains) else {
            let what = tokenLength.contains(n) ? "other characters" : "\(n) character\(n == 1 ? "" : "s")"
            return "--token must be \(tokenLength.lowerBound) to \(tokenLength.upperBound) letters, digits or - . _ ~ (got \(what)); "
                + "leave it out and glint serve makes one"
        }
        return nil
    }

    /// A name in the form the checks compare: lowercased, without IPv6 brackets or a final dot.
    static func normalized(_ name: String) -> String {
        var n = name.lowercased()
        if n.hasPrefix("[") && n.hasSuffix("]") { n = String(n.dropFirst().dropLast()) }
        if n.hasSuffix(".") && n.count > 1 { n.removeLast() }
        return n
    }

    /// An authority `host[:port]` (IPv6 in brackets) split in two; nil when it is not one.
    static func splitAuthority(_ authority: Substring) -> (host: String, port: Int?)? {
        var host: Substring, rest: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            rest = authority[authority.index(after: close)...]
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            rest = authority[colon...]
        } else {
            host = authority
            rest = ""
        }
        var port: Int?
        if !rest.isEmpty {
            let digits = rest.dropFirst()
            guard rest.first == ":", (1...5).contains(digits.count), digits.allSatisfy({ ("0"..."9").contains($0) }),
                  let p = Int(digits), p <= 65535 else { return nil }
            port = p
        }
        guard !host.isEmpty, !host.contains(where: { $0 == "/" || $0 == "@" || $0.isWhitespace }) else { return nil }
        return (normalized(String(host)), port)
    }

    /// What became of a request: refused with an error, or let through (and then whether the
    /// response sets the token's cookie).
    enum Verdict {
        case refused(ServeError)
        case allowed(setCookie: Bool)
    }

    /// What the checks read of a request: the same from the router's `Request` and from the
    /// HTTP/1 head the WebSocket upgrade sees (`UpgradeScreen`).
    struct Asked {
        var method: String
        /// Every Host header's value (HTTP/1's authority is the first).
        var hosts: [String]
        /// The path and query.
        var target: String
        /// A WebSocket upgrade (or a request for the WebSocket's path): checked like a change.
        var upgrade: Bool
        /// The other header fields, names lowercased.
        var fields: [(name: String, value: String)]

        func field(_ name: String) -> String? { fields.first { $0.name == name }?.value }
    }

    /// The checks, in order: the Host names this server (421); a WebSocket upgrade or a change
    /// (POST, PUT, PATCH, DELETE) comes from a page of this server or from no page (403); the
    /// token, when the server has one (401).
    func verdict(_ asked: Asked) -> Verdict {
        guard let authority = asked.hosts.first else {
            return .refused(ServeError(status: 421, message: "the request has no Host header: refused (a name this server answers to is required)"))
        }
        guard asked.hosts.count == 1 else {
            return .refused(ServeError(status: 421, message: "the request has more than one Host header: refused"))
        }
        guard let host = Self.splitAuthority(authority[...]) else {
            return .refused(ServeError(status: 421, message: "the Host header \(JSON.quotedForMessage(authority, limit: 60)) is not a host name and port"))
        }
        if !anyName && !names.contains(host.host) && !Self.isLoopbackIPv4(host.host) {
            return .refused(ServeError(status: 421, message:
                "this server does not answer to the name \(JSON.quotedForMessage(host.host, limit: 60)) (a page of another site may have "
                + "pointed that name at it); serve under that name with --allow-host \(JSON.printable(host.host, limit: 60))"))
        }

        if asked.upgrade || ["POST", "PUT", "PATCH", "DELETE"].contains(asked.method) {
            if let origin = asked.field("origin"), !sameOrigin(origin, host: host) {
                return .refused(ServeError(status: 403, message:
                    "a page of \(JSON.quotedForMessage(origin, limit: 80)) may not use this server (only its own page may): refused"))
            }
            if asked.field("sec-fetch-site")?.lowercased() == "cross-site" {
                return .refused(ServeError(status: 403, message: "a request sent by a page of another site may not use this server: refused"))
            }
        }

        guard let token else { return .allowed(setCookie: false) }
        let query = URI(asked.target).queryParameters.get("token")
        var given: [String] = query.map { [$0] } ?? []
        for (name, value) in asked.fields {
            if name == "authorization" && value.lowercased().hasPrefix("bearer ") { given.append(value.dropFirst(7).trimmingCharacters()) }
            if name == "cookie" { given += Self.cookies(value, named: Self.cookieName) }
        }
        guard !given.isEmpty else {
            return .refused(ServeError(status: 401, message:
                "this server needs its token: open the address glint serve printed (…/?token=…) or send Authorization: Bearer TOKEN"))
        }
        // Every candidate is compared in full, so the time taken says nothing about the token.
        var matched = false
        for candidate in given { matched = Self.sameSecret(candidate, token) || matched }
        guard matched else {
            return .refused(ServeError(status: 401, message: "the token does not match this server's (glint serve printed it in its address at start-up)"))
        }
        return .allowed(setCookie: query.map { Self.sameSecret($0, token) } ?? false)
    }

    /// Whether `origin` (scheme://host[:port]) is the page origin of the request's `host`:
    /// the same name and the same port, a missing port meaning the scheme's own.
    func sameOrigin(_ origin: String, host: (host: String, port: Int?)) -> Bool {
        let lower = origin.lowercased()
        let scheme: String, defaultPort: Int
        if lower.hasPrefix("http://") { (scheme, defaultPort) = ("http://", 80) }
        else if lower.hasPrefix("https://") { (scheme, defaultPort) = ("https://", 443) }
        else { return false }
        guard let o = Self.splitAuthority(lower.dropFirst(scheme.count)) else { return false }
        return o.host == host.host && (o.port ?? defaultPort) == (host.port ?? defaultPort)
    }

    /// The values of the cookies called `name` in a Cookie header (a browser may send more than one).
    static func cookies(_ header: String, named name: String) -> [String] {
        header.split(separator: ";").compactMap { pair in
            let p = pair.drop { $0 == " " }
            return p.hasPrefix(name + "=") ? String(p.dropFirst(name.count + 1)) : nil
        }
    }

    /// `given == secret`, in a time that depends on the secret's length only.
    static func sameSecret(_ given: String, _ secret: String) -> Bool {
        let g = Array(given.utf8), s = Array(secret.utf8)
        var difference: UInt8 = g.count == s.count ? 0 : 1
        for i in 0..<s.count { difference |= (i < g.count ? g[i] : 0) ^ s[i] }
        return difference == 0
    }

    /// The cookie that keeps the page of the printed address working: its own requests and its
    /// WebSocket carry it, and no other site's page can make the browser send it (SameSite=Strict).
    var cookie: String? {
        token.map { "\(Self.cookieName)=\($0); Path=/; HttpOnly; SameSite=Strict" }
    }
}

/// The checks of `ServeAccess` before anything else of a request (HTTP or WebSocket upgrade):
/// a refusal is the server's one-line JSON error.
struct ServeAccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let access: ServeAccess

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let head = request.head
        // HTTP/1's first Host is the request's authority; any other stays among the fields.
        let asked = ServeAccess.Asked(
            method: head.method.rawValue, hosts: [head.authority].compactMap { $0 } + request.headers[values: ServeAccess.host],
            target: head.path ?? "/",
            upgrade: request.headers[.upgrade] != nil || request.uri.path == ServeAccess.webSocketPath,
            fields: request.headers.filter { $0.name != ServeAccess.host }.map { ($0.name.canonicalName, $0.value) })
        switch access.verdict(asked) {
        case .refused(let e):
            return ServeRoutes.error(e)
        case .allowed(let setCookie):
            var response = try await next(request, context)
            if setCookie, let cookie = access.cookie { response.headers.append(HTTPField(name: .setCookie, value: cookie)) }
            return response
        }
    }
}

/// Sees a connection's first request before the WebSocket upgrade does. An upgrade the checks
/// refuse loses its Upgrade header and goes on as a plain request, which the router's checks
/// answer with their JSON error; a refused upgrade attempt would be an empty 400. Only a first
/// request can upgrade, so the screen then leaves the pipeline (and never sees WebSocket frames).
final class UpgradeScreen: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    let access: ServeAccess

    init(access: ServeAccess) { self.access = access }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(var head) = unwrapInboundIn(data), head.headers.contains(name: "Upgrade") {
            let asked = ServeAccess.Asked(
                method: head.method.rawValue, hosts: head.headers["Host"], target: head.uri, upgrade: true,
                fields: head.headers.filter { $0.name.lowercased() != "host" }.map { ($0.name.lowercased(), $0.value) })
            if case .refused = access.verdict(asked) {
                head.headers.remove(name: "Upgrade")
                context.fireChannelRead(wrapInboundOut(.head(head)))
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            }
        }
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

/// The HTTP/1 server with its WebSocket upgrade (`HTTP1WebSocketUpgradeChannel`), with the
/// `UpgradeScreen` put in front of the upgrade.
struct ScreenedUpgradeChannel: ServerChildChannel {
    let inner: HTTP1WebSocketUpgradeChannel
    let access: ServeAccess
    let connections: ConnectionLimit
    let headSeconds: Int

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1WebSocketUpgradeChannel.Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { [access, connections, headSeconds] value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(UpgradeScreen(access: access), position: .after(decoder))
            try pipeline.addHandler(ConnectionGuard(limit: connections, headSeconds: headSeconds), position: .first)
            return value
        }
    }

    func handle(value: HTTP1WebSocketUpgradeChannel.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
#endif
