/// A 32-byte symmetric key (an account key generation, a KEK) in secure memory.
package struct SecretKey: Sendable {
    package static let byteCount = 32
    package let bytes: SecureBytes

    /// Throws unless `raw` is exactly 32 bytes.
    package init(rawRepresentation raw: some Collection<UInt8>) throws {
        guard raw.count == Self.byteCount else {
            throw CryptoError.wrongSize(what: "a key", expected: Self.byteCount, actual: raw.count)
        }
        self.bytes = SecureBytes(copying: raw)
    }

    package init(secureBytes: SecureBytes) throws {
        guard secureBytes.count == Self.byteCount else {
            throw CryptoError.wrongSize(what: "a key", expected: Self.byteCount, actual: secureBytes.count)
        }
        self.bytes = secureBytes
    }

    /// A fresh key from the CSPRNG.
    package static func generate() -> SecretKey {
        // Size is fixed here, so the throwing initialiser cannot fail.
        try! SecretKey(secureBytes: SecureBytes(randomCount: byteCount))
    }

    package func constantTimeEquals(_ other: SecretKey) -> Bool { bytes.constantTimeEquals(other.bytes) }
    package func base64EncodedString() -> String { bytes.base64EncodedString() }
    package func hexEncodedString() -> String { bytes.hexEncodedString() }
}
