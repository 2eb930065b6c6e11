public import Foundation
public import Logging
import KeyVaultCrypto
import KeyVaultProtocol

/// `--relay`: `sqlite:PATH`, or a plain path, for the embedded relay;
/// `postgres://…` or `postgresql://…` for the PostgreSQL relay.
public enum RelayAddress: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(PostgresRelayConfiguration)

    /// `environment` fills in what a `postgres://` URL leaves out (PGHOST, PGPORT, …).
    public init(parsing text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw RelayError.badAddress("sqlite: needs a path") }
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(try PostgresRelayConfiguration(parsing: text, environment: environment))
        } else if text.contains("://") {
            throw RelayError.badAddress("unknown relay scheme in \(text); use sqlite:PATH, a path or postgres://…")
        } else {
            guard !text.isEmpty else { throw RelayError.badAddress("empty") }
            self = .sqlite(path: text)
        }
    }

    /// Opens the relay, ready to use. A `PostgresRelay` runs background tasks
    /// until its `shutdown()`; the SQLite relay needs no stopping.
    public func open(logger: Logger = Logger(label: "keyvault.relay")) async throws -> any Relay {
        switch self {
        case .sqlite(let path): return try SQLiteRelay(path: path)
        case .postgres(let configuration): return try await PostgresRelay.open(configuration, logger: logger)
        }
    }
}

extension RelayAddress: CustomStringConvertible {
    /// Never shows a password.
    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let configuration): return configuration.description
        }
    }
}
