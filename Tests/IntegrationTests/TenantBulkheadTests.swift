import Foundation
import Synchronization
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelayWire
import KeyVaultRelay

/// Issue 33, item 5 (PostgreSQL): one tenant's heavy requests do not starve the
/// store's pool for the others, nor trip the store breaker for all. At most 2 of an
/// account's operations hold one of the pool's 8 connections at once, and a deadline
/// one account's statements miss is that request's failure (503 for it), not the store's.
@Suite("Relay service: bulkheads between tenants", .serialized)
struct TenantBulkheadTests {
    /// One signed request on a connection of its own (the tests' shared HTTP client queues past 8 per host,
    /// which would put the other tenant's reads behind the heavy ones in the test itself); its status, -1 for none.
    static func request(_ port: Int, _ method: String, _ path: String, query: String = "", body: [UInt8] = [],
                        as device: TestDevice, timeout: Duration = .seconds(30)) async throws -> Int {
        let socket = try RawSocket(tcpPort: port)
        let headers = device.signedHeaders(method: method, path: path, query: query, body: body)
        var head = "\(method) \(path)\(query.isEmpty ? "" : "?" + query) HTTP/1.1\r\nHost: relay\r\nConnection: close\r\n"
        head += headers.map { "\($0.0): \($0.1)\r\n" }.joined()
        if !body.isEmpty { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        guard socket.send(Array((head + "\r\n").utf8) + body) else { return -1 }
        return try await socket.readResponse(timeout: timeout)?.status ?? -1
    }

    @Test("40 heavy writes of one account: another account's reads answer at once, and the breaker never opens")
    func heavyTenantLeavesOthersAlone() async throws {
        try await RelayServiceFixture.with(.service, arguments: ["--metrics-listen", "127.0.0.1:0"]) { f in
            let (heavy, _) = try await f.createAccount("heavy")
            let (other, _) = try await f.createAccount("other")
            // Each share the heavy account stores takes 3 s in the database (under the 4 s statement timeout).
            _ = try await PostgresShardingTests.psql(f.storeAddress, """
                CREATE FUNCTION slow_heavy() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN IF NEW.account = 'heavy' AND NEW.kind = 'share' THEN PERFORM pg_sleep(3); END IF; RETURN NEW; END $$;
                CREATE TRIGGER slow_heavy BEFORE INSERT ON keyvault_records FOR EACH ROW EXECUTE FUNCTION slow_heavy();
                """)
            let port = try await f.a.metricsPort()
            let trips = try await RelayAnswerBoundsTests.counter("keyvault_relay_store_breaker_trips_total", at: port)
            let heavyID = try AccountID(validating: "heavy")
            let answered = AnsweredCount()
            let writes = (0..<40).map { _ in
                Task { () -> Int in
                    let share = RelayRecord.share(account: heavyID, recipient: DeviceID(Random.bytes(16)), sealed: Random.bytes(64))
                    let body = JSONBody.encode(RelayWire.Publish(records: [RelayWire.Record(share)]))
                    defer { answered.count.withLock { $0 += 1 } }
                    return (try? await Self.request(f.a.port, "POST", "/v1/accounts/heavy/records", body: body, as: heavy)) ?? -1
                }
            }
            try await Task.sleep(for: .milliseconds(500))
            // Meanwhile the other tenant reads, again and again, through the same instance, until
            // the heavy tenant's writes are all answered (two take 3 s each; the rest are refused).
            var slowest: Duration = .zero
            var statuses: [Int] = []
            let until = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < until, answered.count.withLock({ $0 }) < writes.count {
                let started = ContinuousClock.now
                statuses.append(try await Self.request(f.a.port, "GET", "/v1/accounts/other/records", query: "after=0&limit=1000", as: other))
                slowest = max(slowest, ContinuousClock.now - started)
                try await Task.sleep(for: .milliseconds(100))
            }
            var heavyStatuses: [Int] = []
            for write in writes { heavyStatuses.append(await write.value) }
            #expect(statuses.allSatisfy { $0 == 200 }, "the other tenant's reads: \(statuses)")
            #expect(slowest < .seconds(2), "the other tenant's slowest read took \(slowest)")
            let tripped = try await RelayAnswerBoundsTests.counter("keyvault_relay_store_breaker_trips_total", at: port) - trips
            #expect(tripped == 0, "the breaker opened \(tripped) times")
            // The heavy tenant's own: some stored, the rest its own 503s.
            #expect(heavyStatuses.contains(200), "\(heavyStatuses)")
            #expect(heavyStatuses.allSatisfy { $0 == 200 || $0 == 503 }, "\(heavyStatuses)")
            print("heavy tenant's writes: \(heavyStatuses.filter { $0 == 200 }.count) stored, \(heavyStatuses.filter { $0 == 503 }.count) answered 503; other's slowest read \(slowest)")
            _ = try await PostgresShardingTests.psql(f.storeAddress, "DROP TRIGGER slow_heavy ON keyvault_records")
        }
    }

    @Test("one account's slow candidacies hold one of the candidacy store's connections: another account's candidacy is filed at once")
    func slowCandidaciesLeaveOthersAlone() async throws {
        try await RelayServiceFixture.with(.service) { f in
            // Each filing for the heavy account takes 3 s in the database (8 of them would hold the whole pool of 4 twice over).
            _ = try await PostgresShardingTests.psql(f.storeAddress, """
                CREATE FUNCTION slow_filing() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN IF NEW.account = 'heavy' THEN PERFORM pg_sleep(3); END IF; RETURN NEW; END $$;
                CREATE TRIGGER slow_filing BEFORE INSERT ON keyvault_service_filings FOR EACH ROW EXECUTE FUNCTION slow_filing();
                """)
            var filings: [Task<Int, Never>] = []
            for _ in 0..<8 {
                let device = TestDevice(name: "heavy")
                let token = try await f.issuer.token(for: "heavy", device: device)
                let body = JSONBody.encode(RelayWire.Candidacy(signing: device.keys.signing, box: device.keys.box, identityToken: token))
                filings.append(Task { (try? await Self.request(f.a.port, "POST", "/v1/accounts/heavy/candidates", body: body, as: device)) ?? -1 })
            }
            // The heavy filings are under way (the first holds its connection) before the other tenant files.
            try await eventually {
                let running = try await PostgresShardingTests.psql(f.storeAddress,
                    "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'INSERT INTO keyvault_service_filings%' AND state = 'active'")
                return (Int(running.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 0
            }
            let other = TestDevice(name: "other")
            let started = ContinuousClock.now
            let filed = try await f.a.candidacy("other", other, token: try await f.issuer.token(for: "other", device: other))
            let took = ContinuousClock.now - started
            #expect(filed.status == 200, "the other tenant's candidacy: \(filed.status) \(filed.text)")
            var heavyStatuses: [Int] = []
            for filing in filings { heavyStatuses.append(await filing.value) }
            // The heavy account's own: the first filed, the rest waited their turn and got their own 503s (or filed).
            #expect(heavyStatuses.contains(200), "\(heavyStatuses)")
            #expect(heavyStatuses.allSatisfy { $0 == 200 || $0 == 503 }, "\(heavyStatuses)")
            print("heavy filings: \(heavyStatuses); the other tenant's candidacy took \(took)")
            _ = try await PostgresShardingTests.psql(f.storeAddress, "DROP TRIGGER slow_filing ON keyvault_service_filings")
        }
    }

    /// The relay's cores are shared by turns too: one of an account's members' requests is worked on
    /// at a time (checked, decoded, stored, answered), whatever their addresses, and one of its
    /// candidates' and revoked devices' (the guests' lane), so guests never take the members' turn.
    /// Here the store's write lock is held by another process, so a request that reaches the store
    /// stays there holding its turn; the account's next requests wait for one (the gauge says so),
    /// while another account's read, and a stranger naming the account, are answered without one.
    /// On the SQLite store, which has no per-account bound of its own, nothing waited before.
    @Test("one account's requests take turns: members one at a time, guests in a lane of their own; another account's read and a stranger's refusal take none")
    func oneAccountsRequestsTakeTurns() async throws {
        try await RelayServiceFixture.with(.sqlite, arguments: ["--metrics-listen", "127.0.0.1:0"]) { f in
            let (heavy, circle) = try await f.createAccount("heavy")
            let (other, _) = try await f.createAccount("other")
            let candidate = TestDevice(name: "candidate")
            #expect(try await f.a.candidacy("heavy", candidate, token: try await f.issuer.token(for: "heavy", device: candidate)).status == 200)
            let port = try await f.a.metricsPort()
            let waits = { try await RelayAnswerBoundsTests.counter("keyvault_relay_account_turn_waits", at: port) }
            let holder = try WriteLockHolder(path: String(f.storeAddress.dropFirst("sqlite:".count)))
            defer { holder.release() }
            try await holder.waitUntilHeld()
            let heavyID = try AccountID(validating: "heavy")
            func send(_ method: String, _ body: [UInt8] = [], as device: TestDevice) -> Task<Int, Never> {
                Task { (try? await Self.request(f.a.port, method, "/v1/accounts/heavy/records", query: method == "GET" ? "after=0" : "",
                                                body: body, as: device)) ?? -1 }
            }
            func pairingRequest() throws -> [UInt8] {
                let request = try PairingRequest.make(account: heavyID, device: candidate.keys, signer: candidate.signing, code: Pairing.drawCode(),
                                                      headHash: circle.headHash, at: Date()).request
                return JSONBody.encode(RelayWire.Publish(records: [RelayWire.Record(.request(request))]))
            }
            // The candidate's first request is in the store holding the guests' turn; its second waits for it.
            // (Whichever of the two takes the turn first, one holds it in the store and the other waits.)
            let guests = [send("POST", try pairingRequest(), as: candidate), send("POST", try pairingRequest(), as: candidate)]
            try await eventually { try await waits() == 1 }
            // Two members' writes: one takes the members' turn (the guests hold none of it) and stays in
            // the store, the other waits; then a member's read waits too.
            let writes = (0..<2).map { _ in
                let share = RelayRecord.share(account: heavyID, recipient: DeviceID(Random.bytes(16)), sealed: Random.bytes(64))
                return send("POST", JSONBody.encode(RelayWire.Publish(records: [RelayWire.Record(share)])), as: heavy)
            }
            try await eventually { try await waits() == 2 }
            let members = writes + [send("GET", as: heavy)]
            try await eventually { try await waits() == 3 }
            // Neither of these takes one of the heavy account's turns: they are answered while it waits.
            let otherRead = try await Self.request(f.a.port, "GET", "/v1/accounts/other/records", query: "after=0", as: other)
            #expect(otherRead == 200)
            let stranger = try await Self.request(f.a.port, "GET", "/v1/accounts/heavy/records", query: "after=0", as: TestDevice(name: "stranger"))
            #expect(stranger == 403)
            #expect(try await waits() == 3, "the heavy account's requests still wait for their turns")
            holder.release()
            var statuses: [Int] = []
            for task in members { statuses.append(await task.value) }
            #expect(statuses == [200, 200, 200], "the members' own, once the store is back: \(statuses)")
            // The candidate's: stored, or refused for what they are (one request per candidate), never for want of a turn.
            var guestStatuses: [Int] = []
            for task in guests { guestStatuses.append(await task.value) }
            #expect(guestStatuses.contains(200) && !guestStatuses.contains(503) && !guestStatuses.contains(-1), "\(guestStatuses)")
            #expect(try await waits() == 0)
        }
    }
}

/// How many of a test's requests have been answered, counted from the tasks that sent them.
private final class AnsweredCount: Sendable {
    let count = Mutex(0)
}
