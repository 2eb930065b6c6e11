import Foundation
import Logging
import NIOCore
import PostgresNIO
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelay
import KeyVaultRelayStore

/// Nonces and candidacies on the relay's PostgreSQL store, in tables of their
/// own, so every instance on the database refuses a replayed nonce and shares
/// the candidacy bounds. Each statement names one account (or one key ID).
final class PostgresServiceState: ServiceState {
    private let client: PostgresClient
    private let logger: Logger
    private let task: Task<Void, Never>

    static func open(_ configuration: PostgresRelayConfiguration, logger: Logger) async throws -> PostgresServiceState {
        let state = try PostgresServiceState(configuration, logger: logger)
        do {
            try await state.migrate()
        } catch {
            await state.shutdown()
            throw error
        }
        return state
    }

    private init(_ configuration: PostgresRelayConfiguration, logger: Logger) throws {
        var options = try PostgresRelay.clientConfiguration(configuration)
        options.options.maximumConnections = 4
        let client = PostgresClient(configuration: options, backgroundLogger: logger)
        self.client = client
        self.logger = logger
        task = Task { await client.run() }
    }

    private func migrate() async throws {
        try await client.withConnection { connection in
            // Instances starting at once: one creates, the others wait on the lock and find it made.
            try await connection.query("BEGIN", logger: logger)
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext('keyvault-relay-service-schema'))", logger: logger)
            for statement in [
                "CREATE TABLE IF NOT EXISTS keyvault_service_nonces (keyid text NOT NULL, nonce text NOT NULL, created bigint NOT NULL, PRIMARY KEY (keyid, nonce))",
                "CREATE INDEX IF NOT EXISTS keyvault_service_nonces_created ON keyvault_service_nonces (created)",
                """
                CREATE TABLE IF NOT EXISTS keyvault_service_candidates (account text NOT NULL, device_id text NOT NULL, \
                signing bytea NOT NULL, box bytea NOT NULL, filed_at bigint NOT NULL, PRIMARY KEY (account, device_id))
                """,
                "CREATE TABLE IF NOT EXISTS keyvault_service_filings (account text NOT NULL, at bigint NOT NULL)",
                "CREATE INDEX IF NOT EXISTS keyvault_service_filings_account ON keyvault_service_filings (account, at)",
            ] {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            try await connection.query("COMMIT", logger: logger)
        }
    }

    /// How long one operation may wait for the database: past it the request answers
    /// `unavailable` at once (a query waits for a connection forever while the server is down).
    static let operationTimeout: Duration = .seconds(5)

    func claim(nonce: String, keyID: DeviceID, created: Int64) async throws -> Bool {
        try await withDeadline(Self.operationTimeout) { try await self.claimNow(nonce: nonce, keyID: keyID, created: created) }
    }

    func file(_ candidate: Candidate) async throws -> Filing {
        try await withDeadline(Self.operationTimeout) { try await self.fileNow(candidate) }
    }

    func candidates(account: AccountID, now: Int64) async throws -> [Candidate] {
        try await withDeadline(Self.operationTimeout) { try await self.candidatesNow(account: account, now: now) }
    }

    private func claimNow(nonce: String, keyID: DeviceID, created: Int64) async throws -> Bool {
        // Old nonces go now and then, not on every request: they are refused as stale anyway.
        if Random.uniform(32) == 0 {
            try await client.query("DELETE FROM keyvault_service_nonces WHERE created < \(created - Bounds.nonceLife)", logger: logger)
        }
        var inserted = 0
        for try await _ in try await client.query("""
            INSERT INTO keyvault_service_nonces (keyid, nonce, created) VALUES (\(keyID.hex), \(nonce), \(created)) \
            ON CONFLICT DO NOTHING RETURNING 1
            """, logger: logger) {
            inserted += 1
        }
        return inserted == 1
    }

    /// One transaction under the account's advisory lock, so two instances filing at once count each other.
    private func fileNow(_ candidate: Candidate) async throws -> Filing {
        let account = candidate.account.rawValue, now = candidate.filedAt, deviceID = candidate.deviceID
        let signing = ByteBuffer(bytes: candidate.signing.rawRepresentation), box = ByteBuffer(bytes: candidate.box.rawRepresentation)
        let logger = logger
        return try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            do {
                try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\("keyvault-candidates:" + account)))", logger: logger)
                try await connection.query("DELETE FROM keyvault_service_filings WHERE account = \(account) AND at <= \(now - Bounds.hourMillis)", logger: logger)
                var filings: [Int64] = []
                for try await at in try await connection.query(
                    "SELECT at FROM keyvault_service_filings WHERE account = \(account) ORDER BY at", logger: logger).decode(Int64.self) {
                    filings.append(at)
                }
                if filings.count >= Bounds.filingsPerHour {
                    try await connection.query("ROLLBACK", logger: logger)
                    return .tooMany(retryAfter: Bounds.retryAfter(oldestFiling: filings[0], now: now))
                }
                try await connection.query("INSERT INTO keyvault_service_filings (account, at) VALUES (\(account), \(now))", logger: logger)
                try await connection.query("""
                    INSERT INTO keyvault_service_candidates (account, device_id, signing, box, filed_at) \
                    VALUES (\(account), \(deviceID.hex), \(signing), \(box), \(now)) \
                    ON CONFLICT (account, device_id) DO UPDATE SET filed_at = excluded.filed_at
                    """, logger: logger)
                try await connection.query("""
                    DELETE FROM keyvault_service_candidates WHERE account = \(account) AND filed_at <= \(now - Bounds.candidateLifeMillis)
                    """, logger: logger)
                try await connection.query("""
                    DELETE FROM keyvault_service_candidates WHERE account = \(account) AND device_id <> \(deviceID.hex) AND device_id NOT IN (
                    SELECT device_id FROM keyvault_service_candidates WHERE account = \(account) ORDER BY filed_at DESC LIMIT \(Int64(Bounds.liveCandidates)))
                    """, logger: logger)
                try await connection.query("COMMIT", logger: logger)
                return .filed
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    private func candidatesNow(account: AccountID, now: Int64) async throws -> [Candidate] {
        var out: [Candidate] = []
        let rows = try await client.query("""
            SELECT signing, box, filed_at FROM keyvault_service_candidates \
            WHERE account = \(account.rawValue) AND filed_at > \(now - Bounds.candidateLifeMillis)
            """, logger: logger)
        for try await (signing, box, filedAt) in rows.decode((ByteBuffer, ByteBuffer, Int64).self) {
            guard let signing = try? SigningPublicKey(rawRepresentation: Array(signing.readableBytesView)),
                  let box = try? BoxPublicKey(rawRepresentation: Array(box.readableBytesView)) else { continue }
            out.append(Candidate(account: account, signing: signing, box: box, filedAt: filedAt))
        }
        return out
    }

    func shutdown() async {
        task.cancel()
        await task.value
    }
}
