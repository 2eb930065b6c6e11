import ArgumentParser
import KeyVaultRelayService
import Logging

/// `keyvault-relay check-config`: what a start would read, read the same way and nothing
/// changed, so a configuration can be tried beside a running relay before a restart.
struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check the settings a start would use, the files they name and the store, change nothing, then exit.",
        discussion: """
            Takes every option of keyvault-relay (given before or after `check-config`), from the same places. It \
            reads the TLS certificate and key, the identity key set (fetching a URL), the PROXY protocol blocks, and \
            the store's schema; it makes nothing (no table, no SQLite file) and listens nowhere, since the running \
            relay holds its addresses. Prints one line for each.

            Exit status: 0 a start would serve with these settings; 1 the store cannot be reached; 64 a setting is \
            missing, malformed, or names a file that does not load; 65 the store's schema is behind this version's \
            (and --migrate is not given); 66 the store's schema is newer than this version's.
            """)

    @ParentCommand var relay: KeyvaultRelay

    func run() async throws {
        let settings = try relay.settings(from: SettingSources())
        settings.logs.bootstrap()
        let logger = Logger(label: "keyvault.relay")
        let report: [String]
        do {
            report = try await RelayServer(configuration: KeyvaultRelay.serverConfiguration(settings), logger: logger).check()
        } catch {
            throw RelayExit.failure(error, logs: settings.logs, logger: logger)
        }
        for line in report { print(line) }
        print("keyvault-relay would start with these settings (its addresses are not tried)")
    }
}
