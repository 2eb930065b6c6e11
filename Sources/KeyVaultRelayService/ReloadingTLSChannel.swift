import HummingbirdCore
import Logging
import NIOCore
import NIOSSL

/// Hummingbird's `TLSChannel`, except that each connection is served the
/// certificate in force when it is accepted (`ServingCertificate`), which SIGHUP
/// may have replaced since the server started.
struct ReloadingTLSChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let certificate: ServingCertificate

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: certificate.context))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Base.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
