import Foundation
package import Logging
import Hummingbird
import HummingbirdCore
import NIOCore
import ServiceLifecycle
import UnixSignals
import KeyVaultRelay
import KeyVaultRelayStore
import KeyVaultProtocol

/// `keyvault-relay`'s whole process: open the store, serve until SIGTERM,
/// drain, close the store.
package struct RelayServer: Sendable {
    package struct Configuration: Sendable {
        package var store: String
        package var host: String
        package var port: Int
        /// PEM certificate chain and key; nil with `--plain-http`.
        package var tls: (certificate: String, key: String)?
        package var issuer: String
        package var audience: String
        /// The issuer's JWKS: a file, or an https:// URL (http:// from this machine only).
        package var jwks: String
        /// How long a whole request (head and body) may take to arrive, from its first byte.
        package var requestTimeout: Duration = .seconds(10)
        /// A key set from a URL is fetched again, for a token naming a key it lacks, at most this often.
        package var jwksRefetchInterval: Duration = .seconds(60)
        /// Where `GET /metrics` is served (plain HTTP, its own listener); nil: nowhere.
        package var metricsListen: (host: String, port: Int)?
        /// Peers (CIDR blocks) whose connections start with a PROXY protocol version 2 header naming
        /// the client (a load balancer or TLS terminator); empty: no header is parsed from anyone.
        package var proxyProtocolFrom: [String] = []
        /// A store whose schema is behind this build's is migrated (`--migrate`), not refused.
        /// An empty store's schema is made either way.
        package var migrate = false

        package init(store: String, host: String, port: Int, tls: (certificate: String, key: String)?,
                    issuer: String, audience: String, jwks: String) {
            self.store = store
            self.host = host
            self.port = port
            self.tls = tls
            self.issuer = issuer
            self.audience = audience
            self.jwks = jwks
        }
    }

    package struct StartError: Error, CustomStringConvertible {
        package let description: String
    }

    /// The store could not be opened, or an address taken: the settings are well formed, and
    /// the world did not let them be used (exit 1, not a usage error).
    package struct RunError: Error, CustomStringConvertible {
        package let description: String
    }

    package let configuration: Configuration
    package let logger: Logger
    /// This server's own registry: never the process-wide one, so servers side by side keep theirs apart.
    package let metrics = RelayMetrics()

    package init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Runs until SIGTERM or SIGINT; prints `listening on HOST:PORT` to stdout once it accepts connections
    /// (and `metrics listening on HOST:PORT` once the metrics listener does). SIGHUP reloads the TLS
    /// certificate and the issuer's key set (`Reloader`).
    package func run() async throws {
        let (identity, issuerKeys) = try await loadIdentity()
        let trustedProxies = try TrustedPeers(configuration.proxyProtocolFrom)
        let certificate = try configuration.tls.map { try ServingCertificate(certificate: $0.certificate, key: $0.key) }
        let address = try Self.storeAddress(configuration.store)
        // Trapped before anything says the relay listens: from then on a SIGHUP reloads, and never kills it.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        // What an operator reads first: which build, on what, for whom. Never the store's user or password.
        logger.notice("keyvault-relay starting", metadata: [
            "version": "\(KeyVaultVersion.string)", "store": "\(Self.storeKind(address))", "storeAt": "\(Self.storeLocation(address))",
            "issuer": "\(configuration.issuer)", "audience": "\(configuration.audience)",
        ])
        let (relay, state) = try await openStore(address)
        let handlers = RelayHandlers(relay: relay, state: state, identity: identity, metrics: metrics, logger: logger)
        let router = Router(context: RelayRequestContext.self)
        router.add(middleware: RefusalMiddleware(logger: logger))
        router.get("/v1/health") { _, _ in try await handlers.health() }
        router.post("/v1/accounts/:account/candidates") { request, context in
            try await handlers.candidacy(request, account: try context.parameters.require("account"))
        }
        router.post("/v1/accounts/:account/records") { request, context in
            try await handlers.publish(request, account: try context.parameters.require("account"))
        }
        router.get("/v1/accounts/:account/records") { request, context in
            try await handlers.read(request, account: try context.parameters.require("account"))
        }
        let host = configuration.host, transport = configuration.tls == nil ? "http" : "https"
        let requestLimit = TimeAmount.nanoseconds(Int64(configuration.requestTimeout.components.seconds) * 1_000_000_000
                                                  + configuration.requestTimeout.components.attoseconds / 1_000_000_000)
        // One ledger for every connection: what bodies still arriving hold, per address and in all.
        let ledger = BodyLedger()
        let http1Configuration = HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestDeadline(limit: requestLimit), BodyBudget(ledger: ledger)], idleTimeout: .seconds(75))
        let server = HTTPServerBuilder { [logger] responder in
            let plain = HTTP1Channel(responder: responder, configuration: http1Configuration)
            // A trusted peer's PROXY header comes first on the connection, before TLS and HTTP.
            guard let certificate else {
                return trustedProxies.isEmpty ? plain : ProxyProtocolChannel(base: plain, trusted: trustedProxies, logger: logger)
            }
            let secure = ReloadingTLSChannel(base: plain, certificate: certificate)
            return trustedProxies.isEmpty ? secure : ProxyProtocolChannel(base: secure, trusted: trustedProxies, logger: logger)
        }
        let app = Application(
            responder: AccessLog(inner: router.buildResponder(), metrics: metrics, logger: logger),
            server: server,
            configuration: .init(address: .hostname(host, port: configuration.port), serverName: nil),
            onServerRunning: { [logger] channel in
                let port = channel.localAddress?.port ?? 0
                FileHandle.standardOutput.write(Data("listening on \(host):\(port)\n".utf8))
                logger.notice("listening", metadata: ["address": "\(host):\(port)", "transport": "\(transport)"])
            },
            logger: logger)
        var services: [any Service] = [
            Listening(inner: app, what: "keyvault-relay", host: host, port: configuration.port),
            WakeService(relay: relay, waiters: handlers.waiters, logger: logger),
            Reloader(signals: hangups, certificate: certificate, issuerKeys: issuerKeys, metrics: metrics, logger: logger),
        ]
        if let listen = configuration.metricsListen {
            services.append(Listening(inner: MetricsEndpoint.application(listen, metrics: metrics, handlers: handlers, logger: logger),
                                      what: "the metrics listener", host: listen.host, port: listen.port))
        }
        let group = ServiceGroup(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger)
        do {
            try await group.run()
        } catch {
            await state.shutdown()
            await relay.shutdown()
            throw error
        }
        await state.shutdown()
        await relay.shutdown()
        logger.notice("keyvault-relay stopped")
    }

    static func storeKind(_ address: RelayAddress) -> String {
        switch address {
        case .sqlite: return "sqlite"
        case .postgres: return "postgres"
        case .service: return "service"
        }
    }

    /// Where the store is, without its credentials: a path, or a server and database.
    static func storeLocation(_ address: RelayAddress) -> String {
        switch address {
        case .sqlite(let path): return path
        case .postgres(let postgres): return "\(postgres.host):\(postgres.port)/\(postgres.database)"
        case .service(let urls): return urls.joined(separator: " ")
        }
    }

    /// The verifier, and the key set behind it for SIGHUP to read again.
    func loadIdentity() async throws -> (IdentityVerifier, IssuerKeys) {
        let keys = try await IssuerKeys(try IssuerKeys.Source(configuration.jwks), refetchInterval: configuration.jwksRefetchInterval, logger: logger)
        return (IdentityVerifier(issuer: configuration.issuer, audience: configuration.audience, keys: keys), keys)
    }
}
