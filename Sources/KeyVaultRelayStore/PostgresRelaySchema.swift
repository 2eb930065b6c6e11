import Logging
import PostgresNIO

/// The PostgreSQL relay's tables, versioned like the vault's: each migration
/// runs once, in its own transaction, recorded in `keyvault_relay_migrations`.
package enum PostgresRelaySchema {
    /// `pg_advisory_xact_lock` keys ("kvrelay" and a number), so two daemons
    /// starting at once migrate one after the other.
    package static let migrationLock: Int64 = 0x6b76_7265_6c61_7901
    /// The NOTIFY channel; the payload is the account a commit touched.
    package static let channel = "keyvault_relay"
    /// The unique index on an account's log numbers (a publish names its columns, not its name).
    package static let logSeqIndex = "keyvault_records_log_seq"

    package struct Migration: Sendable {
        package let version: String
        let statements: [String]
        /// Rows the statements cannot write themselves, written in the same transaction after them.
        var data: (@Sendable (PostgresConnection, Logger) async throws -> Void)? = nil
    }

    package static let migrationsTable = """
        CREATE TABLE IF NOT EXISTS keyvault_relay_migrations (
            version TEXT PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now()
        )
        """

    package static let migrations: [Migration] = [
        Migration(version: "relay-v1", statements: [
            """
            CREATE TABLE keyvault_records (
                cursor BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                kind TEXT NOT NULL CHECK (kind IN ('request', 'challenge', 'reveal', 'log', 'share', 'ack')),
                account TEXT NOT NULL,
                recipient TEXT,
                log_seq BIGINT,
                body BYTEA NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            "CREATE UNIQUE INDEX \(logSeqIndex) ON keyvault_records (account, log_seq) WHERE kind = 'log'",
        ]),
        // Devices read per account, after their own cursor.
        Migration(version: "relay-v2", statements: [
            "CREATE INDEX keyvault_records_account ON keyvault_records (account, cursor)",
        ]),
        // No sequence shared by every account: each account counts its own cursors, in a row
        // that its inserts lock in turn (and that outlives pruned records, so no cursor is
        // handed out twice). Existing cursors stay as they are: within an account they increase.
        Migration(version: "relay-v3", statements: [
            "CREATE TABLE keyvault_account_cursors (account TEXT PRIMARY KEY, last BIGINT NOT NULL)",
            "INSERT INTO keyvault_account_cursors (account, last) SELECT account, max(cursor) FROM keyvault_records GROUP BY account",
            "ALTER TABLE keyvault_records ALTER COLUMN cursor DROP IDENTITY",
            "ALTER TABLE keyvault_records DROP CONSTRAINT keyvault_records_pkey",
            "ALTER TABLE keyvault_records ADD PRIMARY KEY (account, cursor)",
            "DROP INDEX keyvault_records_account",
        ]),
        // A record other than a log entry is stored once: posted again (a lost answer, a failover),
        // it is accepted and not stored twice. Duplicates stored before go, the first of each kept.
        Migration(version: "relay-v4", statements: [
            """
            DELETE FROM keyvault_records r USING keyvault_records o
            WHERE r.kind <> 'log' AND o.account = r.account AND o.kind = r.kind AND o.recipient IS NOT DISTINCT FROM r.recipient
              AND o.body = r.body AND o.cursor < r.cursor
            """,
            "CREATE UNIQUE INDEX \(identityIndex) ON keyvault_records \(identityColumns) WHERE kind <> 'log'",
        ]),
        // Every table keyed by the account first, so each can be distributed by it (RELAY.md "Past one
        // database server"): the service's candidacies, filings and (new) write nonces join the records'
        // migrations. The nonces were keyed by signer alone and spent by every request; a write now
        // spends its nonce in its own transaction, beside the account's rows.
        Migration(version: "relay-v5", statements: [
            """
            CREATE TABLE IF NOT EXISTS keyvault_service_candidates (account TEXT NOT NULL, device_id TEXT NOT NULL, \
            signing BYTEA NOT NULL, box BYTEA NOT NULL, filed_at BIGINT NOT NULL, PRIMARY KEY (account, device_id))
            """,
            "CREATE TABLE IF NOT EXISTS keyvault_service_filings (account TEXT NOT NULL, at BIGINT NOT NULL)",
            "CREATE INDEX IF NOT EXISTS keyvault_service_filings_account ON keyvault_service_filings (account, at)",
            """
            CREATE TABLE keyvault_request_nonces (account TEXT NOT NULL, keyid TEXT NOT NULL, nonce TEXT NOT NULL, \
            created BIGINT NOT NULL, PRIMARY KEY (account, keyid, nonce))
            """,
            "DROP TABLE IF EXISTS keyvault_service_nonces",
        ]),
        // The signer index (issue 33): every device a stored log entry made a member of its account, with
        // its signing key, so a request from a signer the account does not know is refused before any of
        // its log is read. Never pruned (a revoked device stays, and reads its log through its revocation).
        // Filled from the logs already stored.
        Migration(version: "relay-v6", statements: [
            """
            CREATE TABLE keyvault_service_signers (account TEXT NOT NULL, device_id TEXT NOT NULL, \
            signing BYTEA NOT NULL, PRIMARY KEY (account, device_id))
            """,
        ], data: PostgresSignerIndex.fill),
    ]

    /// Each table and the column it is distributed (or hash-partitioned) by: every
    /// one by the account, so an account's rows share a shard (colocated) and each
    /// statement on a request's path runs on one. `keyvault_relay_migrations` is the
    /// one table every node needs whole: a reference table.
    package static let distribution: [(table: String, column: String)] = [
        ("keyvault_records", "account"),
        ("keyvault_account_cursors", "account"),
        ("keyvault_request_nonces", "account"),
        ("keyvault_service_candidates", "account"),
        ("keyvault_service_filings", "account"),
        ("keyvault_service_signers", "account"),
    ]
    package static let referenceTable = "keyvault_relay_migrations"

    /// The unique index that makes a record other than a log entry idempotent: its account,
    /// kind, recipient and a hash of its bytes (a whole body is too large for a btree entry).
    package static let identityIndex = "keyvault_records_identity"
    package static let identityColumns = "(account, kind, (coalesce(recipient, '')), (sha256(body)))"
}
