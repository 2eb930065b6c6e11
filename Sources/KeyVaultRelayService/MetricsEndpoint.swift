import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// `GET /metrics` on a listener of its own (`--metrics-listen`), plain HTTP:
/// the scraper sits beside the relay, not on the devices' side of it, and
/// nothing here is signed or carries an account.
enum MetricsEndpoint {
    static let contentType = "text/plain; version=0.0.4"

    static func application(_ listen: (host: String, port: Int), metrics: RelayMetrics, logger: Logger) -> some Service {
        let router = Router()
        router.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
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
