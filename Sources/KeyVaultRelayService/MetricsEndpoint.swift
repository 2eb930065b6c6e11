import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// `GET /metrics` and `GET /health` on a listener of their own (`--metrics-listen`),
/// plain HTTP: the scraper and the load balancer's health check sit beside the
/// relay, not on the devices' side of it, and nothing here is signed or carries an
/// account. `/health` answers what `GET /v1/health` does, so a check needs neither
/// TLS nor the devices' port.
enum MetricsEndpoint {
    static let contentType = "text/plain; version=0.0.4"

    static func application(_ listen: (host: String, port: Int), metrics: RelayMetrics, handlers: RelayHandlers,
                            logger: Logger) -> some Service {
        let router = Router(context: RelayRequestContext.self)
        router.add(middleware: RefusalMiddleware(logger: logger))
        router.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
        router.get("/health") { _, _ in try await handlers.health() }
        let host = listen.host
        return Application(
            router: router,
            configuration: .init(address: .hostname(host, port: listen.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                FileHandle.standardOutput.write(Data("metrics listening on \(host):\(port)\n".utf8))
            },
            logger: logger)
    }
}
