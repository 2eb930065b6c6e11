import Foundation
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelayWire
import KeyVaultRelay
import KeyVaultRelayStore

/// The PostgreSQL store as a distributed engine needs it (RELAY.md, "Past one
/// database server"), checked on plain PostgreSQL: the catalog's keys, the
/// statements the service really sends (from the server's own log), a log number
/// taken under a shard's index name, and a trigger standing in for a worker that
/// is down.
@Suite(.serialized) struct PostgresShardingTests {
    /// Every table the store has is one the schema distributes or the reference table, and each
    /// distributed table's primary key and unique indexes include its distribution column.
    @Test func everyKeyHoldsItsDistributionColumn() async throws {
        try await RelayServiceFixture.with(.service) { f in
            // Both instances are up: every migration and table exists.
            let tables = try await Self.psql(f.storeAddress, """
                SELECT relname FROM pg_class WHERE relkind IN ('r', 'p') AND relnamespace = 'public'::regnamespace ORDER BY 1
                """).split(separator: "\n").map(String.init)
            let distribution = Dictionary(uniqueKeysWithValues: PostgresRelaySchema.distribution.map { ($0.table, $0.column) })
            #expect(Set(tables) == Set(distribution.keys).union([PostgresRelaySchema.referenceTable]))

            let keys = try await Self.psql(f.storeAddress, """
                SELECT c.relname, ic.relname, i.indisprimary, string_agg(coalesce(a.attname, '(expression)'), ',' ORDER BY k.n)
                FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_class ic ON ic.oid = i.indexrelid
                CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
                LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
                WHERE c.relnamespace = 'public'::regnamespace AND (i.indisunique OR i.indisprimary)
                GROUP BY 1, 2, 3 ORDER BY 1, 2
                """).split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
            var primaryKeys: Set<String> = []
            for key in keys {
                let (table, index, primary, columns) = (key[0], key[1], key[2] == "t", key[3].split(separator: ",").map(String.init))
                if primary { primaryKeys.insert(table) }
                guard table != PostgresRelaySchema.referenceTable else { continue }
                let column = try #require(distribution[table], "\(table) is not in the schema's distribution")
                #expect(columns.contains(column), "\(index) on \(table) is (\(columns.joined(separator: ", "))), without \(column)")
            }
            // The keyed tables are keyed: a change that dropped a key would pass the loop above.
            for table in ["keyvault_records", "keyvault_account_cursors", "keyvault_request_nonces", "keyvault_service_candidates"] {
                #expect(primaryKeys.contains(table), "\(table) has no primary key")
            }
            #expect(keys.contains { $0[1] == PostgresRelaySchema.logSeqIndex })
            #expect(keys.contains { $0[1] == PostgresRelaySchema.identityIndex })
        }
    }

    /// Every statement both instances send while accounts are made, a device enrolls, keys rotate and
    /// devices read (held reads and pruning included) names exactly one account, read from the server's
    /// log (`log_statement = all` on this database, with each statement's parameters). And a read costs
    /// no transaction that writes: the server's transaction IDs move only for writes.
    @Test func everyStatementOnARequestsPathNamesOneAccount() async throws {
        let pgDir = try #require(ProcessInfo.processInfo.environment["KEYVAULT_TEST_PG_DIR"], "run under scripts/with-test-postgres.sh")
        let serverLog = pgDir + "/server.log"
        try await RelayServiceFixture.with(.service, prepare: { url in
            let database = try #require(URLComponents(string: url)?.path.dropFirst())
            _ = try await Self.psql(url, "ALTER DATABASE \(database) SET log_statement = 'all'")
        }) { f in
            let accounts: Set<String> = ["stmt-alpha", "stmt-beta"]
            // Their start (migrations, the listener) is behind this point; what follows is requests.
            let from = try FileManager.default.attributesOfItem(atPath: serverLog)[.size] as? Int ?? 0

            let (alpha1, founded) = try await f.createAccount("stmt-alpha")
            var alpha = founded
            let alpha2 = try await f.enrollSecond("stmt-alpha", first: alpha1, circle: &alpha)
            let (beta1, _) = try await f.createAccount("stmt-beta", on: f.b)
            let rotation = try Self.rotation(&alpha, by: alpha1, to: [alpha2])
            #expect(try await f.a.publish("stmt-alpha", rotation, as: alpha1).status == 200)
            let arrived = try await f.b.rows("stmt-alpha", wait: 5, as: alpha2)
            #expect(arrived.contains { $0.record.kind == .share && $0.record.recipient == alpha2.id })
            let announced = try #require(alpha.generations.last)
            let ack = ShareAck.make(account: alpha.account, generation: announced.generation, keyID: announced.keyID, deviceID: alpha2.id,
                                    signer: alpha2.signing, at: Date())
            #expect(try await f.b.publish("stmt-alpha", [.ack(ack)], as: alpha2).status == 200)
            let last = try #require(try await f.a.rows("stmt-beta", as: beta1).last).cursor
            #expect(try await f.a.read("stmt-beta", after: last, wait: 1, as: beta1).status == 200)

            // Reads write nothing: 20 of them on both instances move no transaction ID (the second
            // txid_current() takes the one after the first's).
            let before = try await Self.transactionID(f.storeAddress)
            for round in 0..<10 {
                #expect(try await f.a.read("stmt-alpha", as: round % 2 == 0 ? alpha1 : alpha2).status == 200)
                #expect(try await f.b.read("stmt-beta", as: beta1).status == 200)
            }
            #expect(try await Self.transactionID(f.storeAddress) - before == 1, "a signed read committed a write")
            // A write is one transaction, the records and the nonce together, and its wake-up (pg_notify,
            // which takes a transaction ID) follows in another, which may not have gone yet.
            let write = try await Self.transactionID(f.storeAddress)
            let next = try Self.rotation(&alpha, by: alpha1, to: [alpha2])
            #expect(try await f.b.publish("stmt-alpha", next, as: alpha1).status == 200)
            #expect((2...3).contains(try await Self.transactionID(f.storeAddress) - write), "a publish took more than one writing transaction")

            let statements = try ServerLogStatements.read(serverLog, from: from)
            let onTables = statements.filter(\.namesATable)
            #expect(onTables.count > 30, "too few statements seen in \(serverLog): \(onTables.count)")
            for shape in ["INSERT INTO keyvault_records", "INSERT INTO keyvault_request_nonces", "INSERT INTO keyvault_account_cursors",
                          "FROM keyvault_records", "FROM keyvault_service_candidates", "INSERT INTO keyvault_service_candidates",
                          "DELETE FROM keyvault_records"] {
                #expect(onTables.contains { $0.sql.contains(shape) }, "no statement seen doing \(shape)")
            }
            for statement in statements {
                let problems = statement.problems(accounts: accounts)
                #expect(problems.isEmpty, "\(problems.joined(separator: "; ")): \(statement.sql.prefix(300))")
            }

            // The check sees what a distributed engine cannot route: a sweep across accounts, an account
            // inside an array (the one-statement publish did that), a statement that names two.
            let spanning = [
                ServerLogStatements.Statement(sql: "DELETE FROM keyvault_request_nonces WHERE created < $1", parameters: ["'5'"]),
                ServerLogStatements.Statement(sql: "INSERT INTO keyvault_records SELECT * FROM unnest($1::text[])", parameters: ["'{stmt-alpha}'"]),
                ServerLogStatements.Statement(sql: "SELECT 1 FROM keyvault_records WHERE account IN ($1, $2)", parameters: ["'stmt-alpha'", "'stmt-beta'"]),
            ]
            for statement in spanning { #expect(!statement.problems(accounts: accounts).isEmpty, "not caught: \(statement.sql)") }
        }
    }

    /// The log number's unique index named as Citus names a shard's: a taken number is still
    /// `logSeqTaken` (a 409, not a 503), the batch is not stored, and a write's nonce is spent once.
    @Test func aTakenLogNumberIsToldByWhatItIs() async throws {
        var template = Array("/tmp/kvshard-XXXXXX".utf8CString)
        let root = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try await TestRelayStore.make(.service, in: root, startingService: false)
        let opened = try await RelayAddress(parsing: store.storeAddress).openStore()
        let relay = try #require(opened as? PostgresRelay)
        defer { Task { await relay.shutdown() } }
        _ = try await Self.psql(store.storeAddress, "ALTER INDEX \(PostgresRelaySchema.logSeqIndex) RENAME TO \(PostgresRelaySchema.logSeqIndex)_102029")

        let account = try AccountID(validating: "shard-named")
        func entry(_ seq: Int64) -> RelayRecord {
            RelayRecord(kind: .log, account: account, recipient: nil, logSeq: LogSeq(stored: seq), body: Random.bytes(64))
        }
        func share() -> RelayRecord { .share(account: account, recipient: DeviceID(hash: Random.bytes(16)), sealed: Random.bytes(80)) }
        try await relay.publish(batch: [entry(0), share()])
        await #expect(throws: RelayError.logSeqTaken(0)) { try await relay.publish(batch: [share(), entry(0)]) }
        try await relay.publish(batch: [entry(1)])
        await #expect(throws: RelayError.logSeqTaken(1)) { try await relay.publish(batch: [entry(2), entry(1), share()]) }
        // Nothing of a refused batch was stored, and the breaker's view of the store is "reached".
        let rows = try await relay.rows(account: account, after: .start, limit: 100)
        #expect(rows.map(\.record.logSeq) == [0, nil, 1])
        #expect(relay.unreachableSince == nil)

        let nonce = RequestNonce(account: account, keyID: DeviceID(hash: Random.bytes(16)), nonce: RequestSignature.randomNonce(),
                                 created: Int64(Date().timeIntervalSince1970))
        // A signed write answers the rows it stored, as a reader after the account's last cursor would read them.
        let stored = try await relay.publish(batch: [share()], spending: nonce)
        let read = try await relay.rows(account: account, after: .start, limit: 100)
        #expect(stored.rows == Array(read.suffix(1)) && stored.after == read[2].cursor && stored.through == read[3].cursor)
        await #expect(throws: RelayError.nonceSpent) { try await relay.publish(batch: [share()], spending: nonce) }
        #expect(try await relay.rows(account: account, after: .start, limit: 100).count == 4)
    }

    /// A trigger refuses every row of one account, as a Citus worker that is down refuses its shards
    /// (with the error Citus raises, SQLSTATE 08006): that account's rotation answers 503, and the other
    /// account's, sent right after to the same instance, lands and reaches its other device. The
    /// instance's log says what the server said.
    @Test func aShardDownStopsOnlyItsAccounts() async throws {
        try await RelayServiceFixture.with(.service) { f in
            let (up1, upFounded) = try await f.createAccount("shard-up")
            var up = upFounded
            let up2 = try await f.enrollSecond("shard-up", first: up1, circle: &up)
            let (down1, downFounded) = try await f.createAccount("shard-down")
            var down = downFounded
            let down2 = try await f.enrollSecond("shard-down", first: down1, circle: &down)

            try await Self.refuseRows(of: "shard-down", url: f.storeAddress)
            for _ in 0..<3 {
                var attempt = down
                let refused = try await f.a.publish("shard-down", try Self.rotation(&attempt, by: down1, to: [down2]), as: down1)
                #expect(refused.status == 503)
                #expect(refused.refusal?.error == "unavailable")
                // The other account's rotation, at once, on the same instance.
                let rotation = try Self.rotation(&up, by: up1, to: [up2])
                let landed = try await f.a.publish("shard-up", rotation, as: up1)
                #expect(landed.status == 200, "\(landed.status) \(landed.text)")
                let seen = try await f.b.rows("shard-up", wait: 5, as: up2)
                #expect(seen.contains { $0.record.body == rotation[1].body })
            }
            let log = try String(contentsOfFile: f.a.logPath, encoding: .utf8)
            #expect(log.contains("connection to the remote node"), "the server's message is not in the log")
            #expect(log.contains("SQLSTATE 08006"))
            #expect(!log.contains("Generic description"))

            // The worker is back: the refused account's rotation lands.
            _ = try await Self.psql(f.storeAddress, Self.distributedTables.map { "DROP TRIGGER stand_in_worker_down ON \($0);" }.joined())
            let rotation = try Self.rotation(&down, by: down1, to: [down2])
            #expect(try await f.b.publish("shard-down", rotation, as: down1).status == 200)
            #expect(try await f.a.rows("shard-down", wait: 5, as: down2).contains { $0.record.body == rotation[1].body })
        }
    }

    // MARK: Helpers

    static var distributedTables: [String] { PostgresRelaySchema.distribution.map(\.table) }

    /// Every row of `account` in every distributed table is refused, as a worker that is down refuses its shards.
    static func refuseRows(of account: String, url: String) async throws {
        var sql = """
            CREATE FUNCTION stand_in_worker_down() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF (CASE WHEN TG_OP = 'DELETE' THEN OLD.account ELSE NEW.account END) = '\(account)' THEN
                    RAISE EXCEPTION 'connection to the remote node 127.0.0.1:9702 failed with the following error: Connection refused'
                        USING ERRCODE = '08006';
                END IF;
                RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
            END $$;
            """
        for table in distributedTables {
            sql += "CREATE TRIGGER stand_in_worker_down BEFORE INSERT OR UPDATE OR DELETE ON \(table) FOR EACH ROW EXECUTE FUNCTION stand_in_worker_down();"
        }
        _ = try await psql(url, sql)
    }

    /// A rotation as a device sends it: the announce of the next generation and a share to each other device.
    static func rotation(_ circle: inout CircleState, by device: TestDevice, to others: [TestDevice]) throws -> [RelayRecord] {
        let generation = circle.generations.last?.generation.next ?? 1
        let entry = circle.nextEntry(.announce(generation: generation, keyID: KeyID(hash: Random.bytes(16)),
                                               keyCreatedAt: UInt64(Date().timeIntervalSince1970 * 1000)),
                                     signer: device.signing, signerID: device.id, at: Date())
        try circle.apply(entry)
        return [.log(entry)] + others.map { .share(account: circle.account, recipient: $0.id, sealed: Random.bytes(120)) }
    }

    static func transactionID(_ url: String) async throws -> Int64 {
        try #require(Int64(try await psql(url, "SELECT txid_current()").trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    static func psql(_ url: String, _ sql: String) async throws -> String {
        let result = try await run("/usr/bin/psql", [url, "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql])
        guard result.status == 0 else { throw TestFailure("psql: \(result.err)") }
        return result.out
    }
}

/// The statements a PostgreSQL server logged with `log_statement = all`, each with its
/// parameters as the server printed them (`$1 = 'value'`, in its quoting).
enum ServerLogStatements {
    struct Statement {
        var sql: String
        /// Each parameter as logged: `'text'` (quotes doubled inside) or `NULL`.
        var parameters: [String]

        var tables: Set<String> {
            Set(sql.matches(of: #/keyvault_[a-z_]+/#).map { String($0.output) }).subtracting(["keyvault_relay"])
        }
        var namesATable: Bool { !tables.isEmpty }

        /// Why a distributed engine could not run this on one account's shard; empty: it can.
        func problems(accounts: Set<String>) -> [String] {
            var named: Set<String> = []
            var out: [String] = []
            for parameter in parameters {
                let value = parameter.hasPrefix("'") ? String(parameter.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'") : parameter
                if accounts.contains(value) { named.insert(value) }
                if value.hasPrefix("{"), accounts.contains(where: { value.contains($0) }) {
                    out.append("an account inside an array parameter (\(value.prefix(60)))")
                }
            }
            for account in accounts where sql.contains("'\(account)'") { named.insert(account) }
            let refersToTables = !tables.subtracting([PostgresRelaySchema.referenceTable]).isEmpty
            if refersToTables, named.count != 1 {
                out.append("names \(named.count) accounts (\(named.sorted().joined(separator: ", ")))")
            }
            if named.count > 1 { out.append("names several accounts") }
            if refersToTables, !sql.contains("account") { out.append("does not name the distribution column") }
            return out
        }
    }

    /// The statements logged after byte `from` of the server's log.
    static func read(_ path: String, from: Int) throws -> [Statement] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let text = String(decoding: data.dropFirst(from), as: UTF8.self)
        // An entry starts with the log line prefix, `YYYY-MM-DD HH:MM:SS.mmm TZ [pid] `; a statement's own
        // lines follow it unprefixed.
        var entries: [(pid: String, body: String)] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let match = line.prefixMatch(of: #/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ \[(\d+)\] /#) {
                entries.append((String(match.output.1), String(line[match.range.upperBound...])))
            } else if !entries.isEmpty {
                entries[entries.count - 1].body += "\n" + line
            }
        }
        var out: [Statement] = []
        var pending: [String: Int] = [:]
        for (pid, body) in entries {
            if let match = body.prefixMatch(of: #/LOG:  (?:statement|execute [^:]+): /#) {
                pending[pid] = out.count
                out.append(Statement(sql: String(body[match.range.upperBound...]), parameters: []))
            } else if body.hasPrefix("DETAIL:  parameters: "), let index = pending[pid] {
                out[index].parameters = body.matches(of: #/\$\d+ = (NULL|'(?:[^']|'')*')/#).map { String($0.output.1) }
                pending[pid] = nil
            }
        }
        return out
    }
}
