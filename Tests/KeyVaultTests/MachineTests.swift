import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// The account's state machines alone: no daemon, no vault, no relay; time is
/// passed in. Each event returns what the owner is to do.
struct MachineFixture {
    struct Device {
        let signing = SigningKey.generate()
        let box = BoxSecretKey.generate()
        let name: String
        var keys: DeviceKeys { DeviceKeys(signing: signing.publicKey, box: box.publicKey, name: name) }
        var id: DeviceID { keys.deviceID }
    }

    let account = try! AccountID(validating: "machines")
    let a = Device(name: "a")
    let b = Device(name: "b")
    let c = Device(name: "c")
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func entry(_ circle: CircleState, by device: Device, _ body: LogEntry.Body, at offset: Double = 0) -> LogEntry {
        LogEntry.make(account: account, seq: circle.nextSeq, previousHash: circle.headHash, signer: device.signing,
                      signerID: device.id, body: body, at: t0.addingTimeInterval(offset))
    }

    func append(_ circle: inout CircleState, by device: Device, _ body: LogEntry.Body) throws {
        try circle.apply(entry(circle, by: device, body))
    }

    /// Genesis by A (generation 1), then B approved.
    func circle(withB: Bool = true) throws -> CircleState {
        var circle = CircleState(account: account)
        try append(&circle, by: a, .genesis(device: a.keys, generation: 1, keyID: KeyID(of: SecretKey.generate()), keyCreatedAt: 0))
        if withB { try append(&circle, by: a, .approve(device: b.keys, requestHash: RequestHash(computed: [UInt8](repeating: 7, count: 32)))) }
        return circle
    }

    /// A version 2 request for `code`, with the initiator that alone finishes its exchange.
    func request(from device: Device, on circle: CircleState, code: String = "042917", at offset: Double = 0) throws -> PairingRequest.Started {
        try PairingRequest.make(account: account, device: device.keys, signer: device.signing, code: code, headHash: circle.headHash,
                                at: t0.addingTimeInterval(offset))
    }
}

@Suite("State machine: circle sync")
struct CircleSyncTests {
    let f = MachineFixture()

    @Test("another device's entries are accepted, confirmed and announced as events; a replay changes nothing")
    func acceptsAndConfirms() throws {
        let base = try f.circle()
        let announce = f.entry(base, by: f.b, .announce(generation: 2, keyID: KeyID([UInt8](repeating: 2, count: 16)), keyCreatedAt: 5))
        let outcome = try CircleSync.adopt([announce], into: base, confirmed: base.entries.count, me: f.a.id, signer: f.a.signing)
        #expect(outcome.accepted == [announce])
        #expect(outcome.confirmed == base.entries.count + 1)
        #expect(outcome.events == [.rotated(2, KeyID(hash: [UInt8](repeating: 2, count: 16)))])
        #expect(outcome.rewrittenFrom == nil && !outcome.destroyed && !outcome.joined)
        let again = try CircleSync.adopt([announce], into: outcome.circle, confirmed: outcome.confirmed, me: f.a.id, signer: f.a.signing)
        #expect(again.isEmpty)
    }

    @Test("an entry that takes the number of this device's unconfirmed entry rebases it after; a moot one is dropped; locked, it waits")
    func rebases() throws {
        let base = try f.circle()
        let confirmed = base.entries.count
        // A appended a revoke of B locally; meanwhile B announced a key at the same number.
        var mine = base
        try f.append(&mine, by: f.a, .announce(generation: 2, keyID: KeyID([UInt8](repeating: 0xa, count: 16)), keyCreatedAt: 1))
        let theirs = f.entry(base, by: f.b, .announce(generation: 2, keyID: KeyID([UInt8](repeating: 0xb, count: 16)), keyCreatedAt: 1))
        let outcome = try CircleSync.adopt([theirs], into: mine, confirmed: confirmed, me: f.a.id, signer: f.a.signing)
        #expect(outcome.rewrittenFrom == LogSeq(index: confirmed))
        #expect(outcome.circle.entries[confirmed] == theirs)
        #expect(outcome.circle.entries.count == confirmed + 2)
        #expect(outcome.circle.entries[confirmed + 1].signer == f.a.id)
        #expect(outcome.dropped.isEmpty)
        // Locked: no key to re-sign with, so nothing is adopted until the unlock.
        #expect(throws: ProtocolError.self) { try CircleSync.adopt([theirs], into: mine, confirmed: confirmed, me: f.a.id, signer: nil) }
        // A queued promote of a key another device already promoted is dropped in the rebase.
        var announced = base
        try f.append(&announced, by: f.a, .announce(generation: 2, keyID: KeyID([UInt8](repeating: 0xc, count: 16)), keyCreatedAt: 1))
        var queued = announced
        try f.append(&queued, by: f.a, .promote(generation: 2, keyID: KeyID([UInt8](repeating: 0xc, count: 16))))
        let promotedByB = f.entry(announced, by: f.b, .promote(generation: 2, keyID: KeyID([UInt8](repeating: 0xc, count: 16))))
        let moot = try CircleSync.adopt([announced.entries.last!, promotedByB], into: queued, confirmed: confirmed, me: f.a.id, signer: f.a.signing)
        #expect(moot.dropped.count == 1)
        #expect(moot.circle.current?.keyID == KeyID(hash: [UInt8](repeating: 0xc, count: 16)))
    }

    @Test("a device sees its own approval (joined) and a destroy (shred)")
    func joinedAndDestroyed() throws {
        let onlyA = try f.circle(withB: false)
        let approve = f.entry(onlyA, by: f.a, .approve(device: f.b.keys, requestHash: RequestHash(computed: [UInt8](repeating: 1, count: 32))))
        let joined = try CircleSync.adopt([approve], into: onlyA, confirmed: 1, me: f.b.id, signer: nil)
        #expect(joined.joined)
        #expect(joined.events == [.deviceEnrolled(f.b.id)])
        let destroy = f.entry(joined.circle, by: f.a, .destroy)
        #expect(try CircleSync.adopt([destroy], into: joined.circle, confirmed: 2, me: f.b.id, signer: nil).destroyed)
    }

    @Test("an entry that does not verify is refused with its reason, and nothing is adopted")
    func refuses() throws {
        let base = try f.circle()
        let forged = f.entry(base, by: f.c, .approve(device: f.c.keys, requestHash: RequestHash(computed: [UInt8](repeating: 3, count: 32))))
        #expect(throws: ProtocolError.untrustedSigner(f.c.id)) {
            try CircleSync.adopt([forged], into: base, confirmed: base.entries.count, me: f.a.id, signer: f.a.signing)
        }
    }

    @Test("another device's genesis where this device's unconfirmed one stands is refused, never rebased onto; the same genesis confirms it")
    func foreignGenesis() throws {
        let mine = try f.circle(withB: false)  // A's genesis, not on the relay yet (confirmed 0)
        var theirs = CircleState(account: f.account)
        try f.append(&theirs, by: f.c, .genesis(device: f.c.keys, generation: 1, keyID: KeyID(of: SecretKey.generate()), keyCreatedAt: 0))
        #expect(throws: ProtocolError.self) {
            try CircleSync.adopt(theirs.entries, into: mine, confirmed: 0, me: f.a.id, signer: f.a.signing)
        }
        let same = try CircleSync.adopt(mine.entries, into: mine, confirmed: 0, me: f.a.id, signer: f.a.signing)
        #expect(same.confirmed == 1 && same.rewrittenFrom == nil && same.circle.entries == mine.entries)
    }
}

@Suite("State machine: promotions")
struct PromotionTests {
    let f = MachineFixture()

    func ack(_ device: MachineFixture.Device, _ keyID: KeyID, at offset: Double) -> ShareAck {
        ShareAck.make(account: f.account, generation: 2, keyID: keyID, deviceID: device.id, signer: device.signing, at: f.t0.addingTimeInterval(offset))
    }

    @Test("announced: the deadline is kept and scheduled; due once every other trusted device acknowledged; then cleared")
    func afterAcknowledgements() throws {
        var circle = try f.circle()
        try f.append(&circle, by: f.a, .approve(device: f.c.keys, requestHash: RequestHash(computed: [UInt8](repeating: 8, count: 32))))
        let keyID = KeyID(hash: [UInt8](repeating: 0x22, count: 16))
        try f.append(&circle, by: f.a, .announce(generation: 2, keyID: keyID, keyCreatedAt: 1))
        var promotions = Promotions()
        let deadline = f.t0.addingTimeInterval(3600)
        let r0 = promotions.announced(keyID: keyID, deadline: deadline)
        #expect(r0 == [.schedule(keyID: keyID, at: deadline)])
        // The announcing device needs no acknowledgement of its own; B alone is not enough.
        let r1 = try promotions.acknowledged(ack(f.b, keyID, at: 1), circle: circle, me: f.a.id, at: f.t0)
        #expect(r1 == [])
        let r2 = try promotions.acknowledged(ack(f.c, keyID, at: 2), circle: circle, me: f.a.id, at: f.t0)
        #expect(r2 == [.promote(keyID: keyID)])
        #expect(promotions.acknowledgements[f.c.id]?.generations[keyID] == f.t0.addingTimeInterval(2))
        let r3 = promotions.promoted(keyID: keyID)
        #expect(r3 == [.clearDeadline(keyID: keyID)])
        let r4 = promotions.promoted(keyID: keyID)
        #expect(r4 == [])
        #expect(promotions.deadlines.isEmpty)
    }

    @Test("at the deadline it is due whoever acknowledged; not if another device promoted it; resumed at start")
    func atTheDeadline() throws {
        var circle = try f.circle()
        let keyID = KeyID(hash: [UInt8](repeating: 0x33, count: 16))
        try f.append(&circle, by: f.a, .announce(generation: 2, keyID: keyID, keyCreatedAt: 1))
        let deadline = f.t0.addingTimeInterval(60)
        var promotions = Promotions()
        _ = promotions.announced(keyID: keyID, deadline: deadline)
        #expect(promotions.due(circle: circle, me: f.a.id, at: f.t0) == [])
        #expect(promotions.due(circle: circle, me: f.a.id, at: deadline) == [.promote(keyID: keyID)])
        #expect(promotions.deadlinePassed(keyID: keyID, circle: circle) == [.promote(keyID: keyID)])
        #expect(Promotions(deadlines: [keyID: deadline]).resumed(circle: circle, me: f.a.id, at: f.t0) == [.schedule(keyID: keyID, at: deadline)])
        try f.append(&circle, by: f.b, .promote(generation: 2, keyID: keyID))
        #expect(promotions.deadlinePassed(keyID: keyID, circle: circle) == [])
        #expect(promotions.due(circle: circle, me: f.a.id, at: deadline) == [])
    }

    @Test("an acknowledgement from a revoked or unknown device, or with a bad signature, is refused and changes nothing")
    func refusesAcknowledgements() throws {
        var circle = try f.circle()
        let keyID = KeyID(hash: [UInt8](repeating: 0x44, count: 16))
        var promotions = Promotions()
        _ = promotions.announced(keyID: keyID, deadline: f.t0.addingTimeInterval(60))
        func refusal(_ ack: ShareAck) -> ProtocolError? {
            do {
                _ = try promotions.acknowledged(ack, circle: circle, me: f.a.id, at: f.t0)
                return nil
            } catch {
                return error
            }
        }
        #expect(refusal(ack(f.c, keyID, at: 1)) == .untrustedSigner(f.c.id))
        var forged = ack(f.b, keyID, at: 1)
        forged.receivedAt += 1
        #expect(refusal(forged) == .badSignature("an acknowledgement"))
        try f.append(&circle, by: f.a, .revoke(deviceID: f.b.id))
        #expect(refusal(ack(f.b, keyID, at: 1)) == .untrustedSigner(f.b.id))
        #expect(promotions.acknowledgements.isEmpty)
    }
}

@Suite("State machine: enrollment")
struct EnrollmentMachineTests {
    let f = MachineFixture()

    @Test("the whole exchange: request, one response, the confirmation, an approval authenticated under the exchange's key, then a member")
    func exchange() throws {
        var circle = try f.circle(withB: false)
        let started = try f.request(from: f.b, on: circle, code: "314159")
        let request = started.request
        var trusted = Enrollment()
        var joining = Enrollment()
        joining.requested(request, code: "314159")
        #expect(joining.pairingCode == "314159" && joining.isJoining && !joining.trustsItsCircle)

        let e1 = trusted.requestArrived(request, circle: circle, me: f.a.id, at: f.t0)
        #expect(e1)
        guard case .respond(let pending) = trusted.answer(for: f.b.id, at: f.t0, lifetime: 3600) else { Issue.record("not answerable"); return }
        let answering = try PairingResponse.make(to: pending, code: "314159", responder: f.a.id, signer: f.a.signing, circle: circle)
        let response = answering.response
        trusted.responded(to: pending)
        guard case .alreadyTried = trusted.answer(for: f.b.id, at: f.t0, lifetime: 3600) else { Issue.record("a second exchange for one code"); return }
        #expect(trusted.live(at: f.t0, lifetime: 3600).isEmpty, "a tried request is not listed")

        #expect(joining.takes(response))
        let answer = Pairing.answer(response, to: request, initiator: started.takeInitiator(), circle: circle, signer: f.b.signing)
        guard case .confirmed(let confirmation, _) = answer else { Issue.record("not confirmed"); return }
        joining.answered(answer)
        #expect(joining.progress == .confirmed(responseHash: response.hash))
        #expect(!joining.takes(response), "one response per exchange")

        let e2 = try trusted.confirmationArrived(confirmation.encoded)
        #expect(e2)
        let arrived = try #require(trusted.confirmation(of: response))
        let completed = Pairing.complete(arrived, responder: answering.takeResponder())
        let sessionKey = try #require(completed)

        // The approve entry alone does not make the new device a member; with its authentic approval it does.
        let approve = f.entry(circle, by: f.a, .approve(device: request.device, requestHash: request.hash))
        try circle.apply(approve)
        let e3 = joining.authenticate(in: circle)
        #expect(e3 == .waiting)
        let forged = PairingApproval.make(entry: approve, request: request, genesisHash: circle.entries[0].hash,
                                          sessionKey: CPace.SessionKey(bytes: SecureBytes(randomCount: 64)), signer: f.a.signing)
        joining.approvalArrived(forged)
        let e4 = joining.authenticate(in: circle)
        #expect(e4 == .refused(1), "an approval under another key")
        #expect(joining.authenticate(in: circle) == .waiting, "refused once, then forgotten")
        joining.approvalArrived(PairingApproval.make(entry: approve, request: request, genesisHash: circle.entries[0].hash,
                                                     sessionKey: sessionKey, signer: f.a.signing))
        let e5 = joining.authenticate(in: circle)
        #expect(e5 == .authentic)
        #expect(joining.progress == .approved && joining.trustsItsCircle)
        joining.joined()
        #expect(!joining.isJoining)
    }

    @Test("a wrong code or another circle fails the exchange and burns the code; asked again, a new request starts afresh")
    func mismatchAndRenewal() throws {
        let circle = try f.circle(withB: false)
        let started = try f.request(from: f.b, on: circle, code: "111111")
        let request = started.request
        var joining = Enrollment()
        joining.requested(request, code: "111111")
        let wrong = try PairingResponse.make(to: request, code: "222222", responder: f.a.id, signer: f.a.signing, circle: circle)
        let answer = Pairing.answer(wrong.response, to: request, initiator: started.takeInitiator(), circle: circle, signer: f.b.signing)
        guard case .mismatch(let refusal, .confirmationFailed) = answer else { Issue.record("a wrong code confirmed"); return }
        #expect(refusal.isRefusal)
        joining.answered(answer)
        #expect(joining.progress == .failed(.confirmationFailed) && joining.pairingCode == nil)

        let again = try f.request(from: f.b, on: circle, code: "333333", at: 1)
        joining.requested(again.request, code: "333333")
        #expect(joining.progress == .awaitingResponse && joining.pairingCode == "333333")
        #expect(!joining.takes(wrong.response), "a response to the old request")

        // After a restart the exchange is over: the device is joining, with nothing to finish.
        let restarted = Enrollment(joining: true, ownRequest: again.request, dismissed: [])
        #expect(restarted.progress == .failed(nil) && !restarted.takes(wrong.response))
    }

    @Test("junk requests are all kept and listed; expired and dismissed ones are not, nor answerable; a member's, another head's, or to an untrusted device, are not kept")
    func expiryDismissalAndIgnored() throws {
        let circle = try f.circle(withB: false)
        var trusted = Enrollment()
        var requests: [PairingRequest] = []
        for i in 0..<20 {
            let junk = MachineFixture.Device(name: "junk \(i)")
            let request = try f.request(from: junk, on: circle, at: Double(i)).request
            let e6 = trusted.requestArrived(request, circle: circle, me: f.a.id, at: f.t0.addingTimeInterval(Double(i)))
            #expect(e6)
            requests.append(request)
        }
        #expect(trusted.live(at: f.t0.addingTimeInterval(20), lifetime: 3600).count == 20)
        let first = requests[0].device.deviceID
        let e7 = trusted.dismiss(first)
        #expect(e7)
        let e8 = trusted.dismiss(MachineFixture.Device(name: "never").id)
        #expect(!e8)
        #expect(trusted.live(at: f.t0.addingTimeInterval(20), lifetime: 3600).count == 19)
        guard case .unknown = trusted.answer(for: first, at: f.t0.addingTimeInterval(20), lifetime: 3600) else { Issue.record("dismissed"); return }
        // An hour after each arrived (this device's clock), each is gone in turn.
        #expect(trusted.live(at: f.t0.addingTimeInterval(3600 + 9.5), lifetime: 3600).count == 10)
        guard case .unknown = trusted.answer(for: requests[5].device.deviceID, at: f.t0.addingTimeInterval(3600 + 9.5), lifetime: 3600) else {
            Issue.record("expired"); return
        }

        var other = Enrollment()
        let e9 = other.requestArrived(try f.request(from: f.a, on: circle).request, circle: circle, me: f.a.id, at: f.t0)
        #expect(!e9, "a member")
        var elsewhere = CircleState(account: f.account)
        try f.append(&elsewhere, by: f.c, .genesis(device: f.c.keys, generation: 1, keyID: KeyID([UInt8](repeating: 5, count: 16)), keyCreatedAt: 0))
        let e10 = other.requestArrived(try f.request(from: f.b, on: elsewhere).request, circle: circle, me: f.a.id, at: f.t0)
        #expect(!e10, "another head")
        let e11 = other.requestArrived(requests[1], circle: circle, me: f.b.id, at: f.t0)
        #expect(!e11, "this device is not trusted")
    }
}

@Suite("State machine: locking")
struct LockingTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("wrong passphrases grow the back-off (kept first); while it runs no passphrase is tried; the right one clears it")
    func backoff() {
        var locking = Locking(throttle: UnlockThrottle(failures: 0, until: .distantPast), accessibility: .whenUnlocked)
        #expect(locking.attempt(at: t0) == .tryPassphrase)
        let first = locking.wrongPassphrase(at: t0, baseSeconds: 1, maxSeconds: 900)
        #expect(first == [.persistThrottle(UnlockThrottle(failures: 1, until: t0.addingTimeInterval(1)))])
        #expect(locking.attempt(at: t0) == .throttled(retryAfterSeconds: 1))
        _ = locking.wrongPassphrase(at: t0.addingTimeInterval(1), baseSeconds: 1, maxSeconds: 900)
        #expect(locking.attempt(at: t0.addingTimeInterval(2)) == .throttled(retryAfterSeconds: 1))
        #expect(locking.attempt(at: t0.addingTimeInterval(3)) == .tryPassphrase)
        let r21 = locking.unlocked()
        #expect(r21 == [.persistThrottle(UnlockThrottle(failures: 0, until: Date(timeIntervalSince1970: 0))), .announce(.unlocked)])
        #expect(locking.isUnlocked)
    }

    @Test("a lock drops the KEK, and the keys of whenUnlocked accounts; a key stored after the lock is not held")
    func lockAndKeys() {
        var whenUnlocked = Locking(throttle: UnlockThrottle(failures: 0, until: .distantPast), accessibility: .whenUnlocked)
        _ = whenUnlocked.unlocked()
        #expect(whenUnlocked.mayHoldKeys)
        let r22 = whenUnlocked.lock()
        #expect(r22 == [.forgetKEK, .forgetKeys, .announce(.locked)])
        #expect(!whenUnlocked.mayHoldKeys)
        var afterFirst = Locking(throttle: UnlockThrottle(failures: 0, until: .distantPast), accessibility: .afterFirstUnlock)
        _ = afterFirst.unlocked()
        let r23 = afterFirst.lock()
        #expect(r23 == [.forgetKEK, .announce(.locked)])
        #expect(afterFirst.mayHoldKeys)
    }
}
