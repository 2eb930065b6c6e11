import Foundation
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount

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
                let announce = circle.nextEntry(.announce(generation: try #require(held.generation.next), keyID: KeyID(of: key),
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
