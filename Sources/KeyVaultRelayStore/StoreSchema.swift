import Foundation
import KeyVaultProtocol
package import KeyVaultRelay
import KeyVaultRelaySQLite
import KeyVaultSQLite
package import Logging

extension RelayAddress {
    /// The relay service's store, its schema judged by `rule` (`SchemaStatus.toApply`) before
    /// anything is read from it; with it, the migrations applied, in order (none: it was current).
    package func openStore(logger: Logger, schema rule: SchemaRule) async throws -> (store: any RelayStore, migrated: [String]) {
        let (store, first, migrate, readStatus) = try await openUnmigrated(logger: logger)
        do {
            let status = try await Self.settled(first, under: rule, reading: readStatus)
            let missing = try status.toApply(under: rule)
            if !missing.isEmpty { try await migrate() }
            return (store, missing)
        } catch {
            await store.shutdown()
            throw error
        }
    }

    /// `status`, or, while it is behind this build and its applied migrations keep changing (another
    /// start making a brand-new store's schema, one migration after another), the status once they
    /// stop: a store being made is not refused as one in use.
    private static func settled(_ status: SchemaStatus, under rule: SchemaRule,
                                reading readStatus: @Sendable () async throws -> SchemaStatus) async throws -> SchemaStatus {
        var current = status
        while case .refuseBehind = rule, !current.isEmpty, !current.missing.isEmpty, current.unknown.isEmpty {
            try await Task.sleep(for: schemaSettling)
            let again: SchemaStatus = try await readStatus()
            if again.applied == current.applied { return current }
            current = again
        }
        return current
    }

    /// How long a schema behind this build must stand still to be refused as behind.
    static let schemaSettling: Duration = .milliseconds(250)

    /// The store's schema, read and nothing changed (`keyvault-relay check-config`):
    /// a SQLite file that is not there yet is an empty store, and is not made.
    package func schemaStatus(logger: Logger) async throws -> SchemaStatus {
        if case .sqlite(let path) = self, !FileManager.default.fileExists(atPath: path) {
            do {
                try SharedSQLiteFile.refuseUncreatable(at: path)
            } catch {
                throw RelayError.unreachable("\(error)")
            }
            return SchemaStatus(known: SQLiteRelay.knownMigrations, applied: [])
        }
        let (store, status, _, _) = try await openUnmigrated(logger: logger)
        await store.shutdown()
        return status
    }

    /// The store opened as it is, what its schema holds, and how to migrate it.
    private func openUnmigrated(logger: Logger) async throws
        -> (store: any RelayStore, status: SchemaStatus, migrate: @Sendable () async throws -> Void,
            readStatus: @Sendable () async throws -> SchemaStatus) {
        switch self {
        case .sqlite(let path):
            let relay = try SQLiteRelay(path: path, migrating: false)
            do {
                return (relay, try relay.schemaStatus(), { try relay.migrate() }, { try relay.schemaStatus() })
            } catch {
                await relay.shutdown()
                throw error
            }
        case .postgres(let configuration):
            // Bulkheads between the service's accounts: a fair share of the pool each, and a deadline missed is the request's.
            let relay = try PostgresRelay(configuration: configuration, logger: logger, bulkheads: .init())
            do {
                return (relay, try await relay.schemaStatus(), { try await relay.migrate() }, { try await relay.schemaStatus() })
            } catch {
                await relay.shutdown()
                throw error
            }
        case .service:
            throw RelayError.badAddress("a relay service stores its records in sqlite:PATH or postgres://…, not in another relay service")
        }
    }
}
