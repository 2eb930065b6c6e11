public import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore

/// The HTTP server over the Unix socket: Hummingbird's HTTP/1.1 with the peer
/// credentials read per connection, bounded headers and bodies, an idle
/// timeout, and the contract middleware in front of every route.
public enum KeyVaultServer {
    public struct Options: Sendable {
        public var socketPath: String
        /// Closes connections idle between requests (and clients stalled in a request head).
        public var idleTimeout: Duration = .seconds(30)
        /// A bare `GET /hello` outside the policy, for `make bench` only; the daemon never sets it.
        public var benchmarkHelloRoute = false

        public init(socketPath: String) { self.socketPath = socketPath }
    }

    public static func makeApplication(
        service: KeyVaultService, options: Options, logger: Logger,
        onRunning: @escaping @Sendable () async -> Void = {}
    ) -> some ApplicationProtocol {
        let router = Router(context: VaultRequestContext.self)
        router.add(middleware: ContractMiddleware(logger: logger))
        var audit = logger
        audit[metadataKey: "audit"] = "true"
        Routes.register(on: router, service: service, audit: audit)
        if options.benchmarkHelloRoute {
            router.get("/hello") { _, _ in "hello" }
        }
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [PeerCredentialsHandler()],
            idleTimeout: .init(options.idleTimeout),
            httpDecoderConfiguration: .init(maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 32 * 1024, maxHeaderFieldCount: 64))
        let path = options.socketPath
        return Application(
            router: router,
            server: .http1(configuration: http1),
            configuration: .init(address: .unixDomainSocket(path: path), serverName: nil),
            onServerRunning: { _ in
                SocketPath.restrict(path, group: service.policy.current.socketGroup)
                await onRunning()
            },
            logger: logger)
    }
}
