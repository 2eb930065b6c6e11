package import Foundation
import GRDB
import KeyVaultSQLite
package import KeyVaultIDs
package import KeyVaultCrypto
package import KeyVaultProtocol
package import KeyVaultAccount

/// The local vault: one SQLite database (WAL) in the data directory. It stores
/// public facts in the clear and every secret wrapped; it never sees a KEK or
/// an unwrapped key.
package final class Vault: Sendable {
    package static let fileName = "vault.sqlite"
    private let pool: DatabasePool
    package let path: String

    /// Opens (creating and migrating if needed) the vault in `directory`, which
    /// is made 0700; the database files are 0600.
    package init(directory: String) throws {
        try DataDirectory.prepare(directory)
        path = directory + "/" + Self.fileName
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.foreignKeysEnabled = true
        configuration.label = "vault"
        // Deleted secrets (shredded keys, old wrappings) are overwritten, not left in free pages.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA secure_delete = ON") }
        pool = try SharedSQLiteFile.openPool(path: path, configuration: configuration)
        try SharedSQLiteFile.migrate(VaultSchema.migrator, pool)
        try DataDirectory.restrictFiles(in: directory)
    }

    // MARK: Reading

    package func loadAll() throws -> [AccountSnapshot] {
        try pool.read { db in
            let accounts = try Row.fetchAll(db, sql: "SELECT * FROM accounts ORDER BY id").map(Self.account)
            return try accounts.map { account in
                let generations = try Row.fetchAll(db, sql: "SELECT * FROM generations WHERE account = ? ORDER BY generation, key_id",
                                                   arguments: [account.id.rawValue]).map(Self.generation)
                let items = try Row.fetchAll(db, sql: "SELECT * FROM items WHERE account = ? ORDER BY kind, generation, key_id",
                                             arguments: [account.id.rawValue]).map(Self.item)
                let log = try Data.fetchAll(db, sql: "SELECT entry FROM circle_log WHERE account = ? ORDER BY seq",
                                            arguments: [account.id.rawValue]).map { [UInt8]($0) }
                let enrollmentRow = try Row.fetchOne(db, sql: "SELECT request, pairing_secret FROM enrollment WHERE account = ?", arguments: [account.id.rawValue])
                let enrollment: Data? = enrollmentRow?["request"]
                let secret: Data? = enrollmentRow?["pairing_secret"]
                var failures: [DeviceID: Int] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT device_id, failures FROM approval_attempts WHERE account = ?", arguments: [account.id.rawValue]) {
                    failures[try row.id("device_id")] = row["failures"]
                }
                var snapshot = AccountSnapshot(account: account, generations: generations, items: items, circleLog: log,
                                               enrollment: enrollment.map { [UInt8]($0) }, pairingSecret: secret.map { [UInt8]($0) }, approvalFailures: failures)
                snapshot.logConfirmed = try Int.fetchOne(db, sql: "SELECT log_confirmed FROM accounts WHERE id = ?", arguments: [account.id.rawValue]) ?? 0
                snapshot.outbox = try Self.outbox(account.id, db: db)
                snapshot.owedDeliveries = try Row.fetchAll(db, sql: "SELECT key_id, recipient FROM owed_deliveries WHERE account = ?", arguments: [account.id.rawValue])
                    .map { OwedDelivery(keyID: try $0.id("key_id"), recipient: try $0.optionalID("recipient")) }
                for row in try Row.fetchAll(db, sql: "SELECT key_id, deadline FROM promotion_deadlines WHERE account = ?", arguments: [account.id.rawValue]) {
                    snapshot.promotionDeadlines[try row.id("key_id")] = Date(timeIntervalSince1970: row["deadline"])
                }
                snapshot.relayCursor = try RelayCursor.fetchOne(db, sql: "SELECT relay_cursor FROM accounts WHERE id = ?", arguments: [account.id.rawValue]) ?? .start
                snapshot.relayNotes = try Row.fetchAll(db, sql: "SELECT cursor, kind, body, seen_at FROM relay_notes WHERE account = ? ORDER BY cursor",
                                                       arguments: [account.id.rawValue]).compactMap { row in
                    guard let kind = RelayRecord.Kind(rawValue: row["kind"]) else { return nil }
                    return RelayNote(cursor: row["cursor"], kind: kind, body: [UInt8](row["body"] as Data), seenAt: Date(timeIntervalSince1970: row["seen_at"]))
                }
                snapshot.dismissedRequests = Set(try Row.fetchAll(db, sql: "SELECT device_id FROM dismissed_requests WHERE account = ?", arguments: [account.id.rawValue])
                    .map { try $0.id("device_id") })
                snapshot.revealed = try Bool.fetchOne(db, sql: "SELECT revealed FROM enrollment WHERE account = ?", arguments: [account.id.rawValue]) ?? false
                return snapshot
            }
        }
    }

    package func snapshot(of id: AccountID) throws -> AccountSnapshot? {
        try loadAll().first { $0.account.id == id }
    }

    // MARK: Writing

    /// Writes a new account with its generations and items in one transaction,
    /// with `enqueue` in its outbox: what it owes the relay is never published
    /// before it exists here.
    package func insert(_ snapshot: AccountSnapshot, enqueue: [RelayRecord] = []) async throws {
        try await pool.write { db in
            let a = snapshot.account
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM accounts WHERE id = ?", arguments: [a.id.rawValue]) == true {
                throw VaultError.accountExists
            }
            try db.execute(sql: """
                INSERT INTO accounts (id, created_at, kdf_algorithm, kdf_ops, kdf_mem, kdf_salt, accessibility, device_id,
                    signing_public_key, box_public_key, current_generation, failed_unlocks, backoff_until, device_name, log_confirmed, current_key_id)
                VALUES (?, ?, 'argon2id13', ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?)
                """, arguments: [a.id.rawValue, a.createdAt.timeIntervalSince1970, Int64(a.kdf.opsLimit), Int64(a.kdf.memLimitBytes),
                                 Data(a.salt), a.accessibility.rawValue, a.deviceID, Data(a.signingPublicKey.rawRepresentation),
                                 Data(a.boxPublicKey.rawRepresentation), a.currentGeneration?.value ?? 0, a.deviceName, snapshot.logConfirmed, a.currentKeyID?.hex ?? ""])
            for generation in snapshot.generations { try Self.insert(generation, account: a.id, db: db) }
            for item in snapshot.items { try Self.insert(item, db: db) }
            for (seq, entry) in snapshot.circleLog.enumerated() {
                try db.execute(sql: "INSERT INTO circle_log (account, seq, entry) VALUES (?, ?, ?)", arguments: [a.id.rawValue, seq, Data(entry)])
            }
            if let request = snapshot.enrollment {
                try db.execute(sql: "INSERT INTO enrollment (account, request, pairing_secret) VALUES (?, ?, ?)",
                               arguments: [a.id.rawValue, Data(request), snapshot.pairingSecret.map { Data($0) }])
            }
            _ = try Self.enqueue(enqueue, account: a.id, db: db)
        }
    }

    /// Replaces the KDF salt and cost and every item's wrapping in one
    /// transaction: a crash leaves either the old passphrase or the new one.
    /// Refuses if the items changed since they were read.
    package func rewrap(account: AccountID, salt: [UInt8], kdf: KDFParameters, items: [StoredItem]) async throws {
        try await pool.write { db in
            let stored = try Row.fetchAll(db, sql: "SELECT kind, generation, key_id FROM items WHERE account = ?", arguments: [account.rawValue])
                .map { "\($0["kind"] as String)/\($0["generation"] as Int)/\(try $0.optionalID("key_id").map(\KeyID.hex) ?? "")" }
            let rewritten = items.map { "\($0.attributes.kind.rawValue)/\($0.attributes.generation)/\($0.attributes.keyID?.hex ?? "")" }
            guard Set(stored) == Set(rewritten), stored.count == rewritten.count else {
                throw VaultError.corrupt("the account's items changed during the passphrase change")
            }
            try db.execute(sql: "UPDATE accounts SET kdf_salt = ?, kdf_ops = ?, kdf_mem = ? WHERE id = ?",
                           arguments: [Data(salt), Int64(kdf.opsLimit), Int64(kdf.memLimitBytes), account.rawValue])
            for item in items {
                try db.execute(sql: "UPDATE items SET wrapped = ?, modified_at = ? WHERE account = ? AND kind = ? AND generation = ? AND key_id = ?",
                               arguments: [Data(item.wrapped), item.attributes.modificationDate.timeIntervalSince1970,
                                           account.rawValue, item.attributes.kind.rawValue, item.attributes.generation, item.attributes.keyID?.hex ?? ""])
            }
        }
    }

    /// Persists the unlock back-off so a restart does not reset it.
    package func recordUnlockAttempt(account: AccountID, failures: Int, backoffUntil: Date) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE accounts SET failed_unlocks = ?, backoff_until = ? WHERE id = ?",
                           arguments: [failures, backoffUntil.timeIntervalSince1970, account.rawValue])
        }
    }

    /// Appends verified circle log entries (already-stored numbers are kept as
    /// they are). `confirmed`: how many leading entries the relay now holds.
    /// This device's own new entry comes with what it owes for it (shares of an
    /// announced key, a promotion deadline), in the same transaction.
    /// `current`: the key the log now makes current (docs/FORMAT.md, `current_generation`, `current_key_id`).
    package func appendLog(account: AccountID, entries: [(seq: LogSeq, bytes: [UInt8])], confirmed: Int? = nil, current: CurrentKey? = nil,
                          owe deliveries: [OwedDelivery] = [], promotionDeadline: (keyID: KeyID, at: Date)? = nil,
                          enqueue records: [RelayRecord] = []) async throws {
        try await pool.write { db in
            if let current { try Self.setCurrent(current, account: account, db: db) }
            _ = try Self.enqueue(records, account: account, db: db)
            for entry in entries {
                try db.execute(sql: "INSERT OR IGNORE INTO circle_log (account, seq, entry) VALUES (?, ?, ?)",
                               arguments: [account.rawValue, entry.seq.stored, Data(entry.bytes)])
            }
            if let confirmed { try Self.setConfirmed(confirmed, account: account, db: db) }
            for owed in deliveries {
                try db.execute(sql: "INSERT OR IGNORE INTO owed_deliveries (account, key_id, recipient) VALUES (?, ?, ?)",
                               arguments: [account.rawValue, owed.keyID, owed.recipient?.hex ?? ""])
            }
            if let promotionDeadline {
                try db.execute(sql: "INSERT OR REPLACE INTO promotion_deadlines (account, key_id, deadline) VALUES (?, ?, ?)",
                               arguments: [account.rawValue, promotionDeadline.keyID, promotionDeadline.at.timeIntervalSince1970])
            }
        }
    }

    /// Moves the account's relay cursor on, keeping the records this device
    /// needs to rebuild its view at start, in one transaction. The cursor only grows.
    package func advanceRelayCursor(account: AccountID, to cursor: RelayCursor, keep notes: [RelayNote]) async throws {
        try await pool.write { db in
            for note in notes {
                try db.execute(sql: "INSERT OR IGNORE INTO relay_notes (account, cursor, kind, body, seen_at) VALUES (?, ?, ?, ?, ?)",
                               arguments: [account.rawValue, note.cursor, note.kind.rawValue, Data(note.body), note.seenAt.timeIntervalSince1970])
            }
            try db.execute(sql: "UPDATE accounts SET relay_cursor = max(relay_cursor, ?) WHERE id = ?", arguments: [cursor, account.rawValue])
        }
    }

    /// Reads the account from the relay's start again: its reading cursor goes back to 0 and the
    /// relay records it keeps are renumbered below every cursor a relay hands out (-n … -1, in
    /// their order), so none is taken for a row read again. Renumbered, not shifted: the cursors
    /// are the relay's numbers (a hostile relay's up to 2^63 - 1), and a shift on each restart
    /// would overflow. Answers each kept record's new cursor by its old one.
    package func restartRelayReading(account: AccountID) async throws -> [RelayCursor: RelayCursor] {
        try await pool.write { db in
            let notes = try Row.fetchAll(db, sql: "SELECT cursor, kind, body, seen_at FROM relay_notes WHERE account = ? ORDER BY cursor",
                                         arguments: [account.rawValue])
            try db.execute(sql: "DELETE FROM relay_notes WHERE account = ?", arguments: [account.rawValue])
            let renumbered = Self.renumberedBelowStart(notes.map { RelayCursor($0["cursor"] as Int64) })
            for note in notes {
                let new = renumbered[RelayCursor(note["cursor"] as Int64)]!
                try db.execute(sql: "INSERT INTO relay_notes (account, cursor, kind, body, seen_at) VALUES (?, ?, ?, ?, ?)",
                               arguments: [account.rawValue, new, note["kind"] as DatabaseValue, note["body"] as DatabaseValue, note["seen_at"] as DatabaseValue])
            }
            try db.execute(sql: "UPDATE accounts SET relay_cursor = 0 WHERE id = ?", arguments: [account.rawValue])
            return renumbered
        }
    }

    /// `cursors` (distinct, in increasing order) numbered -n … -1 in their order: below every
    /// cursor a relay hands out, whatever numbers they had (no arithmetic on them).
    package static func renumberedBelowStart(_ cursors: [RelayCursor]) -> [RelayCursor: RelayCursor] {
        Dictionary(uniqueKeysWithValues: cursors.enumerated().map { index, old in (old, RelayCursor(Int64(index - cursors.count))) })
    }

    /// Forgets kept relay records that are done with (a share taken in, a request answered).
    package func dropRelayNotes(account: AccountID, cursors: [RelayCursor]) async throws {
        guard !cursors.isEmpty else { return }
        try await pool.write { db in
            for cursor in cursors {
                try db.execute(sql: "DELETE FROM relay_notes WHERE account = ? AND cursor = ?", arguments: [account.rawValue, cursor])
            }
        }
    }

    /// A person dismissed a request to join: it is neither answered nor listed again.
    package func dismissRequest(account: AccountID, deviceID: DeviceID) async throws {
        try await pool.write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO dismissed_requests (account, device_id) VALUES (?, ?)", arguments: [account.rawValue, deviceID])
        }
    }

    /// A joining device asks again (its exchange failed or ended): the new request
    /// replaces the old one and goes into the outbox, in one transaction.
    package func renewEnrollment(account: AccountID, request: [UInt8], enqueue record: RelayRecord) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE enrollment SET request = ?, pairing_secret = NULL, revealed = 0 WHERE account = ?",
                           arguments: [Data(request), account.rawValue])
            guard db.changesCount == 1 else { throw VaultError.corrupt("no enrollment request to renew for \(account)") }
            _ = try Self.enqueue([record], account: account, db: db)
        }
    }

    /// A joining device confirmed its exchange: the exchange's key, wrapped under the
    /// KEK (AAD kind `pairing-key`), waits for the approval across a restart.
    package func keepPairingKey(account: AccountID, wrapped: [UInt8]) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE enrollment SET pairing_secret = ? WHERE account = ?", arguments: [Data(wrapped), account.rawValue])
        }
    }

    /// The device joined: its request is no longer needed.
    package func finishEnrollment(account: AccountID) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM enrollment WHERE account = ?", arguments: [account.rawValue])
        }
    }

    /// Records that the relay holds the first `count` entries.
    package func confirmLog(account: AccountID, through count: Int) async throws {
        try await pool.write { db in try Self.setConfirmed(count, account: account, db: db) }
    }

    /// A rebase: replaces the entries from `seq` on (this device's own, not on
    /// the relay) with `entries`, in one transaction.
    package func replaceLog(account: AccountID, from seq: LogSeq, entries: [(seq: LogSeq, bytes: [UInt8])], confirmed: Int, current: CurrentKey? = nil) async throws {
        try await pool.write { db in
            if let current { try Self.setCurrent(current, account: account, db: db) }
            try db.execute(sql: "DELETE FROM circle_log WHERE account = ? AND seq >= ?", arguments: [account.rawValue, seq.stored])
            for entry in entries {
                try db.execute(sql: "INSERT INTO circle_log (account, seq, entry) VALUES (?, ?, ?)", arguments: [account.rawValue, entry.seq.stored, Data(entry.bytes)])
            }
            try db.execute(sql: "UPDATE accounts SET log_confirmed = ? WHERE id = ?", arguments: [confirmed, account.rawValue])
        }
    }

    private static func setCurrent(_ current: CurrentKey, account: AccountID, db: Database) throws {
        try db.execute(sql: "UPDATE accounts SET current_generation = ?, current_key_id = ? WHERE id = ?",
                       arguments: [current.generation?.value ?? 0, current.keyID?.hex ?? "", account.rawValue])
    }

    private static func setConfirmed(_ count: Int, account: AccountID, db: Database) throws {
        try db.execute(sql: "UPDATE accounts SET log_confirmed = max(log_confirmed, ?) WHERE id = ?", arguments: [count, account.rawValue])
    }

    /// Queues records for the relay; answers their outbox IDs.
    package func enqueue(account: AccountID, records: [RelayRecord]) async throws -> [Int64] {
        try await pool.write { db in try Self.enqueue(records, account: account, db: db) }
    }

    /// Queues records in the caller's transaction; answers their outbox IDs.
    private static func enqueue(_ records: [RelayRecord], account: AccountID, db: Database) throws -> [Int64] {
        try records.map { record in
            try db.execute(sql: "INSERT INTO outbox (account, kind, recipient, body) VALUES (?, ?, ?, ?)",
                           arguments: [account.rawValue, record.kind.rawValue, record.recipient, Data(record.body)])
            return db.lastInsertedRowID
        }
    }

    /// Removes records the relay now holds.
    package func dequeue(ids: [Int64]) async throws {
        guard !ids.isEmpty else { return }
        try await pool.write { db in
            for id in ids { try db.execute(sql: "DELETE FROM outbox WHERE id = ?", arguments: [id]) }
        }
    }

    package func outbox(account: AccountID) async throws -> [OutboxRecord] {
        try await pool.read { db in try Self.outbox(account, db: db) }
    }

    private static func outbox(_ account: AccountID, db: Database) throws -> [OutboxRecord] {
        try Row.fetchAll(db, sql: "SELECT * FROM outbox WHERE account = ? ORDER BY id", arguments: [account.rawValue]).compactMap { row in
            guard let kind = RelayRecord.Kind(rawValue: row["kind"]) else { return nil }
            return OutboxRecord(id: row["id"], record: RelayRecord(kind: kind, account: account, recipient: try row.optionalID("recipient"), logSeq: nil,
                                                                   body: [UInt8](row["body"] as Data)))
        }
    }

    package func outboxCount() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox") ?? 0 }
    }

    /// These shares are on the relay: nothing owed any more.
    package func settle(account: AccountID, deliveries: [OwedDelivery]) async throws {
        try await pool.write { db in
            for owed in deliveries {
                try db.execute(sql: "DELETE FROM owed_deliveries WHERE account = ? AND key_id = ? AND recipient = ?",
                               arguments: [account.rawValue, owed.keyID, owed.recipient?.hex ?? ""])
            }
        }
    }

    /// Forgets the deadlines of keys promoted (one transaction).
    package func clearPromotionDeadlines(account: AccountID, keyIDs: [KeyID]) async throws {
        try await pool.write { db in
            for keyID in keyIDs {
                try db.execute(sql: "DELETE FROM promotion_deadlines WHERE account = ? AND key_id = ?", arguments: [account.rawValue, keyID])
            }
        }
    }

    /// Stores a generation (received, or made here): its metadata and its wrapped key, in one transaction.
    /// `makingCurrent`: the account's current key becomes this one in the same
    /// transaction (a device with no relay, which has no log to promote it in).
    package func addGeneration(account: AccountID, generation: KeyGeneration, item: StoredItem, makingCurrent: Bool = false) async throws {
        try await pool.write { db in
            if makingCurrent { try Self.setCurrent(CurrentKey(generation: generation.number, keyID: generation.keyID), account: account, db: db) }
            try db.execute(sql: "INSERT OR IGNORE INTO generations (account, generation, key_id, created_at, state) VALUES (?, ?, ?, ?, ?)",
                           arguments: [account.rawValue, generation.number.value, generation.keyID, generation.createdAt.timeIntervalSince1970, generation.state.rawValue])
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM items WHERE account = ? AND kind = ? AND generation = ? AND key_id = ?",
                                 arguments: [account.rawValue, item.attributes.kind.rawValue, item.attributes.generation, item.attributes.keyID?.hex ?? ""]) != true {
                try Self.insert(item, db: db)
            }
        }
    }

    /// Removes a generation that was stored but never announced.
    package func removeGeneration(account: AccountID, keyID: KeyID) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM items WHERE account = ? AND kind = 'generation-key' AND key_id = ?", arguments: [account.rawValue, keyID])
            try db.execute(sql: "DELETE FROM generations WHERE account = ? AND key_id = ?", arguments: [account.rawValue, keyID])
        }
    }

    /// Crypto-shreds an account's keys: the wrapped keys are deleted, the generations kept as `destroyed`.
    package func destroyKeys(account: AccountID) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM items WHERE account = ? AND kind = 'generation-key'", arguments: [account.rawValue])
            try db.execute(sql: "UPDATE generations SET state = 'destroyed' WHERE account = ?", arguments: [account.rawValue])
            try db.execute(sql: "DELETE FROM owed_deliveries WHERE account = ?", arguments: [account.rawValue])
            try db.execute(sql: "DELETE FROM promotion_deadlines WHERE account = ?", arguments: [account.rawValue])
        }
        try await checkpoint()
    }

    /// Removes an account and everything stored about it from this device.
    package func deleteAccount(_ account: AccountID) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM accounts WHERE id = ?", arguments: [account.rawValue])
        }
        try await checkpoint()
    }

    /// Moves the WAL into the database and truncates it, so deleted pages do not linger in `-wal`.
    private func checkpoint() async throws {
        try await pool.writeWithoutTransaction { db in
            _ = try? db.checkpoint(.truncate)
        }
    }

    package func recordApprovalFailures(account: AccountID, deviceID: DeviceID, failures: Int) async throws {
        try await pool.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO approval_attempts (account, device_id, failures) VALUES (?, ?, ?)",
                           arguments: [account.rawValue, deviceID, failures])
        }
    }

    // MARK: Rows

    private static func insert(_ g: KeyGeneration, account: AccountID, db: Database) throws {
        try db.execute(sql: "INSERT INTO generations (account, generation, key_id, created_at, state) VALUES (?, ?, ?, ?, ?)",
                       arguments: [account.rawValue, g.number.value, g.keyID, g.createdAt.timeIntervalSince1970, g.state.rawValue])
    }

    private static func insert(_ item: StoredItem, db: Database) throws {
        let a = item.attributes
        try db.execute(sql: """
            INSERT INTO items (account, kind, generation, key_id, item_class, service, access_group, label, synchronizable,
                accessibility, created_at, modified_at, wrapped)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [a.account, a.kind.rawValue, a.generation, a.keyID?.hex ?? "", a.itemClass, a.service, a.accessGroup, a.label,
                             a.synchronizable, a.accessibility.rawValue, a.creationDate.timeIntervalSince1970,
                             a.modificationDate.timeIntervalSince1970, Data(item.wrapped)])
    }

    private static func account(_ row: Row) throws -> AccountRecord {
        let id: String = row["id"]
        guard let accessibility = Accessibility(rawValue: row["accessibility"]) else {
            throw VaultError.corrupt("account \(id) has an unknown accessibility")
        }
        return AccountRecord(
            id: try AccountID(validating: id),
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            kdf: try KDFParameters(opsLimit: UInt64(row["kdf_ops"] as Int64), memLimitBytes: UInt64(row["kdf_mem"] as Int64)),
            salt: [UInt8](row["kdf_salt"] as Data),
            accessibility: accessibility,
            deviceID: try row.id("device_id"),
            signingPublicKey: try SigningPublicKey(rawRepresentation: [UInt8](row["signing_public_key"] as Data)),
            boxPublicKey: try BoxPublicKey(rawRepresentation: [UInt8](row["box_public_key"] as Data)),
            currentGeneration: try currentGeneration(row),
            failedUnlocks: row["failed_unlocks"],
            backoffUntil: Date(timeIntervalSince1970: row["backoff_until"]),
            deviceName: row["device_name"],
            currentKeyID: try row.optionalID("current_key_id"))
    }

    /// `current_generation`: 0 before the account holds a key.
    private static func currentGeneration(_ row: Row) throws -> Generation? {
        let number: Int64 = row["current_generation"]
        if number == 0 { return nil }
        guard let generation = Generation(number) else { throw VaultError.corrupt("the current generation is out of range") }
        return generation
    }

    private static func generation(_ row: Row) throws -> KeyGeneration {
        guard let state = KeyGeneration.State(rawValue: row["state"]) else {
            throw VaultError.corrupt("a generation has an unknown state")
        }
        guard let number = Generation(row["generation"] as Int64) else { throw VaultError.corrupt("a generation number is out of range") }
        return KeyGeneration(number: number, keyID: try row.id("key_id"),
                             createdAt: Date(timeIntervalSince1970: row["created_at"]), state: state)
    }

    private static func item(_ row: Row) throws -> StoredItem {
        guard let kind = ItemKind(rawValue: row["kind"]), let accessibility = Accessibility(rawValue: row["accessibility"]) else {
            throw VaultError.corrupt("an item has an unknown kind or accessibility")
        }
        let attributes = KeychainItem(
            itemClass: row["item_class"], service: row["service"], account: row["account"], accessGroup: row["access_group"],
            label: row["label"], kind: kind, generation: row["generation"], keyID: try row.optionalID("key_id"), synchronizable: row["synchronizable"],
            accessibility: accessibility, creationDate: Date(timeIntervalSince1970: row["created_at"]),
            modificationDate: Date(timeIntervalSince1970: row["modified_at"]))
        return StoredItem(attributes: attributes, wrapped: [UInt8](row["wrapped"] as Data))
    }
}

extension Row {
    /// A device or key ID column; anything else is damage, reported as such.
    fileprivate func id<Kind>(_ column: String) throws -> ID16<Kind> {
        guard let text = self[column] as String?, let id = ID16<Kind>(hex: text) else {
            throw VaultError.corrupt("a stored \(column) is not 32 hex characters")
        }
        return id
    }

    /// An ID column where "" (or NULL) stands for none.
    fileprivate func optionalID<Kind>(_ column: String) throws -> ID16<Kind>? {
        guard let text = self[column] as String?, !text.isEmpty else { return nil }
        return try id(column)
    }
}
