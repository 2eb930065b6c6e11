package import KeyVaultCrypto

/// The `nonce` an identity token must carry to make this device a candidate
/// of an account (RELAY.md, "Identity: candidates"): lowercase hex of
/// SHA-256 over the device's Ed25519 public key then its X25519 public key.
/// One token binds one device's keys, so a token seen once enrolls no other.
package enum IdentityNonce {
    package static func of(signing: SigningPublicKey, box: BoxPublicKey) -> String {
        Hex.encode(SHA256.hash(signing.rawRepresentation + box.rawRepresentation))
    }
}
