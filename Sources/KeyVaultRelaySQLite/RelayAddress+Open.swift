package import Logging
import KeyVaultProtocol
package import KeyVaultRelay

extension RelayAddress {
    /// Opens the embedded relay file, ready to use; it needs no stopping.
    package func open(logger: Logger = Logger(label: "keyvault.relay")) async throws -> any Relay {
        switch self {
        case .sqlite(let path): return try SQLiteRelay(path: path)
        case .postgres: throw RelayError.badAddress("a PostgreSQL store is opened by keyvault-relay (openStore)")
        case .service: throw RelayError.badAddress("a relay service is opened with this device's credentials (HTTPRelay)")
        }
    }
}
