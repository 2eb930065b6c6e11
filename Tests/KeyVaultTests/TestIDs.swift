import KeyVaultIDs
import KeyVaultProtocol
import KeyVaultAccount

extension ID16 {
    /// Tests only: an ID from 16 bytes the test chose.
    init(_ bytes: [UInt8]) { self.init(hash: bytes) }

    /// Tests only: an ID from 32 hex characters the test chose (a vector's).
    init(testHex hex: String) { self = Self(hex: hex)! }
}
