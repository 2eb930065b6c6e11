internal import CSodium

/// An Ed25519 public key: 32 bytes, checked at the edge.
package struct SigningPublicKey: Sendable, Hashable {
    package static let byteCount = 32
    package let rawRepresentation: [UInt8]

    package init(rawRepresentation raw: [UInt8]) throws {
        guard raw.count == Self.byteCount else {
            throw CryptoError.wrongSize(what: "an Ed25519 public key", expected: Self.byteCount, actual: raw.count)
        }
        self.rawRepresentation = raw
    }

    package func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == SigningKey.signatureByteCount else { return false }
        Sodium.ensureReady()
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), rawRepresentation) == 0
    }
}

/// An Ed25519 signing key, held as its 32-byte seed in secure memory.
package struct SigningKey: Sendable {
    package static let seedByteCount = 32
    package static let signatureByteCount = 64
    package let seed: SecureBytes
    /// The expanded 64-byte secret key libsodium signs with, also secure.
    package let expanded: SecureBytes
    package let publicKey: SigningPublicKey

    package static func generate() -> SigningKey {
        try! SigningKey(seed: SecureBytes(randomCount: seedByteCount))
    }

    package init(seed: SecureBytes) throws {
        guard seed.count == Self.seedByteCount else {
            throw CryptoError.wrongSize(what: "an Ed25519 seed", expected: Self.seedByteCount, actual: seed.count)
        }
        var publicBytes = [UInt8](repeating: 0, count: SigningPublicKey.byteCount)
        let expanded = SecureBytes(capacity: 64) { sk in
            seed.withUnsafeBytes { s in
                _ = crypto_sign_seed_keypair(&publicBytes, sk.bindMemory(to: UInt8.self).baseAddress!,
                                             s.bindMemory(to: UInt8.self).baseAddress!)
            }
            return 64
        }
        self.seed = seed
        self.expanded = expanded
        self.publicKey = try SigningPublicKey(rawRepresentation: publicBytes)
    }

    package func signature(for message: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Self.signatureByteCount)
        expanded.withUnsafeBytes { sk in
            _ = crypto_sign_detached(&signature, nil, message, UInt64(message.count),
                                     sk.bindMemory(to: UInt8.self).baseAddress!)
        }
        return signature
    }
}

extension SigningPublicKey {
    package func isValidSignature(_ signature: [UInt8], forSecret message: SecureBytes) -> Bool {
        guard signature.count == SigningKey.signatureByteCount else { return false }
        return message.withUnsafeBytes { m in
            crypto_sign_verify_detached(signature, m.bindMemory(to: UInt8.self).baseAddress, UInt64(m.count), rawRepresentation) == 0
        }
    }
}

extension SigningKey {
    /// Signs the first `length` bytes of `buffer` and writes the 64-byte
    /// signature right after them: one secure buffer for payload and signature.
    package func signInPlace(_ buffer: UnsafeMutableRawBufferPointer, messageLength length: Int) {
        precondition(buffer.count >= length + Self.signatureByteCount)
        let base = buffer.bindMemory(to: UInt8.self).baseAddress!
        expanded.withUnsafeBytes { sk in
            _ = crypto_sign_detached(base + length, nil, base, UInt64(length), sk.bindMemory(to: UInt8.self).baseAddress!)
        }
    }
}
