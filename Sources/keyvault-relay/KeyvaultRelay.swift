import ArgumentParser
import Foundation
import KeyVaultRelayService
import Logging

/// `keyvault-relay`: the relay service (docs/RELAY.md).
@main
struct KeyvaultRelay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyvault-relay",
        abstract: "Stores relay records, checks who may touch which account, and pushes records to waiting devices.")

    @Option(help: "sqlite:PATH or postgres://USER@HOST:PORT/DB")
    var store: String

    @Option(help: "HOST:PORT to listen on (port 0: any free port, printed when ready)")
    var listen: String

    @Option(name: .customLong("tls-cert"), help: "PEM certificate chain")
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key")
    var tlsKey: String?

    @Flag(name: .customLong("plain-http"), help: "Serve HTTP without TLS (behind a TLS terminator)")
    var plainHTTP = false

    @Option(name: .customLong("identity-issuer"), help: "The OpenID Connect issuer (iss) accounts are bound to")
    var identityIssuer: String

    @Option(name: .customLong("identity-audience"), help: "The audience (aud) identity tokens must name")
    var identityAudience: String

    @Option(name: .customLong("identity-jwks"), help: "The issuer's JSON Web Key Set: a file, or an https:// URL (http:// only from this machine)")
    var identityJWKS: String

    @Option(name: .customLong("identity-jwks-refetch"),
            help: "Seconds (1 to 3600) between fetches of a key set from a URL, made when a token names a key the set lacks")
    var identityJWKSRefetch: Int = 60

    @Option(name: .customLong("request-timeout"), help: "Seconds a whole request (head and body) may take to arrive")
    var requestTimeout: Int = 10

    @Option(name: .customLong("metrics-listen"),
            help: "HOST:PORT to serve Prometheus metrics on (GET /metrics, plain HTTP; port 0: any free port, printed when ready)")
    var metricsListen: String?

    func validate() throws {
        switch (plainHTTP, tlsCert, tlsKey) {
        case (true, nil, nil), (false, .some, .some): break
        case (true, _, _): throw ValidationError("--plain-http and --tls-cert/--tls-key exclude each other")
        case (false, _, _): throw ValidationError("give both --tls-cert and --tls-key, or --plain-http")
        }
        _ = try hostAndPort()
        _ = try metricsListen.map { try Self.hostAndPort($0, option: "--metrics-listen") }
        guard (1...300).contains(requestTimeout) else { throw ValidationError("--request-timeout takes 1 to 300 seconds") }
        guard (1...3600).contains(identityJWKSRefetch) else { throw ValidationError("--identity-jwks-refetch takes 1 to 3600 seconds") }
    }

    func hostAndPort() throws -> (String, Int) {
        try Self.hostAndPort(listen, option: "--listen")
    }

    static func hostAndPort(_ listen: String, option: String) throws -> (String, Int) {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65535).contains(port) else {
            throw ValidationError("\(option) takes HOST:PORT")
        }
        var host = String(listen[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }

    func run() async throws {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "keyvault.relay")
        logger.logLevel = .info
        let (host, port) = try hostAndPort()
        var configuration = RelayServer.Configuration(
            store: store, host: host, port: port, tls: tlsCert.flatMap { cert in tlsKey.map { (cert, $0) } },
            issuer: identityIssuer, audience: identityAudience, jwks: identityJWKS)
        configuration.requestTimeout = .seconds(requestTimeout)
        configuration.jwksRefetchInterval = .seconds(identityJWKSRefetch)
        configuration.metricsListen = try metricsListen.map { try Self.hostAndPort($0, option: "--metrics-listen") }
        do {
            try await RelayServer(configuration: configuration, logger: logger).run()
        } catch let error as RelayServer.StartError {
            throw ValidationError(error.description)
        }
    }
}

