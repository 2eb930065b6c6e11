package import GRDB

/// The vault's versioned migrations. A migration, once shipped, never changes;
/// a new version appends one (docs/FORMAT.md, "Schema").
package enum VaultSchema {
    package static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE accounts (
                    id TEXT PRIMARY KEY NOT NULL,
                    created_at REAL NOT NULL,
                    kdf_algorithm TEXT NOT NULL CHECK (kdf_algorithm = 'argon2id13'),
                    kdf_ops INTEGER NOT NULL,
                    kdf_mem INTEGER NOT NULL,
                    kdf_salt BLOB NOT NULL CHECK (length(kdf_salt) = 16),
                    accessibility TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    signing_public_key BLOB NOT NULL CHECK (length(signing_public_key) = 32),
                    box_public_key BLOB NOT NULL CHECK (length(box_public_key) = 32),
                    current_generation INTEGER NOT NULL,
                    failed_unlocks INTEGER NOT NULL DEFAULT 0,
                    backoff_until REAL NOT NULL DEFAULT 0
                );
                CREATE TABLE generations (
                    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    generation INTEGER NOT NULL CHECK (generation >= 1),
                    key_id TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    state TEXT NOT NULL,
                    PRIMARY KEY (account, generation)
                );
                CREATE TABLE items (
                    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    kind TEXT NOT NULL,
                    generation INTEGER NOT NULL,
                    item_class TEXT NOT NULL,
                    service TEXT NOT NULL,
                    access_group TEXT NOT NULL,
                    label TEXT NOT NULL,
                    synchronizable INTEGER NOT NULL,
                    accessibility TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    modified_at REAL NOT NULL,
                    wrapped BLOB NOT NULL,
                    PRIMARY KEY (account, kind, generation)
                );
                """)
        }
        migrator.registerMigration("v2") { db in
            // Devices and propagation: this device's name, the verified circle
            // log, its own enrollment request, and wrong pairing codes per request.
            try db.execute(sql: """
                ALTER TABLE accounts ADD COLUMN device_name TEXT NOT NULL DEFAULT '';
                CREATE TABLE circle_log (
                    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    seq INTEGER NOT NULL,
                    entry BLOB NOT NULL,
                    PRIMARY KEY (account, seq)
                );
                CREATE TABLE enrollment (
                    account TEXT PRIMARY KEY NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    request BLOB NOT NULL
                );
                CREATE TABLE approval_attempts (
                    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    device_id TEXT NOT NULL,
                    failures INTEGER NOT NULL,
                    PRIMARY KEY (account, device_id)
                );
                """)
        }
        migrator.registerMigration("v3") { db in
            // The new device's pairing secret, revealed after a trusted device's challenge.
            try db.execute(sql: "ALTER TABLE enrollment ADD COLUMN pairing_secret BLOB")
        }
        migrator.registerMigration("v4") { db in
            // Concurrent rotations: two keys may share a generation number, so a
            // key is known by its key ID. And what this device owes the relay
            // (its own log entries, records, shares, promotions) survives restarts.
            try db.execute(sql: """
                CREATE TABLE generations_v4 (
                    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    generation INTEGER NOT NULL CHECK (generation >= 1),
                    key_id TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    state TEXT NOT NULL,
                    PRIMARY KEY (account, key_id)
                );
                INSERT INTO generations_v4 (account, generation, key_id, created_at, state)
                    SELECT account, generation, key_id, created_at, state FROM generations;
                DROP TABLE generations;
                ALTER TABLE generations_v4 RENAME TO generations;
                CREATE TABLE items_v4 (
                    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    kind TEXT NOT NULL,
                    generation INTEGER NOT NULL,
                    key_id TEXT NOT NULL,
                    item_class TEXT NOT NULL,
                    service TEXT NOT NULL,
                    access_group TEXT NOT NULL,
                    label TEXT NOT NULL,
                    synchronizable INTEGER NOT NULL,
                    accessibility TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    modified_at REAL NOT NULL,
                    wrapped BLOB NOT NULL,
                    PRIMARY KEY (account, kind, generation, key_id)
                );
                INSERT INTO items_v4 (account, kind, generation, key_id, item_class, service, access_group, label, synchronizable,
                                      accessibility, created_at, modified_at, wrapped)
                    SELECT i.account, i.kind, i.generation,
                           CASE WHEN i.kind = 'generation-key'
                                THEN COALESCE((SELECT g.key_id FROM generations g WHERE g.account = i.account AND g.generation = i.generation), '')
                                ELSE '' END,
                           i.item_class, i.service, i.access_group, i.label, i.synchronizable, i.accessibility, i.created_at, i.modified_at, i.wrapped
                    FROM items i;
                DROP TABLE items;
                ALTER TABLE items_v4 RENAME TO items;
                ALTER TABLE accounts ADD COLUMN log_confirmed INTEGER NOT NULL DEFAULT 0;
                UPDATE accounts SET log_confirmed = (SELECT count(*) FROM circle_log WHERE circle_log.account = accounts.id);
                CREATE TABLE outbox (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    kind TEXT NOT NULL,
                    recipient TEXT,
                    body BLOB NOT NULL
                );
                CREATE TABLE owed_deliveries (
                    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    key_id TEXT NOT NULL,
                    recipient TEXT NOT NULL,
                    PRIMARY KEY (account, key_id, recipient)
                );
                CREATE TABLE promotion_deadlines (
                    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    key_id TEXT NOT NULL,
                    deadline REAL NOT NULL,
                    PRIMARY KEY (account, key_id)
                );
                """)
        }
        migrator.registerMigration("v5") { db in
            // Per-account relay streams: a cursor per account, and the relay records this
            // device keeps (requests, challenges, reveals, acknowledgements, shares that
            // waited for an unlock) so a restart reads only what is new. Requests a person
            // dismissed; whether this device's reveal went out. The current key's ID beside its
            // number: after concurrent rotations two keys share a number.
            try db.execute(sql: """
                ALTER TABLE accounts ADD COLUMN relay_cursor INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE accounts ADD COLUMN current_key_id TEXT NOT NULL DEFAULT '';
                ALTER TABLE enrollment ADD COLUMN revealed INTEGER NOT NULL DEFAULT 0;
                CREATE TABLE relay_notes (
                    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    cursor INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    body BLOB NOT NULL,
                    seen_at REAL NOT NULL,
                    PRIMARY KEY (account, cursor)
                );
                CREATE TABLE dismissed_requests (
                    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                    device_id TEXT NOT NULL,
                    PRIMARY KEY (account, device_id)
                );
                """)
        }
        return migrator
    }
}
