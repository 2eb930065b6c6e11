import Foundation
import KeyVaultProtocol
package import KeyVaultRelay
package import Logging

extension RelayAddress {
    /// The relay service's store, its schema judged by `rule` (`SchemaStatus.toApply`) before
    /// anything is read from it; with it, the migrations applied, in order (none: it was current).
    package func openStore(logger: Logger, schema rule: SchemaRule) async throws -> (store: any RelayStore, migrated: [String]) {
        let (store, status, migrate) = try await openUnmigrated(logger: logger)
        do {
            let missing = try status.toApply(under: rule)
            if !missing.isEmpty { try await migrate() }
            return (store, missing)
        } catch {
            await store.shutdown()
            throw error
        }
    }

    /// The store's schema, read and nothing changed (`keyvault-relay check-config`):
    /// a SQLite file that is not there yet is an empty store, and is not made.
    package func schemaStatus(logger: Logger) async throws -> SchemaStatus {
        if case .sqlite(let path) = self, !FileManager.default.fileExists(atPath: path) {
            return SchemaStatus(known: SQLiteRelay.knownMigrations, applied: [])
        }
        let (store, status, _) = try await openUnmigrated(logger: logger)
        await store.shutdown()
        return status
    }

    /// The store opened as it is, what its schema holds, and how to migrate it.
    private func openUnmigrated(logger: Logger) async throws
        -> (store: any RelayStore, status: SchemaStatus, migrate: @Sendable () async throws -> Void) {
        switch self {
        case .sqlite(let path):
            let relay = try SQLiteRelay(path: path, migrating: false)
            do {
                return (relay, try relay.schemaStatus(), { try relay.migrate() })
            } catch {
                await relay.shutdown()
                throw error
            }
        case .postgres(let configuration):
            // Bulkheads between the service's accounts: a fair share of the pool each, and a deadline missed is the request's.
            let relay = try PostgresRelay(configuration: configuration, logger: logger, bulkheads: .init())
            do {
                return (relay, try await relay.schemaStatus(), { try await relay.migrate() })
            } catch {
                await relay.shutdown()
                throw error
            }
        case .service:
            throw RelayError.badAddress("a relay service stores its records in sqlite:PATH or postgres://…, not in another relay service")
        }
    }
}
