package import KeyVaultCrypto
/// A caller's item sealed under one of the account's keys (docs/FORMAT.md,
/// "Envelopes"): `0x01 || keyId (16) || nonce (12) || ciphertext || tag (16)`.
/// The key ID in the clear lets open find the generation; the AAD binds the
/// envelope to its account, its header and the caller's own AAD.
package struct Envelope: Sendable, Equatable {
    package static let version: UInt8 = 1
    package static let keyIDByteCount = 16
    package static let headerByteCount = 1 + keyIDByteCount + AESGCM.nonceByteCount
    /// An envelope of an empty plaintext.
    package static let minimumByteCount = headerByteCount + AESGCM.tagByteCount

    package let keyID: KeyID
    package let nonce: [UInt8]
    package let sealed: AESGCM.Sealed

    /// Why bytes are not an envelope (before any key is involved).
    package enum FormatError: Error, Sendable, Equatable {
        case tooShort
        case unknownVersion(UInt8)
    }

    package init(parsing bytes: [UInt8]) throws(FormatError) {
        guard bytes.count >= Self.minimumByteCount else { throw .tooShort }
        guard bytes[0] == Self.version else { throw .unknownVersion(bytes[0]) }
        keyID = KeyID(hash: Array(bytes[1..<1 + Self.keyIDByteCount]))
        nonce = Array(bytes[1 + Self.keyIDByteCount..<Self.headerByteCount])
        sealed = AESGCM.Sealed(ciphertext: Array(bytes[Self.headerByteCount..<bytes.count - AESGCM.tagByteCount]),
                               tag: Array(bytes.suffix(AESGCM.tagByteCount)))
    }

    package var bytes: [UInt8] { [Self.version] + keyID.bytes + nonce + sealed.ciphertext + sealed.tag }

    /// The key ID as the API writes it: 32 lowercase hex characters.

    /// `field(label) || field(account) || field(0x01 || keyId) || field(caller aad)`,
    /// each `field(x) = u32be(len(x)) || x` as in docs/PROTOCOL.md.
    package static func aad(account: AccountID, keyID: KeyID, callerAAD: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for part in [Array(Labels.envelope.utf8), Array(account.rawValue.utf8), [version] + keyID.bytes, callerAAD] {
            out += LabeledHash.lengthPrefix(part.count)
            out += part
        }
        return out
    }

    /// Seals with a fresh random nonce.
    package static func seal(_ plaintext: [UInt8], key: SecretKey, account: AccountID, aad: [UInt8]) throws -> Envelope {
        try seal(plaintext, key: key, account: account, aad: aad, nonce: Random.bytes(AESGCM.nonceByteCount))
    }

    /// With a caller's nonce: only for the documented worked example and its test.
    package static func seal(_ plaintext: [UInt8], key: SecretKey, account: AccountID, aad: [UInt8], nonce: [UInt8]) throws -> Envelope {
        let keyID = KeyID(of: key)
        let sealed = try AESGCM.seal(plaintext, key: key, nonce: nonce, aad: Self.aad(account: account, keyID: keyID, callerAAD: aad))
        return Envelope(keyID: keyID, nonce: nonce, sealed: sealed)
    }

    /// Throws `CryptoError.authenticationFailed` for a wrong key, account or
    /// AAD, or any changed byte.
    package func open(key: SecretKey, account: AccountID, aad: [UInt8]) throws -> [UInt8] {
        try AESGCM.open(sealed, key: key, nonce: nonce, aad: Self.aad(account: account, keyID: keyID, callerAAD: aad))
    }

    private init(keyID: KeyID, nonce: [UInt8], sealed: AESGCM.Sealed) {
        self.keyID = keyID
        self.nonce = nonce
        self.sealed = sealed
    }
}
