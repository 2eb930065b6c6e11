internal import CSodium

/// Public random values (salts, nonces, request IDs). Secrets use
/// `SecureBytes(randomCount:)` so they never sit in ordinary memory.
package enum Random {
    package static func bytes(_ count: Int) -> [UInt8] {
        Sodium.ensureReady()
        var out = [UInt8](repeating: 0, count: count)
        randombytes_buf(&out, count)
        return out
    }

    /// A uniform value in 0..<upperBound.
    package static func uniform(_ upperBound: UInt32) -> UInt32 {
        Sodium.ensureReady()
        return randombytes_uniform(upperBound)
    }
}
