// Who may use `glint serve` (ServeAccess, docs/SERVE.md "Who may use it"): a request whose Host
// is not one of the server's names, as a DNS-rebinding page sends it, is refused (421); a
// WebSocket upgrade or a change sent by another origin's page is refused (403); with a token,
// a request without it is refused (401), and `?token=` sets the cookie that keeps the page
// working. The Host and upgrade cases run over a real socket (the router client always names
// localhost, and an upgrade is only made by the server), with the request's bytes as written.
#if Serve
import Dispatch
import Glibc
import GlintCore
import GlintWorkloads
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
@testable import glint

/// An answer read off a socket: the status, the headers (names lowercased) and the body.
struct RawAnswer: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// One HTTP/1.1 exchange on a fresh connection to the loopback port `port`, the request sent
/// byte for byte as given. Blocking socket calls, so they run on a Dispatch queue.
enum RawHTTP {
    static func exchange(port: Int, _ request: String) async throws -> RawAnswer {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try blockingExchange(port: port, Array(request.utf8)) })
            }
        }
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// A connected socket to 127.0.0.1, else ::1 (the test server binds "localhost").
    static func connectLoopback(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        let r = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        if r == 0 { return fd }
        close(fd)
        let fd6 = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        var a6 = sockaddr_in6()
        a6.sin6_family = sa_family_t(AF_INET6)
        a6.sin6_port = in_port_t(UInt16(port).bigEndian)
        a6.sin6_addr = in6addr_loopback
        let r6 = withUnsafePointer(to: &a6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd6, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        if r6 == 0 { return fd6 }
        close(fd6)
        throw Failure(description: "cannot connect to port \(port) on 127.0.0.1 or ::1")
    }

    static func blockingExchange(port: Int, _ request: [UInt8]) throws -> RawAnswer {
        let fd = try connectLoopback(port: port)
        defer { close(fd) }
        var limit = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send failed") }
            sent += n
        }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        func more() throws -> Bool {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 { throw Failure(description: "no answer within 30 s (got \(String(decoding: data, as: UTF8.self).prefix(200)))") }
            data += chunk[0..<n]
            return n > 0
        }
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            guard try more() else { throw Failure(description: "the connection closed before the headers") }
            if data.count >= 4 { headEnd = (0...(data.count - 4)).first { Array(data[$0..<$0 + 4]) == end } }
        }
        let lines = String(decoding: data[..<headEnd!], as: UTF8.self).split(separator: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure(description: "no status line: \(lines.first ?? "")") }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters()))
        }
        var body = Array(data[(headEnd! + 4)...])
        // A switch of protocols has no body to read; anything else here says its length.
        if status != 101, let length = headers.first(where: { $0.name == "content-length" }).flatMap({ Int($0.value) }) {
            while body.count < length {
                let before = data.count
                guard try more() else { break }
                body += data[before...]
            }
        }
        return RawAnswer(status: status, headers: headers, body: body)
    }
}

@Suite struct ServeAccessTests {
    static let secret = "0123456789abcdef0123456789abcdef"

    /// The application with `access` on a real port (HummingbirdTesting's live server, bound to
    /// localhost), handed the port.
    func withLiveApp(_ access: ServeAccess, _ body: @Sendable (Int) async throws -> Void) async throws {
        let folder = try FileIO.makeTemporaryFolder(prefix: "glint-serve-access")
        defer { FileIO.removeTree(folder) }
        let context = try ServeContext(device: "cpu", slots: 2, queue: 4, renderTimeout: 60, maxPixels: 1 << 20,
                                       maxBody: 1 << 20, folder: folder, verbose: false)
        let app = buildApplication(context: context, access: access, configuration: ApplicationConfiguration(serverName: "glint"))
        try await app.test(.live) { client in try await body(try #require(client.port)) }
    }

    /// The application with `access`, driven by the router client (every request names localhost).
    func withApp(_ access: ServeAccess, _ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let folder = try FileIO.makeTemporaryFolder(prefix: "glint-serve-access")
        defer { FileIO.removeTree(folder) }
        let context = try ServeContext(device: "cpu", slots: 2, queue: 4, renderTimeout: 60, maxPixels: 1 << 20,
                                       maxBody: 1 << 20, folder: folder, verbose: false)
        let app = buildApplication(context: context, access: access, configuration: ApplicationConfiguration(serverName: "glint"))
        try await app.test(.router) { client in try await body(client) }
    }

    /// A request's bytes: `host` nil sends no Host header at all.
    static func request(_ method: String, _ path: String, host: String?, _ headers: [String] = [], body: String? = nil) -> String {
        var text = "\(method) \(path) HTTP/1.1\r\n"
        if let host { text += "Host: \(host)\r\n" }
        for h in headers { text += h + "\r\n" }
        if let body { text += "Content-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n" }
        // An upgrade keeps its connection; every other exchange ends with its answer.
        if !headers.contains(where: { $0.hasPrefix("Upgrade:") }) { text += "Connection: close\r\n" }
        return text + "\r\n" + (body ?? "")
    }

    static let upgrade = ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                          "Sec-WebSocket-Version: 13"]

    /// A job the server answers without rendering (its location text).
    static let job = #"{"workload": "fractal", "args": ["mandelbrot", "--zoom", "10"]}"#

    /// An error answer off the socket: the status and a one-line JSON error naming `fragment`.
    static func expectRefused(_ a: RawAnswer, _ status: Int, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.status == status, "\(a.status): \(a.text)", sourceLocation: sourceLocation)
        #expect(a.header("content-type") == "application/json", sourceLocation: sourceLocation)
        let doc = try? JSON.parse(a.text)
        let message = doc?["error"]?.stringValue ?? ""
        #expect(message.contains(fragment) && !message.contains("\n"), "\(a.text)", sourceLocation: sourceLocation)
        #expect(doc?["status"]?.intValue == Int64(status), "\(a.text)", sourceLocation: sourceLocation)
    }

    /// A Host that is not one of the server's names: GET, POST and the WebSocket upgrade are
    /// refused, the DNS-rebinding shape included (the attacker's name with this port, no Origin,
    /// a text/plain body needing no preflight); the server's own names are served.
    @Test func foreignHostIsRefused() async throws {
        try await withLiveApp(ServeAccess(bind: "127.0.0.1")) { port in
            for (method, path, body) in [("GET", "/api/info", nil), ("GET", "/", nil), ("POST", "/api/location", Self.job)] {
                for host in ["evil.example", "evil.example:\(port)", "127.0.0.1.evil.example:\(port)", "localhost.evil.example"] {
                    let a = try await RawHTTP.exchange(port: port, Self.request(method, path, host: host, body: body))
                    Self.expectRefused(a, 421, "does not answer to the name")
                }
            }
            let upgrade = try await RawHTTP.exchange(port: port, Self.request("GET", "/ws", host: "evil.example:\(port)", Self.upgrade))
            Self.expectRefused(upgrade, 421, "does not answer to the name")
            let none = try await RawHTTP.exchange(port: port, Self.request("GET", "/api/info", host: nil))
            Self.expectRefused(none, 421, "no Host header")
            let two = try await RawHTTP.exchange(port: port, Self.request("GET", "/api/info", host: "127.0.0.1:\(port)", ["Host: evil.example"]))
            Self.expectRefused(two, 421, "more than one Host header")
            for host in ["127.0.0.1:\(port)", "localhost:\(port)", "LocalHost", "[::1]:\(port)", "127.0.0.2:\(port)"] {
                let a = try await RawHTTP.exchange(port: port, Self.request("GET", "/api/info", host: host))
                #expect(a.status == 200, "\(host): \(a.status) \(a.text)")
            }
            let post = try await RawHTTP.exchange(port: port, Self.request("POST", "/api/location", host: "127.0.0.1:\(port)", body: Self.job))
            #expect(post.status == 200 && post.text.contains("Zoom:"), "\(post.status) \(post.text)")
        }
    }

    /// The WebSocket upgrade: refused from another origin's page (another site, or another port
    /// of this machine), made from the server's own page or from no page at all.
    @Test func upgradeFromAnotherOriginIsRefused() async throws {
        try await withLiveApp(ServeAccess(bind: "127.0.0.1")) { port in
            let host = "127.0.0.1:\(port)"
            for origin in ["http://evil.example", "http://evil.example:\(port)", "http://127.0.0.1:\(port == 9 ? 10 : 9)",
                           "null", "file://"] {
                let a = try await RawHTTP.exchange(port: port, Self.request("GET", "/ws", host: host, Self.upgrade + ["Origin: \(origin)"]))
                Self.expectRefused(a, 403, "may not use this server")
            }
            let crossSite = try await RawHTTP.exchange(port: port, Self.request("GET", "/ws", host: host,
                                                                               Self.upgrade + ["Sec-Fetch-Site: cross-site"]))
            Self.expectRefused(crossSite, 403, "another site")
            for extra in [["Origin: http://127.0.0.1:\(port)"], [], ["Origin: http://127.0.0.1:\(port)", "Sec-Fetch-Site: same-origin"]] {
                let a = try await RawHTTP.exchange(port: port, Self.request("GET", "/ws", host: host, Self.upgrade + extra))
                #expect(a.status == 101, "\(extra): \(a.status) \(a.text)")
            }
        }
    }

    /// --allow-host: the name is served, its own page may upgrade; other names are still refused.
    @Test func allowedHostIsServed() async throws {
        try await withLiveApp(ServeAccess(bind: "127.0.0.1", allowedHosts: ["Glint.Test"])) { port in
            let a = try await RawHTTP.exchange(port: port, Self.request("GET", "/api/info", host: "glint.test:\(port)"))
            #expect(a.status == 200, "\(a.status) \(a.text)")
            let ws = try await RawHTTP.exchange(port: port, Self.request("GET", "/ws", host: "glint.test:\(port)",
                                                                        Self.upgrade + ["Origin: http://glint.test:\(port)"]))
            #expect(ws.status == 101, "\(ws.status) \(ws.text)")
            let other = try await RawHTTP.exchange(port: port, Self.request("GET", "/api/info", host: "other.test:\(port)"))
            Self.expectRefused(other, 421, "--allow-host other.test")
        }
    }

    /// Changes (POST, PUT, PATCH, DELETE) sent by another origin's page are refused; the same
    /// origin and no Origin at all are served; reads are served whatever their Origin.
    @Test func changesFromAnotherOriginAreRefused() async throws {
        try await withApp(ServeAccess(bind: "127.0.0.1")) { client in
            for method in [HTTPRequest.Method.post, .put, .patch, .delete] {
                for origin in ["http://evil.example", "http://localhost:9", "null"] {
                    try await client.execute(uri: "/api/location", method: method, headers: [.origin: origin],
                                             body: ByteBuffer(string: Self.job)) { response in
                        ServeAppTests.expectError(response, 403, "may not use this server")
                    }
                }
                try await client.execute(uri: "/api/location", method: method, headers: [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"],
                                         body: ByteBuffer(string: Self.job)) { response in
                    ServeAppTests.expectError(response, 403, "another site")
                }
            }
            for headers: HTTPFields in [[:], [.origin: "http://localhost"], [.origin: "http://LOCALHOST:80"],
                                        [.origin: "http://localhost", HTTPField.Name("Sec-Fetch-Site")!: "same-origin"]] {
                try await client.execute(uri: "/api/location", method: .post, headers: headers, body: ByteBuffer(string: Self.job)) { response in
                    #expect(response.status == .ok, "\(headers): \(ServeAppTests.text(response))")
                }
            }
            try await client.execute(uri: "/api/info", method: .get, headers: [.origin: "http://evil.example"]) { response in
                #expect(response.status == .ok, "\(ServeAppTests.text(response))")
            }
        }
    }

    /// With a token: none or a wrong one is a 401; `?token=` is served and sets the cookie, with
    /// which the page's later requests are served; a script's Bearer header is served.
    @Test func tokenIsRequired() async throws {
        try await withApp(ServeAccess(bind: "0.0.0.0", token: Self.secret)) { client in
            for uri in ["/", "/static/main.js", "/api/info"] {
                try await client.execute(uri: uri, method: .get) { response in
                    ServeAppTests.expectError(response, 401, "needs its token")
                    #expect(response.headers[.wwwAuthenticate] == "Bearer")
                    #expect(response.headers[.setCookie] == nil)
                }
            }
            let wrong = String(Self.secret.dropLast()) + "0"
            for headers: HTTPFields in [[.authorization: "Bearer \(wrong)"], [.cookie: "glint_token=\(wrong)"], [.authorization: "Bearer"],
                                        [.authorization: "Basic \(Self.secret)"], [.cookie: "other=\(Self.secret)"]] {
                try await client.execute(uri: "/api/info", method: .get, headers: headers) { response in
                    #expect(response.status == .unauthorized, "\(headers): \(ServeAppTests.text(response))")
                }
            }
            for uri in ["/api/info?token=\(wrong)", "/api/info?token=\(Self.secret.prefix(16))", "/api/info?token=\(Self.secret)0"] {
                try await client.execute(uri: uri, method: .get) { response in
                    ServeAppTests.expectError(response, 401, "does not match")
                }
            }
            var cookie = ""
            try await client.execute(uri: "/?token=\(Self.secret)", method: .get) { response in
                #expect(response.status == .ok, "\(ServeAppTests.text(response))")
                cookie = response.headers[.setCookie] ?? ""
            }
            #expect(cookie.hasPrefix("glint_token=\(Self.secret);"), "\(cookie)")
            for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
                #expect(cookie.split(separator: ";").map { $0.drop { $0 == " " } }.contains(attribute[...]), "\(cookie)")
            }
            let pair = String(cookie.split(separator: ";")[0])
            for headers: HTTPFields in [[.cookie: pair], [.cookie: "theme=dark; \(pair)"], [.authorization: "Bearer \(Self.secret)"],
                                        [.authorization: "bearer \(Self.secret)"]] {
                try await client.execute(uri: "/api/info", method: .get, headers: headers) { response in
                    #expect(response.status == .ok, "\(headers): \(ServeAppTests.text(response))")
                    #expect(response.headers[.setCookie] == nil)
                }
                try await client.execute(uri: "/api/location", method: .post, headers: headers, body: ByteBuffer(string: Self.job)) { response in
                    #expect(response.status == .ok, "\(headers): \(ServeAppTests.text(response))")
                }
            }
            // The token does not excuse another origin's page.
            try await client.execute(uri: "/api/location", method: .post, headers: [.cookie: pair, .origin: "http://evil.example"],
                                     body: ByteBuffer(string: Self.job)) { response in
                ServeAppTests.expectError(response, 403, "may not use this server")
            }
        }
    }

    /// With a token, the page's WebSocket: upgraded with the cookie or `?token=`, refused (401) without.
    @Test func upgradeNeedsTheToken() async throws {
        try await withLiveApp(ServeAccess(bind: "127.0.0.1", token: Self.secret)) { port in
            let host = "127.0.0.1:\(port)", origin = "Origin: http://127.0.0.1:\(port)"
            let none = try await RawHTTP.exchange(port: port, Self.request("GET", "/ws", host: host, Self.upgrade + [origin]))
            Self.expectRefused(none, 401, "needs its token")
            let cookie = try await RawHTTP.exchange(port: port, Self.request("GET", "/ws", host: host,
                                                                            Self.upgrade + [origin, "Cookie: glint_token=\(Self.secret)"]))
            #expect(cookie.status == 101, "\(cookie.status) \(cookie.text)")
            let query = try await RawHTTP.exchange(port: port, Self.request("GET", "/ws?token=\(Self.secret)", host: host, Self.upgrade + [origin]))
            #expect(query.status == 101, "\(query.status) \(query.text)")
        }
    }

    @Test func tokensAndNames() {
        let a = ServeAccess.generatedToken(), b = ServeAccess.generatedToken()
        #expect(a.count == 32 && a.allSatisfy(\.isHexDigit) && a != b)
        #expect(ServeAccess.tokenProblem(a) == nil)
        for bad in ["short", String(repeating: "x", count: 15), String(repeating: "x", count: 257), "0123456789abcdef 0", "0123456789abcdef;0"] {
            let problem = ServeAccess.tokenProblem(bad)
            #expect(problem?.contains("--token must be 16 to 256") == true, "\(bad)")
            #expect(problem?.contains(bad) == false, "the message repeats the token: \(problem ?? "")")
        }
        #expect(ServeAccess.sameSecret(Self.secret, Self.secret))
        #expect(!ServeAccess.sameSecret(Self.secret + "0", Self.secret) && !ServeAccess.sameSecret("", Self.secret))
        let v6 = ServeAccess.splitAuthority("[::1]:8080"), name = ServeAccess.splitAuthority("LocalHost.")
        #expect(v6?.host == "::1" && v6?.port == 8080)
        #expect(name?.host == "localhost" && name?.port == nil)
        for bad in ["", ":80", "::1", "a:b", "a:99999", "a:+80", "a b", "[::1", "x/y"] {
            #expect(ServeAccess.splitAuthority(bad[...]) == nil, "\(bad)")
        }
        for loopback in ["127.0.0.1", "127.1.2.3", "::1", "localhost", "[::1]"] { #expect(ServeAccess.isLoopback(loopback), "\(loopback)") }
        for other in ["0.0.0.0", "::", "10.0.0.1", "127.0.0.1.evil.example", "128.0.0.1"] { #expect(!ServeAccess.isLoopback(other), "\(other)") }
    }
}
#endif
