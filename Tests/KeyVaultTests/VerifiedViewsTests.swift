import Foundation
import Logging
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
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
