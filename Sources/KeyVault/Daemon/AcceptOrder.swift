import NIOCore
import KeyVaultEngine
import KeyVaultPolicy

/// On the server channel, ahead of NIO's accept handler: tells the limiter
/// each connection as it is accepted, so connections are ranked by when they
/// were accepted, not by when their own event loop gets to set them up.
final class AcceptOrder: ChannelInboundHandler, Sendable {
    typealias InboundIn = any Channel

    private let limiter: ConnectionLimiter

    init(limiter: ConnectionLimiter) { self.limiter = limiter }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        limiter.accepted(unwrapInboundIn(data))
        context.fireChannelRead(data)
    }

    /// Placed first in the server channel's pipeline. Connections accepted before it is in
    /// place (as the server starts) rank by when they are set up.
    static func install(on server: any Channel, limiter: ConnectionLimiter) async throws {
        try await server.pipeline.addHandler(AcceptOrder(limiter: limiter), position: .first)
    }
}
