import NIOCore
import NIOHTTPTypes

/// A whole request (head and body) must arrive within `limit` of its first
/// byte, or the connection is closed before any route acts on it. The idle
/// timeout alone does not bound a client that trickles a byte at a time:
/// every byte resets it. A held read is not affected: its request has
/// arrived whole, and only the answer waits.
final class RequestDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limit: TimeAmount
    private var context: ChannelHandlerContext?
    private var deadline: Scheduled<Void>?
    /// Between a request's first byte and its end.
    private var receiving = false

    init(limit: TimeAmount) {
        self.limit = limit
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // The bytes are watched in front of the TLS and HTTP decoders, so the clock starts at the first byte.
        try? context.pipeline.syncOperations.addHandler(ByteWatch(self), position: .first)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    fileprivate func bytesArrived() {
        guard !receiving, let context else { return }
        receiving = true
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: limit) { [self] in
            deadline = nil
            self.context?.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            receiving = false
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }
}

/// Sits first in the pipeline and tells the deadline that bytes arrived.
private final class ByteWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let deadline: RequestDeadline

    init(_ deadline: RequestDeadline) {
        self.deadline = deadline
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        deadline.bytesArrived()
        context.fireChannelRead(data)
    }
}
