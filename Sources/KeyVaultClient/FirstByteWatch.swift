import NIOCore

/// Writes the first byte of each request on its own, so the connection knows
/// for certain whether any of the request reached the socket.
///
/// A kept connection that the daemon has closed fails that byte's write
/// (`EPIPE`) with nothing sent, and the request can go on another connection.
/// Once the byte is written the daemon may act on the request, so it is not
/// sent again. Both parts leave in the same `writev`: the split costs no
/// system call.
final class FirstByteWatch: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Whether the current request's first byte is in the socket.
    private(set) var sent = false
    private var armed = false

    /// The next bytes written start a request.
    func arm() {
        sent = false
        armed = true
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard armed, case .byteBuffer(var rest) = unwrapOutboundIn(data), let first = rest.readSlice(length: 1) else {
            context.write(data, promise: promise)
            return
        }
        armed = false
        // A write's promise succeeds once the kernel took its bytes, and before any later failure is told.
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenSuccess { self.sent = true }
        context.write(wrapOutboundOut(.byteBuffer(first)), promise: written)
        context.write(wrapOutboundOut(.byteBuffer(rest)), promise: promise)
    }
}
