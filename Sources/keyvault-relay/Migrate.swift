import ArgumentParser
import KeyVaultRelayService
import Logging

/// `keyvault-relay migrate`: the store's schema brought to this version's, as its own
/// step (docs/RELAY.md, "The store's schema"), so a start need not be allowed to.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply the store schema's migrations this version has and the store lacks, then exit.",
        discussion: """
            Reads --store (or KEYVAULT_RELAY_STORE, or the credential 'store') and the log options, given before or \
            after `migrate`; other settings are ignored. Each migration runs in one transaction under a lock, so \
            runs at once (another migrate, a start with --migrate) apply it once. Run it as a role that may create \
            tables, once the instances of the version before are stopped. Prints each migration it applied.

            Exit status: 0 the store's schema is this version's (now, or already); 1 the store cannot be reached, or \
            a migration failed (that one is rolled back, those before it stay); 64 a setting is missing or \
            malformed; 66 the store's schema is newer than this version's (nothing is changed).
            """)

    @ParentCommand var relay: KeyvaultRelay

    func run() async throws {
        let sources = SettingSources()
        let logs = try relay.logSettings(from: sources)
        let store = try relay.storeSetting(from: sources)
        logs.bootstrap()
        let logger = Logger(label: "keyvault.relay")
        let applied: [String]
        do {
            applied = try await RelayServer.migrate(store: store, logger: logger)
        } catch {
            throw RelayExit.failure(error, logs: logs, logger: logger)
        }
        for migration in applied { print("applied \(migration)") }
        print(applied.isEmpty ? "nothing to apply: the store's schema is this version's" : "the store's schema is this version's")
    }
}
