import Foundation
import GRDB
import KeyVaultSQLite
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelay
import KeyVaultRelaySQLite
import KeyVaultRelayStore

/// Nonces and candidacies in the relay's own SQLite file, beside its records
/// (tables of their own, created if missing; the records' migrator is not touched).
final class SQLiteServiceState: ServiceState {
    private let pool: DatabasePool

    init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "relay-service"
        // Instances opening a fresh store at once race to switch it to WAL.
        pool = try SharedSQLiteFile.openPool(path: path, configuration: configuration)
        try SharedSQLiteFile.retryingWhileBusy { [pool] in try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS service_candidates (
                    account TEXT NOT NULL, device_id TEXT NOT NULL, signing BLOB NOT NULL, box BLOB NOT NULL,
                    filed_at INTEGER NOT NULL, PRIMARY KEY (account, device_id));
                CREATE TABLE IF NOT EXISTS service_filings (account TEXT NOT NULL, at INTEGER NOT NULL);
                CREATE INDEX IF NOT EXISTS service_filings_account ON service_filings (account, at);
                DROP TABLE IF EXISTS service_nonces;
                """)
            // Spent by the records' own writes too (`SQLiteRelay.publish(batch:spending:)`).
            try db.execute(sql: RequestNonce.sqliteTable)
            try Self.makeSignerIndex(db)
        } }
    }

    /// The signer index (`PostgresRelaySchema`'s `relay-v6` on PostgreSQL): made once, and filled
    /// then from the logs already stored, in the same transaction.
    private static func makeSignerIndex(_ db: Database) throws {
        guard try !db.tableExists("service_signers") else { return }
        try db.execute(sql: """
            CREATE TABLE service_signers (account TEXT NOT NULL, device_id TEXT NOT NULL, signing BLOB NOT NULL,
                PRIMARY KEY (account, device_id))
            """)
        guard try db.tableExists("records") else { return }
        for body in try Data.fetchAll(db, sql: "SELECT body FROM records WHERE kind = 'log'") {
            // Every stored entry was verified before it was stored; one that does not decode is skipped.
            guard let entry = try? LogEntry.decode([UInt8](body)), let device = entry.admits else { continue }
            try add(device, account: entry.account.rawValue, db)
        }
    }

    private static func add(_ device: DeviceKeys, account: String, _ db: Database) throws {
        try db.execute(sql: "INSERT OR IGNORE INTO service_signers (account, device_id, signing) VALUES (?, ?, ?)",
                       arguments: [account, device.deviceID.hex, Data(device.signing.rawRepresentation)])
    }

    func signer(_ keyID: DeviceID, account: AccountID, now: Int64) async throws -> KnownSigner? {
        try await pool.read { db -> KnownSigner? in
            if let signing = try Data.fetchOne(db, sql: "SELECT signing FROM service_signers WHERE account = ? AND device_id = ?",
                                               arguments: [account.rawValue, keyID.hex]) {
                return (try? SigningPublicKey(rawRepresentation: [UInt8](signing))).map(KnownSigner.indexed)
            }
            guard let row = try Row.fetchOne(db, sql: """
                SELECT signing, filed_at FROM service_candidates WHERE account = ? AND device_id = ? AND filed_at > ?
                """, arguments: [account.rawValue, keyID.hex, now - Bounds.candidateLifeMillis]),
                  let signing = try? SigningPublicKey(rawRepresentation: [UInt8](row["signing"] as Data)) else { return nil }
            return .candidate(signing, until: (row["filed_at"] as Int64) + Bounds.candidateLifeMillis)
        }
    }

    func index(_ devices: [DeviceKeys], account: AccountID) async throws {
        try await pool.write { db in
            for device in devices { try Self.add(device, account: account.rawValue, db) }
        }
    }

    func file(_ candidate: Candidate, spending nonce: RequestNonce) async throws -> Filing {
        let account = candidate.account.rawValue, now = candidate.filedAt
        return try await pool.write { db -> Filing in
            try db.execute(sql: "DELETE FROM service_filings WHERE account = ? AND at <= ?", arguments: [account, now - Bounds.hourMillis])
            let filings = try Int64.fetchAll(db, sql: "SELECT at FROM service_filings WHERE account = ? ORDER BY at", arguments: [account])
            if filings.count >= Bounds.filingsPerHour {
                return .tooMany(retryAfter: Bounds.retryAfter(oldestFiling: filings[0], now: now))
            }
            // A refused filing spends no nonce, as on PostgreSQL (whose transaction rolls back).
            try nonce.spend(in: db)
            try db.execute(sql: "INSERT INTO service_filings (account, at) VALUES (?, ?)", arguments: [account, now])
            try db.execute(sql: """
                INSERT INTO service_candidates (account, device_id, signing, box, filed_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (account, device_id) DO UPDATE SET filed_at = excluded.filed_at
                """, arguments: [account, candidate.deviceID, Data(candidate.signing.rawRepresentation),
                                 Data(candidate.box.rawRepresentation), now])
            try db.execute(sql: "DELETE FROM service_candidates WHERE account = ? AND filed_at <= ?",
                           arguments: [account, now - Bounds.candidateLifeMillis])
            // The ninth evicts the oldest: junk never crowds out the newest device.
            let evicted = try String.fetchAll(db, sql: """
                DELETE FROM service_candidates WHERE account = ? AND device_id <> ? AND device_id NOT IN (
                    SELECT device_id FROM service_candidates WHERE account = ? ORDER BY filed_at DESC LIMIT ?) RETURNING device_id
                """, arguments: [account, candidate.deviceID, account, Bounds.liveCandidates])
            return .filed(evicted: evicted.compactMap(DeviceID.init(hex:)))
        }
    }

    func candidates(account: AccountID, now: Int64) async throws -> [Candidate] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT signing, box, filed_at FROM service_candidates WHERE account = ? AND filed_at > ?",
                             arguments: [account.rawValue, now - Bounds.candidateLifeMillis]).compactMap { row -> Candidate? in
                guard let signing = try? SigningPublicKey(rawRepresentation: [UInt8](row["signing"] as Data)),
                      let box = try? BoxPublicKey(rawRepresentation: [UInt8](row["box"] as Data)) else { return nil }
                return Candidate(account: account, signing: signing, box: box, filedAt: row["filed_at"])
            }
        }
    }

    func shutdown() async {}
}
