import CLinux
import Foundation
package import Logging
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
import KeyVaultProtocol
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelaySQLite
import KeyVaultEngine
import KeyVaultPolicy
#endif

/// What `keyvaultd` is started with.
package struct DaemonConfiguration: Sendable {
    package var dataDirectory: String
    package var socketPath: String
    /// nil: the built-in default policy (the same as the shipped `policy/`).
    package var policyDirectory: String?
    /// `--relay`: none for a device on its own; several name instances of one relay service.
    package var relays: [String]
    /// `--relay-ca`: a PEM certificate authority the relay service's certificate chains to.
    package var relayCertificateAuthority: String?
    /// `--max-connections`: connections served at once.
    package var maxConnections = 1024
    /// `--request-timeout`: a request must arrive whole this long after its first byte.
    package var requestTimeout: Duration = .seconds(10)

    package init(dataDirectory: String, socketPath: String, policyDirectory: String?, relay: String? = nil) {
        self.dataDirectory = dataDirectory
        self.socketPath = socketPath
        self.policyDirectory = policyDirectory
        self.relays = relay.map { [$0] } ?? []
    }
}

/// The daemon's life: harden the process, load the policy and the vault,
/// claim the socket, serve until SIGTERM, drain, remove the socket.
package enum KeyVaultDaemon {
    package static func run(_ configuration: DaemonConfiguration, logger: Logger) async throws {
        // Files and sockets this process creates are its own alone; no core
        // dump may carry a key.
        umask(0o077)
        if kv_disable_core_dumps() != 0 { logger.warning("could not disable core dumps") }
        raiseFileLimit(for: configuration.maxConnections, logger: logger)
        // Secrets live in locked pages: the soft limit up to the hard one, and a refused mlock said out loud.
        LockedMemory.prepare(logger: logger)

        let policy: Policy
        if let directory = configuration.policyDirectory {
            policy = try PolicyLoader.load(directory: directory, selfUID: geteuid())
        } else {
            policy = Policy.builtInDefault(selfUID: geteuid())
        }
        let store = PolicyStore(policy: policy, directory: configuration.policyDirectory)
        logger.info("policy loaded", metadata: ["policy": "\(policy)", "from": "\(configuration.policyDirectory ?? "built-in default")"])

        // First, before the vault is opened: a folder another user could write would let them take the socket's place.
        try SocketFolder.prepare(forSocket: configuration.socketPath, group: policy.socketGroup)

        // One daemon per vault: held until this process ends.
        let owner = try DataDirectoryOwner(directory: configuration.dataDirectory)
        defer { withExtendedLifetime(owner) {} }
        let vault = try Vault(directory: configuration.dataDirectory)
        // A bad address stops the daemon; a relay that cannot be opened yet does not: it is opened
        // on first use, and the vault is served meanwhile.
        var relayLogger = logger
        relayLogger.logLevel = max(logger.logLevel, .notice)  // the driver's every failed connection, at info, is noise in an outage
        var credentials: RelayCredentials?
        var relay: (any Relay)?
        if !configuration.relays.isEmpty {
            switch try RelayAddress(parsing: configuration.relays) {
            case .service(let urls):
                // The service is reached per request, signed with each account's device key: nothing to open.
                let signing = RelayCredentials()
                credentials = signing
                relay = try HTTPRelay(urls: urls, certificateAuthority: configuration.relayCertificateAuthority,
                                      credentials: signing, logger: relayLogger)
            case .postgres:
                throw RelayError.badAddress("devices no longer log in to PostgreSQL: run keyvault-relay --store postgres://… "
                    + "and give this daemon --relay https://HOST:PORT (see the README's upgrade notes)")
            case let address:
                relay = ReopeningRelay(address: address, opener: { [relayLogger] in try await $0.open(logger: relayLogger) })
            }
        }
        let service = try KeyVaultService(vault: vault, policy: store, logger: logger, relay: relay, relayCredentials: credentials)
        LockedMemory.check(accounts: service.status().count, logger: logger)

        try SocketPath.claim(configuration.socketPath)
        var options = KeyVaultServer.Options(socketPath: configuration.socketPath)
        options.maxConnections = configuration.maxConnections
        options.requestTimeout = configuration.requestTimeout
        let app = KeyVaultServer.makeApplication(service: service, options: options, logger: logger) {
            logger.notice("keyvaultd ready", metadata: ["socket": "\(configuration.socketPath)", "version": "\(KeyVaultVersion.string)"])
            SystemdNotifier.notify("READY=1")
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: app), .init(service: PolicyReloader(store: store, logger: logger))]
        if relay != nil { services.append(.init(service: PropagationService(service: service))) }
        let group = ServiceGroup(configuration: .init(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        do {
            try await group.run()
        } catch {
            await service.finishFollowUps()
            await relay?.shutdown()
            throw error
        }
        // The relay's connections stop after everything that used them: the follow-ups jobs queued too.
        await service.finishFollowUps()
        await relay?.shutdown()
        unlink(configuration.socketPath)
        logger.notice("keyvaultd stopped")
    }
}

extension KeyVaultDaemon {
    /// Every connection is a descriptor, and a refused one too while it waits for its answer:
    /// the soft limit is raised to the hard one, and a warning said if even that is short.
    static func raiseFileLimit(for maxConnections: Int, logger: Logger) {
        let limit = kv_raise_file_limit()
        // Admitted and refused connections, and the daemon's own files (vault, relay, log).
        let needed = UInt64(2 * maxConnections + 64)
        if limit < needed {
            logger.warning("the open-file limit is below what the connection limit needs", metadata: [
                "nofile": "\(limit)", "needed": "\(needed)", "maxConnections": "\(maxConnections)",
            ])
        }
    }
}

/// Runs propagation (relay reads, verification, shares in) beside the server.
struct PropagationService: Service {
    let service: KeyVaultService

    func run() async throws {
        // Returns at graceful shutdown: the wake-ups are cancelled then, and the age check with them.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await service.propagation.propagate() }
            group.addTask { await service.rotations.rotateAgedKeys() }
            await group.next()
            group.cancelAll()
        }
        // No promotion deadline fires after the relay is closed.
        service.owners.cancelTimers()
    }
}
