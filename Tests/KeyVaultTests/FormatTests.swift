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

@Suite("The at-rest format (docs/FORMAT.md)")
struct FormatTests {
    struct Example: Decodable {
        var passphrase, saltHex, account, kind, keyHex, nonceHex, kekHex, aadHex, wrappedHex, keyIdHex: String
        var opsLimit, memLimitBytes: UInt64
        var generation: Int
    }

    @Test("the worked example: KEK, AAD, wrapped blob and key ID, as FORMAT.md gives them")
    func workedExample() throws {
        let v = try Vectors.load("format-example.json", as: Example.self)
        let kek = try PasswordKDF.deriveKey(passphrase: SecureBytes(copying: Array(v.passphrase.utf8)), salt: Vectors.hex(v.saltHex),
                                            parameters: KDFParameters(opsLimit: v.opsLimit, memLimitBytes: v.memLimitBytes))
        #expect(kek.hexEncodedString() == v.kekHex)
        let context = WrapContext(account: try AccountID(validating: v.account), kind: try #require(ItemKind(rawValue: v.kind)), generation: v.generation)
        #expect(Hex.encode(context.aad) == v.aadHex)
        let key = try SecretKey(rawRepresentation: Vectors.hex(v.keyHex))
        let wrapped = WrappedSecret.wrap(SecureBytes(copying: try Vectors.hex(v.keyHex)), under: kek, context: context, nonce: try Vectors.hex(v.nonceHex))
        #expect(Hex.encode(wrapped) == v.wrappedHex)
        #expect(try WrappedSecret.unwrap(wrapped, under: kek, context: context).hexEncodedString() == v.keyHex)
        #expect(KeyID(of: key).hex == v.keyIdHex)

        // The document states the same values.
        let doc = try String(contentsOf: Vectors.repositoryRoot.appendingPathComponent("docs/FORMAT.md"), encoding: .utf8)
        for value in [v.saltHex, v.keyHex, v.nonceHex, v.kekHex, v.aadHex, v.wrappedHex, v.keyIdHex] {
            #expect(doc.contains(value), "FORMAT.md lacks \(value)")
        }
    }

    @Test("a wrapped secret cannot be moved to another slot, or changed")
    func wrapBinding() throws {
        let kek = SecretKey.generate()
        let alice = try AccountID(validating: "alice")
        let here = WrapContext(account: alice, kind: .generationKey, generation: 1)
        let blob = WrappedSecret.wrap(SecureBytes(randomCount: 32), under: kek, context: here)
        let elsewhere = [
            WrapContext(account: try AccountID(validating: "alicf"), kind: .generationKey, generation: 1),
            WrapContext(account: alice, kind: .deviceBoxKey, generation: 1),
            WrapContext(account: alice, kind: .generationKey, generation: 2),
        ]
        for other in elsewhere {
            #expect(throws: CryptoError.authenticationFailed) { try WrappedSecret.unwrap(blob, under: kek, context: other) }
        }
        #expect(throws: CryptoError.authenticationFailed) { try WrappedSecret.unwrap(blob, under: SecretKey.generate(), context: here) }
        var changed = blob
        changed[30] ^= 1
        #expect(throws: CryptoError.authenticationFailed) { try WrappedSecret.unwrap(changed, under: kek, context: here) }
        var version = blob
        version[0] = 2
        #expect(throws: VaultError.unsupportedWrapVersion) { try WrappedSecret.unwrap(version, under: kek, context: here) }
        #expect(throws: CryptoError.self) { try WrappedSecret.unwrap(Array(blob.prefix(20)), under: kek, context: here) }
    }
}
