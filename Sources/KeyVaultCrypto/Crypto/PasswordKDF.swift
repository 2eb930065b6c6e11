internal import CSodium

/// Argon2id (libsodium's `crypto_pwhash` with `ALG_ARGON2ID13`, parallelism 1)
/// turning a passphrase and a salt into a 32-byte KEK.
package struct KDFParameters: Sendable, Equatable, Codable {
    /// Passes over memory (Argon2's t_cost).
    package var opsLimit: UInt64
    /// Memory in bytes (Argon2's m_cost is this divided by 1024).
    package var memLimitBytes: UInt64

    package static let saltByteCount = 16

    package init(opsLimit: UInt64, memLimitBytes: UInt64) throws {
        self.opsLimit = opsLimit
        self.memLimitBytes = memLimitBytes
        try validate()
    }

    /// libsodium's MODERATE: 3 passes over 256 MiB.
    package static var moderate: KDFParameters {
        Sodium.ensureReady()
        return try! KDFParameters(
            opsLimit: UInt64(crypto_pwhash_argon2id_opslimit_moderate()),
            memLimitBytes: UInt64(crypto_pwhash_argon2id_memlimit_moderate()))
    }

    package func validate() throws {
        Sodium.ensureReady()
        let opsMin = UInt64(crypto_pwhash_argon2id_opslimit_min())
        let memMin = UInt64(crypto_pwhash_argon2id_memlimit_min())
        let memMax = UInt64(crypto_pwhash_argon2id_memlimit_max())
        guard opsLimit >= opsMin, opsLimit <= 64 else {
            throw CryptoError.invalidKDFParameters("passes must be between \(opsMin) and 64, got \(opsLimit)")
        }
        guard memLimitBytes >= memMin, memLimitBytes <= min(memMax, 1 << 36), memLimitBytes % 1024 == 0 else {
            throw CryptoError.invalidKDFParameters(
                "memory must be a whole number of KiB between \(memMin) bytes and 64 GiB, got \(memLimitBytes)")
        }
    }
}

package enum PasswordKDF {
    /// Derives the KEK. Costs what the parameters say in time and memory: run
    /// it off the event loop.
    package static func deriveKey(passphrase: SecureBytes, salt: [UInt8], parameters: KDFParameters) throws -> SecretKey {
        try parameters.validate()
        guard salt.count == KDFParameters.saltByteCount else {
            throw CryptoError.wrongSize(what: "a KDF salt", expected: KDFParameters.saltByteCount, actual: salt.count)
        }
        let out = try SecureBytes(capacity: SecretKey.byteCount) { buffer in
            let empty: [CChar] = [0]
            let rc = passphrase.withUnsafeBytes { pass in
                empty.withUnsafeBufferPointer { fallback in
                    crypto_pwhash(
                        buffer.bindMemory(to: UInt8.self).baseAddress!, UInt64(SecretKey.byteCount),
                        pass.bindMemory(to: CChar.self).baseAddress ?? fallback.baseAddress!, UInt64(pass.count),
                        salt, parameters.opsLimit, Int(parameters.memLimitBytes),
                        crypto_pwhash_alg_argon2id13())
                }
            }
            guard rc == 0 else { throw CryptoError.kdfFailed }
            return SecretKey.byteCount
        }
        return try SecretKey(secureBytes: out)
    }
}
