package import Foundation
package import KeyVaultCrypto
package import KeyVaultProtocol
import KeyVaultAccount

/// A recovery kit (docs/FORMAT.md, "Recovery kit"): an account's key
/// generations, encrypted under a key derived from a kit passphrase, so a
/// person can restore them on a fresh daemon.
///
/// `kit = field(header) || field(sealed)`, where
/// `header = field("keyvault/v1/recovery-kit") || field(account) || u64(passes) || u64(memory bytes) || field(salt 16)`
/// and `sealed = XChaCha20-Poly1305(Argon2id(kit passphrase, salt), AAD = header)`
/// of `u32be(count) || count × (u32be generation || u64be createdAt ms || keyID 16 || key 32)`.
package enum RecoveryKit {
    package struct KeptKey: Sendable {
        package init(number: Generation, keyID: KeyID, createdAt: Date, key: SecretKey) {
            self.number = number
            self.keyID = keyID
            self.createdAt = createdAt
            self.key = key
        }

        package var number: Generation
        package var keyID: KeyID
        package var createdAt: Date
        package var key: SecretKey
    }

    package static let recordLength = 4 + 8 + 16 + 32

    package static func seal(account: AccountID, generations: [KeptKey], passphrase: SecureBytes, parameters: KDFParameters) throws -> [UInt8] {
        let salt = Random.bytes(KDFParameters.saltByteCount)
        var h = FieldWriter()
        h.string(Labels.recoveryKit)
        h.string(account.rawValue)
        h.u64(parameters.opsLimit)
        h.u64(parameters.memLimitBytes)
        h.bytes(salt)
        let header = h.bytes
        let kek = try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
        let plain = SecureBytes(capacity: 4 + generations.count * recordLength) { out in
            var offset = 0
            func put(_ bytes: [UInt8]) {
                out.baseAddress!.advanced(by: offset).copyMemory(from: bytes, byteCount: bytes.count)
                offset += bytes.count
            }
            put(LabeledHash.lengthPrefix(generations.count))
            for g in generations {
                put(LabeledHash.lengthPrefix(g.number.value))
                let ms = UInt64((g.createdAt.timeIntervalSince1970 * 1000).rounded())
                put((0..<8).map { UInt8((ms >> UInt64(56 - 8 * $0)) & 0xff) })
                put(g.keyID.bytes)
                g.key.bytes.withUnsafeBytes { out.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                offset += SecretKey.byteCount
            }
            return offset
        }
        var w = FieldWriter()
        w.bytes(header)
        w.bytes(WrapCipher.seal(plain, key: kek, aad: header))
        return w.bytes
    }

    /// What a kit's header says, read without any KDF work: the account it
    /// restores and its Argon2id cost, so a caller can refuse a kit for an account
    /// it may not create, or one too cheap or too costly, before paying for it.
    /// The header is authenticated only when the kit is opened (it is the AAD):
    /// a forged one fails then. Throws `ProtocolError` or `InvalidInput` on a kit
    /// that does not parse.
    package static func header(of kit: [UInt8]) throws -> (account: AccountID, opsLimit: UInt64, memLimitBytes: UInt64) {
        var outer = FieldReader(kit)
        var r = FieldReader(try outer.bytes())
        try r.label(Labels.recoveryKit)
        let account = try AccountID(validating: try r.string())
        return (account, try r.u64(), try r.u64())
    }

    /// Throws `authenticationFailed` on a wrong passphrase or a changed kit.
    package static func open(_ kit: [UInt8], passphrase: SecureBytes) throws -> (AccountID, [KeptKey]) {
        var outer = FieldReader(kit)
        let header = try outer.bytes()
        let sealed = try outer.bytes()
        try outer.finish()
        var r = FieldReader(header)
        try r.label(Labels.recoveryKit)
        let account = try AccountID(validating: try r.string())
        let parameters = try KDFParameters(opsLimit: try r.u64(), memLimitBytes: try r.u64())
        let salt = try r.bytes(count: KDFParameters.saltByteCount, "a salt")
        try r.finish()
        let kek = try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
        let plain = try WrapCipher.open(sealed, key: kek, aad: header)
        guard plain.count >= 4 else { throw ProtocolError.malformed("a recovery kit is cut short") }
        let count = plain.publicBytes(0..<4).reduce(0) { $0 << 8 | Int($1) }
        guard plain.count == 4 + count * recordLength else { throw ProtocolError.malformed("a recovery kit's length does not match its count") }
        var out: [KeptKey] = []
        for i in 0..<count {
            let base = 4 + i * recordLength
            let number = plain.publicBytes(base..<base + 4).reduce(0) { $0 << 8 | Int($1) }
            let ms = plain.publicBytes(base + 4..<base + 12).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let keyID = try KeyID(bytes: plain.publicBytes(base + 12..<base + 28))
            let key = try SecretKey(secureBytes: plain.secureSlice(base + 28..<base + recordLength))
            guard let number = Generation(number), KeyID(of: key) == keyID else { throw ProtocolError.invalid("a recovery kit's key does not match its key ID") }
            out.append(KeptKey(number: number, keyID: keyID, createdAt: Date(timeIntervalSince1970: Double(ms) / 1000), key: key))
        }
        return (account, out)
    }
}
