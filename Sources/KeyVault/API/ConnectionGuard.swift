import Foundation
import Logging
import NIOCore
import NIOHTTP1
import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

/// Thrown into a request whose body had not arrived by its deadline, so it
/// fails before it acts.
struct RequestDeadlineExceeded: Error {
    let seconds: Int
}

/// The bounds of a connection, enforced between the HTTP parser and
/// Hummingbird: the connection limit, a deadline for each request (head and
/// body), HTTP/1.0 and `Connection: close` honoured, protocol errors answered
/// `invalid` in the contract's shape, and the connection's held requests ended
/// when the client goes away. `HTTPExchange` decides; this performs.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    struct Settings: Sendable {
        var requestTimeout: TimeAmount
        var limiter: ConnectionLimiter
        var logger: Logger
    }

    let connection: Connection
    private let settings: Settings
    private let admission: ConnectionLimiter.Admission
    private var admitted: Bool { admission == .admitted }
    private var exchange: HTTPExchange
    private var deadline: Scheduled<Void>?
    private var context: ChannelHandlerContext?
    private var busy = false
    private var version: HTTPVersion = .http1_1

    init(connection: Connection, admission: ConnectionLimiter.Admission, settings: Settings) {
        self.connection = connection
        self.settings = settings
        self.admission = admission
        self.exchange = HTTPExchange(refused: admission != .admitted)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // A refused connection has the request deadline to send the request it is refused with.
        if !admitted { startDeadline() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopDeadline()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopDeadline()
        connection.close(.gone)
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case ChannelEvent.inputClosed:
            // The client closed its side: nothing it holds is waited for any longer. A client that
            // closed the whole connection shows as a hang-up, which NIO answers with this event and
            // then, in the same turn of the loop, by closing the channel; what it holds then ends
            // `.gone` and is not answered. Only a client that may still read gets `.halfClosed`.
            let connection = self.connection
            context.eventLoop.execute { connection.close(.halfClosed) }
        case is ChannelShouldQuiesceEvent:
            // The daemon is stopping: a waiting read answers now, an event stream ends.
            connection.close(.stopping)
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// From `RequestByteWatch`, before the parser sees the bytes.
    func bytesArrived() {
        if exchange.bytesArrived() { startDeadline() }
        updateBusy()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            switch exchange.headArrived(.init(version: head.version, keepAlive: head.isKeepAlive)) {
            case .pass(let start):
                version = head.version
                if start { startDeadline() }
                updateBusy()
                context.fireChannelRead(data)
            case .drop:
                break
            case .refuse:
                version = head.version
                stopDeadline()
                if admission == .unentitled {
                    let who = connection.peer.map { "uid \($0.uid)" } ?? "a caller whose credentials cannot be read"
                    answer(context, status: .forbidden, Refusal(.forbidden, "\(who) may do nothing under this daemon's policy"))
                } else {
                    let refusal = Refusal(.error, "too many connections: this daemon serves at most \(settings.limiter.limit) at once; try again shortly")
                    answer(context, status: .serviceUnavailable, refusal, retryAfter: 1)
                }
            }
        case .body:
            if exchange.bodyArrived() { context.fireChannelRead(data) }
        case .end:
            switch exchange.endArrived() {
            case .pass:
                stopDeadline()
                updateBusy()
                context.fireChannelRead(data)
            case .drop:
                break
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        let action = exchange.parseError()
        if action != .passOn { stopDeadline() }
        updateBusy()
        settings.logger.debug("malformed HTTP", metadata: ["error": "\(error)"])
        switch action {
        case .passOn:
            context.fireErrorCaught(error)
        case .answer:
            answer(context, status: .badRequest, Self.malformed)
        case .close:
            context.close(promise: nil)
        case .none:
            break
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            let framing = exchange.responseHead(hasContentLength: head.headers.contains(name: "content-length"), closeRequested: !head.isKeepAlive)
            head.version = framing.version
            if let value = framing.connection { head.headers.replaceOrAdd(name: "connection", value: value) }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            let action = exchange.responseEnd()
            updateBusy()
            switch action {
            case .none:
                context.write(data, promise: promise)
            case .close:
                closeAfter(context, writing: data, promise: promise)
            case .answerBadRequest:
                context.write(data, promise: promise)
                answer(context, status: .badRequest, Self.malformed)
            }
        }
    }

    static let malformed = Refusal(.invalid, "the request is not well-formed HTTP/1.1 (request line, headers, chunked body or transfer coding); the connection is closed")

    // MARK: Performing

    private func startDeadline() {
        guard let context else { return }
        deadline?.cancel()
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: settings.requestTimeout) { [self] in
            deadline = nil
            deadlinePassed()
        }
    }

    private func stopDeadline() {
        deadline?.cancel()
        deadline = nil
    }

    private func deadlinePassed() {
        guard let context else { return }
        let action = exchange.deadlinePassed()
        updateBusy()
        let seconds = Int(settings.requestTimeout.nanoseconds / 1_000_000_000)
        switch action {
        case .none:
            break
        case .failRequest:
            settings.logger.debug("request deadline passed in the body; closing")
            context.fireErrorCaught(RequestDeadlineExceeded(seconds: seconds))
            context.close(promise: nil)
        case .answer:
            settings.logger.debug("request deadline passed in the head; closing")
            answer(context, status: .badRequest, Refusal(.invalid, "the request did not arrive whole within \(seconds) s; the connection is closed"))
        case .close:
            context.close(promise: nil)
        }
    }

    private func updateBusy() {
        guard admitted, let context, exchange.isBusy != busy else { return }
        busy = exchange.isBusy
        settings.limiter.setBusy(context.channel, busy)
    }

    /// Writes a contract answer of the guard's own (the request never reached a route) and closes.
    private func answer(_ context: ChannelHandlerContext, status: HTTPResponseStatus, _ refusal: Refusal, retryAfter: Int? = nil) {
        let body = APIResponse.body(refusal)
        var headers = HTTPHeaders([("content-type", "application/json"), ("content-length", String(body.readableBytes)), ("connection", "close")])
        if let retryAfter { headers.add(name: "retry-after", value: String(retryAfter)) }
        let http10 = version.major == 1 && version.minor == 0
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: http10 ? .http1_0 : .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        closeAfter(context, writing: wrapOutboundOut(.end(nil)), promise: nil)
    }

    private func closeAfter(_ context: ChannelHandlerContext, writing data: NIOAny, promise: EventLoopPromise<Void>?) {
        let written = promise ?? context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(data, promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

/// Sits in front of the HTTP parser and tells the guard when bytes arrive,
/// so a request's deadline starts at its first byte, not at its parsed head.
final class RequestByteWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let guardHandler: ConnectionGuard

    init(_ guardHandler: ConnectionGuard) {
        self.guardHandler = guardHandler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guardHandler.bytesArrived()
        context.fireChannelRead(data)
    }
}
