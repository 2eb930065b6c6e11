import KeyVaultProtocol
package import KeyVaultRelay
import KeyVaultRelaySQLite
package import Logging

extension RelayAddress {
    /// The store behind a relay service (`--store`).
    package func openStore(logger: Logger = Logger(label: "keyvault.relay")) async throws -> any RelayStore {
        switch self {
        case .sqlite(let path): return try SQLiteRelay(path: path)
        // Bulkheads between the service's accounts: a fair share of the pool each, and a deadline missed is the request's.
        case .postgres(let configuration): return try await PostgresRelay.open(configuration, logger: logger, bulkheads: .init())
        case .service: throw RelayError.badAddress("a relay service stores its records in sqlite:PATH or postgres://…, not in another relay service")
        }
    }
}
