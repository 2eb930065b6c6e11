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

@Suite("Crypto layer: known answers and refusals")
struct CryptoTests {
    struct GCMFile: Decodable {
        struct Case: Decodable { var name, keyHex, nonceHex, plaintextHex, aadHex, ciphertextHex, tagHex: String }
        var cases: [Case]
    }

    struct Argon2File: Decodable {
        struct Case: Decodable { var passphrase, saltHex, outputHex: String; var opsLimit, memLimitBytes: UInt64 }
        var source: String
        var cases: [Case]
    }

    @Test("AES-256-GCM matches the GCM specification's test cases 13 to 16")
    func aesGCMVectors() throws {
        let file = try Vectors.load("aes256gcm.json", as: GCMFile.self)
        #expect(file.cases.count == 4)
        for v in file.cases {
            let key = try SecretKey(rawRepresentation: Vectors.hex(v.keyHex))
            let sealed = try AESGCM.seal(Vectors.hex(v.plaintextHex), key: key, nonce: Vectors.hex(v.nonceHex), aad: Vectors.hex(v.aadHex))
            #expect(Hex.encode(sealed.ciphertext) == v.ciphertextHex, "\(v.name)")
            #expect(Hex.encode(sealed.tag) == v.tagHex, "\(v.name)")
            let opened = try AESGCM.open(sealed, key: key, nonce: Vectors.hex(v.nonceHex), aad: Vectors.hex(v.aadHex))
            #expect(Hex.encode(opened) == v.plaintextHex, "\(v.name)")
        }
    }

    @Test("AES-256-GCM refuses a changed tag, ciphertext or AAD, and bad sizes")
    func aesGCMRefusals() throws {
        let key = SecretKey.generate()
        let nonce = Random.bytes(12)
        let sealed = try AESGCM.seal(Array("records".utf8), key: key, nonce: nonce, aad: [1, 2])
        var badTag = sealed
        badTag.tag[0] ^= 1
        #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(badTag, key: key, nonce: nonce, aad: [1, 2]) }
        var badText = sealed
        badText.ciphertext[0] ^= 1
        #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(badText, key: key, nonce: nonce, aad: [1, 2]) }
        #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(sealed, key: key, nonce: nonce, aad: [1, 3]) }
        #expect(throws: CryptoError.self) { try AESGCM.seal([], key: key, nonce: Random.bytes(11), aad: []) }
    }

    @Test("Argon2id matches an independent implementation (argon2-cffi)")
    func argon2idVectors() throws {
        let file = try Vectors.load("argon2id.json", as: Argon2File.self)
        #expect(file.source.contains("argon2-cffi"))
        #expect(!file.cases.isEmpty)
        for v in file.cases {
            let parameters = try KDFParameters(opsLimit: v.opsLimit, memLimitBytes: v.memLimitBytes)
            let kek = try PasswordKDF.deriveKey(passphrase: SecureBytes(copying: Array(v.passphrase.utf8)),
                                                salt: Vectors.hex(v.saltHex), parameters: parameters)
            #expect(kek.hexEncodedString() == v.outputHex, "\(v.opsLimit) passes, \(v.memLimitBytes) bytes")
        }
    }

    @Test("KDF parameters and salts are checked at the edge")
    func kdfRefusals() {
        #expect(throws: CryptoError.self) { try KDFParameters(opsLimit: 0, memLimitBytes: 1 << 20) }
        #expect(throws: CryptoError.self) { try KDFParameters(opsLimit: 1, memLimitBytes: 1000) }
        #expect(throws: CryptoError.self) {
            try PasswordKDF.deriveKey(passphrase: SecureBytes(copying: [1]), salt: [0, 1], parameters: KDFParameters(opsLimit: 1, memLimitBytes: 65536))
        }
    }

    @Test("sealed boxes round-trip and refuse tampering and the wrong key")
    func sealedBoxes() throws {
        let recipient = BoxSecretKey.generate()
        let message = SecureBytes(copying: Array(0..<100))
        let sealed = SealedBox.seal(message, to: recipient.publicKey)
        #expect(sealed.count == 100 + SealedBox.overhead)
        #expect(try SealedBox.open(sealed, with: recipient).constantTimeEquals(message))
        for index in [0, 31, 32, 60, sealed.count - 1] {
            var tampered = sealed
            tampered[index] ^= 0x80
            #expect(throws: CryptoError.authenticationFailed) { try SealedBox.open(tampered, with: recipient) }
        }
        #expect(throws: CryptoError.authenticationFailed) { try SealedBox.open(sealed, with: BoxSecretKey.generate()) }
        #expect(throws: CryptoError.self) { try SealedBox.open(Array(sealed.prefix(40)), with: recipient) }
        #expect(throws: CryptoError.self) { try BoxPublicKey(rawRepresentation: [1, 2, 3]) }
    }

    @Test("Ed25519 signatures verify and refuse any change")
    func signatures() throws {
        let key = SigningKey.generate()
        let message = Array("genesis".utf8)
        let signature = key.signature(for: message)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: Array("genesiS".utf8)))
        var bad = signature
        bad[10] ^= 1
        #expect(!key.publicKey.isValidSignature(bad, for: message))
        #expect(!SigningKey.generate().publicKey.isValidSignature(signature, for: message))
        #expect(!key.publicKey.isValidSignature(Array(signature.prefix(63)), for: message))
    }

    @Test("keys are sized types")
    func sizes() {
        #expect(throws: CryptoError.wrongSize(what: "a key", expected: 32, actual: 31)) { try SecretKey(rawRepresentation: [UInt8](repeating: 0, count: 31)) }
        #expect(throws: CryptoError.self) { try SigningPublicKey(rawRepresentation: [UInt8](repeating: 0, count: 33)) }
        let a = SecretKey.generate()
        #expect(a.constantTimeEquals(a))
        #expect(!a.constantTimeEquals(SecretKey.generate()))
    }

    @Test("hex and base64 codecs round-trip and refuse junk")
    func codecs() {
        let bytes = Random.bytes(33)
        #expect(Hex.decode(Hex.encode(bytes)) == bytes)
        #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
        #expect(Base64.decode("@@@@") == nil)
    }
}
