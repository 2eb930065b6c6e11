import NIOCore
import PostgresNIO
import KeyVaultProtocol

/// A batch of records as parallel arrays, inserted by one statement.
///
/// Identity values are handed out at INSERT but become visible at COMMIT, so
/// two writers of one account could commit cursors out of order and a reader
/// at `cursor > X` would skip the smaller one for good. Readers read per
/// account, so inserts take turns per account: the statement takes each of the
/// batch's account locks (in byte order, so two batches cannot deadlock) in a
/// CTE the INSERT's rows join, so every lock is held before the first identity
/// value is drawn, and until the statement's transaction commits. Writers of
/// different accounts never wait on each other.
struct PostgresBatchColumns {
    var kinds: [String] = []
    var accounts: [String] = []
    /// postgres-nio encodes no NULL array elements: a flag says which are absent.
    var recipients: [String] = []
    var hasRecipient: [Bool] = []
    var logSeqs: [Int64] = []
    var hasLogSeq: [Bool] = []
    var bodies: [ByteBuffer] = []

    init(_ records: [RelayRecord]) {
        for record in records {
            kinds.append(record.kind.rawValue)
            accounts.append(record.account.rawValue)
            recipients.append(record.recipient ?? "")
            hasRecipient.append(record.recipient != nil)
            logSeqs.append(record.logSeq.map { Int64(clamping: $0) } ?? 0)
            hasLogSeq.append(record.logSeq != nil)
            bodies.append(ByteBuffer(bytes: record.body))
        }
    }

    /// Prepared once per connection and kept (postgres-nio's prepared statements): the server
    /// plans the statement once, not at every publish.
    var insert: Insert {
        Insert(kinds: kinds, accounts: accounts, recipients: recipients, hasRecipient: hasRecipient,
               logSeqs: logSeqs, hasLogSeq: hasLogSeq, bodies: bodies)
    }

    struct Insert: PostgresPreparedStatement {
        static let name = "keyvault_publish_v1"
        static let sql = """
            WITH batch AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bool[], $5::int8[], $6::bool[], $7::bytea[]) \
            WITH ORDINALITY AS r(kind, account, recipient, has_recipient, log_seq, has_log_seq, body, n)
            ), locked AS (
                SELECT count(*) FROM (SELECT pg_advisory_xact_lock(\(PostgresRelaySchema.accountLockSpace), hashtext(a)) \
            FROM (SELECT DISTINCT account COLLATE "C" AS a FROM batch ORDER BY 1) accounts) locks
            ), inserted AS (
                INSERT INTO keyvault_records (kind, account, recipient, log_seq, body)
                SELECT kind, account, CASE WHEN has_recipient THEN recipient END, CASE WHEN has_log_seq THEN log_seq END, body \
            FROM batch, locked ORDER BY n
                RETURNING account
            )
            SELECT count(pg_notify('\(PostgresRelaySchema.channel)', a)) FROM (SELECT DISTINCT account COLLATE "C" AS a FROM inserted ORDER BY 1) touched
            """
        typealias Row = Int64

        var kinds: [String]
        var accounts: [String]
        var recipients: [String]
        var hasRecipient: [Bool]
        var logSeqs: [Int64]
        var hasLogSeq: [Bool]
        var bodies: [ByteBuffer]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 7)
            bindings.append(kinds)
            bindings.append(accounts)
            bindings.append(recipients)
            bindings.append(hasRecipient)
            bindings.append(logSeqs)
            bindings.append(hasLogSeq)
            bindings.append(bodies)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
    }
}
