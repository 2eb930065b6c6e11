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

@Suite("Envelopes for seal and open (docs/FORMAT.md, \"Envelopes\")")
struct EnvelopeFormatTests {
    struct Example: Decodable {
        var account, keyHex, keyIdHex, nonceHex, aadText, plaintextText, aadHex, envelopeHex, envelopeBase64: String
    }

    @Test("the worked example: AAD and envelope byte for byte, and it opens, as FORMAT.md gives them")
    func workedExample() throws {
        let v = try Vectors.load("envelope-example.json", as: Example.self)
        let account = try AccountID(validating: v.account)
        let key = try SecretKey(rawRepresentation: Vectors.hex(v.keyHex))
        let aad = Array(v.aadText.utf8)
        #expect(Hex.encode(Envelope.aad(account: account, keyID: KeyID(try Vectors.hex(v.keyIdHex)), callerAAD: aad)) == v.aadHex)
        let sealed = try Envelope.seal(Array(v.plaintextText.utf8), key: key, account: account, aad: aad, nonce: Vectors.hex(v.nonceHex))
        #expect(Hex.encode(sealed.bytes) == v.envelopeHex)
        #expect(Base64.encode(sealed.bytes) == v.envelopeBase64)

        let parsed = try Envelope(parsing: try #require(Base64.decode(v.envelopeBase64)))
        #expect(parsed.keyID.hex == v.keyIdHex)
        #expect(try parsed.open(key: key, account: account, aad: aad) == Array(v.plaintextText.utf8))

        // The document states the same values.
        let doc = try String(contentsOf: Vectors.repositoryRoot.appendingPathComponent("docs/FORMAT.md"), encoding: .utf8)
        for value in [v.keyHex, v.keyIdHex, v.nonceHex, v.aadHex, v.envelopeHex, v.envelopeBase64, v.plaintextText, v.aadText] {
            #expect(doc.contains(value), "FORMAT.md lacks \(value)")
        }
    }

    @Test("an envelope opens only with its key, its account and its AAD, and unchanged")
    func binding() throws {
        let key = SecretKey.generate()
        let alice = try AccountID(validating: "alice")
        let envelope = try Envelope.seal(Array("secret".utf8), key: key, account: alice, aad: [1, 2, 3])
        #expect(try envelope.open(key: key, account: alice, aad: [1, 2, 3]) == Array("secret".utf8))
        #expect(throws: CryptoError.authenticationFailed) { try envelope.open(key: key, account: try AccountID(validating: "alicf"), aad: [1, 2, 3]) }
        #expect(throws: CryptoError.authenticationFailed) { try envelope.open(key: key, account: alice, aad: [1, 2]) }
        #expect(throws: CryptoError.authenticationFailed) { try envelope.open(key: SecretKey.generate(), account: alice, aad: [1, 2, 3]) }
        // Every byte after the version, the key ID included (the header is in the AAD).
        for index in envelope.bytes.indices.dropFirst(1) {
            var changed = envelope.bytes
            changed[index] ^= 0x80
            #expect(throws: CryptoError.authenticationFailed) { try Envelope(parsing: changed).open(key: key, account: alice, aad: [1, 2, 3]) }
        }
        // No AAD and an empty AAD are the same; an empty plaintext seals too.
        let empty = try Envelope.seal([], key: key, account: alice, aad: [])
        #expect(empty.bytes.count == Envelope.minimumByteCount)
        #expect(try empty.open(key: key, account: alice, aad: []) == [])
    }

    @Test("bytes that are not an envelope are refused before any key is tried")
    func malformed() throws {
        let envelope = try Envelope.seal([7], key: SecretKey.generate(), account: try AccountID(validating: "a"), aad: [])
        #expect(throws: Envelope.FormatError.tooShort) { try Envelope(parsing: Array(envelope.bytes.prefix(Envelope.minimumByteCount - 1))) }
        var version = envelope.bytes
        version[0] = 2
        #expect(throws: Envelope.FormatError.unknownVersion(2)) { try Envelope(parsing: version) }
        #expect(try Envelope(parsing: envelope.bytes) == envelope)
    }
}
