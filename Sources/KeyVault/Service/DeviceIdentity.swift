import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
/// This device's identity for one account: an Ed25519 key to sign and an
/// X25519 key to receive sealed boxes. The device ID is a fingerprint of both
/// public keys.
struct DeviceIdentity: Sendable {
    var signing: SigningKey
    var box: BoxSecretKey

    static func generate() -> DeviceIdentity {
        DeviceIdentity(signing: .generate(), box: .generate())
    }

    var deviceID: DeviceID { Self.deviceID(signing: signing.publicKey, box: box.publicKey) }

    /// BLAKE2b-128 over both public keys under `Labels.deviceID` (`DeviceKeys.deviceID`).
    static func deviceID(signing: SigningPublicKey, box: BoxPublicKey) -> DeviceID {
        DeviceKeys(signing: signing, box: box, name: "").deviceID
    }
}
