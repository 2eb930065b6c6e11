internal import COpenSSL

/// AES-256-GCM through OpenSSL's EVP interface: 12-byte nonce, 16-byte tag.
package enum AESGCM {
    package static let nonceByteCount = 12
    package static let tagByteCount = 16

    package struct Sealed: Sendable, Equatable {
        package var ciphertext: [UInt8]
        package var tag: [UInt8]

        package init(ciphertext: [UInt8], tag: [UInt8]) {
            self.ciphertext = ciphertext
            self.tag = tag
        }
    }

    package static func seal(_ plaintext: [UInt8], key: SecretKey, nonce: [UInt8], aad: [UInt8]) throws -> Sealed {
        guard nonce.count == nonceByteCount else {
            throw CryptoError.wrongSize(what: "an AES-GCM nonce", expected: nonceByteCount, actual: nonce.count)
        }
        let context = try CipherContext()
        try context.check(key.bytes.withUnsafeBytes { k in
            EVP_EncryptInit_ex(context.handle, EVP_aes_256_gcm(), nil, k.bindMemory(to: UInt8.self).baseAddress, nonce)
        }, "EVP_EncryptInit_ex")
        var length: Int32 = 0
        if !aad.isEmpty {
            try context.check(EVP_EncryptUpdate(context.handle, nil, &length, aad, Int32(aad.count)), "EVP_EncryptUpdate(aad)")
        }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var total: Int32 = 0
        if !plaintext.isEmpty {
            try context.check(EVP_EncryptUpdate(context.handle, &ciphertext, &length, plaintext, Int32(plaintext.count)), "EVP_EncryptUpdate")
            total = length
        }
        try ciphertext.withUnsafeMutableBufferPointer { out in
            try context.check(EVP_EncryptFinal_ex(context.handle, out.baseAddress! + Int(total), &length), "EVP_EncryptFinal_ex")
        }
        total += length
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        try context.check(EVP_CIPHER_CTX_ctrl(context.handle, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), &tag), "GET_TAG")
        return Sealed(ciphertext: Array(ciphertext.prefix(Int(total))), tag: tag)
    }

    /// Throws `authenticationFailed` when the tag does not match.
    package static func open(_ sealed: Sealed, key: SecretKey, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        guard nonce.count == nonceByteCount else {
            throw CryptoError.wrongSize(what: "an AES-GCM nonce", expected: nonceByteCount, actual: nonce.count)
        }
        guard sealed.tag.count == tagByteCount else {
            throw CryptoError.wrongSize(what: "an AES-GCM tag", expected: tagByteCount, actual: sealed.tag.count)
        }
        let context = try CipherContext()
        try context.check(key.bytes.withUnsafeBytes { k in
            EVP_DecryptInit_ex(context.handle, EVP_aes_256_gcm(), nil, k.bindMemory(to: UInt8.self).baseAddress, nonce)
        }, "EVP_DecryptInit_ex")
        var length: Int32 = 0
        if !aad.isEmpty {
            try context.check(EVP_DecryptUpdate(context.handle, nil, &length, aad, Int32(aad.count)), "EVP_DecryptUpdate(aad)")
        }
        var plaintext = [UInt8](repeating: 0, count: sealed.ciphertext.count + 16)
        var total: Int32 = 0
        if !sealed.ciphertext.isEmpty {
            try context.check(EVP_DecryptUpdate(context.handle, &plaintext, &length, sealed.ciphertext, Int32(sealed.ciphertext.count)), "EVP_DecryptUpdate")
            total = length
        }
        var tag = sealed.tag
        try context.check(EVP_CIPHER_CTX_ctrl(context.handle, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), &tag), "SET_TAG")
        let ok = plaintext.withUnsafeMutableBufferPointer { out in
            EVP_DecryptFinal_ex(context.handle, out.baseAddress! + Int(total), &length)
        }
        guard ok == 1 else {
            ERR_clear_error()
            throw CryptoError.authenticationFailed
        }
        total += length
        return Array(plaintext.prefix(Int(total)))
    }
}

/// Owns one `EVP_CIPHER_CTX`, freed (and so cleansed) in `deinit`.
private final class CipherContext {
    package let handle: OpaquePointer

    package init() throws {
        guard let handle = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL("EVP_CIPHER_CTX_new") }
        self.handle = handle
    }

    deinit { EVP_CIPHER_CTX_free(handle) }

    /// OpenSSL's EVP calls return 1 on success; anything else becomes a Swift error.
    package func check(_ rc: Int32, _ call: String) throws {
        guard rc == 1 else {
            let code = ERR_get_error()
            ERR_clear_error()
            throw CryptoError.openSSL("\(call) failed (error \(code))")
        }
    }
}
