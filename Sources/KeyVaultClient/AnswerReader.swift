import NIOCore
import NIOHTTP1

/// Hands an answer's parts to the request waiting for them.
///
/// The channel reads only when a request waits (`autoRead` is off): an event
/// stream's reader sets its pace (the daemon ends a stream whose reader falls
/// behind), and a kept connection reads nothing between requests, so anything
/// arriving then is still in the socket for `DaemonConnection` to see.
final class AnswerReader: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    /// Why the connection carries nothing more.
    enum End: Error {
        case closed
        case failed(any Error)
        case timedOut(Duration)
    }

    private var context: ChannelHandlerContext?
    private var parts: [HTTPClientResponsePart] = []
    private var waiter: EventLoopPromise<[HTTPClientResponsePart]>?
    private var headDeadline: Scheduled<Void>?
    private(set) var end: End?

    /// Nothing read, awaited or ended: the connection may carry a request.
    var isIdle: Bool { parts.isEmpty && waiter == nil && end == nil }

    /// The parts read and not yet taken, else those the next read brings (at least one).
    func next(_ promise: EventLoopPromise<[HTTPClientResponsePart]>) {
        if !parts.isEmpty {
            promise.succeed(take())
        } else if let end {
            promise.fail(end)
        } else {
            waiter = promise
            context?.read()
        }
    }

    /// Ends the connection if the answer's head has not come within `limit`.
    func expectHead(within limit: Duration) {
        guard let context, end == nil else { return }
        headDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount.nanoseconds(Int64(limit / .nanoseconds(1)))) {
            self.finish(.timedOut(limit))
            context.close(promise: nil)
        }
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if case .head = part {
            headDeadline?.cancel()
            headDeadline = nil
        }
        parts.append(part)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard let waiter else { return }
        if parts.isEmpty {
            context.read()  // a part not yet whole
        } else {
            self.waiter = nil
            waiter.succeed(take())
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.closed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failed(error))
        context.close(promise: nil)
    }

    /// The first end is the one told; parts read before it are handed over first.
    private func finish(_ reason: End) {
        headDeadline?.cancel()
        headDeadline = nil
        if end == nil { end = reason }
        guard let waiter else { return }
        self.waiter = nil
        if parts.isEmpty { waiter.fail(end ?? reason) } else { waiter.succeed(take()) }
    }

    private func take() -> [HTTPClientResponsePart] {
        defer { parts.removeAll() }
        return parts
    }
}
