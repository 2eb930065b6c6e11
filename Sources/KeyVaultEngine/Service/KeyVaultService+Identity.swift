import Foundation
package import KeyVaultProtocol
import KeyVaultAccount

/// Accounts bound to a person's sign-in, with a relay service: creating an
/// account or enrolling into one presents an OpenID Connect ID token whose
/// `nonce` is this device's identity nonce for that account (RELAY.md,
/// "Identity: candidates"). The token is forwarded once and never stored.
extension KeyVaultService {
    /// The nonce the app hands the identity provider before the person signs
    /// in: made from this device's identity for the account, which is made now
    /// if there is none (and kept, in memory, for the creation or enrollment
    /// that follows; a restart makes another).
    package func identityNonce(_ id: AccountID) async -> String {
        // A job of the account, like every change to it: a creation cannot take the identity half-made.
        await owners.run(id) { [self] in
            if let keys = owners.read(id, { ($0.record.signingPublicKey, $0.record.boxPublicKey) }) {
                return IdentityNonce.of(signing: keys.0, box: keys.1)
            }
            let identity = owners.existing(id)?.preparedIdentity.withLock { $0 } ?? DeviceIdentity.generate()
            owners.prepare(id, identity)
            return IdentityNonce.of(signing: identity.signing.publicKey, box: identity.box.publicKey)
        }
    }

    /// The identity prepared for the account's sign-in, or a new one, for a creation or
    /// enrollment to use. A prepared one stays prepared until one succeeds (`spendIdentity`):
    /// a token refused, or a relay away, leaves the nonce as it was, so a token made for it
    /// again is taken.
    func preparedIdentity(for id: AccountID) -> DeviceIdentity {
        owners.existing(id)?.preparedIdentity.withLock { $0 } ?? .generate()
    }

    /// The account now holds the prepared identity: a later creation or enrollment (after a
    /// delete) makes a new one.
    func spendIdentity(for id: AccountID) {
        _ = owners.takePrepared(id)
    }

    /// A relay service binds accounts to a sign-in: without a token there is nothing to present.
    func requireIdentityToken(_ token: String?, for what: String) throws {
        guard relayCredentials != nil else { return }
        guard let token, !token.isEmpty else {
            throw Refusal(.denied, "this device's relay is a relay service, and \(what) needs the person's sign-in: "
                + "pass identityToken, an ID token whose nonce is this device's identity-nonce for the account")
        }
    }
}
