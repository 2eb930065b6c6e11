import NIOPosix
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient

/// Argon2id takes its cost in time and memory; it runs on NIO's blocking
/// thread pool (one thread per core) so it never stalls the event loops or the
/// cooperative pool, and the pool's size bounds the memory in use at once.
enum KDFRunner {
    static func deriveKEK(passphrase: SecureBytes, salt: [UInt8], parameters: KDFParameters) async throws -> SecretKey {
        try await NIOThreadPool.singleton.runIfActive {
            try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
        }
    }
}
