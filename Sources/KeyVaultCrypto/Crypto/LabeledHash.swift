internal import CSodium

/// BLAKE2b over `label || 0x00 || parts…`, each part length-prefixed (u32 big
/// endian), so distinct labels and part boundaries never collide.
package enum LabeledHash {
    package static func hash(label: String, parts: [[UInt8]], outputByteCount: Int = 32) -> [UInt8] {
        hash(label: label, parts: parts, secret: nil, outputByteCount: outputByteCount)
    }

    /// The same construction with a secret as the final part, fed from secure
    /// memory (used for key IDs).
    package static func hash(label: String, parts: [[UInt8]], secret: SecureBytes?, outputByteCount: Int) -> [UInt8] {
        Sodium.ensureReady()
        precondition((16...64).contains(outputByteCount))
        // The state is 64-byte aligned in C, which Swift cannot import as a struct.
        let stateSize = crypto_generichash_statebytes()
        let raw = UnsafeMutableRawPointer.allocate(byteCount: stateSize, alignment: 64)
        defer {
            sodium_memzero(raw, stateSize)
            raw.deallocate()
        }
        let state = OpaquePointer(raw)
        crypto_generichash_init(state, nil, 0, outputByteCount)
        let labelBytes = Array(label.utf8) + [0]
        crypto_generichash_update(state, labelBytes, UInt64(labelBytes.count))
        for part in parts {
            let length = lengthPrefix(part.count)
            crypto_generichash_update(state, length, 4)
            crypto_generichash_update(state, part, UInt64(part.count))
        }
        if let secret {
            let length = lengthPrefix(secret.count)
            crypto_generichash_update(state, length, 4)
            secret.withUnsafeBytes { s in
                _ = crypto_generichash_update(state, s.bindMemory(to: UInt8.self).baseAddress, UInt64(s.count))
            }
        }
        var out = [UInt8](repeating: 0, count: outputByteCount)
        crypto_generichash_final(state, &out, outputByteCount)
        return out
    }

    package static func lengthPrefix(_ count: Int) -> [UInt8] {
        let n = UInt32(count)
        return [UInt8(n >> 24), UInt8((n >> 16) & 0xff), UInt8((n >> 8) & 0xff), UInt8(n & 0xff)]
    }
}

extension SecretKey {
    /// A labelled BLAKE2b-128 of the key: identifies it, reveals nothing.
    package func keyID(label: String) -> [UInt8] {
        LabeledHash.hash(label: label, parts: [], secret: bytes, outputByteCount: 16)
    }
}
