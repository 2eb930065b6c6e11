import GRDB

/// The vault's versioned migrations. A migration, once shipped, never changes;
/// a new version appends one (docs/FORMAT.md, "Schema").
enum VaultSchema {
    static var migrator: DatabaseMigrator {
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
        return migrator
    }
}
