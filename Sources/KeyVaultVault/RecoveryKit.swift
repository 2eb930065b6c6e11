package import Foundation
package import KeyVaultCrypto
package import KeyVaultProtocol
package import KeyVaultAccount

/// A recovery kit (docs/FORMAT.md, "Recovery kit"): an account's key
/// generations and, from version 2, the keys of the kit's own member of the
/// account's circle, encrypted under a key derived from a kit passphrase, so a
/// person can restore the account on a fresh daemon.
///
/// `kit = field(header) || field(sealed)`, where
/// `header = field(label) || field(account) || u64(passes) || u64(memory bytes) || field(salt 16)`
/// and `sealed = XChaCha20-Poly1305(Argon2id(kit passphrase, salt), AAD = header)`
/// of `u32be(count) || count × (u32be generation || u64be createdAt ms || keyID 16 || key 32)`,
/// followed in version 2 (`keyvault/v2/recovery-kit`) by `u8(0)`, or `u8(1) ||
/// Ed25519 seed 32 || X25519 secret 32` (the kit's member). Version 1 kits
/// (`keyvault/v1/recovery-kit`) restore keys only.
package enum RecoveryKit {
    /// What a kit holds once opened.
    package struct Contents: Sendable {
        package var account: AccountID
        package var keys: [KeptKey]
        /// The kit's member of the circle (version 2, made on a device in a circle); nil: keys only.
        package var member: DeviceIdentity?
    }

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

    package static func seal(account: AccountID, generations: [KeptKey], member: DeviceIdentity? = nil, passphrase: SecureBytes,
                             parameters: KDFParameters) throws -> [UInt8] {
        let salt = Random.bytes(KDFParameters.saltByteCount)
        var h = FieldWriter()
        h.string(Labels.recoveryKitV2)
        h.string(account.rawValue)
        h.u64(parameters.opsLimit)
        h.u64(parameters.memLimitBytes)
        h.bytes(salt)
        let header = h.bytes
        let kek = try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
        let plain = SecureBytes(capacity: 4 + generations.count * recordLength + 1 + 2 * SecretKey.byteCount) { out in
            var offset = 0
            func put(_ bytes: [UInt8]) {
                out.baseAddress!.advanced(by: offset).copyMemory(from: bytes, byteCount: bytes.count)
                offset += bytes.count
            }
            put(LabeledHash.lengthPrefix(generations.count))
            for g in generations {
                put(LabeledHash.lengthPrefix(g.number.value))
                let ms = Millis.of(g.createdAt, rounding: .toNearestOrAwayFromZero)
                put((0..<8).map { UInt8((ms >> UInt64(56 - 8 * $0)) & 0xff) })
                put(g.keyID.bytes)
                g.key.bytes.withUnsafeBytes { out.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                offset += SecretKey.byteCount
            }
            put([member == nil ? 0 : 1])
            for secret in [member?.signing.seed, member?.box.secret].compactMap({ $0 }) {
                secret.withUnsafeBytes { out.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                offset += secret.count
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
        _ = try version(&r)
        let account = try AccountID(validating: try r.string())
        return (account, try r.u64(), try r.u64())
    }

    /// The kit's version, from its label: 1 (keys only) or 2 (keys and the kit's member).
    private static func version(_ r: inout FieldReader) throws(ProtocolError) -> Int {
        switch try r.string() {
        case Labels.recoveryKit: return 1
        case Labels.recoveryKitV2: return 2
        default: throw .malformed("not a recovery kit")
        }
    }

    /// Throws `authenticationFailed` on a wrong passphrase or a changed kit.
    package static func open(_ kit: [UInt8], passphrase: SecureBytes) throws -> Contents {
        var outer = FieldReader(kit)
        let header = try outer.bytes()
        let sealed = try outer.bytes()
        try outer.finish()
        var r = FieldReader(header)
        let version = try version(&r)
        let account = try AccountID(validating: try r.string())
        let parameters = try KDFParameters(opsLimit: try r.u64(), memLimitBytes: try r.u64())
        let salt = try r.bytes(count: KDFParameters.saltByteCount, "a salt")
        try r.finish()
        let kek = try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
        let plain = try WrapCipher.open(sealed, key: kek, aad: header)
        guard plain.count >= 4 else { throw ProtocolError.malformed("a recovery kit is cut short") }
        let count = plain.publicBytes(0..<4).reduce(0) { $0 << 8 | Int($1) }
        // The count is authenticated, but a kit is bounded by what its length can hold before anything is multiplied.
        guard count <= plain.count / recordLength else { throw ProtocolError.malformed("a recovery kit's length does not match its count") }
        let keysEnd = 4 + count * recordLength
        var member: DeviceIdentity?
        let flag = plain.count > keysEnd ? plain.publicBytes(keysEnd..<keysEnd + 1)[0] : nil
        switch (version, plain.count - keysEnd, flag) {
        case (1, 0, nil), (2, 1, 0):
            break
        case (2, 1 + 2 * SecretKey.byteCount, 1):
            let seed = keysEnd + 1, box = seed + SecretKey.byteCount
            member = DeviceIdentity(signing: try SigningKey(seed: plain.secureSlice(seed..<box)),
                                    box: try BoxSecretKey(secret: plain.secureSlice(box..<box + SecretKey.byteCount)))
        default:
            throw ProtocolError.malformed("a recovery kit's length does not match its count")
        }
        var out: [KeptKey] = []
        for i in 0..<count {
            let base = 4 + i * recordLength
            let number = plain.publicBytes(base..<base + 4).reduce(0) { $0 << 8 | Int($1) }
            let ms = plain.publicBytes(base + 4..<base + 12).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let keyID = try KeyID(reading: plain.publicBytes(base + 12..<base + 28))
            let key = try SecretKey(secureBytes: plain.secureSlice(base + 28..<base + recordLength))
            guard let number = Generation(number), KeyID(of: key) == keyID else { throw ProtocolError.invalid("a recovery kit's key does not match its key ID") }
            guard ms <= Millis.max else { throw ProtocolError.malformed("a recovery kit's key was made past the year 9999") }
            out.append(KeptKey(number: number, keyID: keyID, createdAt: Millis.date(ms), key: key))
        }
        return Contents(account: account, keys: out, member: member)
    }
}
