internal import CSodium

/// SHA-256 (libsodium's `crypto_hash_sha256`): for the relay service's
/// `Content-Digest` and identity nonces, where the outside world fixes the hash.
package enum SHA256 {
    package static let byteCount = 32

    package static func hash(_ bytes: [UInt8]) -> [UInt8] {
        Sodium.ensureReady()
        var out = [UInt8](repeating: 0, count: byteCount)
        _ = crypto_hash_sha256(&out, bytes, UInt64(bytes.count))
        return out
    }
}
