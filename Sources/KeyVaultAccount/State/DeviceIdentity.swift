import Foundation
package import KeyVaultCrypto
package import KeyVaultProtocol

/// This device's identity for one account: an Ed25519 key to sign and an
/// X25519 key to receive sealed boxes. The device ID is a fingerprint of both
/// public keys.
package struct DeviceIdentity: Sendable {
    package var signing: SigningKey
    package var box: BoxSecretKey

    package init(signing: SigningKey, box: BoxSecretKey) {
        self.signing = signing
        self.box = box
    }

    package static func generate() -> DeviceIdentity {
        DeviceIdentity(signing: .generate(), box: .generate())
    }

    package var deviceID: DeviceID { Self.deviceID(signing: signing.publicKey, box: box.publicKey) }

    /// BLAKE2b-128 over both public keys under `Labels.deviceID` (`DeviceKeys.deviceID`).
    package static func deviceID(signing: SigningPublicKey, box: BoxPublicKey) -> DeviceID {
        DeviceKeys(signing: signing, box: box, name: "").deviceID
    }
}
