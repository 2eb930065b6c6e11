public import KeyVaultProtocol
public import Logging

/// A store the relay service owns (SQLite file, PostgreSQL): a `Relay` that
/// may also forget rows nobody needs any more (RELAY.md, "Retention").
/// Devices never remove rows; the daemon's embedded relay keeps its history.
public protocol RelayStore: Relay {
    /// Deletes these rows of the account; cursors not there are ignored.
    /// Cursors are never handed out again, so a reader's cursor stays valid.
    func remove(account: AccountID, cursors: [Int64]) async throws
    /// One round trip to the store that reads nothing (`GET /v1/health`).
    func ping() async throws
}

extension RelayAddress {
    /// The store behind a relay service (`--store`).
    public func openStore(logger: Logger = Logger(label: "keyvault.relay")) async throws -> any RelayStore {
        switch self {
        case .sqlite(let path): return try SQLiteRelay(path: path)
        case .postgres(let configuration): return try await PostgresRelay.open(configuration, logger: logger)
        case .service: throw RelayError.badAddress("a relay service stores its records in sqlite:PATH or postgres://…, not in another relay service")
        }
    }
}
