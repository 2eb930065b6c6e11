package import Foundation
package import KeyVaultCrypto
package import KeyVaultProtocol

/// The answer to "may I have this key?", as a pure value. The service decides
/// it from what the vault holds, whether the account is unlocked and what the
/// circle says; the API renders it once.
package enum KeyAvailability: Sendable {
    case ready(ReleasedKey)
    case pending(PendingReason, since: Date)
    case locked
    case unknown(String)
    case revoked
    case destroyed

    package enum PendingReason: String, Sendable {
        /// This device asked to join and no trusted device has approved it yet.
        case awaitingApproval = "awaiting-approval"
        /// Approved, or the generation is announced, and the share has not arrived.
        case awaitingDelivery = "awaiting-delivery"
        /// The pairing exchange failed (the code did not match, the circle shown was not the
        /// one the trusted device sees) or ended with a restart: enroll again for a new code.
        case codeMismatch = "code-mismatch"
        /// This device founded the account and the relay has not taken its genesis yet. Until it
        /// has, another device may turn out to have founded the same account there first, and this
        /// one is then dropped: a key served before that would encrypt data nobody could read.
        case awaitingRelay = "awaiting-relay"
    }

    /// Decides a read. `generations` are in the agreed order; `current` is the
    /// current key's ID; `held` gives the key if this device holds it readable right now.
    package static func decide(
        selector: KeySelector, generations: [KeyGeneration], current: KeyID?, isLocked: Bool,
        phase: AccountPhase, held: (KeyGeneration) -> ReleasedKey?
    ) -> KeyAvailability {
        var since = Date.distantPast
        switch phase {
        case .revoked, .destroyed:
            // A destroyed account's generations are all `destroyed`: a read of one says so.
            break
        case .joining(let requested, let failed):
            // Before approval this device cannot know the circle; locked still wins.
            return isLocked ? .locked : .pending(failed ? .codeMismatch : .awaitingApproval, since: requested)
        case .founding(let created):
            return isLocked ? .locked : .pending(.awaitingRelay, since: created)
        case .member(let joined):
            since = joined
        }
        // A removed device is told nothing after its removal (the relay stops answering it at its
        // revocation, and the circle rotates there): the account's current key, and any key it
        // never held, are later than what it may know.
        if phase == .revoked, case .current = selector { return .revoked }
        let target: KeyGeneration?
        switch selector {
        case .current:
            target = current.flatMap { id in generations.first { $0.keyID == id } }
        case .generation(let number):
            // After concurrent rotations two keys share a number: the later in the agreed order answers.
            target = generations.last { $0.number == number }
        case .keyID(let id):
            target = generations.first { $0.keyID == id }
        }
        guard let target else {
            if phase == .revoked { return .revoked }
            switch selector {
            case .current: return .unknown("the account has no current key")
            case .generation(let n): return .unknown("generation \(n) has never been announced for this account")
            case .keyID: return .unknown("no generation of this account has that key ID")
            }
        }
        switch target.state {
        case .destroyed: return .destroyed
        case .active:
            if let key = held(target) { return .ready(key) }
            // A removed device keeps what it held, and gets nothing after.
            if phase == .revoked { return .revoked }
            if isLocked { return .locked }
            return .pending(.awaitingDelivery, since: max(since, target.createdAt))
        }
    }
}

/// A key on its way out to an authorised caller.
package struct ReleasedKey: Sendable {
    package var account: AccountID
    package var generation: KeyGeneration
    package var key: SecretKey
    package var isCurrent: Bool

    package init(account: AccountID, generation: KeyGeneration, key: SecretKey, isCurrent: Bool) {
        self.account = account
        self.generation = generation
        self.key = key
        self.isCurrent = isCurrent
    }
}
