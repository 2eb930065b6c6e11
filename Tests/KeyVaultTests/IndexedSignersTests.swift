import Testing
import KeyVaultCrypto
import KeyVaultProtocol
@testable import KeyVaultRelayService

/// What a relay-service instance keeps of the signers it has seen: members' keys for ever,
/// candidacies briefly and apart, so strangers' candidacies never flush the members'.
@Suite("Relay service: signers kept in memory")
struct IndexedSignersTests {
    private static func device() -> DeviceID { DeviceID(Random.bytes(16)) }
    private static func key() -> SigningPublicKey { SigningKey.generate().publicKey }

    @Test("candidacies past their bound flush only themselves; the members' keys stay")
    func candidaciesHaveTheirOwnBound() throws {
        let signers = IndexedSigners(capacity: 100, candidacyCapacity: 4)
        let account = try AccountID(validating: "kept")
        let member = Self.device(), memberKey = Self.key()
        signers.remember(.indexed(memberKey), of: member, account: account)
        let filed = (0..<5).map { _ in (Self.device(), Self.key()) }
        for (device, key) in filed { signers.remember(.candidate(key, until: 2_000), of: device, account: account) }
        // The fifth flushed the four before it, and only them.
        #expect(signers.known(member, account: account, now: 1_000) == .indexed(memberKey))
        #expect(filed.prefix(4).allSatisfy { signers.known($0.0, account: account, now: 1_000) == nil })
        #expect(signers.known(filed[4].0, account: account, now: 1_000) == .candidate(filed[4].1, until: 2_000))
    }

    @Test("a candidacy is known only while it lives, and not once its filing instance evicted it")
    func candidacyEndsWithItsLifeOrEviction() throws {
        let signers = IndexedSigners()
        let account = try AccountID(validating: "kept")
        let (device, key) = (Self.device(), Self.key())
        signers.remember(.candidate(key, until: 2_000), of: device, account: account)
        #expect(signers.known(device, account: account, now: 1_999) == .candidate(key, until: 2_000))
        #expect(signers.known(device, account: account, now: 2_000) == nil)
        signers.forgetCandidacy(of: device, account: account)
        #expect(signers.known(device, account: account, now: 1_000) == nil)
    }
}
