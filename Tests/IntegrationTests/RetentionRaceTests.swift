import Foundation
import Testing
import KeyVaultCrypto
import KeyVaultProtocol

/// Retention (RELAY.md) under concurrency: a share is never pruned before its
/// recipient acknowledges it, whatever lands at the same moment.
@Suite("Relay service: retention races", .serialized)
struct RetentionRaceTests {
    /// Each round, at the same moment on the two instances: the second device
    /// acknowledges generation n, and the first announces n + 1 with its share to
    /// the second. The share of n + 1 must survive the pruning the ack starts.
    @Test("acknowledgements raced against announce-and-share batches never prune an unacknowledged share", arguments: RelayKind.allCases)
    func acksAgainstAnnounces(_ kind: RelayKind) async throws {
        try await RelayServiceFixture.with(kind) { f in
            let account = "race"
            let accountID = try AccountID(validating: account)
            var (first, circle) = try await f.createAccount(account, on: f.a)
            let second = try await f.enrollSecond(account, first: first, circle: &circle)

            func share(of announced: CircleState.Announced) -> RelayRecord {
                let header = KeyShare.Header(account: accountID, generation: announced.generation, keyID: announced.keyID,
                                             createdAt: announced.createdAt, sender: first.id, recipient: second.id)
                return .share(account: accountID, recipient: second.id, sealed: KeyShare(header: header, key: SecretKey.generate())
                    .seal(signer: first.signing, to: second.keys.box))
            }
            func ack(of announced: CircleState.Announced) -> RelayRecord {
                .ack(ShareAck.make(account: accountID, generation: announced.generation, keyID: announced.keyID, deviceID: second.id,
                                   signer: second.signing, at: Date()))
            }
            // Generation 1 reaches the second device first, as an approval's share would.
            var held = try #require(circle.current)
            #expect(try await f.a.publish(account, [share(of: held)], as: first).status == 200)

            var lost = 0
            let rounds = 150
            for round in 1...rounds {
                let key = SecretKey.generate()
                let announce = circle.nextEntry(.announce(generation: UInt64(held.generation + 1), keyID: key.keyID(label: Labels.keyID),
                                                          keyCreatedAt: UInt64(Date().timeIntervalSince1970 * 1000)),
                                                signer: first.signing, signerID: first.id, at: Date())
                try circle.apply(announce)
                let next = try #require(circle.generations.last)
                let batch: [RelayRecord] = [.log(announce), share(of: next)], acknowledgement = [ack(of: held)]
                let announcing = Task { [first] in try await f.a.publish(account, batch, as: first) }
                let acknowledging = Task { [second] in try await f.b.publish(account, acknowledgement, as: second) }
                let (a, b) = try await (announcing.value, acknowledging.value)
                #expect(a.status == 200 && b.status == 200, "round \(round): \(a.text) \(b.text)")
                // Whatever order they landed in, the second device still finds the share of n + 1.
                let shares = try await f.b.rows(account, as: second).filter { $0.record.kind == .share }
                if shares.isEmpty { lost += 1 }
                held = next
            }
            #expect(lost == 0, "\(lost) of \(rounds) rounds pruned the share of a key its device had not acknowledged")
            // Acknowledged at last, it goes.
            #expect(try await f.b.publish(account, [ack(of: held)], as: second).status == 200)
            #expect(try await f.a.rows(account, as: first).filter { $0.record.kind == .share }.isEmpty)
        }
    }
}

/// The same race as real daemons meet it: a device rotates just after a new one joins.
@Suite("Rotations right after enrollments", .serialized)
struct RotateAfterEnrollTests {
    @Test("each new device is followed at once by a rotation; every device ends with every generation", arguments: RelayKind.allCases)
    func rotateRightAfterEachEnrollment(_ kind: RelayKind) async throws {
        let circle = try await Circle(kind)
        defer { circle.remove() }
        let first = try await circle.device()
        #expect(try await first.request("POST", "/v1/accounts", json: ["user": "churn", "passphrase": "pw"]).status == 200)
        var devices = [first]
        var generations = [1]
        for round in 1...6 {
            let joining = try await circle.device()
            try await circle.enroll(joining, into: "churn", approver: devices[round % devices.count], name: "d\(round)")
            devices.append(joining)
            // At once, before anything settles: the newest device rotates, then an older one.
            for rotator in [joining, devices[0]] {
                let rotated = try await rotator.request("POST", "/v1/accounts/churn/rotate", json: ["promote": "now"])
                #expect(rotated.status == 200, "round \(round): \(rotated.object)")
                if let generation = rotated.object["generation"] as? Int { generations.append(generation) }
            }
        }
        // Every device gets every generation, byte for byte the same.
        for generation in Set(generations).sorted() {
            var keys: Set<String> = []
            for (index, device) in devices.enumerated() {
                let reply = try await device.request("GET", "/v1/accounts/churn/keys/\(generation)?wait=30")
                #expect(reply.status == 200, "device \(index), generation \(generation): \(reply.object)")
                if let key = reply["key"] { keys.insert(key) }
            }
            #expect(keys.count == 1, "generation \(generation): \(keys.count) different keys")
        }
    }
}
