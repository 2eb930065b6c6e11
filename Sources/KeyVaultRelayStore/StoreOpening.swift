import KeyVaultProtocol
package import KeyVaultRelay
package import Logging

extension RelayAddress {
    /// The store behind a relay service (`--store`).
    package func openStore(logger: Logger = Logger(label: "keyvault.relay")) async throws -> any RelayStore {
        switch self {
        case .sqlite(let path): return try SQLiteRelay(path: path)
        case .postgres(let configuration): return try await PostgresRelay.open(configuration, logger: logger)
        case .service: throw RelayError.badAddress("a relay service stores its records in sqlite:PATH or postgres://…, not in another relay service")
        }
    }
}
