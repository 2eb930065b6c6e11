internal import CSodium

/// XChaCha20-Poly1305 (IETF), the cipher that wraps every secret at rest.
/// A sealed value is `nonce (24) || ciphertext || tag (16)`; the random
/// 192-bit nonce makes reuse under one KEK negligible.
package enum WrapCipher {
    package static let nonceByteCount = 24
    package static let tagByteCount = 16

    package static func seal(_ plaintext: SecureBytes, key: SecretKey, aad: [UInt8]) -> [UInt8] {
        seal(plaintext, key: key, aad: aad, nonce: Random.bytes(nonceByteCount))
    }

    /// With a caller's nonce: only for test vectors and the documented worked example.
    package static func seal(_ plaintext: SecureBytes, key: SecretKey, aad: [UInt8], nonce: [UInt8]) -> [UInt8] {
        precondition(nonce.count == nonceByteCount, "XChaCha20 nonce must be 24 bytes")
        var out = nonce + [UInt8](repeating: 0, count: plaintext.count + tagByteCount)
        var written: UInt64 = 0
        let rc = out.withUnsafeMutableBufferPointer { outBuffer in
            plaintext.withUnsafeBytes { message in
                key.bytes.withUnsafeBytes { k in
                    crypto_aead_xchacha20poly1305_ietf_encrypt(
                        outBuffer.baseAddress! + nonceByteCount, &written,
                        message.bindMemory(to: UInt8.self).baseAddress, UInt64(message.count),
                        aad, UInt64(aad.count), nil, nonce,
                        k.bindMemory(to: UInt8.self).baseAddress!)
                }
            }
        }
        // Encryption with valid sizes cannot fail.
        precondition(rc == 0 && Int(written) == plaintext.count + tagByteCount)
        return out
    }

    /// Opens into secure memory; throws `authenticationFailed` on a wrong key,
    /// wrong AAD or any changed byte.
    package static func open(_ sealed: [UInt8], key: SecretKey, aad: [UInt8]) throws -> SecureBytes {
        guard sealed.count >= nonceByteCount + tagByteCount else {
            throw CryptoError.wrongSize(what: "a wrapped value", expected: nonceByteCount + tagByteCount, actual: sealed.count)
        }
        let plainLength = sealed.count - nonceByteCount - tagByteCount
        return try SecureBytes(capacity: plainLength) { buffer in
            var written: UInt64 = 0
            let rc = sealed.withUnsafeBufferPointer { input in
                key.bytes.withUnsafeBytes { k in
                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                        buffer.bindMemory(to: UInt8.self).baseAddress, &written, nil,
                        input.baseAddress! + nonceByteCount, UInt64(input.count - nonceByteCount),
                        aad, UInt64(aad.count), input.baseAddress!,
                        k.bindMemory(to: UInt8.self).baseAddress!)
                }
            }
            guard rc == 0 else { throw CryptoError.authenticationFailed }
            return Int(written)
        }
    }
}
