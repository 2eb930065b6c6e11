import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import KeyVaultWipedBuffers
import KeyVaultEngine
import KeyVaultPolicy

/// Hummingbird's HTTP/1 child channel with keyvaultd's guard in the pipeline:
///
///     RequestByteWatch → HTTP parser/encoder → ConnectionGuard →
///     HTTP1ToHTTPServerCodec → HTTPConnectionStateHandler (idle timeout) → Hummingbird
///
/// The pipeline is Hummingbird's own (`HTTP1Channel.setup`), with the two
/// handlers that need the HTTP/1 framing (version, keep-alive, parser errors)
/// and the raw bytes placed where they can see them.
struct VaultHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    struct Configuration: Sendable {
        var idleTimeout: Duration
        var guardSettings: ConnectionGuard.Settings
        var decoderLimits: NIOHTTPDecoderLimitConfiguration
    }

    /// A connection closed at once: the limit and the refused ones waiting are full, or it
    /// had waited longer than every idle connection and none had carried a request.
    struct Dropped: Error {}

    let responder: HTTPChannelHandler.Responder
    let configuration: Configuration

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // A setup that fails is never served: closed, so nothing it was given (a place, a waiter) is held for ever.
            do { return try setUp(channel, logger: logger) } catch {
                channel.close(promise: nil)
                throw error
            }
        }
    }

    private func setUp(_ channel: any Channel, logger: Logger) throws -> Value {
        let settings = configuration.guardSettings
        // Every buffer the connection reads into (requests carry passphrases) is zeroed when released.
        try channel.syncOptions?.setOption(ChannelOptions.allocator, value: .wiping)
        let connection = Connection()
        // Who is calling decides whether, and how, the connection is admitted.
        let peer = PeerCredentialsReader.read(channel)
        if let peer { connection.setPeer(peer) }
        let admission = settings.limiter.admit(channel, connection, peer: peer)
        switch admission {
        case .admitted:
            ConnectionDirectory.shared.register(channel, connection)
            channel.closeFuture.whenComplete { _ in
                settings.limiter.closed(channel)
                ConnectionDirectory.shared.remove(channel)
                connection.close(.gone)
            }
        case .refused:
            channel.closeFuture.whenComplete { _ in settings.limiter.refusedClosed() }
        case .unentitled:
            channel.closeFuture.whenComplete { _ in settings.limiter.unentitledClosed() }
        case .dropped:
            throw Dropped()  // closed by `setup`
        }
        let connectionGuard = ConnectionGuard(connection: connection, admission: admission, settings: settings)
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(RequestByteWatch(connectionGuard))
        try pipeline.configureHTTPServerPipeline(
            withPipeliningAssistance: false,  // NIOAsyncChannel answers requests in order
            withErrorHandling: false,  // ConnectionGuard answers protocol errors
            withOutboundHeaderValidation: false,  // Swift HTTP Types validate already
            withEncoderConfiguration: .init(),
            withDecoderLimitConfiguration: configuration.decoderLimits)
        try pipeline.addHandler(connectionGuard)
        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
        try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: configuration.idleTimeout, logger: logger))
        return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
    }

    func handle(value asyncChannel: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: asyncChannel, logger: logger)
    }
}
