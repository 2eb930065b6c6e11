package import Logging
import NIOCore
package import PostgresNIO
import KeyVaultProtocol
package import KeyVaultRelay

/// One account's part of a publish, as the statements PROTOCOL.md gives
/// ("The PostgreSQL relay", Writes), each of which names that one account and
/// so runs on the account's shard alone when the tables are distributed by it:
///
/// 1. the account's row in `keyvault_account_cursors` bumped by the count,
///    `RETURNING` the new last cursor; the row stays locked until the commit,
///    so the account's writers take turns and its cursors commit in order;
/// 2. the write's nonce, if it has one, inserted (none inserted: spent); when
///    the write's cursors pass a multiple of `sweepEvery`, the account's spent
///    nonces older than their life are swept first (a statement every write
///    would be a round trip on every write's way);
/// 3. the log entries, numbered by their place in the batch, `ON CONFLICT` on
///    their log number `DO NOTHING`: one that comes back missing was taken;
/// 4. the other records, `ON CONFLICT` on what they are `DO NOTHING`
///    (records other than log entries are idempotent);
///
/// After the commit, `PostgresNotifier` sends `pg_notify` with the account, if
/// anything was stored: not in this transaction, where its commit lock would be
/// one that every account's writes share.
///
/// What a taken log number is, the statement says (its conflict target), so
/// the answer does not depend on what the server names the index (Citus names
/// each shard's own).
package struct PostgresPublish {
    let account: AccountID
    let records: [RelayRecord]
    let nonce: RequestNonce?

    /// Sent on a connection inside `BEGIN … COMMIT`; throws `nonceSpent` or `logSeqTaken` for the caller to roll back.
    /// The rows it stored, with their cursors (none: the account's wake-up is not owed).
    func send(on connection: PostgresConnection, logger: Logger) async throws -> StoredBatch {
        let account = account.rawValue
        var last: Int64 = 0
        for try await value in try await connection.query("""
            INSERT INTO keyvault_account_cursors AS c (account, last) VALUES (\(account), \(Int64(records.count))) \
            ON CONFLICT (account) DO UPDATE SET last = c.last + EXCLUDED.last RETURNING c.last
            """, logger: logger).decode(Int64.self) {
            last = value
        }
        let first = last - Int64(records.count) + 1
        if let nonce {
            try await Self.spend(nonce, on: connection, sweeping: (first - 1) / Self.sweepEvery != last / Self.sweepEvery, logger: logger)
        }
        let numbered = records.enumerated().map { (cursor: first + Int64($0.offset), record: $0.element) }
        // Each insert answers the cursors it took: a log entry missing among them lost its number,
        // another record was held already.
        var kept: Set<Int64> = []
        let entries = numbered.filter { $0.record.kind == .log }
        if !entries.isEmpty {
            for try await cursor in try await connection.query(
                insert(entries, onConflict: "(account, log_seq) WHERE kind = 'log' DO NOTHING RETURNING cursor"), logger: logger).decode(Int64.self) {
                kept.insert(cursor)
            }
            if let taken = entries.first(where: { !kept.contains($0.cursor) }) {
                throw RelayError.logSeqTaken(taken.record.logSeq ?? 0)
            }
        }
        let others = numbered.filter { $0.record.kind != .log }
        if !others.isEmpty {
            for try await cursor in try await connection.query(
                insert(others, onConflict: "\(PostgresRelaySchema.identityColumns) WHERE kind <> 'log' DO NOTHING RETURNING cursor"), logger: logger).decode(Int64.self) {
                kept.insert(cursor)
            }
        }
        return StoredBatch(account: self.account, after: RelayCursor(first - 1), through: RelayCursor(last),
                           rows: numbered.filter { kept.contains($0.cursor) }.map { RelayRow(cursor: RelayCursor($0.cursor), record: $0.record) })
    }

    /// One multi-row `INSERT … VALUES`, the account bound once and named by every row.
    private func insert(_ rows: [(cursor: Int64, record: RelayRecord)], onConflict: String) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: 1 + rows.count * 5)
        bindings.append(account.rawValue)
        var values: [String] = []
        values.reserveCapacity(rows.count)
        for (index, row) in rows.enumerated() {
            let p = 2 + index * 5
            values.append("($\(p), $1, $\(p + 1), $\(p + 2), $\(p + 3), $\(p + 4))")
            bindings.append(row.cursor)
            bindings.append(row.record.kind.rawValue)
            bindings.append(row.record.recipient?.hex)
            bindings.append(row.record.logSeq?.stored)
            bindings.append(ByteBuffer(bytes: row.record.body))
        }
        return PostgresQuery(unsafeSQL: """
            INSERT INTO keyvault_records (cursor, account, kind, recipient, log_seq, body) VALUES \(values.joined(separator: ", ")) \
            ON CONFLICT \(onConflict)
            """, binds: bindings)
    }

    /// A publish sweeps its account's spent nonces once its cursors pass a multiple of this: an
    /// account keeps at most this many writes' nonces past their life, besides those of an idle spell.
    static let sweepEvery: Int64 = 16

    /// Spends a write's nonce inside the write's transaction (a publish's, a candidacy's): the account's
    /// spent nonces past their life are swept if `sweeping`, then this one is inserted; none inserted: spent before.
    package static func spend(_ nonce: RequestNonce, on connection: PostgresConnection, sweeping: Bool = true, logger: Logger) async throws {
        let account = nonce.account.rawValue
        if sweeping {
            try await connection.query("""
                DELETE FROM keyvault_request_nonces WHERE account = \(account) AND created < \(nonce.sweepBefore)
                """, logger: logger)
        }
        var spent = true
        for try await _ in try await connection.query("""
            INSERT INTO keyvault_request_nonces (account, keyid, nonce, created) \
            VALUES (\(account), \(nonce.keyID.hex), \(nonce.nonce), \(nonce.created)) ON CONFLICT DO NOTHING RETURNING 1
            """, logger: logger) {
            spent = false
        }
        if spent { throw RelayError.nonceSpent }
    }
}
