import AsyncHTTPClient
import Foundation
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelayWire
import KeyVaultRelay

/// Issue 33, items 2 and 4: what one tenant's requests cost the relay is bounded by
/// what they ask for. A read's page ends at a byte budget (1 MiB of record bodies), so
/// readers that never read hold megabytes, not 83-140 MB each; an ack prunes by what it
/// settles, never reading every row of the account.
@Suite("Relay service: answers and pruning bounded by what they ask for")
struct RelayAnswerBoundsTests {
    /// `count` shares of `size` bytes parked for a device that is no member (never pruned),
    /// published by `device` in batches under the request body budget.
    static func park(_ count: Int, of size: Int, in account: String, by device: TestDevice, on relay: RelayServiceProcess,
                     to recipient: DeviceID = DeviceID(Random.bytes(16))) async throws {
        let accountID = try AccountID(validating: account)
        let perBatch = max(1, min(1000, (RelayHandlersBudget.maxBody * 3 / 4 - 4096) / (size + 200)))
        var parked = 0
        while parked < count {
            let batch = (0..<min(perBatch, count - parked)).map { _ in
                RelayRecord.share(account: accountID, recipient: recipient, sealed: Random.bytes(size))
            }
            let answer = try await relay.publish(account, batch, as: device)
            guard answer.status == 200 else { throw TestFailure("parking shares: \(answer.status) \(answer.text)") }
            parked += batch.count
        }
    }

    @Test("one read answers at most 1 MiB of bodies; the pages together hold every row; 40 readers that never read hold little",
          arguments: RelayKind.allCases)
    func readsAreBoundedInBytes(_ kind: RelayKind) async throws {
        try await RelayServiceFixture.with(kind) { f in
            let (owner, _) = try await f.createAccount("parker")
            // 200 bodies of 64 KiB: 12.5 MiB, a dozen pages. Unbounded, 40 readers that never read would hold
            // 40 answers of all of it (500 MiB, twice the limit below); bounded, 40 pages.
            let parked = 200
            try await Self.park(parked, of: RelayRecord.maxBodyByteCount, in: "parker", by: owner, on: f.a)

            // One read asking for 1,000 rows gets at most the budget (the first row always).
            let answer = try await f.a.read("parker", as: owner)
            #expect(answer.status == 200)
            let page = try answer.json(RelayWire.Rows.self).rows.compactMap { $0.row(account: try AccountID(validating: "parker")) }
            let bytes = page.reduce(0) { $0 + $1.record.body.count }
            #expect(!page.isEmpty && bytes <= 1 << 20, "one page held \(page.count) rows, \(bytes) bytes of bodies")
            #expect(answer.body.count < 3 << 19, "one answer was \(answer.body.count) bytes")

            // Reading on while a page is not empty (as keyvaultd does) gets every row once, in order.
            var cursor = RelayCursor.start, seen = 0, pages = 0
            while true {
                let rows = try await f.b.rows("parker", after: cursor, as: owner)
                guard let last = rows.last else { break }
                #expect(rows.first.map { $0.cursor > cursor } ?? true)
                seen += rows.count
                pages += 1
                cursor = last.cursor
            }
            #expect(seen == parked + 1, "\(seen) rows in \(pages) pages")
            #expect(pages >= (parked * RelayRecord.maxBodyByteCount) >> 20, "\(seen) rows in \(pages) pages")

            // 40 clients ask for everything and never read their answers: the relay holds 40 pages.
            let pid = f.a.process.pid
            let before = residentKiB(of: pid) ?? 0
            var sockets: [RawSocket] = []
            defer { sockets.removeAll() }
            for _ in 0..<40 {
                let socket = try RawSocket(tcpPort: f.a.port)
                let path = "/v1/accounts/parker/records", query = "after=0&limit=1000"
                let headers = owner.signedHeaders(method: "GET", path: path, query: query, body: [])
                let head = "GET \(path)?\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
                #expect(socket.send(head))
                sockets.append(socket)
            }
            var peak = before
            for _ in 0..<20 {
                try await Task.sleep(for: .milliseconds(150))
                peak = max(peak, residentKiB(of: pid) ?? 0)
            }
            print("relay RSS (\(kind)): \(before / 1024) MiB before, \(peak / 1024) MiB peak with 40 readers that never read")
            #expect(peak - before < 256 * 1024, "the relay grew by \((peak - before) / 1024) MiB")
            // Another tenant's read still answers.
            let (other, _) = try await f.createAccount("bystander")
            #expect(try await f.a.read("bystander", as: other).status == 200)
        }
    }

    @Test("an entry the service verified as it stored it is not verified again when its view is next read; another instance verifies it once",
          arguments: RelayKind.allCases)
    func appendsVerifiedOnce(_ kind: RelayKind) async throws {
        try await RelayServiceFixture.with(kind, arguments: ["--metrics-listen", "127.0.0.1:0"]) { f in
            let applied = "keyvault_relay_view_entries_applied_total"
            let (portA, portB) = (try await f.a.metricsPort(), try await f.b.metricsPort())
            var (owner, circle) = try await f.createAccount("once")
            // The first read after the genesis builds the account's view: the genesis is verified there.
            #expect(try await f.a.read("once", as: owner).status == 200)
            let built = try await Self.counter(applied, at: portA)
            var generation = Generation.first
            for _ in 0..<10 {
                generation = generation.next!
                let entry = circle.nextEntry(.announce(generation: generation, keyID: KeyID(Random.bytes(16)), keyCreatedAt: 2),
                                             signer: owner.signing, signerID: owner.id, at: Date())
                try circle.apply(entry)
                #expect(try await f.a.publish("once", [.log(entry)], as: owner).status == 200)
            }
            #expect(try await f.a.read("once", as: owner).status == 200)
            #expect(try await Self.counter(applied, at: portA) == built, "instance a verified again the entries it verified as it stored them")
            // Instance b stored none of them: it reads and verifies each, once.
            #expect(try await f.b.read("once", as: owner).status == 200)
            #expect(try await f.b.read("once", as: owner).status == 200)
            #expect(try await Self.counter(applied, at: portB) == 11)
        }
    }

    /// Issue 35: a held read is answered from the rows the write that woke it stored, not by reading
    /// them back. On PostgreSQL the instance that took the write wakes its own readers before the
    /// store's wake-up goes out, so its held read, a member's, asks the store nothing (neither the
    /// rows nor the circle: the write's entries are in the instance's view already); the other
    /// instance, woken by the store, reads the same rows from it. On SQLite the file's own wake-up
    /// may come first: the answer is the same either way. Rounds with and without a log entry. The
    /// store's wake-up for a write, which comes back to the instance that took it, wakes no read held
    /// after its rows (it names the write's last cursor).
    @Test("a held read woken by a write on its own instance answers with the rows the write stored, without reading the store",
          arguments: RelayKind.allCases)
    func heldReadAnsweredFromItsWrite(_ kind: RelayKind) async throws {
        try await RelayServiceFixture.with(kind, arguments: ["--metrics-listen", "127.0.0.1:0"]) { f in
            let asked = Self.storeUses
            let held = "keyvault_relay_held_reads"
            var (owner, circle) = try await f.createAccount("woken")
            var last = try #require(try await f.a.rows("woken", as: owner).last?.cursor)
            var generation = Generation.first
            for round in 1...4 {
                let (after, reader) = (last, owner)
                let arming = try #require(try await f.a.metric(asked[0]))
                let onA = Task { try await f.a.rows("woken", after: after, wait: 20, as: reader) }
                let onB = Task { try await f.b.rows("woken", after: after, wait: 20, as: reader) }
                try await eventually {
                    let (onA, onB) = (try await f.a.metric(held), try await f.b.metric(held))
                    return onA == 1 && onB == 1
                }
                // Held after one page read: its cursor is one the account's view has read to, so the
                // store is not asked whether it handed it out (cursor-ahead).
                if kind == .service { #expect(try await f.a.metric(asked[0]) == arming + 1) }
                let before = try await Self.metrics(asked, of: f.a)
                var batch = [RelayRecord.share(account: circle.account, recipient: DeviceID(Random.bytes(16)), sealed: Random.bytes(120))]
                if round % 2 == 1 {
                    generation = generation.next!
                    let entry = circle.nextEntry(.announce(generation: generation, keyID: KeyID(Random.bytes(16)), keyCreatedAt: 2),
                                                 signer: owner.signing, signerID: owner.id, at: Date())
                    try circle.apply(entry)
                    batch.insert(.log(entry), at: 0)
                }
                let wakeups = try await f.a.metric(Self.storeWakeups) ?? 0
                #expect(try await f.a.publish("woken", batch, as: owner).status == 200)
                let (fromA, fromB) = (try await onA.value, try await onB.value)
                #expect(fromA.map(\.record) == batch)
                #expect(fromA == fromB, "the instance that stored the rows answered other rows than the store holds")
                if kind == .service {
                    // The write's own store use (its circle, at most) is all the instance asked for.
                    let after = try await Self.metrics(asked, of: f.a)
                    #expect(after[0] == before[0], "the held read on the instance that took the write read the rows back")
                    #expect(after[1] == before[1].map { $0 + 1 }, "the held read on the instance that took the write read the circle again")
                    #expect(after[2...] == before[2...])
                }
                // Nothing else landed: the next round's readers wait after these rows.
                last = try #require(fromA.last?.cursor)
                #expect(try await f.a.rows("woken", after: last, as: owner).isEmpty)
                if kind == .service && round == 4 {
                    // The store's wake-up for this write comes back to instance a too (it LISTENs), and so
                    // may another NOTIFY naming the same rows: a read held after them has seen every row
                    // either names, so it stays held and asks the store nothing.
                    try await eventually { try await f.a.metric(Self.storeWakeups) == wakeups + 1 }
                    let since = last
                    let echoed = Task { try await f.a.rows("woken", after: since, wait: 20, as: owner) }
                    try await eventually { try await f.a.metric(held) == 1 }
                    let armed = try #require(try await f.a.metric(asked[0]))
                    let notify = try await run("/usr/bin/psql", [f.storeAddress, "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-c",
                                                                 "SELECT pg_notify('keyvault_relay', 'woken \(last.value)')"])
                    #expect(notify.status == 0, "psql: \(notify.err)")
                    try await eventually { try await f.a.metric(Self.storeWakeups) == wakeups + 2 }
                    #expect(try await f.a.metric(held) == 1, "a wake-up naming rows the read had seen woke it")
                    #expect(try await f.a.metric(asked[0]) == armed, "a wake-up naming rows the read had seen made it read the store")
                    // Still held: the next write answers it.
                    let next = RelayRecord.share(account: circle.account, recipient: DeviceID(Random.bytes(16)), sealed: Random.bytes(120))
                    #expect(try await f.a.publish("woken", [next], as: owner).status == 200)
                    #expect(try await echoed.value.map(\.record) == [next])
                }
            }
        }
    }

    /// The same for a new device while it pairs: its held read, woken by the member's response on the
    /// same instance, answers from the write without asking the store (its candidacy is known there);
    /// woken by the approval, which changes what it may see, it reads the store again from its cursor.
    @Test("a candidate's held read woken by a write on its own instance answers from the write; the approval makes it read the store",
          arguments: RelayKind.allCases)
    func candidateHeldReadAnsweredFromItsWrite(_ kind: RelayKind) async throws {
        try await RelayServiceFixture.with(kind, arguments: ["--metrics-listen", "127.0.0.1:0"]) { f in
            let asked = Self.storeUses
            let account = "pairing"
            var (first, circle) = try await f.createAccount(account)
            let second = TestDevice(name: "second")
            #expect(try await f.a.candidacy(account, second, token: try await f.issuer.token(for: account, device: second)).status == 200)
            let code = Pairing.drawCode()
            let started = try PairingRequest.make(account: circle.account, device: second.keys, signer: second.signing, code: code,
                                                  headHash: circle.headHash, at: Date())
            let request = started.request
            #expect(try await f.a.publish(account, [.request(request)], as: second).status == 200)
            let last = try #require(try await f.a.rows(account, as: second).last?.cursor)

            let held = Task { try await f.a.rows(account, after: last, wait: 20, as: second) }
            try await eventually { try await f.a.metric("keyvault_relay_held_reads") == 1 }
            let before = try await Self.metrics(asked, of: f.a)
            let answering = try PairingResponse.make(to: request, code: code, responder: first.id, signer: first.signing, circle: circle)
            #expect(try await f.a.publish(account, [.challenge(answering.response)], as: first).status == 200)
            let woken = try await held.value
            #expect(woken.map(\.record) == [.challenge(answering.response)])
            if kind == .service {
                let after = try await Self.metrics(asked, of: f.a)
                #expect(after[0] == before[0] && after[2] == before[2] && after[3] == before[3],
                        "the candidate's held read asked the store: \(before) → \(after)")
                #expect(after[1] == before[1].map { $0 + 1 }, "only the write's own circle read")
            }

            // The approval makes it a member, who may see what it could not (the other rows after its
            // cursor): its held read reads the store, and answers the approval with them.
            let challengeCursor = try #require(woken.last?.cursor)
            let approving = Task { try await f.a.rows(account, after: challengeCursor, wait: 20, as: second) }
            try await eventually { try await f.a.metric("keyvault_relay_held_reads") == 1 }
            guard case .confirmed(let confirmation, _) = Pairing.answer(answering.response, to: request, initiator: started.takeInitiator(),
                                                                          circle: circle, signer: second.signing) else {
                throw TestFailure("the genuine response did not confirm")
            }
            let completed = Pairing.complete(try PairingConfirmation.decode(confirmation.encoded, request: request),
                                             responder: answering.takeResponder())
            let (approve, approval) = try RelayServiceFixture.approval(of: second, request: request, sessionKey: try #require(completed),
                                                                       by: first, circle: &circle)
            #expect(try await f.a.publish(account, [.log(approve), .challenge(approval)], as: first).status == 200)
            let approved = try await approving.value
            #expect(approved.map(\.record.kind) == [.log, .challenge])
            #expect(approved.first?.record.body == approve.encoded)
        }
    }

    /// The store uses a held read could make, by operation.
    static let storeWakeups = "keyvault_relay_store_wakeups_total"
    static let storeUses = ["rows", "circle", "candidates", "signers"].map { "keyvault_relay_store_latency_seconds_count{operation=\"\($0)\"}" }

    /// Each series' value in one scrape each.
    static func metrics(_ series: [String], of relay: RelayServiceProcess) async throws -> [Double?] {
        var values: [Double?] = []
        for name in series { values.append(try await relay.metric(name)) }
        return values
    }

    /// A scrape of the instance's metrics: the counter's value.
    static func counter(_ name: String, at port: Int) async throws -> Double {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(10))
        let text = String(buffer: try await response.body.collect(upTo: 4 << 20))
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") || line.hasPrefix(name + "{") {
            return Double(line.split(separator: " ").last ?? "") ?? -1
        }
        throw TestFailure("no \(name) in the metrics")
    }

    @Test("with 3,000 parked shares an ack's prune reads only what it can settle; its shares go, the others stay",
          arguments: RelayKind.allCases)
    func ackPrunesWhatItSettles(_ kind: RelayKind) async throws {
        try await RelayServiceFixture.with(kind, arguments: ["--metrics-listen", "127.0.0.1:0"]) { f in
            let account = "acker"
            let accountID = try AccountID(validating: account)
            let created = try await f.createAccount(account)
            let first = created.0
            var circle = created.1
            let second = try await f.enrollSecond(account, first: first, circle: &circle)
            let stranger = DeviceID(Random.bytes(16))
            try await Self.park(3000, of: 1024, in: account, by: first, on: f.a, to: stranger)
            try await Self.park(20, of: 1024, in: account, by: first, on: f.a, to: second.id)
            let port = try await f.a.metricsPort()
            let generation = try #require(circle.generations.last)

            // The second device acknowledges the key: its 20 shares are settled, nobody else's.
            let before = try await Self.counter("keyvault_relay_prune_rows_read_total", at: port)
            let ack = ShareAck.make(account: accountID, generation: generation.generation, keyID: generation.keyID,
                                    deviceID: second.id, signer: second.signing, at: Date())
            #expect(try await f.a.publish(account, [.ack(ack)], as: second).status == 200)
            let read = try await Self.counter("keyvault_relay_prune_rows_read_total", at: port) - before
            #expect(read <= 20, "the ack's prune read \(read) rows")

            var rows: [RelayRow] = [], cursor = RelayCursor.start
            while true {
                let page = try await f.b.rows(account, after: cursor, as: first)
                guard let last = page.last else { break }
                rows += page
                cursor = last.cursor
            }
            #expect(rows.filter { $0.record.kind == .share && $0.record.recipient == second.id }.isEmpty, "the settled shares stayed")
            #expect(rows.filter { $0.record.kind == .share && $0.record.recipient == stranger }.count == 3000)

            // The same ack again: accepted, and its prune reads as little.
            let again = try await Self.counter("keyvault_relay_prune_rows_read_total", at: port)
            #expect(try await f.a.publish(account, [.ack(ack)], as: second).status == 200)
            let readAgain = try await Self.counter("keyvault_relay_prune_rows_read_total", at: port) - again
            #expect(readAgain <= 20, "the repeated ack's prune read \(readAgain) rows")
        }
    }
}

/// The service's request body budget, as RELAY.md states it (1 MiB).
enum RelayHandlersBudget {
    static let maxBody = 1 << 20
}
