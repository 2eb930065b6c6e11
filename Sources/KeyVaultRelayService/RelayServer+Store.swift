package import Logging
import KeyVaultProtocol
import KeyVaultRelay
import KeyVaultRelayStore

extension RelayServer {
    /// `--store`, parsed: a SQLite file or a PostgreSQL database, never another relay service.
    static func storeAddress(_ text: String) throws -> RelayAddress {
        let address = try RelayAddress(parsing: text)
        if case .service = address { throw RelayError.badAddress("--store is sqlite:PATH or postgres://…, not another relay service") }
        return address
    }

    /// The store for a start: its schema judged by `--migrate` (`SchemaStatus.toApply`), what was applied logged.
    func openStore(_ address: RelayAddress) async throws -> (any RelayStore, any ServiceState) {
        let opened = try await Self.openStore(address, schema: configuration.migrate ? .migrate : .refuseBehind, logger: logger)
        if !opened.migrated.isEmpty {
            logger.notice("the store's schema was migrated", metadata: ["applied": "\(opened.migrated.joined(separator: " "))"])
        }
        return (opened.relay, opened.state)
    }

    /// `keyvault-relay migrate`: applies what the store's schema lacks, the service's own tables
    /// included, and returns those migrations in order (none: it was current). Nothing else is
    /// read or served.
    package static func migrate(store: String, logger: Logger) async throws -> [String] {
        let opened = try await openStore(try storeAddress(store), schema: .migrate, logger: logger)
        await opened.state.shutdown()
        await opened.relay.shutdown()
        return opened.migrated
    }

    /// The records' store, its schema judged by `rule` before anything reads it, and the service's
    /// own tables beside it. A store that cannot be opened is a `RunError` that never shows its
    /// password; a schema not served, a `SchemaRefusal`.
    private static func openStore(_ address: RelayAddress, schema rule: SchemaRule, logger: Logger) async throws
        -> (relay: any RelayStore, state: any ServiceState, migrated: [String]) {
        let relay: any RelayStore, migrated: [String]
        do {
            (relay, migrated) = try await address.openStore(logger: logger, schema: rule)
        } catch let error as RelayError {
            throw RunError(description: StoreProblem.describe(error))
        }
        do {
            switch address {
            case .sqlite(let path): return (relay, try SQLiteServiceState(path: path), migrated)
            case .postgres(let postgres): return (relay, try PostgresServiceState(postgres, logger: logger), migrated)
            case .service: preconditionFailure("refused by storeAddress")
            }
        } catch {
            await relay.shutdown()
            if error is RelayError { throw RunError(description: StoreProblem.describe(error)) }
            throw error
        }
    }
}
