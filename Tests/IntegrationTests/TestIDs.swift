import KeyVaultIDs
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultCrypto

extension ID16 {
    /// Tests only: an ID from 16 bytes the test chose.
    init(_ bytes: [UInt8]) { self.init(hash: bytes) }

    /// Tests only: an ID from 32 hex characters the test chose (a vector's).
    init(testHex hex: String) { self = Self(hex: hex)! }
}

extension DeviceID {
    /// Tests only: a made-up device's ID, the same for the same name.
    init(naming name: String) { self.init(hash: LabeledHash.hash(label: "keyvault/test/device", parts: [Array(name.utf8)], outputByteCount: 16)) }
}
