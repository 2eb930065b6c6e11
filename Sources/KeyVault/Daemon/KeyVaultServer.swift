package import Hummingbird
import HummingbirdCore
package import Logging
import NIOCore
import NIOHTTP1
import KeyVaultUnixSocket
package import KeyVaultEngine
import KeyVaultPolicy

/// The HTTP server over the Unix socket: Hummingbird's HTTP/1.1 with the peer
/// credentials read per connection, bounded connections, headers, bodies and
/// request time, an idle timeout, and the contract middleware in front of
/// every route.
package enum KeyVaultServer {
    package struct Options: Sendable {
        package var socketPath: String
        /// Closes connections idle between requests.
        package var idleTimeout: Duration = .seconds(30)
        /// A request must arrive whole (head and body) this long after its first byte, or the connection is closed.
        package var requestTimeout: Duration = .seconds(10)
        /// Connections served at once; see `ConnectionLimiter` for what happens past it.
        package var maxConnections = 1024
        /// A bare `GET /hello` outside the policy, for `make bench` only; the daemon never sets it.
        package var benchmarkHelloRoute = false

        package init(socketPath: String) { self.socketPath = socketPath }
    }

    package static func makeApplication(
        service: KeyVaultService, options: Options, logger: Logger,
        onRunning: @escaping @Sendable () async -> Void = {}
    ) -> some ApplicationProtocol {
        let policy = service.policy
        let limiter = ConnectionLimiter(limit: options.maxConnections, uncappedUID: UnixSocket.ownUID) { peer in policy.current.grantsAnything(to: peer) }
        // A reload ends the waiting reads and event streams the new policy no longer allows.
        service.policy.onReload { policy in limiter.recheck(policy) }

        let inProgress = RequestsInProgress()
        let router = Router(context: VaultRequestContext.self)
        router.add(middleware: ContractMiddleware(logger: logger, inProgress: inProgress))
        var audit = logger
        audit[metadataKey: "audit"] = "true"
        // This daemon's own metrics (never a process-wide registry).
        let metrics = DaemonMetrics()
        Routes.register(on: router, service: service, audit: audit, metrics: metrics)
        ServerRoutes.register(on: router, service: service, limiter: limiter, inProgress: inProgress, options: options, metrics: metrics)
        if options.benchmarkHelloRoute {
            router.get("/hello") { _, _ in "hello" }
        }
        var decoderLimits = NIOHTTPDecoderLimitConfiguration()
        decoderLimits.maxHeaderFieldSize = 16 * 1024
        decoderLimits.maxHeaderListSize = 32 * 1024
        decoderLimits.maxHeaderFieldCount = 64
        let channel = VaultHTTPChannel.Configuration(
            idleTimeout: options.idleTimeout,
            guardSettings: .init(requestTimeout: .init(options.requestTimeout), limiter: limiter, logger: logger),
            decoderLimits: decoderLimits)
        let path = options.socketPath
        return Application(
            router: router,
            server: HTTPServerBuilder { responder in VaultHTTPChannel(responder: responder, configuration: channel) },
            configuration: .init(address: .unixDomainSocket(path: path), serverName: nil),
            onServerRunning: { server in
                SocketPath.restrict(path, group: service.policy.current.socketGroup)
                do { try await AcceptOrder.install(on: server, limiter: limiter) } catch {
                    logger.warning("connections rank by when they are set up: \(error)")
                }
                await onRunning()
            },
            logger: logger)
    }
}
