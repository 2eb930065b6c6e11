package import Logging
import NIOCore
package import PostgresNIO
package import KeyVaultProtocol

/// The relay service's signer index on PostgreSQL (`keyvault_service_signers`, RELAY.md
/// "Who may do what"): each account's members as its stored log made them.
package enum PostgresSignerIndex {
    /// Fills the index from every log entry already stored (migration `relay-v6`). Every stored
    /// entry was verified before it was stored; one that does not decode is skipped.
    @Sendable package static func fill(_ connection: PostgresConnection, logger: Logger) async throws {
        var admitted: [(account: String, device: DeviceKeys)] = []
        let rows = try await connection.query("SELECT body FROM keyvault_records WHERE kind = 'log'", logger: logger)
        for try await body in rows.decode(ByteBuffer.self) {
            guard let entry = try? LogEntry.decode(Array(body.readableBytesView)), let device = entry.admits else { continue }
            admitted.append((entry.account.rawValue, device))
        }
        for (account, device) in admitted {
            try await add(device, account: account, on: connection, logger: logger)
        }
    }

    /// Adds one member; already there, nothing changes (its device ID fixes its keys).
    package static func add(_ device: DeviceKeys, account: String, on connection: PostgresConnection, logger: Logger) async throws {
        let signing = ByteBuffer(bytes: device.signing.rawRepresentation)
        try await connection.query("""
            INSERT INTO keyvault_service_signers (account, device_id, signing) VALUES (\(account), \(device.deviceID.hex), \(signing)) \
            ON CONFLICT (account, device_id) DO NOTHING
            """, logger: logger)
    }
}
