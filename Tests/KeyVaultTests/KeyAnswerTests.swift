import Foundation
import NIOCore
import Synchronization
import Testing
@testable import KeyVault
@testable import KeyVaultEngine
@testable import KeyVaultPolicy
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultWipedBuffers

/// The `ready` answer for a key: its base64 goes straight into a buffer that
/// is zeroed when released, never into a String.
@Suite("Key answers: rendered into wiped buffers")
struct KeyAnswerTests {
    @Test("The answer is the contract's JSON, and its buffer is wiped when the last holder lets go")
    func keyAnswer() throws {
        let key = SecretKey.generate()
        let created = Date(timeIntervalSince1970: 1_800_000_000.25)
        let generation = KeyGeneration(number: 3, keyID: KeyID(testHex: String(repeating: "ab", count: 16)), createdAt: created, state: .active)
        let released = ReleasedKey(account: try AccountID(validating: "alice"), generation: generation, key: key, isCurrent: true)
        let before = WipedHeap.wipedBlocks.load(ordering: .relaxed)
        do {
            let buffer = KeyBody(released).buffer
            let json = try #require(try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any])
            #expect(json["key"] as? String == key.base64EncodedString())
            #expect(json["account"] as? String == "alice")
            #expect(json["generation"] as? Int == 3)
            #expect(json["keyId"] as? String == generation.keyID.hex)
            #expect(json["current"] as? Bool == true)
            #expect(json["createdAt"] as? String == "2027-01-15T08:00:00.250Z")
            #expect(json["state"] as? String == "ready")
        }
        #expect(WipedHeap.wipedBlocks.load(ordering: .relaxed) > before, "the buffer went back through the wiping allocator")
    }
}
