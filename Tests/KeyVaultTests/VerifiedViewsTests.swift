import Foundation
import Logging
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelaySQLite
import KeyVaultRelayClient
import KeyVaultRelayStore
@testable import KeyVaultRelayService

/// The relay service's cache of verified circles is bounded: past its capacity
/// the least recently used half goes, and a forgotten account is rebuilt from
/// the store, the same as before.
@Suite("Relay service: verified views")
struct VerifiedViewsTests {
    @Test("at most `capacity` accounts are kept; a forgotten one is read again from the store")
    func boundedCache() async throws {
        let directory = NSTemporaryDirectory() + "kv-views-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let relay = try SQLiteRelay(path: directory + "/relay.sqlite")
        var circles: [AccountID: CircleState] = [:]
        for name in ["a1", "a2", "a3", "a4", "a5"] {
            let account = try AccountID(validating: name)
            let signing = SigningKey.generate()
            let keys = DeviceKeys(signing: signing.publicKey, box: BoxSecretKey.generate().publicKey, name: name)
            var circle = CircleState(account: account)
            let genesis = circle.nextEntry(.genesis(device: keys, generation: 1, keyID: KeyID(Random.bytes(16)), keyCreatedAt: 1),
                                           signer: signing, signerID: keys.deviceID, at: Date())
            try circle.apply(genesis)
            try await relay.publish(.log(genesis))
            circles[account] = circle
        }
        let views = VerifiedViews(relay: relay, logger: Logger(label: "test"), capacity: 4)
        let order = circles.keys.sorted()
        for account in order { #expect(try await views.circle(of: account) == circles[account]) }
        // The fifth went past 4: all but the 2 most recently used were forgotten.
        #expect(await views.count == 2)
        // Read again, each is the same circle.
        for account in order { #expect(try await views.circle(of: account) == circles[account]) }
        #expect(await views.count <= 4)
    }
}

extension VerifiedViewsTests {
    /// A log of `count` entries: a genesis, then announces and promotes by its device.
    static func longLog(_ account: AccountID, count: Int) -> [LogEntry] {
        let signing = SigningKey.generate()
        let keys = DeviceKeys(signing: signing.publicKey, box: BoxSecretKey.generate().publicKey, name: "long")
        var circle = CircleState(account: account)
        var out: [LogEntry] = []
        func add(_ body: LogEntry.Body) {
            let entry = circle.nextEntry(body, signer: signing, signerID: keys.deviceID, at: Date())
            try! circle.apply(entry)
            out.append(entry)
        }
        add(.genesis(device: keys, generation: 1, keyID: KeyID(Random.bytes(16)), keyCreatedAt: 1))
        var generation = Generation.first
        while out.count < count {
            generation = generation.next!
            let keyID = KeyID(Random.bytes(16))
            add(.announce(generation: generation, keyID: keyID, keyCreatedAt: 2))
            if out.count < count { add(.promote(generation: generation, keyID: keyID)) }
        }
        return out
    }

    @Test("verifying a log is linear in its entries: four times the entries cost about four times the time, not sixteen")
    func linearVerification() throws {
        let account = try AccountID(validating: "long")
        func seconds(_ entries: [LogEntry]) throws -> Double {
            let started = ContinuousClock.now
            var circle = CircleState(account: account)
            for entry in entries { try circle.apply(entry) }
            #expect(circle.nextSeq == LogSeq(index: entries.count))
            return (ContinuousClock.now - started).seconds
        }
        let small = Self.longLog(account, count: 4_000), large = Self.longLog(account, count: 16_000)
        _ = try seconds(small)
        let ratio = try seconds(large) / seconds(small)
        // Linear is 4; the copy per entry this replaced made it 16 and more.
        #expect(ratio < 8, "16,000 entries took \(ratio)× the time of 4,000")
    }

    @Test("a name with no log is not kept, and a view is built once however many ask at once")
    func strangersKeepNothing() async throws {
        let directory = NSTemporaryDirectory() + "kv-views-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let relay = try SQLiteRelay(path: directory + "/relay.sqlite")
        let account = try AccountID(validating: "real")
        let log = Self.longLog(account, count: 2_000)
        try await relay.publish(batch: log.map(RelayRecord.log))
        let views = VerifiedViews(relay: relay, logger: Logger(label: "test"), capacity: 4)
        #expect(try await views.circle(of: account).nextSeq == LogSeq(index: 2_000))
        for i in 0..<100 { #expect(try await views.circle(of: AccountID(validating: "ghost-\(i)")).isEmpty) }
        #expect(await views.count == 1)
        #expect(await views.keptBytes == log.reduce(0) { $0 + $1.encoded.count })
        // Many at once on a cold view: all get the same circle.
        let cold = VerifiedViews(relay: relay, logger: Logger(label: "test"))
        let circles = try await withThrowingTaskGroup(of: CircleState.self) { group in
            for _ in 0..<8 { group.addTask { try await cold.circle(of: account) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(circles.map(\.headHash)).count == 1)
    }
}
