import Foundation
import GRDB
package import KeyVaultRelay
import KeyVaultSQLite
#if canImport(Glibc)
import Glibc
package import KeyVaultProtocol
#endif

/// The embedded relay: one SQLite file (WAL) that every daemon on a host or a
/// shared volume opens at once. Writers commit, then ring a doorbell (rewrite
/// `PATH-doorbell`); readers are woken by inotify on the folder, not by a
/// timer. The doorbell matters: writes to `-wal` also wake readers, but they
/// can come before the commit is visible (SQLite publishes it through the
/// mmapped `-shm`, which inotify does not see), and a reader woken too early
/// would miss the record until the next write.
package final class SQLiteRelay: RelayStore {
    private let pool: DatabasePool
    private let watcher: FileWatcher
    package let path: String
    private var doorbell: String { path + "-doorbell" }
    /// The file this relay opened (device and inode): a file deleted or
    /// replaced under it is another store, and operations say so instead of
    /// going on with the old one.
    private let opened: (dev: UInt64, ino: UInt64)?

    /// `migrating: false` leaves the schema as it is, for the relay service to judge
    /// (`schemaStatus()`, then `migrate()`); daemons sharing a file migrate it at once.
    package init(path: String, migrating: Bool = true) throws {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "relay"
        do {
            try SharedSQLiteFile.refuseLinks(at: path)
            if !FileManager.default.fileExists(atPath: path) { try SharedSQLiteFile.refuseUncreatable(at: path) }
        } catch {
            throw RelayError.unreachable("\(error)")
        }
        // Daemons opening a fresh relay at once race to switch it to WAL and to migrate it.
        pool = try SharedSQLiteFile.openPool(path: path, configuration: configuration)
        if migrating { try SharedSQLiteFile.migrate(Self.migrator, pool) }
        opened = Self.identity(of: path)
        let url = URL(fileURLWithPath: path)
        watcher = try FileWatcher(directory: url.deletingLastPathComponent().path, namePrefix: url.lastPathComponent)
    }

    /// The migrations this file records as applied, against this build's.
    package func schemaStatus() throws -> SchemaStatus {
        SchemaStatus(known: Self.knownMigrations, applied: try pool.read { try Self.migrator.appliedIdentifiers($0) })
    }

    /// This build's migrations, in the order they run.
    package static var knownMigrations: [String] { migrator.migrations }

    /// Applies what this build's schema lacks, each migration in its own transaction.
    package func migrate() throws {
        try SharedSQLiteFile.migrate(Self.migrator, pool)
    }

    /// What makes a record other than a log entry the same record: stored once.
    private static let identity = "(account, kind, ifnull(recipient, ''), body)"

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("relay-v1") { db in
            try db.execute(sql: """
                CREATE TABLE records (
                    cursor INTEGER PRIMARY KEY AUTOINCREMENT,
                    kind TEXT NOT NULL CHECK (kind IN ('request', 'log', 'share', 'ack')),
                    account TEXT NOT NULL,
                    recipient TEXT,
                    log_seq INTEGER,
                    body BLOB NOT NULL,
                    created_at REAL NOT NULL
                );
                CREATE UNIQUE INDEX records_log_seq ON records (account, log_seq) WHERE kind = 'log';
                CREATE INDEX records_recipient ON records (recipient) WHERE kind = 'share';
                """)
        }
        migrator.registerMigration("relay-v2") { db in
            // Enrollment challenges and reveals (commit-challenge-reveal pairing codes).
            try db.execute(sql: """
                CREATE TABLE records_v2 (
                    cursor INTEGER PRIMARY KEY AUTOINCREMENT,
                    kind TEXT NOT NULL CHECK (kind IN ('request', 'challenge', 'reveal', 'log', 'share', 'ack')),
                    account TEXT NOT NULL,
                    recipient TEXT,
                    log_seq INTEGER,
                    body BLOB NOT NULL,
                    created_at REAL NOT NULL
                );
                INSERT INTO records_v2 SELECT * FROM records;
                DROP TABLE records;
                ALTER TABLE records_v2 RENAME TO records;
                CREATE UNIQUE INDEX records_log_seq ON records (account, log_seq) WHERE kind = 'log';
                CREATE INDEX records_recipient ON records (recipient) WHERE kind = 'share';
                """)
        }
        migrator.registerMigration("relay-v3") { db in
            // Devices read per account, after their own cursor.
            try db.execute(sql: "CREATE INDEX records_account ON records (account, cursor)")
        }
        migrator.registerMigration("relay-v4") { db in
            // A record other than a log entry is stored once (idempotent by what it is); the first of
            // any duplicates stored before is kept.
            try db.execute(sql: """
                DELETE FROM records WHERE kind <> 'log' AND EXISTS (
                    SELECT 1 FROM records o WHERE o.account = records.account AND o.kind = records.kind
                    AND o.recipient IS records.recipient AND o.body = records.body AND o.cursor < records.cursor);
                CREATE UNIQUE INDEX records_identity ON records \(identity) WHERE kind <> 'log';
                """)
        }
        migrator.registerMigration("relay-v5") { db in
            // Each account numbers its own cursors, as on PostgreSQL: another account's writes no
            // longer move them. `seq` keeps the file's own order (what wake-ups scan). A trigger numbers
            // each row as it is inserted, from the account's row in `account_cursors`, which outlives
            // pruned rows. Existing rows keep their cursors, and every account counts on from the
            // largest cursor ever handed out, so no reader's cursor can be passed by a new row.
            try db.execute(sql: """
                CREATE TABLE account_cursors (account TEXT PRIMARY KEY, last INTEGER NOT NULL);
                INSERT INTO account_cursors (account, last)
                    SELECT DISTINCT account, (SELECT seq FROM sqlite_sequence WHERE name = 'records') FROM records;
                CREATE TABLE records_v5 (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    cursor INTEGER,
                    kind TEXT NOT NULL CHECK (kind IN ('request', 'challenge', 'reveal', 'log', 'share', 'ack')),
                    account TEXT NOT NULL,
                    recipient TEXT,
                    log_seq INTEGER,
                    body BLOB NOT NULL,
                    created_at REAL NOT NULL
                );
                INSERT INTO records_v5 (seq, cursor, kind, account, recipient, log_seq, body, created_at)
                    SELECT cursor, cursor, kind, account, recipient, log_seq, body, created_at FROM records;
                DROP TABLE records;
                ALTER TABLE records_v5 RENAME TO records;
                CREATE UNIQUE INDEX records_log_seq ON records (account, log_seq) WHERE kind = 'log';
                CREATE INDEX records_recipient ON records (recipient) WHERE kind = 'share';
                CREATE UNIQUE INDEX records_account ON records (account, cursor);
                CREATE UNIQUE INDEX records_identity ON records \(identity) WHERE kind <> 'log';
                CREATE TRIGGER records_cursor AFTER INSERT ON records WHEN NEW.cursor IS NULL BEGIN
                    INSERT OR IGNORE INTO account_cursors (account, last) VALUES (NEW.account, 0);
                    UPDATE account_cursors SET last = last + 1 WHERE account = NEW.account;
                    UPDATE records SET cursor = (SELECT last FROM account_cursors WHERE account = NEW.account) WHERE seq = NEW.seq;
                END;
                """)
        }
        return migrator
    }

    package func publish(_ record: RelayRecord) async throws {
        try await publish(batch: [record])
    }

    /// Closes the file's connections (the relay is being dropped for a fresh one). On a thread of its
    /// own: the close waits for every reader to be given back, and readers run on Dispatch's global
    /// queues, whose threads are the concurrency pool's (as many as cores). Two closes blocking the
    /// pool's two threads left no thread to run the reads they waited for: a deadlock.
    package func shutdown() async {
        let pool = pool
        await withCheckedContinuation { (closed: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                try? pool.close()
                closed.resume()
            }
        }
    }

    private static func identity(of path: String) -> (dev: UInt64, ino: UInt64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Whether `path` still names the file that was opened.
    private static func isStill(_ opened: (dev: UInt64, ino: UInt64)?, at path: String) -> Bool {
        guard let opened, let now = identity(of: path) else { return false }
        return now == opened
    }

    /// Throws `unreachable` if the file at `path` is no longer the one opened.
    private func checkSameFile() throws {
        guard Self.isStill(opened, at: path) else {
            throw RelayError.unreachable("the relay file \(path) was deleted or replaced since it was opened")
        }
    }

    /// One transaction, one commit: the other daemons are woken once.
    package func publish(batch records: [RelayRecord]) async throws {
        try await publish(batch: records, nonce: nil)
    }

    /// The relay service's write: its nonce goes in `service_request_nonces` (which the service
    /// makes at its start, `RequestNonce.sqliteTable`), in the same transaction.
    package func publish(batch records: [RelayRecord], spending nonce: RequestNonce) async throws -> StoredBatch {
        precondition(records.allSatisfy { $0.account == nonce.account }, "a signed write is one account's")
        return try await publish(batch: records, nonce: nonce) ?? StoredBatch(account: nonce.account, after: .start, through: .start, rows: [])
    }

    /// With a nonce (one account's write): what it stored, read back in its transaction.
    @discardableResult
    private func publish(batch records: [RelayRecord], nonce: RequestNonce?) async throws -> StoredBatch? {
        try checkSameFile()
        let stored: StoredBatch?
        do {
            stored = try await pool.write { db in
                try nonce?.spend(in: db)
                let last = "SELECT last FROM account_cursors WHERE account = ?"
                let before = try nonce.map { try RelayCursor.fetchOne(db, sql: last, arguments: [$0.account.rawValue]) ?? .start }
                let now = Date().timeIntervalSince1970
                for record in records {
                    try db.execute(sql: """
                        INSERT INTO records (kind, account, recipient, log_seq, body, created_at) VALUES (?, ?, ?, ?, ?, ?)
                        ON CONFLICT \(Self.identity) WHERE kind <> 'log' DO NOTHING
                        """,
                                   arguments: [record.kind.rawValue, record.account.rawValue, record.recipient,
                                               record.logSeq.map(\.stored), Data(record.body), now])
                }
                guard let nonce, let before else { return nil }
                // The trigger numbers each row it inserts from the account's counter, which this
                // transaction holds: the rows past `before` are this write's, and only they.
                let through = try RelayCursor.fetchOne(db, sql: last, arguments: [nonce.account.rawValue]) ?? before
                let rows = try Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM records WHERE account = ? AND cursor > ? ORDER BY cursor",
                                            arguments: [nonce.account.rawValue, before]).compactMap(Self.relayRow)
                return StoredBatch(account: nonce.account, after: before, through: through, rows: rows)
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw RelayError.logSeqTaken(records.first { $0.logSeq != nil }?.logSeq ?? 0)
        }
        // A signed write's doorbell is `announce`'s, once the service has woken its own readers.
        if nonce == nil { ringDoorbell() }
        return stored
    }

    package func announce(_ batch: StoredBatch) {
        if !batch.rows.isEmpty { ringDoorbell() }
    }

    package func ping() async throws {
        try checkSameFile()
        _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    package func remove(account: AccountID, cursors: [RelayCursor]) async throws {
        guard !cursors.isEmpty else { return }
        try checkSameFile()
        // `account_cursors` outlives the rows: a deleted cursor, even the highest, is never handed out again.
        try await pool.write { db in
            for chunk in stride(from: 0, to: cursors.count, by: 500) {
                let part = Array(cursors[chunk..<min(chunk + 500, cursors.count)])
                try db.execute(sql: "DELETE FROM records WHERE account = ? AND cursor IN (\(databaseQuestionMarks(count: part.count)))",
                               arguments: StatementArguments([account.rawValue] + part.map { $0 as (any DatabaseValueConvertible) }))
            }
        }
    }

    /// After the commit: one close-after-write on the doorbell file wakes every reader.
    ///
    /// The relay's folder may be writable by others (that is what a shared relay is),
    /// so the doorbell is opened without following a link, never truncated, and
    /// written only if it is a plain one-byte-at-most file with one name: a link or a
    /// hard link planted there to another file (the vault) is left untouched, and
    /// readers are then woken by the `-wal` write alone.
    private func ringDoorbell() {
        let fd = open(doorbell, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink == 1, info.st_size <= 1 else { return }
        var byte: UInt8 = 1
        _ = pwrite(fd, &byte, 1, 0)
    }

    /// A body larger than any record can be is read as empty (it fails to verify
    /// like any junk, and its cursor is passed): whoever writes the file must not
    /// make a reader hold megabytes per row.
    private static let columns = "cursor, kind, account, recipient, log_seq, CASE WHEN length(body) > \(RelayRecord.maxBodyByteCount) THEN x'' ELSE body END AS body"

    package func rows(account: AccountID, after cursor: RelayCursor, limit: Int) async throws -> [RelayRow] {
        try checkSameFile()
        return try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM records WHERE account = ? AND cursor > ? ORDER BY cursor LIMIT ?",
                             arguments: [account.rawValue, cursor, limit]).compactMap(Self.relayRow)
        }
    }

    package func rows(account: AccountID, after cursor: RelayCursor, limit: Int, byteBudget: Int) async throws -> [RelayRow] {
        try checkSameFile()
        return try await pool.read { db in
            // The page's cursors and sizes first (SQLite reads a blob's length without its bytes), then
            // the bodies of those that fit, in the same snapshot.
            let sized = try Row.fetchAll(db, sql: """
                SELECT cursor, min(length(body), \(RelayRecord.maxBodyByteCount)) AS size FROM records \
                WHERE account = ? AND cursor > ? ORDER BY cursor LIMIT ?
                """, arguments: [account.rawValue, cursor, limit])
            let fitting = PageBytes.fitting(sized.map { $0["size"] as Int }, byteBudget: byteBudget)
            guard fitting > 0 else { return [] }
            let through: Int64 = sized[fitting - 1]["cursor"]
            return try Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM records WHERE account = ? AND cursor > ? AND cursor <= ? ORDER BY cursor",
                                    arguments: [account.rawValue, cursor, through]).compactMap(Self.relayRow)
        }
    }

    package func lastCursor(account: AccountID) async throws -> RelayCursor {
        try checkSameFile()
        return try await pool.read { db in
            try RelayCursor.fetchOne(db, sql: "SELECT coalesce(MAX(cursor), 0) FROM records WHERE account = ?", arguments: [account.rawValue]) ?? .start
        }
    }

    package func handedOut(account: AccountID) async throws -> RelayCursor {
        try checkSameFile()
        return try await pool.read { db in
            try RelayCursor.fetchOne(db, sql: "SELECT last FROM account_cursors WHERE account = ?", arguments: [account.rawValue]) ?? .start
        }
    }

    package func rows(account: AccountID, kinds: [RelayRecord.Kind], through: RelayCursor) async throws -> [RelayRow] {
        guard !kinds.isEmpty else { return [] }
        try checkSameFile()
        return try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.columns) FROM records WHERE account = ? AND kind IN (\(databaseQuestionMarks(count: kinds.count))) \
                AND cursor <= ? ORDER BY cursor
                """, arguments: StatementArguments([account.rawValue as any DatabaseValueConvertible] + kinds.map { $0.rawValue as any DatabaseValueConvertible }
                                                       + [through as any DatabaseValueConvertible])).compactMap(Self.relayRow)
        }
    }

    package func removeShares(account: AccountID, recipient: DeviceID, through: RelayCursor) async throws -> Int {
        try checkSameFile()
        return try await pool.write { db in
            try db.execute(sql: "DELETE FROM records WHERE kind = 'share' AND recipient = ? AND account = ? AND cursor <= ?",
                           arguments: [recipient.hex, account.rawValue, through])
            return db.changesCount
        }
    }

    package func lastCursor() async throws -> RelayCursor? {
        try checkSameFile()
        return try await pool.read { db in try RelayCursor.fetchOne(db, sql: "SELECT coalesce(MAX(cursor), 0) FROM records") ?? .start }
    }

    package func rows(after cursor: RelayCursor, limit: Int) async throws -> [RelayRow] {
        try checkSameFile()
        return try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM records WHERE cursor > ? ORDER BY cursor, account LIMIT ?", arguments: [cursor, limit])
                .compactMap(Self.relayRow)
        }
    }

    private static func relayRow(_ row: Row) -> RelayRow? {
        // A row the relay mangled beyond parsing is skipped here; its contents are verified later.
        guard let kind = RelayRecord.Kind(rawValue: row["kind"]), let account = try? AccountID(validating: row["account"]) else { return nil }
        let seq: Int64? = row["log_seq"]
        let recipientText: String? = row["recipient"]
        let recipient = recipientText.flatMap { DeviceID(hex: $0) }
        guard recipient != nil || recipientText == nil else { return nil }
        return RelayRow(cursor: row["cursor"], record: RelayRecord(
            kind: kind, account: account, recipient: recipient, logSeq: seq.map(LogSeq.init(stored:)),
            body: [UInt8](row["body"] as Data)))
    }

    /// The doorbell cannot say which accounts a commit touched, so each ring
    /// reads which accounts have rows past the last `seq` (the file's own order)
    /// this stream saw (one read of the rowid range that landed since, whoever
    /// wrote it) and names them: a device then reads only its own accounts that
    /// changed. SQLite commits one writer at a time, so `seq`s become visible in
    /// order and nothing is passed over. If that read fails, the wake-up is `any`.
    package func wakeups() -> AsyncStream<RelayWake> {
        let (stream, continuation) = AsyncStream<RelayWake>.makeStream(bufferingPolicy: .unbounded)
        let pool = pool, path = path, opened = opened
        let events = watcher.events()
        // Where this stream starts, read now: a row committed after this call is past it.
        let start = (try? pool.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM records") }) ?? nil
        let task = Task {
            // Unknown start (the read failed): the first ring reads everything, as `any` would.
            var seen = start ?? 0
            for await _ in events {
                // The file was deleted or replaced: a pass finds out (and the relay is opened afresh).
                guard Self.isStill(opened, at: path) else {
                    continuation.yield(.any)
                    continue
                }
                let since = seen
                do {
                    let (touched, last) = try await pool.read { db -> (Set<AccountID>, Int64) in
                        var touched: Set<AccountID> = []
                        var last = since
                        // A range of the rowid, not a GROUP BY: the planner would answer that from the
                        // (account, cursor) index by scanning all of it, every account's rows.
                        for row in try Row.fetchAll(db, sql: "SELECT account, seq FROM records WHERE seq > ? ORDER BY seq",
                                                    arguments: [since]) {
                            if let account = try? AccountID(validating: row["account"]) { touched.insert(account) }
                            last = max(last, row["seq"])
                        }
                        return (touched, last)
                    }
                    seen = last
                    if !touched.isEmpty { continuation.yield(.accounts(touched)) }
                } catch {
                    continuation.yield(.any)
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
