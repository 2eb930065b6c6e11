import Foundation
import KeyVaultSQLite
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The relay store's schema as an operator changes it (issue 36): `keyvault-relay migrate`
/// as its own step, `check-config` that changes nothing, and a start that makes an empty
/// store's schema but refuses one behind this version's unless told to migrate it, and one
/// ahead of it always. On both stores: a SQLite file, and a PostgreSQL database.
@Suite("keyvault-relay migrate, check-config, and the store's schema at start")
struct RelaySchemaTests {
    static var relayBinary: String { DaemonProcess.binaryDirectory + "/keyvault-relay" }

    /// check-config said yes to paths SQLite cannot open (over 504 bytes, a name over 255, no folder),
    /// and migrate then failed after ten seconds of retries with "unable to open database file".
    @Test("a SQLite store that cannot be made: check-config and migrate both say why, at once; the longest path SQLite opens is served")
    func uncreatableSQLiteStore() async throws {
        let root = try RelaySettingsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await TestIssuer.make(in: root)
        let deep = root + "/" + String(repeating: "d", count: 200) + "/" + String(repeating: "e", count: 200)
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        let longest = deep + "/" + String(repeating: "f", count: SharedSQLiteFile.longestPath - deep.utf8.count - 1)
        let cases = [(longest + "x", "SQLite opens at most 504"), (root + "/" + String(repeating: "n", count: 256), "at most 255"),
                     (root + "/absent/relay.sqlite", "is not there")]
        for (path, reason) in cases {
            for command in [["check-config", "--listen", "127.0.0.1:0", "--plain-http"] + issuer.relayArguments, ["migrate"]] {
                let started = ContinuousClock.now
                let result = try await run(Self.relayBinary, command + ["--store", "sqlite:" + path])
                #expect(result.status != 0 && result.err.contains(reason), "\(command[0]): \(result.err)")
                #expect(ContinuousClock.now - started < .seconds(5), "\(command[0]) retried a path that never opens")
            }
        }
        let migrated = try await run(Self.relayBinary, ["migrate", "--store", "sqlite:" + longest])
        #expect(migrated.status == 0, "\(migrated.err)")
    }

    @Test("a brand-new store: check-config makes nothing, migrate applies every migration once, a start serves it", arguments: RelayKind.allCases)
    func brandNew(_ kind: RelayKind) async throws {
        let root = try RelaySettingsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try await TestRelayStore.make(kind, in: root, startingService: false)
        let issuer = try await TestIssuer.make(in: root)
        let settings = ["--store", store.storeAddress, "--listen", "127.0.0.1:0", "--plain-http"] + issuer.relayArguments

        let checked = try await run(Self.relayBinary, ["check-config"] + settings)
        #expect(checked.status == 0, "\(checked.err)")
        #expect(checked.out.contains("empty: the start makes its schema (relay-v1 "), "\(checked.out)")
        #expect(checked.out.contains("keyvault-relay would start with these settings"), "\(checked.out)")
        #expect(try await Self.tableCount(store) == 0, "check-config made a table")

        let migrated = try await run(Self.relayBinary, ["migrate", "--store", store.storeAddress])
        #expect(migrated.status == 0, "\(migrated.err)")
        let applied = migrated.out.split(separator: "\n").filter { $0.hasPrefix("applied ") }
        #expect(applied.first == "applied relay-v1" && applied.count >= 5, "\(migrated.out)")
        // Again, the store given before the subcommand: nothing to do.
        let again = try await run(Self.relayBinary, ["--store", store.storeAddress, "migrate"])
        #expect(again.status == 0, "\(again.err)")
        #expect(again.out.contains("nothing to apply"), "\(again.out)")
        let current = try await run(Self.relayBinary, ["check-config"] + settings)
        #expect(current.status == 0 && current.out.contains("schema current (\(applied.last!.dropFirst("applied ".count)))"), "\(current)")

        // migrate needs the store, and nothing else.
        let bare = try await run(Self.relayBinary, ["migrate"])
        #expect(bare.status == 64)
        #expect(bare.err.contains("missing --store: give it, or KEYVAULT_RELAY_STORE, or the credential 'store'"), "\(bare.err)")

        let relay = try await RelayServiceProcess.start(store: store.storeAddress, issuer: issuer, root: root, name: "served")
        defer { relay.remove() }
        #expect(try await relay.send("GET", "/v1/health", as: nil).status == 200)
        #expect(await relay.stop() == 0)
        let log = try String(contentsOfFile: relay.logPath, encoding: .utf8)
        #expect(!log.contains("the store's schema was migrated"), "a current store was migrated: \(log)")
    }

    @Test("a store behind this version's schema is refused (65) and left as it was, until --migrate or KEYVAULT_RELAY_MIGRATE; one ahead is refused (66)", arguments: RelayKind.allCases)
    func behindAndAhead(_ kind: RelayKind) async throws {
        let root = try RelaySettingsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try await TestRelayStore.make(kind, in: root, startingService: false)
        let issuer = try await TestIssuer.make(in: root)
        let settings = ["--store", store.storeAddress, "--listen", "127.0.0.1:0", "--plain-http"] + issuer.relayArguments
        try await Self.makeOldSchema(store)
        let old = try await Self.applied(store)

        let refused = try await run(Self.relayBinary, settings)
        #expect(refused.status == 65, "\(refused.err)")
        #expect(refused.err.contains("the store's schema is behind this keyvault-relay (it lacks "), "\(refused.err)")
        #expect(refused.err.contains("run `keyvault-relay migrate`"), "\(refused.err)")
        #expect(try await Self.applied(store) == old, "a refused start changed the schema")
        let asJSON = try await run(Self.relayBinary, settings + ["--log-format", "json"])
        #expect(asJSON.status == 65)
        let said = try DaemonOptionsTests.jsonLines(asJSON.err)
        #expect(said.contains { $0["level"] == "critical" && $0["problem"]?.contains("schema is behind") == true }, "\(asJSON.err)")

        let checked = try await run(Self.relayBinary, ["check-config"] + settings)
        #expect(checked.status == 65 && checked.err.contains("schema is behind"), "\(checked)")
        let told = try await run(Self.relayBinary, ["check-config", "--migrate"] + settings)
        #expect(told.status == 0 && told.out.contains("behind: the start migrates it"), "\(told)")
        #expect(try await Self.applied(store) == old, "check-config changed the schema")

        // Told to, by the variable: migrated at start, and served.
        let out = root + "/migrating.out", log = root + "/migrating.log"
        let process = try ChildProcess(Self.relayBinary, settings, environment: ["KEYVAULT_RELAY_MIGRATE": "true"], stdoutPath: out, stderrPath: log)
        try await eventually { ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains("listening on") || !process.isRunning }
        let relay = RelayServiceProcess(attaching: process, port: 0, logPath: log)
        defer { relay.remove() }
        #expect(process.isRunning, "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        #expect(await relay.stop() == 0)
        #expect(try String(contentsOfFile: log, encoding: .utf8).contains("the store's schema was migrated"))
        let migrated = try await run(Self.relayBinary, ["migrate", "--store", store.storeAddress])
        #expect(migrated.status == 0 && migrated.out.contains("nothing to apply"), "\(migrated)")

        // A migration this version does not know: a newer one ran here. Refused everywhere, nothing changed.
        try await store.sql(kind == .sqlite ? "INSERT INTO grdb_migrations VALUES ('relay-v99')"
                                            : "INSERT INTO keyvault_relay_migrations (version) VALUES ('relay-v99')")
        let newer = try await Self.applied(store)
        for arguments in [settings, ["check-config"] + settings, ["migrate", "--store", store.storeAddress], settings + ["--migrate"]] {
            let ahead = try await run(Self.relayBinary, arguments)
            #expect(ahead.status == 66, "\(arguments.prefix(1)): \(ahead.err)")
            #expect(ahead.err.contains("newer than this keyvault-relay (it holds relay-v99"), "\(ahead.err)")
        }
        #expect(try await Self.applied(store) == newer)
    }

    @Test("check-config names what would stop a start, with the start's exit status: a certificate that does not load, a key set with no key (64), a store it cannot reach (1)")
    func checkConfigRefusals() async throws {
        let root = try RelaySettingsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await TestIssuer.make(in: root)
        let (_, certificate, key) = try await RelayServiceTLSTests.makeCertificates(in: root)
        let common = ["--listen", "127.0.0.1:0"] + issuer.relayArguments
        let store = ["--store", "sqlite:" + root + "/relay.sqlite"]

        let good = try await run(Self.relayBinary, ["check-config", "--tls-cert", certificate, "--tls-key", key] + store + common)
        #expect(good.status == 0, "\(good.err)")
        #expect(good.out.contains("TLS: \(certificate) with its key \(key); the certificate expires 20"), "\(good.out)")
        #expect(good.out.contains("1 key from \(issuer.jwksPath)"), "\(good.out)")

        try "not a certificate\n".write(toFile: root + "/bad.pem", atomically: true, encoding: .utf8)
        for arguments in [["check-config"], []] {
            let bad = try await run(Self.relayBinary, arguments + ["--tls-cert", root + "/bad.pem", "--tls-key", key] + store + common)
            #expect(bad.status == 64, "\(arguments): \(bad.err)")
            #expect(bad.err.contains("--tls-cert: cannot load a PEM certificate chain from \(root)/bad.pem"), "\(bad.err)")
        }
        try #"{"keys": []}"#.write(toFile: root + "/empty.json", atomically: true, encoding: .utf8)
        let noKeys = try await run(Self.relayBinary, ["check-config", "--plain-http", "--listen", "127.0.0.1:0", "--identity-issuer", TestIssuer.issuer,
                                                      "--identity-audience", TestIssuer.audience, "--identity-jwks", root + "/empty.json"] + store)
        #expect(noKeys.status == 64 && noKeys.err.contains("holds no RS256 or ES256 key"), "\(noKeys.err)")
        // Nothing listens on port 1; the password is never shown.
        let away = try await run(Self.relayBinary, ["check-config", "--plain-http", "--store", "postgres://keyvault:hunter2@127.0.0.1:1/kv"] + common)
        #expect(away.status == 1 && away.err.contains("the store is unreachable"), "\(away.err)")
        #expect(!(away.out + away.err).contains("hunter2"))
        #expect(!FileManager.default.fileExists(atPath: root + "/relay.sqlite"), "check-config made the SQLite file")
    }

    // MARK: Helpers

    /// The SQLite relay file's schema at relay-v4, as a daemon of that revision made it: one
    /// cursor sequence for every account.
    static let sqliteRelayV4 = """
        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
        INSERT INTO grdb_migrations VALUES ('relay-v1'), ('relay-v2'), ('relay-v3'), ('relay-v4');
        CREATE TABLE records (cursor INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL CHECK (kind IN ('request', 'challenge', 'reveal', 'log', 'share', 'ack')),
            account TEXT NOT NULL, recipient TEXT, log_seq INTEGER, body BLOB NOT NULL, created_at REAL NOT NULL);
        CREATE UNIQUE INDEX records_log_seq ON records (account, log_seq) WHERE kind = 'log';
        CREATE INDEX records_recipient ON records (recipient) WHERE kind = 'share';
        CREATE INDEX records_account ON records (account, cursor);
        CREATE UNIQUE INDEX records_identity ON records (account, kind, ifnull(recipient, ''), body) WHERE kind <> 'log';
        """

    /// A store as an earlier version left it, with a row: SQLite at relay-v4 (as a daemon of that
    /// revision made its file), PostgreSQL at relay-v2 (as they shipped).
    static func makeOldSchema(_ store: TestRelayStore) async throws {
        switch store.kind {
        case .sqlite:
            try await store.sql("""
                \(sqliteRelayV4)
                INSERT INTO records (kind, account, log_seq, body, created_at) VALUES ('log', 'alice', 0, x'01', 0);
                """)
        case .service:
            try await store.sql("""
                CREATE TABLE keyvault_relay_migrations (version TEXT PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
                CREATE TABLE keyvault_records (cursor BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    kind TEXT NOT NULL CHECK (kind IN ('request', 'challenge', 'reveal', 'log', 'share', 'ack')),
                    account TEXT NOT NULL, recipient TEXT, log_seq BIGINT, body BYTEA NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
                CREATE UNIQUE INDEX keyvault_records_log_seq ON keyvault_records (account, log_seq) WHERE kind = 'log';
                CREATE INDEX keyvault_records_account ON keyvault_records (account, cursor);
                INSERT INTO keyvault_relay_migrations (version) VALUES ('relay-v1'), ('relay-v2');
                INSERT INTO keyvault_records (kind, account, log_seq, body) VALUES ('log', 'alice', 0, '\\x01');
                """)
        }
    }

    /// The migrations the store records, sorted.
    static func applied(_ store: TestRelayStore) async throws -> [String] {
        try await query(store, store.kind == .sqlite ? "SELECT identifier FROM grdb_migrations ORDER BY 1"
                                                     : "SELECT version FROM keyvault_relay_migrations ORDER BY 1")
    }

    /// Tables in the store (a SQLite file not there holds none).
    static func tableCount(_ store: TestRelayStore) async throws -> Int {
        if store.kind == .sqlite, !FileManager.default.fileExists(atPath: String(store.storeAddress.dropFirst("sqlite:".count))) { return 0 }
        let count = try await query(store, store.kind == .sqlite ? "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                                                                 : "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
        return Int(count.first ?? "") ?? -1
    }

    private static func query(_ store: TestRelayStore, _ statement: String) async throws -> [String] {
        let result = store.kind == .sqlite
            ? try await run("/usr/bin/sqlite3", [String(store.storeAddress.dropFirst("sqlite:".count)), statement])
            : try await run("/usr/bin/psql", [store.storeAddress, "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", statement])
        guard result.status == 0 else { throw TestFailure("\(statement): \(result.err)") }
        return result.out.split(separator: "\n").map(String.init)
    }
}
