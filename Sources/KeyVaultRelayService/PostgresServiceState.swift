import Foundation
import Logging
import NIOCore
import PostgresNIO
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelay
import KeyVaultRelayStore

/// Candidacies on the relay's PostgreSQL store, in tables of their own (made by
/// the store's migration `relay-v5`), so every instance on the database shares
/// the candidacy bounds. Each statement names one account: with the tables
/// distributed by account, each runs on that account's shard.
final class PostgresServiceState: ServiceState {
    private let client: PostgresClient
    private let configuration: PostgresRelayConfiguration
    private let logger: Logger
    private let task: Task<Void, Never>
    /// One account's operations hold at most one of the pool's four connections (issue 33).
    private let turns = AccountTurns(perAccount: 1)

    /// Opened after the store, whose migrations made the tables.
    init(_ configuration: PostgresRelayConfiguration, logger: Logger) throws {
        var options = try PostgresRelay.clientConfiguration(configuration)
        options.options.maximumConnections = 4
        let client = PostgresClient(configuration: options, backgroundLogger: logger)
        self.client = client
        self.configuration = configuration
        self.logger = logger
        task = Task { await client.run() }
    }

    /// How long one operation may wait for the database: past it the request answers
    /// `unavailable` at once (a query waits for a connection forever while the server is down).
    static let operationTimeout: Duration = .seconds(5)

    func file(_ candidate: Candidate, spending nonce: RequestNonce) async throws -> Filing {
        try await perform(candidate.account) { try await self.fileNow(candidate, nonce: nonce) }
    }

    func candidates(account: AccountID, now: Int64) async throws -> [Candidate] {
        try await perform(account) { try await self.candidatesNow(account: account, now: now) }
    }

    func signer(_ keyID: DeviceID, account: AccountID, now: Int64) async throws -> KnownSigner? {
        try await perform(account) { try await self.signerNow(keyID, account: account, now: now) }
    }

    func index(_ devices: [DeviceKeys], account: AccountID) async throws {
        try await perform(account) {
            try await self.client.withConnection { connection in
                for device in devices {
                    try await PostgresSignerIndex.add(device, account: account.rawValue, on: connection, logger: self.logger)
                }
            }
        }
    }

    /// Under the deadline and the account's turn, with PostgreSQL's errors told as `RelayError`s
    /// (`PostgresRelay.relayError`). A deadline spent waiting for the account's own turn is this
    /// request's failure (`storeRefused`), not the store's.
    private func perform<T: Sendable>(_ account: AccountID, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let turns = turns, tookTurn = AccountTurns.Taken(at: nil)
        do {
            return try await withDeadline(Self.operationTimeout) {
                try await turns.take(account.rawValue)
                tookTurn.set()
                defer { turns.give(account.rawValue) }
                return try await body()
            }
        } catch let error as RelayError {
            throw error
        } catch is DeadlineExceeded {
            if tookTurn.instant == nil {
                throw RelayError.storeRefused("\(configuration): no turn for this account within \(Self.operationTimeout)")
            }
            throw RelayError.unreachable("\(configuration): no answer within \(Self.operationTimeout)")
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw PostgresRelay.relayError(error, configuration: configuration)
        }
    }

    /// One transaction under the account's advisory lock, so two instances filing at once count each other;
    /// the request's nonce is spent in it.
    private func fileNow(_ candidate: Candidate, nonce: RequestNonce) async throws -> Filing {
        let account = candidate.account.rawValue, now = candidate.filedAt, deviceID = candidate.deviceID
        let signing = ByteBuffer(bytes: candidate.signing.rawRepresentation), box = ByteBuffer(bytes: candidate.box.rawRepresentation)
        let logger = logger
        return try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            do {
                // Drained, so a lock not granted in time is this statement's error, not the next one's.
                for try await _ in try await connection.query(
                    "SELECT pg_advisory_xact_lock(hashtext('keyvault-candidates:' || \(account)))", logger: logger) {}
                try await PostgresPublish.spend(nonce, on: connection, logger: logger)
                try await connection.query("DELETE FROM keyvault_service_filings WHERE account = \(account) AND at <= \(now - Bounds.hourMillis)", logger: logger)
                var filings: [Int64] = []
                for try await at in try await connection.query(
                    "SELECT at FROM keyvault_service_filings WHERE account = \(account) ORDER BY at", logger: logger).decode(Int64.self) {
                    filings.append(at)
                }
                if filings.count >= Bounds.filingsPerHour {
                    // Refused, and the nonce with it: a retry after Retry-After signs anew anyway.
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
                var evicted: [DeviceID] = []
                for try await device in try await connection.query("""
                    DELETE FROM keyvault_service_candidates WHERE account = \(account) AND device_id <> \(deviceID.hex) AND device_id NOT IN (
                    SELECT device_id FROM keyvault_service_candidates WHERE account = \(account) ORDER BY filed_at DESC LIMIT \(Int64(Bounds.liveCandidates))) \
                    RETURNING device_id
                    """, logger: logger).decode(String.self) {
                    if let id = DeviceID(hex: device) { evicted.append(id) }
                }
                try await connection.query("COMMIT", logger: logger)
                return .filed(evicted: evicted)
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

    /// Each query's rows are read to the end (one at most): a sequence left unread keeps its connection.
    private func signerNow(_ keyID: DeviceID, account: AccountID, now: Int64) async throws -> KnownSigner? {
        var indexed: [ByteBuffer] = []
        for try await signing in try await client.query("""
            SELECT signing FROM keyvault_service_signers WHERE account = \(account.rawValue) AND device_id = \(keyID.hex)
            """, logger: logger).decode(ByteBuffer.self) {
            indexed.append(signing)
        }
        if let signing = indexed.first {
            return (try? SigningPublicKey(rawRepresentation: Array(signing.readableBytesView))).map(KnownSigner.indexed)
        }
        var candidate: KnownSigner?
        for try await (signing, filedAt) in try await client.query("""
            SELECT signing, filed_at FROM keyvault_service_candidates \
            WHERE account = \(account.rawValue) AND device_id = \(keyID.hex) AND filed_at > \(now - Bounds.candidateLifeMillis)
            """, logger: logger).decode((ByteBuffer, Int64).self) {
            if candidate == nil, let key = try? SigningPublicKey(rawRepresentation: Array(signing.readableBytesView)) {
                candidate = .candidate(key, until: filedAt + Bounds.candidateLifeMillis)
            }
        }
        return candidate
    }

    func shutdown() async {
        task.cancel()
        await task.value
    }
}
