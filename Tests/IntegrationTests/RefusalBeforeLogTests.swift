import Foundation
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelay

/// Issue 33, items 3 and 7: a request from a signer the account does not know is refused
/// from the store's signer index, before any of the account's log is read, so a stranger
/// naming a real account with a long log costs what naming no account costs, and cannot
/// make its view be built. The log here is stored the way a store from before the index
/// holds it (not through the service), so the index is also shown filled from it.
@Suite("Relay service: a stranger is refused before any log is read")
struct RefusalBeforeLogTests {
    static let entries = 1_500

    @Test("strangers naming a real account with a long log, or no account, read none of it; its member still reads",
          arguments: RelayKind.allCases)
    func strangersReadNoLog(_ kind: RelayKind) async throws {
        let owner = TestDevice(name: "owner")
        let account = try AccountID(validating: "long-log")
        // --migrate: the store is one from before the index (relay-v6 undone), which a start otherwise refuses.
        try await RelayServiceFixture.with(kind, arguments: ["--metrics-listen", "127.0.0.1:0", "--migrate"], prepare: { address in
            try await Self.storeWithoutIndex(Self.longLog(account, by: owner), at: address, kind)
        }) { f in
            let port = try await f.a.metricsPort()
            let applied = "keyvault_relay_view_entries_applied_total"
            #expect(try await RelayAnswerBoundsTests.counter(applied, at: port) == 0)

            var known: [Duration] = [], absent: [Duration] = []
            for index in 0..<20 {
                let stranger = TestDevice(name: "stranger")
                let started = ContinuousClock.now
                #expect(try await f.a.read("long-log", as: stranger).status == 403)
                known.append(ContinuousClock.now - started)
                let again = ContinuousClock.now
                #expect(try await f.a.read("no-such-account-\(index)", as: stranger).status == 403)
                absent.append(ContinuousClock.now - again)
                // A batch opening with an approval of the stranger, signed by nobody the account knows.
                let forged = LogEntry.make(account: account, seq: LogSeq(index: Self.entries), previousHash: LogHash(computed: Random.bytes(32)),
                                           signer: stranger.signing, signerID: DeviceID(Random.bytes(16)),
                                           body: .approve(device: stranger.keys, requestHash: .zero),
                                           at: Date())
                #expect(try await f.a.publish("long-log", [.log(forged)], as: stranger).status == 403)
            }
            // Not a timing check (the bench measures that): what each took, for the record.
            print("403 medians (\(kind)): real account \(Self.median(known)), no account \(Self.median(absent))")
            #expect(try await RelayAnswerBoundsTests.counter(applied, at: port) == 0, "a stranger's request made the log be read")

            // The index, filled from the stored log, knows the owner: its read builds the view and answers.
            let rows = try await f.a.rows("long-log", as: owner)
            #expect(rows.count == 1000)
            #expect(try await RelayAnswerBoundsTests.counter(applied, at: port) >= Double(Self.entries))
        }
    }

    /// A genesis and then announces and promotes, signed by `device`.
    static func longLog(_ account: AccountID, by device: TestDevice) -> [LogEntry] {
        var circle = CircleState(account: account)
        var out: [LogEntry] = []
        func add(_ body: LogEntry.Body) {
            let entry = circle.nextEntry(body, signer: device.signing, signerID: device.id, at: Date())
            try! circle.apply(entry)
            out.append(entry)
        }
        add(.genesis(device: device.keys, generation: 1, keyID: KeyID(Random.bytes(16)), keyCreatedAt: 1))
        var generation = Generation.first
        while out.count < entries {
            generation = generation.next!
            let keyID = KeyID(Random.bytes(16))
            add(.announce(generation: generation, keyID: keyID, keyCreatedAt: 2))
            if out.count < entries { add(.promote(generation: generation, keyID: keyID)) }
        }
        return out
    }

    /// Stores `log` straight into the store, as one from before the signer index holds it: on
    /// PostgreSQL the index's migration is then undone, so the service's start (told to migrate) runs it again.
    static func storeWithoutIndex(_ log: [LogEntry], at address: String, _ kind: RelayKind) async throws {
        let relay = try await RelayAddress(parsing: address).openStore()
        for part in stride(from: 0, to: log.count, by: 500) {
            try await relay.publish(batch: log[part..<min(part + 500, log.count)].map(RelayRecord.log))
        }
        await relay.shutdown()
        if kind == .service {
            _ = try await PostgresShardingTests.psql(address, """
                DROP TABLE keyvault_service_signers; DELETE FROM keyvault_relay_migrations WHERE version = 'relay-v6'
                """)
        }
    }

    static func median(_ durations: [Duration]) -> Duration {
        durations.sorted()[durations.count / 2]
    }
}
