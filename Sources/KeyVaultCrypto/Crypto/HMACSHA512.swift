internal import CSodium

/// HMAC-SHA-512 (RFC 2104) keyed from secure memory, with a key of any
/// length (libsodium's `crypto_auth_hmacsha512_init`, which hashes keys over
/// 128 bytes as RFC 2104 says). The tag is public.
package enum HMACSHA512 {
    package static let byteCount = 64

    package static func authenticate(_ message: [UInt8], key: SecureBytes) -> [UInt8] {
        Sodium.ensureReady()
        let state = UnsafeMutablePointer<crypto_auth_hmacsha512_state>.allocate(capacity: 1)
        defer {
            sodium_memzero(state, MemoryLayout<crypto_auth_hmacsha512_state>.size)
            state.deallocate()
        }
        precondition(key.count > 0, "an HMAC key is not empty")
        key.withUnsafeBytes { k in
            _ = crypto_auth_hmacsha512_init(state, k.bindMemory(to: UInt8.self).baseAddress!, k.count)
        }
        crypto_auth_hmacsha512_update(state, message, UInt64(message.count))
        var tag = [UInt8](repeating: 0, count: byteCount)
        crypto_auth_hmacsha512_final(state, &tag)
        return tag
    }
}
