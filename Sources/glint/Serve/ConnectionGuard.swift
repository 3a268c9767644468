#if Serve
import GlintCore
import NIOCore
import Synchronization

/// The server's open connections, counted against `limit` (--max-connections): past it a new
/// connection gets one 503 and is closed, so idle or half-sent ones can never take every file
/// descriptor and leave the server unable to answer.
final class ConnectionLimit: Sendable {
    let limit: Int
    private let open = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    var count: Int { open.load(ordering: .relaxed) }

    /// Takes a place; false (and nothing taken) when all are taken.
    func enter() -> Bool {
        if open.wrappingAdd(1, ordering: .relaxed).newValue <= limit { return true }
        open.wrappingSubtract(1, ordering: .relaxed)
        return false
    }

    func leave() { open.wrappingSubtract(1, ordering: .relaxed) }
}

/// First in every connection's pipeline: holds the connection's place in `ConnectionLimit` while
/// it is open, or answers 503 in JSON and closes it when there is none; and closes a connection
/// whose first request's head has not all arrived within `headSeconds` (later requests are
/// the HTTP handler's idle timeout's, which starts only once a first head is read).
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let limit: ConnectionLimit
    private let headSeconds: Int
    private var holding = false
    private var refused = false
    private var headTimer: Scheduled<Void>?
    /// How much of the head's end (CR LF CR LF) the bytes so far end with.
    private var matched = 0

    init(limit: ConnectionLimit, headSeconds: Int) {
        self.limit = limit
        self.headSeconds = headSeconds
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if limit.enter() {
            holding = true
            headTimer = context.eventLoop.scheduleTask(in: .seconds(Int64(headSeconds))) { context.close(promise: nil) }
            return
        }
        refused = true
        let body = JSON.errorBody(ServeError(status: 503, message: "the server has \(limit.limit) connections open, its limit (--max-connections); try again shortly")) + "\n"
        let head = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n"
            + "Retry-After: 1\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
        let answer = context.channel.allocator.buffer(string: head + body)
        // Closing with the request unread would reset the connection and lose the answer: the
        // output is shut after it, the request read and dropped, and the rest closed a moment later.
        context.writeAndFlush(wrapOutboundOut(answer)).whenComplete { _ in
            context.close(mode: .output, promise: nil)
            context.eventLoop.scheduleTask(in: .seconds(2)) { context.close(promise: nil) }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A refused connection's request is never read.
        if refused { return }
        if let timer = headTimer {
            let end: [UInt8] = [13, 10, 13, 10]
            for byte in unwrapInboundIn(data).readableBytesView {
                matched = byte == end[matched] ? matched + 1 : (byte == 13 ? 1 : 0)
                if matched == 4 {
                    timer.cancel()
                    headTimer = nil
                    break
                }
            }
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { release() }

    private func release() {
        headTimer?.cancel()
        headTimer = nil
        if holding {
            holding = false
            limit.leave()
        }
    }
}
#endif
