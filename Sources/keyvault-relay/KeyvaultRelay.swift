import ArgumentParser
import KeyVaultLogging
import KeyVaultProtocol
import KeyVaultRelayService
import Logging

/// `keyvault-relay`: the relay service (docs/RELAY.md). Without a subcommand it serves;
/// `migrate` and `check-config` read the same settings (given before or after their name).
@main
struct KeyvaultRelay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyvault-relay",
        abstract: "Stores relay records, checks who may touch which account, and pushes records to waiting devices.",
        usage: """
            keyvault-relay <options>
            keyvault-relay migrate --store <store>
            keyvault-relay check-config <options>
            """,
        discussion: """
            Every option may instead come from the environment, KEYVAULT_RELAY_<OPTION> (KEYVAULT_RELAY_STORE, \
            KEYVAULT_RELAY_TLS_KEY, …), or from a file named after the option in $CREDENTIALS_DIRECTORY (systemd's \
            LoadCredential=: store, tls-key, …). A flag wins over the environment, the environment over a credential. \
            A credential is read whole, its trailing newline dropped; for --tls-cert, --tls-key and --identity-jwks the \
            credential is the file itself. --store, --listen, the identity options, and --tls-cert with --tls-key \
            (or --plain-http) are required, from one place or another.

            An empty store's schema is made at start; a store behind this version's schema is refused unless \
            --migrate is given (or `keyvault-relay migrate` run first), and one ahead of it always is. SIGHUP reads the \
            TLS certificate and key and the identity key set again; a file that does not load is refused and logged, \
            and the one in force stays. SIGTERM answers held reads and exits 0.

            Exit status: 0 stopped by SIGTERM; 1 the store cannot be reached or an address is taken; 64 a setting is \
            missing, malformed, or names a file that does not load; 65 the store's schema is behind this version's; \
            66 the store's schema is newer than this version's.
            """,
        version: KeyVaultVersion.string,
        subcommands: [Migrate.self, CheckConfig.self])

    @Option(help: "sqlite:PATH or postgres://USER[:PASSWORD]@HOST:PORT/DB")
    var store: String?

    @Option(help: "HOST:PORT to listen on (port 0: any free port, printed when ready)")
    var listen: String?

    @Option(name: .customLong("tls-cert"), help: "PEM certificate chain")
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key")
    var tlsKey: String?

    @Flag(name: .customLong("plain-http"), help: "Serve HTTP without TLS (behind a TLS terminator)")
    var plainHTTP = false

    @Flag(name: .customLong("migrate"),
          help: "Migrate a store whose schema is behind this version's before serving it (without it, such a store is refused)")
    var migrate = false

    @Option(name: .customLong("identity-issuer"), help: "The OpenID Connect issuer (iss) accounts are bound to")
    var identityIssuer: String?

    @Option(name: .customLong("identity-audience"), help: "The audience (aud) identity tokens must name")
    var identityAudience: String?

    @Option(name: .customLong("identity-jwks"), help: "The issuer's JSON Web Key Set: a file, or an https:// URL (http:// only from this machine)")
    var identityJWKS: String?

    @Option(name: .customLong("identity-jwks-refetch"),
            help: "Seconds (1 to 3600) between fetches of a key set from a URL, made when a token names a key the set lacks (default: 60)")
    var identityJWKSRefetch: String?

    @Option(name: .customLong("request-timeout"), help: "Seconds (1 to 300) a whole request (head and body) may take to arrive (default: 10)")
    var requestTimeout: String?

    @Option(name: .customLong("metrics-listen"),
            help: "HOST:PORT to serve Prometheus metrics on (GET /metrics, plain HTTP; port 0: any free port, printed when ready)")
    var metricsListen: String?

    @Option(name: .customLong("proxy-protocol-from"),
            help: "An address or CIDR block (repeat for more) of a trusted proxy or TLS terminator: its connections must start with a PROXY protocol version 2 header naming the client, whose address the per-address budgets then use")
    var proxyProtocolFrom: [String] = []

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (default: info)")
    var logLevel: String?

    @Option(name: .customLong("log-format"), help: "text (key=value) or json (one object per line) on standard error (default: text)")
    var logFormat: String?

    /// Settings are checked here, not in `validate()`, which would run for the subcommands too (`migrate`
    /// needs only the store); `--help` and `--version` need none of them.
    func run() async throws {
        let settings = try settings(from: SettingSources())
        settings.logs.bootstrap()
        let logger = Logger(label: "keyvault.relay")
        do {
            try await RelayServer(configuration: Self.serverConfiguration(settings), logger: logger).run()
        } catch {
            throw RelayExit.failure(error, logs: settings.logs, logger: logger)
        }
    }

    static func serverConfiguration(_ settings: RelaySettings) -> RelayServer.Configuration {
        var configuration = RelayServer.Configuration(
            store: settings.store, host: settings.host, port: settings.port, tls: settings.tls,
            issuer: settings.identityIssuer, audience: settings.identityAudience, jwks: settings.identityJWKS)
        configuration.requestTimeout = .seconds(settings.requestTimeout)
        configuration.jwksRefetchInterval = .seconds(settings.identityJWKSRefetch)
        configuration.metricsListen = settings.metricsListen
        configuration.proxyProtocolFrom = settings.proxyProtocolFrom
        configuration.migrate = settings.migrate
        return configuration
    }
}
