internal import CSodium

/// SHA-512 (libsodium's `crypto_hash_sha512`): the hash of the CPace suite
/// CPACE-RISTR255-SHA512, where the draft fixes the hash.
package enum SHA512 {
    package static let byteCount = 64
    /// The input block size, `H.s_in_bytes` in the CPace draft.
    package static let blockByteCount = 128

    package static func hash(_ bytes: [UInt8]) -> [UInt8] {
        Sodium.ensureReady()
        var out = [UInt8](repeating: 0, count: byteCount)
        _ = crypto_hash_sha512(&out, bytes, UInt64(bytes.count))
        return out
    }

    /// One input of `secureHash`: public bytes, or a secret fed straight from secure memory.
    package enum Part {
        case bytes([UInt8])
        case secret(SecureBytes)
    }

    /// SHA-512 of the concatenation of `parts`, into secure memory: for a
    /// digest of a secret (a password-derived generator string, a session key).
    /// The hash state is wiped before it is freed.
    package static func secureHash(_ parts: [Part]) -> SecureBytes {
        Sodium.ensureReady()
        let state = UnsafeMutablePointer<crypto_hash_sha512_state>.allocate(capacity: 1)
        defer {
            sodium_memzero(state, MemoryLayout<crypto_hash_sha512_state>.size)
            state.deallocate()
        }
        crypto_hash_sha512_init(state)
        for part in parts {
            switch part {
            case .bytes(let bytes):
                crypto_hash_sha512_update(state, bytes, UInt64(bytes.count))
            case .secret(let secret):
                secret.withUnsafeBytes { s in
                    _ = crypto_hash_sha512_update(state, s.bindMemory(to: UInt8.self).baseAddress, UInt64(s.count))
                }
            }
        }
        return SecureBytes(capacity: byteCount) { out in
            crypto_hash_sha512_final(state, out.bindMemory(to: UInt8.self).baseAddress!)
            return byteCount
        }
    }
}
