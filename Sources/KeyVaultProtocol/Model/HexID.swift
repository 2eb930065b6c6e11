package import KeyVaultCrypto
package import KeyVaultIDs

/// A device's ID in an account: BLAKE2b-128 over its two public keys (`DeviceKeys.deviceID`).
package typealias DeviceID = ID16<DeviceIDKind>
/// A generation key's ID: BLAKE2b-128 of the key under `Labels.keyID`.
package typealias KeyID = ID16<KeyIDKind>

extension KeyID {
    /// The ID of a generation key.
    package init(of key: SecretKey) {
        self.init(hash: key.keyID(label: Labels.keyID))
    }
}

extension ID16 {
    /// From a 16-byte hash this code computed (not from input): its size is not in doubt.
    package init(hash: [UInt8]) {
        precondition(hash.count == 16, "an ID is a 16-byte hash")
        self.init(bytes: hash)!
    }

    /// From 16 bytes read from a record: anything else is a malformed record.
    package init(reading bytes: some Collection<UInt8>) throws(ProtocolError) {
        guard let id = Self(bytes: bytes) else { throw .malformed("\(Kind.name) is 16 bytes, not \(bytes.count)") }
        self = id
    }
}
