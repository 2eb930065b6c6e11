package import GRDB
import KeyVaultProtocol
package import KeyVaultRelay

/// A spent nonce in the SQLite store (the relay service on SQLite; RELAY.md, "Signed requests").
extension RequestNonce {
    /// The SQLite store's table (the relay service's, in the store's file; created at its start).
    package static let sqliteTable = """
        CREATE TABLE IF NOT EXISTS service_request_nonces (
            account TEXT NOT NULL, keyid TEXT NOT NULL, nonce TEXT NOT NULL, created INTEGER NOT NULL,
            PRIMARY KEY (account, keyid, nonce))
        """

    /// Spends this nonce in a SQLite write's transaction (a publish's, a candidacy's): the account's
    /// spent nonces past their life are swept, then this one is inserted; none inserted: spent before.
    package func spend(in db: Database) throws {
        try db.execute(sql: "DELETE FROM service_request_nonces WHERE account = ? AND created < ?",
                       arguments: [account.rawValue, sweepBefore])
        try db.execute(sql: "INSERT OR IGNORE INTO service_request_nonces (account, keyid, nonce, created) VALUES (?, ?, ?, ?)",
                       arguments: [account.rawValue, keyID.hex, nonce, created])
        guard db.changesCount == 1 else { throw RelayError.nonceSpent }
    }
}
