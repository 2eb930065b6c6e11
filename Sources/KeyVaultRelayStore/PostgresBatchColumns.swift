import NIOCore
import PostgresNIO
import KeyVaultProtocol
import KeyVaultRelay

/// A batch of records as parallel arrays, inserted by one statement.
///
/// Each account numbers its own records: the statement adds the batch's count
/// to the account's row in `keyvault_account_cursors` and numbers the records
/// below the new value. That row stays locked until the transaction commits, so
/// one account's writers take turns and its cursors commit in order (a reader
/// at `cursor > X` never skips one that commits later), while writers of
/// different accounts share no lock and no sequence. Accounts are taken in
/// byte order, so two batches of several accounts cannot deadlock. A record
/// other than a log entry that is stored already is passed over (its cursor is
/// left unused): records are idempotent by what they are.
struct PostgresBatchColumns {
    var kinds: [String] = []
    var accounts: [String] = []
    /// postgres-nio encodes no NULL array elements: a flag says which are absent.
    var recipientTexts: [String] = []
    var hasRecipient: [Bool] = []
    var logSeqs: [Int64] = []
    var hasLogSeq: [Bool] = []
    var bodies: [ByteBuffer] = []

    init(_ records: [RelayRecord]) {
        for record in records {
            kinds.append(record.kind.rawValue)
            accounts.append(record.account.rawValue)
            recipientTexts.append(record.recipient?.hex ?? "")
            hasRecipient.append(record.recipient != nil)
            logSeqs.append(record.logSeq?.stored ?? 0)
            hasLogSeq.append(record.logSeq != nil)
            bodies.append(ByteBuffer(bytes: record.body))
        }
    }

    /// Prepared once per connection and kept (postgres-nio's prepared statements): the server
    /// plans the statement once, not at every publish.
    var insert: Insert {
        Insert(kinds: kinds, accounts: accounts, recipientTexts: recipientTexts, hasRecipient: hasRecipient,
               logSeqs: logSeqs, hasLogSeq: hasLogSeq, bodies: bodies)
    }

    struct Insert: PostgresPreparedStatement {
        static let name = "keyvault_publish_v3"
        static let sql = """
            WITH batch AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bool[], $5::int8[], $6::bool[], $7::bytea[]) \
            WITH ORDINALITY AS r(kind, account, recipient, has_recipient, log_seq, has_log_seq, body, n)
            ), counts AS (
                SELECT account, count(*) AS added FROM batch GROUP BY account
            ), bumped AS (
                INSERT INTO keyvault_account_cursors AS c (account, last)
                SELECT account, added FROM counts ORDER BY account COLLATE "C"
                ON CONFLICT (account) DO UPDATE SET last = c.last + EXCLUDED.last
                RETURNING c.account, c.last
            ), inserted AS (
                INSERT INTO keyvault_records (cursor, account, kind, recipient, log_seq, body)
                SELECT bumped.last - counts.added + row_number() OVER (PARTITION BY batch.account ORDER BY batch.n),
                       batch.account, kind, CASE WHEN has_recipient THEN recipient END, CASE WHEN has_log_seq THEN log_seq END, body \
            FROM batch JOIN counts ON counts.account = batch.account JOIN bumped ON bumped.account = batch.account ORDER BY batch.n
                ON CONFLICT \(PostgresRelaySchema.identityColumns) WHERE kind <> 'log' DO NOTHING
                RETURNING account
            )
            SELECT count(pg_notify('\(PostgresRelaySchema.channel)', a)) FROM (SELECT DISTINCT account COLLATE "C" AS a FROM inserted ORDER BY 1) touched
            """
        typealias Row = Int64

        var kinds: [String]
        var accounts: [String]
        var recipientTexts: [String]
        var hasRecipient: [Bool]
        var logSeqs: [Int64]
        var hasLogSeq: [Bool]
        var bodies: [ByteBuffer]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 7)
            bindings.append(kinds)
            bindings.append(accounts)
            bindings.append(recipientTexts)
            bindings.append(hasRecipient)
            bindings.append(logSeqs)
            bindings.append(hasLogSeq)
            bindings.append(bodies)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
    }
}
