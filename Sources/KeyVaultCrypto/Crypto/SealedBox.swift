internal import CSodium

/// An X25519 public key that sealed boxes are addressed to.
package struct BoxPublicKey: Sendable, Hashable {
    package static let byteCount = 32
    package let rawRepresentation: [UInt8]

    package init(rawRepresentation raw: [UInt8]) throws {
        guard raw.count == Self.byteCount else {
            throw CryptoError.wrongSize(what: "an X25519 public key", expected: Self.byteCount, actual: raw.count)
        }
        self.rawRepresentation = raw
    }
}

/// An X25519 secret key in secure memory, which opens sealed boxes.
package struct BoxSecretKey: Sendable {
    package static let byteCount = 32
    package let secret: SecureBytes
    package let publicKey: BoxPublicKey

    package static func generate() -> BoxSecretKey {
        try! BoxSecretKey(secret: SecureBytes(randomCount: byteCount))
    }

    package init(secret: SecureBytes) throws {
        guard secret.count == Self.byteCount else {
            throw CryptoError.wrongSize(what: "an X25519 secret key", expected: Self.byteCount, actual: secret.count)
        }
        var publicBytes = [UInt8](repeating: 0, count: BoxPublicKey.byteCount)
        let rc = secret.withUnsafeBytes { s in
            crypto_scalarmult_base(&publicBytes, s.bindMemory(to: UInt8.self).baseAddress!)
        }
        guard rc == 0 else { throw CryptoError.authenticationFailed }
        self.secret = secret
        self.publicKey = try BoxPublicKey(rawRepresentation: publicBytes)
    }
}

/// libsodium sealed boxes (`crypto_box_seal`): anonymous public-key encryption
/// to one recipient, 48 bytes of overhead.
package enum SealedBox {
    package static var overhead: Int { Sodium.ensureReady(); return Int(crypto_box_sealbytes()) }

    package static func seal(_ message: SecureBytes, to recipient: BoxPublicKey) -> [UInt8] {
        message.withUnsafeBytes { seal(bytes: $0, to: recipient) }
    }

    /// Seals bytes that live in secure memory the caller owns (a `SecureScratch`).
    package static func seal(bytes message: UnsafeRawBufferPointer, to recipient: BoxPublicKey) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: message.count + overhead)
        let rc = crypto_box_seal(&out, message.bindMemory(to: UInt8.self).baseAddress, UInt64(message.count), recipient.rawRepresentation)
        precondition(rc == 0, "crypto_box_seal failed on a valid key")
        return out
    }

    /// Throws `authenticationFailed` for the wrong key or any changed byte.
    package static func open(_ sealed: [UInt8], with key: BoxSecretKey) throws -> SecureBytes {
        let overhead = overhead
        guard sealed.count >= overhead else {
            throw CryptoError.wrongSize(what: "a sealed box", expected: overhead, actual: sealed.count)
        }
        return try SecureBytes(capacity: sealed.count - overhead) { buffer in
            let rc = key.secret.withUnsafeBytes { sk in
                crypto_box_seal_open(buffer.bindMemory(to: UInt8.self).baseAddress, sealed, UInt64(sealed.count),
                                     key.publicKey.rawRepresentation, sk.bindMemory(to: UInt8.self).baseAddress!)
            }
            guard rc == 0 else { throw CryptoError.authenticationFailed }
            return sealed.count - overhead
        }
    }
}
