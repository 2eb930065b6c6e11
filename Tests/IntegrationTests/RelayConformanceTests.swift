import Foundation
@testable import KeyVault
@testable import KeyVaultEngine
@testable import KeyVaultPolicy
import Synchronization
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelaySQLite
import KeyVaultRelayClient
import KeyVaultRelayStore

/// The same checks against every relay: the SQLite file and a real PostgreSQL
/// server (KEYVAULT_TEST_POSTGRES, set by `make test` through
/// scripts/with-test-postgres.sh). Serialized: the outage test stops the server.
@Suite("Relay conformance", .serialized)
struct RelayConformanceTests {
    enum Store: String, CustomTestStringConvertible, CaseIterable {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    @Test("records come back in the order they were appended", arguments: Store.allCases)
    func appendAndReadBack(_ store: Store) async throws {
        try await RelayFixture.with(store) { fixture in
            let relay = try await fixture.open()
            let records = [
                record(.request, "alice", body: [1, 2, 3]),
                record(.log, "alice", seq: 0, body: [4]),
                record(.share, "alice", recipient: "device-b", body: Array(repeating: 0xab, count: 300)),
                record(.ack, "bob", body: []),
                record(.challenge, "alice", body: [0, 0, 0]),
                record(.reveal, "alice", body: [9]),
            ]
            for item in records { try await relay.publish(item) }
            // As devices read: per account, in the order appended, after any cursor read before.
            let alice = try AccountID(validating: "alice")
            let rows = try await relay.rows(account: alice, after: 0, limit: 100)
            #expect(rows.map(\.record) == records.filter { $0.account == alice })
            #expect(zip(rows, rows.dropFirst()).allSatisfy { $0.cursor < $1.cursor })
            let after = try await relay.rows(account: alice, after: rows[2].cursor, limit: 100)
            #expect(after.map(\.record) == Array(records.filter { $0.account == alice }[3...]))
            #expect(try await relay.rows(account: try AccountID(validating: "bob"), after: 0, limit: 100).map(\.record) == [records[3]])
            // The operator's view holds every record (in one order across accounts only where one sequence numbers them all).
            let all = try await relay.rows(after: 0, limit: 100).map(\.record)
            #expect(all.count == records.count && records.allSatisfy { all.contains($0) })
        }
    }

    @Test("rows(after:limit:) pages through everything exactly once", arguments: Store.allCases)
    func paging(_ store: Store) async throws {
        try await RelayFixture.with(store) { fixture in
            let relay = try await fixture.open()
            let records = (0..<7).map { record(.ack, "acct", body: [UInt8($0)]) }
            try await relay.publish(batch: Array(records[0..<4]))
            try await relay.publish(batch: Array(records[4...]))
            var cursor = RelayCursor.start
            var pages: [[RelayRecord]] = []
            while true {
                let page = try await relay.rows(after: cursor, limit: 3)
                guard let last = page.last else { break }
                pages.append(page.map(\.record))
                cursor = last.cursor
            }
            #expect(pages.map(\.count) == [3, 3, 1])
            #expect(pages.flatMap { $0 } == records)
        }
    }

    @Test("a taken log number throws logSeqTaken; a batch holding one writes nothing", arguments: Store.allCases)
    func logSeqUniqueness(_ store: Store) async throws {
        try await RelayFixture.with(store) { fixture in
            let relay = try await fixture.open()
            try await relay.publish(record(.log, "alice", seq: 0, body: [1]))
            try await relay.publish(record(.log, "alice", seq: 1, body: [2]))
            await #expect(throws: RelayError.logSeqTaken(1)) { try await relay.publish(record(.log, "alice", seq: 1, body: [3])) }
            // The number is per account.
            try await relay.publish(record(.log, "bob", seq: 1, body: [4]))
            let before = try await relay.rows(after: 0, limit: 100)
            await #expect(throws: RelayError.logSeqTaken(0)) {
                try await relay.publish(batch: [
                    record(.share, "alice", recipient: "d1", body: [5]),
                    record(.log, "alice", seq: 0, body: [6]),
                    record(.share, "alice", recipient: "d2", body: [7]),
                ])
            }
            #expect(try await relay.rows(after: 0, limit: 100) == before)
            // The relay still works after the refused batch.
            try await relay.publish(record(.log, "alice", seq: 2, body: [8]))
            #expect(try await relay.rows(after: 0, limit: 100).count == before.count + 1)
        }
    }

    @Test("a publish through one instance wakes another instance's wakeups()", arguments: Store.allCases)
    func wakeupsAcrossInstances(_ store: Store) async throws {
        try await RelayFixture.with(store) { fixture in
            let writer = try await fixture.open()
            let reader = try await fixture.open()
            let wakeups = reader.wakeups()
            let sent = record(.share, "alice", recipient: "reader", body: [42])
            try await writer.publish(sent)
            try await seesAfterWakeup(reader, wakeups, sent)
        }
    }

    @Test("PostgreSQL: a publish waits for its account's cursor row, and only its own account's")
    func postgresAccountLock() async throws {
        try await RelayFixture.with(.postgres) { fixture in
            let relay = try await fixture.open()
            // Another session holds alice's cursor row (inserted, not yet committed) for a while.
            let holder = Task {
                try await fixture.psql("BEGIN; INSERT INTO keyvault_account_cursors (account, last) VALUES ('alice', 0); SELECT pg_sleep(3); COMMIT")
            }
            try await fixture.until("the holder has the row") {
                try await fixture.psql("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(3)%' AND state = 'active' AND query NOT LIKE '%pg_stat_activity%'") == "1"
            }
            let alice = Task { try await relay.publish(record(.log, "alice", seq: 0, body: [1])) }
            // The publish is seen waiting on a lock, before any of its rows is visible.
            try await fixture.until("alice's publish waits for alice's row") {
                try await fixture.psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%keyvault_account_cursors%' AND query NOT LIKE '%pg_stat_activity%'") == "1"
            }
            #expect(try await relay.rows(account: try AccountID(validating: "alice"), after: 0, limit: 10).isEmpty)
            // Another account's writer does not wait.
            try await relay.publish(record(.log, "bob", seq: 0, body: [2]))
            #expect(try await relay.rows(account: try AccountID(validating: "bob"), after: 0, limit: 10).map(\.cursor) == [1])
            _ = try await holder.value
            try await alice.value
            // Each account counts its own cursors: alice's first record is 1, after the holder's 0.
            #expect(try await relay.rows(account: try AccountID(validating: "alice"), after: 0, limit: 10).map(\.cursor) == [1])
        }
    }

    @Test("PostgreSQL: a store of the shared-sequence schema (relay-v2) migrates to per-account cursors, each account counting on from its own last")
    func postgresPerAccountCursorMigration() async throws {
        try await RelayFixture.with(.postgres) { fixture in
            // relay-v1 and relay-v2 as they shipped, with two accounts' rows interleaved on the shared sequence.
            _ = try await fixture.psql("""
                CREATE TABLE keyvault_relay_migrations (version TEXT PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
                CREATE TABLE keyvault_records (cursor BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    kind TEXT NOT NULL CHECK (kind IN ('request', 'challenge', 'reveal', 'log', 'share', 'ack')),
                    account TEXT NOT NULL, recipient TEXT, log_seq BIGINT, body BYTEA NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
                CREATE UNIQUE INDEX keyvault_records_log_seq ON keyvault_records (account, log_seq) WHERE kind = 'log';
                CREATE INDEX keyvault_records_account ON keyvault_records (account, cursor);
                INSERT INTO keyvault_relay_migrations (version) VALUES ('relay-v1'), ('relay-v2');
                INSERT INTO keyvault_records (kind, account, log_seq, body) VALUES
                    ('log', 'alice', 0, '\\x01'), ('log', 'bob', 0, '\\x02'), ('log', 'alice', 1, '\\x03'), ('log', 'bob', 1, '\\x04'), ('log', 'bob', 2, '\\x05');
                """)
            let relay = try await fixture.open()
            let alice = try AccountID(validating: "alice"), bob = try AccountID(validating: "bob")
            #expect(try await relay.rows(account: alice, after: 0, limit: 10).map(\.cursor) == [1, 3])
            try await relay.publish(record(.log, "alice", seq: 2, body: [6]))
            try await relay.publish(record(.log, "carol", seq: 0, body: [7]))
            try await relay.publish(batch: [record(.log, "bob", seq: 3, body: [8]), record(.share, "bob", recipient: "d", body: [9])])
            // Each account goes on after its own last cursor; one new to the store starts at 1.
            #expect(try await relay.rows(account: alice, after: 0, limit: 10).map(\.cursor) == [1, 3, 4])
            #expect(try await relay.rows(account: bob, after: 0, limit: 10).map(\.cursor) == [2, 4, 5, 6, 7])
            #expect(try await relay.rows(account: try AccountID(validating: "carol"), after: 0, limit: 10).map(\.cursor) == [1])
            #expect(try await relay.rows(account: bob, after: 5, limit: 10).map(\.record.body) == [[8], [9]])
        }
    }

    @Test("a record other than a log entry is stored once however often it is posted; a log number is still taken once", arguments: Store.allCases)
    func recordsAreIdempotent(_ store: Store) async throws {
        try await RelayFixture.with(store) { fixture in
            let relay = try await fixture.open()
            let ack = record(.ack, "idem", body: [1, 2, 3])
            let request = record(.request, "idem", body: [4, 5])
            let share = record(.share, "idem", recipient: "d1", body: [6])
            try await relay.publish(batch: [record(.log, "idem", seq: 0, body: [0]), ack, request, share])
            // Posted again, alone and in batches (a lost answer, a failover): nothing more is stored.
            try await relay.publish(ack)
            try await relay.publish(batch: [request, share, ack])
            // The same bytes to another recipient, or of another kind, are other records.
            try await relay.publish(batch: [record(.share, "idem", recipient: "d2", body: [6]), record(.reveal, "idem", body: [4, 5])])
            let account = try AccountID(validating: "idem")
            let rows = try await relay.rows(account: account, after: 0, limit: 100)
            #expect(rows.map(\.record.kind) == [.log, .ack, .request, .share, .share, .reveal])
            // A log entry with a number already taken is refused, not passed over.
            await #expect(throws: RelayError.logSeqTaken(0)) { try await relay.publish(record(.log, "idem", seq: 0, body: [9])) }
        }
    }

    @Test("each account numbers its own cursors: another account's writes do not move them", arguments: Store.allCases)
    func cursorsPerAccount(_ store: Store) async throws {
        try await RelayFixture.with(store) { fixture in
            let relay = try await fixture.open()
            try await relay.publish(record(.ack, "alice", body: [1]))
            // A rotation elsewhere: four records of another tenant.
            try await relay.publish(batch: (0..<4).map { record(.ack, "bob", body: [UInt8($0)]) })
            try await relay.publish(record(.ack, "alice", body: [2]))
            let alice = try await relay.rows(account: try AccountID(validating: "alice"), after: 0, limit: 10).map(\.cursor)
            #expect(alice == [1, 2])
            #expect(try await relay.rows(account: try AccountID(validating: "bob"), after: 0, limit: 10).map(\.cursor) == [1, 2, 3, 4])
            // A pruned highest cursor is not handed out again.
            try await (relay as! any RelayStore).remove(account: try AccountID(validating: "alice"), cursors: [2])
            // What the store handed out stays, pruned or not (what tells a restored store from a pruned one).
            #expect(try await (relay as! any RelayStore).lastCursor(account: try AccountID(validating: "alice")) == 1)
            #expect(try await (relay as! any RelayStore).handedOut(account: try AccountID(validating: "alice")) == 2)
            #expect(try await (relay as! any RelayStore).handedOut(account: try AccountID(validating: "carol")) == .start)
            try await relay.publish(record(.ack, "alice", body: [3]))
            #expect(try await relay.rows(account: try AccountID(validating: "alice"), after: 0, limit: 10).map(\.cursor) == [1, 3])
        }
    }

    @Test("SQLite: a file of the shared-sequence schema (relay-v4) migrates to per-account cursors; no reader's cursor is passed")
    func sqliteMigratesToAccountCursors() async throws {
        try await RelayFixture.with(.sqlite) { fixture in
            // A relay-v4 file as a daemon of the previous revision made it: one sequence for every account.
            let path = fixture.directory + "/relay.db"
            let made = try await run("/usr/bin/sqlite3", [path, """
                \(RelaySchemaTests.sqliteRelayV4)
                INSERT INTO records (kind, account, log_seq, body, created_at) VALUES
                    ('log', 'alice', 0, x'01', 0), ('log', 'bob', 0, x'02', 0), ('log', 'alice', 1, x'03', 0), ('share', 'bob', NULL, x'04', 0);
                UPDATE records SET recipient = 'd' WHERE kind = 'share';
                DELETE FROM records WHERE kind = 'share';
                """])
            #expect(made.status == 0, "\(made.err)")
            let relay = try await fixture.open()
            let alice = try AccountID(validating: "alice"), bob = try AccountID(validating: "bob")
            // Every row keeps its cursor; each account goes on past the largest cursor ever handed out (4, pruned).
            #expect(try await relay.rows(account: alice, after: 0, limit: 10).map(\.cursor) == [1, 3])
            #expect(try await relay.rows(account: bob, after: 0, limit: 10).map(\.cursor) == [2])
            try await relay.publish(record(.log, "alice", seq: 2, body: [5]))
            try await relay.publish(record(.log, "bob", seq: 1, body: [6]))
            #expect(try await relay.rows(account: alice, after: 3, limit: 10).map(\.cursor) == [5])
            #expect(try await relay.rows(account: bob, after: 4, limit: 10).map(\.cursor) == [5])
        }
    }

    @Test("instances opening a fresh store at once all migrate it, once", arguments: Store.allCases)
    func concurrentMigrations(_ store: Store) async throws {
        try await RelayFixture.with(store) { fixture in
            let relays = try await withThrowingTaskGroup(of: (any Relay).self) { group in
                for _ in 0..<4 { group.addTask { try await fixture.open() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(relays.count == 4)
            try await relays[0].publish(record(.ack, "alice", body: [1]))
            for relay in relays { #expect(try await relay.rows(after: 0, limit: 10).count == 1) }
            if store == .postgres {
                let versions = try await fixture.psql("SELECT version FROM keyvault_relay_migrations ORDER BY version")
                #expect(versions == PostgresRelaySchema.migrations.map(\.version).joined(separator: "\n"))
            }
            // And again, on a store that is already current.
            let late = try await fixture.open()
            #expect(try await late.rows(after: 0, limit: 10).count == 1)
        }
    }

    @Test("PostgreSQL down: operations throw unreachable in bounded time; back up: they work and wake again")
    func postgresOutage() async throws {
        try await RelayFixture.with(.postgres) { fixture in
            // The writer's deadline is 2 s, so the two operations that wait it out below take 4 s, not 10;
            // its pool is warmed by a read first, which cannot time out on a loaded machine's first connect.
            let reader = try await fixture.open()
            try await reader.publish(record(.ack, "alice", body: [1]))
            let writer = try await fixture.open(operationTimeout: .seconds(2)) as! PostgresRelay
            try await within(seconds: 60) {
                while (try? await writer.rows(after: 0, limit: 10)) == nil { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(writer.unreachableSince == nil)

            try await fixture.cluster("stop")
            // Bounded: the relay's own deadline; 60 s here only stops a hang.
            let error = try await within(seconds: 60) { () -> (any Error)? in
                do { try await writer.publish(record(.ack, "alice", body: [2])); return nil } catch { return error }
            }
            guard case .unreachable(let why)? = error as? RelayError else {
                Issue.record("expected unreachable, got \(String(describing: error))"); return
            }
            #expect(!why.isEmpty)
            #expect(writer.unreachableSince != nil)
            let readError = try await within(seconds: 60) { () -> (any Error)? in
                do { _ = try await writer.rows(after: 0, limit: 10); return nil } catch { return error }
            }
            #expect((readError as? RelayError).map { if case .unreachable = $0 { true } else { false } } == true)

            let wakeups = reader.wakeups()
            try await fixture.cluster("start")
            // The pool reconnects with its own back-off; retry until it has.
            let sent = record(.share, "alice", recipient: "reader", body: [3])
            try await within(seconds: 120) {
                while true {
                    do {
                        try await writer.publish(sent)
                        return
                    } catch RelayError.unreachable {
                        try await Task.sleep(for: .milliseconds(250))
                    }
                }
            }
            #expect(writer.unreachableSince == nil)
            try await seesAfterWakeup(reader, wakeups, sent)
            #expect(try await writer.rows(after: 0, limit: 10).map(\.record.body) == [[1], [3]])
        }
    }
}

// MARK: helpers

private func record(_ kind: RelayRecord.Kind, _ account: String, recipient: String? = nil, seq: LogSeq? = nil, body: [UInt8]) -> RelayRecord {
    RelayRecord(kind: kind, account: try! AccountID(validating: account), recipient: recipient.map(DeviceID.init(naming:)), logSeq: seq, body: body)
}

/// Waits (bounded only against a hang) until a wake-up after which `reader` holds `sent`.
private func seesAfterWakeup(_ reader: any Relay, _ wakeups: AsyncStream<RelayWake>, _ sent: RelayRecord) async throws {
    let seen = try await within(seconds: 10) {
        for await _ in wakeups {
            if try await reader.rows(after: 0, limit: 1000).contains(where: { $0.record == sent }) { return true }
        }
        return false
    }
    #expect(seen, "the reader's wakeups() never brought the record")
}

/// Runs `body`, failing the test if it takes longer than `seconds` (a hang guard, not a timing assertion).
private func within<T: Sendable>(seconds: Int, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask { try? await Task.sleep(for: .seconds(seconds)); return nil }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TestFailure("still waiting after \(seconds) s") }
        return value
    }
}

/// One empty store per test: a temporary SQLite file, or a fresh database on the test server.
final class RelayFixture: Sendable {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    let store: RelayConformanceTests.Store
    let directory: String
    let serverURL: String?
    let database: String
    private let relays = Mutex<[any Relay]>([])

    private init(_ store: RelayConformanceTests.Store, directory: String, serverURL: String?, database: String) {
        self.store = store
        self.directory = directory
        self.serverURL = serverURL
        self.database = database
    }

    static func with(_ store: RelayConformanceTests.Store, _ body: (RelayFixture) async throws -> Void) async throws {
        var template = Array("/tmp/kvrelay-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
        let directory = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var serverURL: String?
        let database = "kv_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        if store == .postgres {
            guard let url = ProcessInfo.processInfo.environment["KEYVAULT_TEST_POSTGRES"], !url.isEmpty else {
                throw TestFailure("KEYVAULT_TEST_POSTGRES is not set: run `make test`, or scripts/with-test-postgres.sh swift test …")
            }
            serverURL = url
        }
        let fixture = RelayFixture(store, directory: directory, serverURL: serverURL, database: database)
        if store == .postgres { _ = try await fixture.psql("CREATE DATABASE \(database)", inFixtureDatabase: false) }
        do {
            try await body(fixture)
        } catch {
            await fixture.close()
            throw error
        }
        await fixture.close()
    }

    /// A new relay instance on this fixture's store.
    /// `operationTimeout`: the PostgreSQL relay's deadline per operation (the daemon's is 5 s).
    func open(operationTimeout: Duration = .seconds(5)) async throws -> any Relay {
        let relay: any Relay
        switch store {
        case .sqlite: relay = try SQLiteRelay(path: directory + "/relay.db")
        case .postgres:
            guard case .postgres(var configuration) = try RelayAddress(parsing: serverURL!) else { throw TestFailure("not a postgres URL") }
            configuration.database = database
            relay = try await PostgresRelay.open(configuration, operationTimeout: operationTimeout)
        }
        relays.withLock { $0.append(relay) }
        return relay
    }

    private func close() async {
        for relay in relays.withLock({ $0 }) { await (relay as? PostgresRelay)?.shutdown() }
        if store == .postgres { _ = try? await psql("DROP DATABASE IF EXISTS \(database) WITH (FORCE)", inFixtureDatabase: false) }
    }

    /// Runs SQL with psql in this fixture's database (or in the URL's own, to create and drop it); returns its output.
    func psql(_ sql: String, inFixtureDatabase: Bool = true) async throws -> String {
        var url = URLComponents(string: serverURL!)!
        if inFixtureDatabase { url.path = "/" + database }
        let result = try await run("/usr/bin/psql", [url.string!, "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql])
        guard result.status == 0 else { throw TestFailure("psql \(sql): \(result.err)") }
        return result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Polls `condition` until it holds (bounded only against a hang).
    func until(_ what: String, _ condition: () async throws -> Bool) async throws {
        for _ in 0..<500 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("never: \(what)")
    }

    /// scripts/pg-cluster.sh stop|start on the test server's cluster.
    func cluster(_ command: String) async throws {
        guard let dir = ProcessInfo.processInfo.environment["KEYVAULT_TEST_PG_DIR"], !dir.isEmpty else {
            throw TestFailure("KEYVAULT_TEST_PG_DIR is not set: the outage test needs the cluster made by scripts/pg-cluster.sh")
        }
        let result = try await run("/bin/bash", [Self.root + "/scripts/pg-cluster.sh", command, dir])
        guard result.status == 0 else { throw TestFailure("pg-cluster.sh \(command) failed: \(result.err)") }
    }
}
