package import KeyVaultProtocol
import KeyVaultRelayWire

/// A signed write's replay nonce, spent in the write's own transaction
/// (RELAY.md, "Signed requests"): `(account, keyID, nonce)` is stored once,
/// beside the account's rows, so the write and its nonce commit together, on
/// the account's shard, and nothing else pays a commit for it.
///
/// The account is part of the key because a signature covers its path, and
/// with it the account: the same request means nothing to another account.
package struct RequestNonce: Sendable, Hashable {
    package var account: AccountID
    package var keyID: DeviceID
    /// The 16 random bytes, as the signature carries them (base64).
    package var nonce: String
    /// The signature's `created`, in seconds since the epoch.
    package var created: Int64

    package init(account: AccountID, keyID: DeviceID, nonce: String, created: Int64) {
        self.account = account
        self.keyID = keyID
        self.nonce = nonce
        self.created = created
    }

    /// How long a spent nonce is kept, in seconds: while a request carrying it could still be in the window.
    package static let life: Int64 = 2 * RequestSignature.window

    /// The `created` below which this write sweeps the account's spent nonces. Measured from this
    /// request's own `created`, which may be a window ahead of another instance's clock, so one more
    /// window of margin: a nonce another instance could still accept is never swept.
    package var sweepBefore: Int64 { created - Self.life - RequestSignature.window }
}
