import Foundation
import Testing
@testable import KeyVault
@testable import KeyVaultEngine
@testable import KeyVaultPolicy
import KeyVaultAccount
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelaySQLite

/// What the engine does when time passes, tested on its own clock in this process
/// (`EngineHarness`): a back-off, a promotion's deadline and a key's maximum age are steps of
/// the test, not waits. The same engine runs in `keyvaultd`; the socket API's answers for
/// each are tested against real daemons (OneDeviceTests, RotationTests).
@Suite("Time on the engine's own clock (the engine in process)")
struct EngineClockTests {
    let alice = try! AccountID(validating: "alice")

    @Test("an unlock is refused until its back-off has passed on the engine's clock, and a restart keeps the back-off")
    func backoffOnTheClock() async throws {
        let harness = try EngineHarness()
        defer { harness.remove() }
        let policy = EngineHarness.policy { $0.backoff = Policy.Backoff(baseSeconds: 30, maxSeconds: 600) }
        var device = try await harness.device("a", policy: policy)
        try await device.create(alice)
        try await device.service.lock(alice)

        await #expect(throws: Refusal.self) { try await device.unlock(alice, passphrase: "not it") }
        #expect(try await refusal { try await device.unlock(alice) } == Refusal.throttled(alice, retryAfterSeconds: 30))
        harness.clock.advance(by: .seconds(29))
        #expect(try await refusal { try await device.unlock(alice) }?.retryAfterSeconds == 1, "one second of the back-off is left")
        harness.clock.advance(by: .seconds(1))
        try await device.unlock(alice)
        #expect(device.key(alice) != nil)

        // The right passphrase cleared the back-off; a wrong one starts it again, and the vault keeps it across a restart.
        try await device.service.lock(alice)
        await #expect(throws: Refusal.self) { try await device.unlock(alice, passphrase: "not it") }
        await device.stop()
        device = try await harness.device("a", policy: policy)
        #expect(try await refusal { try await device.unlock(alice) }?.retryAfterSeconds == 30)
        harness.clock.advance(by: .seconds(30))
        try await device.unlock(alice)
        #expect(device.key(alice) != nil)
        await device.stop()
    }

    @Test("a rotation that a stopped device never acknowledges becomes current at the policy's deadline, and a deadline kept across a restart fires after it")
    func promotionDeadline() async throws {
        let harness = try EngineHarness()
        defer { harness.remove() }
        let deadline = 86_400
        let a = try await harness.device("a")
        let b = try await harness.device("b")
        try await a.create(alice)
        try await b.join(alice, approver: a)
        try await eventually("b holds the key") { b.key(alice) != nil }
        await b.stop()

        let rotated = try await a.service.rotations.rotate(alice, promotion: .afterAcks)
        #expect(!rotated.promoted)
        try await waitForTimer(harness, atLeast: deadline)
        let rotatedAt = harness.clock.now
        harness.clock.advance(by: .seconds(deadline - 1))
        #expect(harness.clock.deadlines.contains { $0.timeIntervalSince(rotatedAt) >= Double(deadline) - 1 }, "the deadline's timer still waits")
        #expect(a.key(alice)?.generation.number == 1, "before the deadline the old key stays current")
        harness.clock.advance(by: .seconds(1))
        try await eventually("promoted at the deadline") { a.key(alice)?.generation.number == 2 }

        // Again, with a restart in between: the deadline is the vault's, not the timer's.
        _ = try await a.service.rotations.rotate(alice, promotion: .afterAcks)
        try await waitForTimer(harness, atLeast: deadline)
        harness.clock.advance(by: .seconds(deadline / 2))
        await a.stop()
        let restarted = try await harness.device("a")
        try await restarted.unlock(alice)
        try await waitForTimer(harness, atLeast: deadline / 2)
        #expect(restarted.key(alice)?.generation.number == 2)
        harness.clock.advance(by: .seconds(deadline / 2))
        try await eventually("promoted at the deadline kept in the vault") { restarted.key(alice)?.generation.number == 3 }
        await restarted.stop()
    }

    @Test("a key past the policy's maximum age is rotated, and the other device gets the new one")
    func maxKeyAge() async throws {
        let harness = try EngineHarness()
        defer { harness.remove() }
        let policy = EngineHarness.policy { $0.rotation.maxKeyAgeSeconds = 3600 }
        let a = try await harness.device("a", policy: policy)
        let b = try await harness.device("b", policy: policy)
        try await a.create(alice)
        try await b.join(alice, approver: a)
        try await eventually("b holds the key") { b.key(alice) != nil }

        harness.clock.advance(by: .seconds(3599))
        // Both devices' age checks woke, checked (a rotation they start is awaited before they sleep
        // again) and sleep again past the moment moved to.
        let moved = harness.clock.now
        try await eventually("both age checks ran") { harness.clock.deadlines.filter { $0 > moved }.count == 2 }
        #expect(a.key(alice)?.generation.number == 1, "not yet past its age")
        // The age checks wake every quarter of the age: step until one has rotated.
        try await eventually("rotated past its age") {
            harness.clock.advance(by: .seconds(900))
            return (a.key(alice)?.generation.number ?? 0) >= 2
        }
        // Both devices' age checks woke at once, so both may have rotated: both keys are then kept
        // (PROTOCOL.md, "Concurrent rotations"), and the two devices settle on one current key.
        try await eventually("b holds a's current key, and both have the same current key") {
            guard let current = a.key(alice), let held = b.key(alice, .keyID(current.generation.keyID)), let bCurrent = b.key(alice) else { return false }
            return held.key.constantTimeEquals(current.key) && bCurrent.generation.keyID == current.generation.keyID
        }
        await a.stop()
        await b.stop()
    }

    @Test("a pairing request is listed and approvable for the policy's lifetime, then neither; a restart after it does not bring it back")
    func requestsExpire() async throws {
        let harness = try EngineHarness()
        defer { harness.remove() }
        var a = try await harness.device("a")
        try await a.create(alice)
        // A request filed on the relay by a device that will never confirm (as a stranger would).
        let relay = try SQLiteRelay(path: harness.relayPath)
        let genesis = try #require(try await relay.rows(account: alice, after: .start, limit: 10).first { $0.record.kind == .log })
        let signer = SigningKey.generate()
        let stranger = DeviceKeys(signing: signer.publicKey, box: BoxSecretKey.generate().publicKey, name: "stranger")
        let request = try PairingRequest.make(account: alice, device: stranger, signer: signer, code: Pairing.drawCode(),
                                              headHash: try LogEntry.decode(genesis.record.body).hash, at: harness.clock.now)
        try await relay.publish(.request(request.request))
        let listed = { (device: HarnessDevice) in (try? device.service.enrolling.enrollments(alice))?.map(\.deviceId) }
        try await eventually("the request listed") { listed(a) == [stranger.deviceID] }

        harness.clock.advance(by: .seconds(3599))
        #expect(listed(a) == [stranger.deviceID], "an hour's lifetime is not over")
        harness.clock.advance(by: .seconds(1))
        #expect(listed(a) == [])
        await #expect(throws: Refusal.self) { _ = try await a.service.enrolling.approve(alice, deviceID: stranger.deviceID, pairingCode: "123456") }
        do {
            _ = try await a.service.enrolling.approve(alice, deviceID: stranger.deviceID, pairingCode: "123456")
        } catch let refusal as Refusal {
            #expect(refusal.state == .unknown)
        }

        // Restarted, the device replays what it kept of the relay: an expired request is forgotten, not replayed.
        await a.stop()
        a = try await harness.device("a")
        try await a.unlock(alice)
        try await Task.sleep(for: .milliseconds(50))
        #expect(listed(a) == [])
        await a.stop()
    }

    /// Waits until a timer that ends at least `seconds` from now sleeps on the clock: moving the
    /// clock before it sleeps would leave it waiting for a time that has passed.
    private func waitForTimer(_ harness: EngineHarness, atLeast seconds: Int) async throws {
        let from = harness.clock.now
        try await eventually("a timer set") { harness.clock.deadlines.contains { $0.timeIntervalSince(from) >= Double(seconds) - 1 } }
    }

    private func refusal(_ body: () async throws -> Void) async throws -> Refusal? {
        do { try await body() } catch let refusal as Refusal { return refusal }
        return nil
    }
}
