import Foundation
package import KeyVaultProtocol

/// What a key read of an account can observe, derived from its state and
/// never kept beside it: whether it is locked, where this device stands, the
/// generations it knows and which it holds readable. When a publish changes
/// it, the reads waiting on the account decide again (`didPublish`); when it
/// does not, nothing a read would answer changed and none is woken.
package struct ReadModel: Equatable {
    package var isLocked: Bool
    package var phase: AccountPhase
    package var generations: [KeyGeneration]
    package var current: KeyID?
    package var held: Set<KeyID>
    /// Pairing confirmations read: what an approver's wait looks for.
    package var confirmations: Int
}

/// A key read's answer, and whether a read allowed to wait should wait for the next change.
package struct KeyRead {
    package var availability: KeyAvailability
    package var waits: Bool
    /// On a device waiting to be approved, the code it shows (in memory only, so none after a
    /// restart): an app reading its key tells the person what to type on a trusted device.
    package var pairingCode: String? = nil
}

extension AccountState {
    package var readModel: ReadModel {
        let generations = knownGenerations
        return ReadModel(isLocked: isLocked, phase: phase, generations: generations, current: currentKeyID,
                         held: Set(generations.lazy.map(\.keyID).filter { heldKey($0) != nil }),
                         confirmations: enrollment.confirmationCount)
    }

    /// The one rule for a key read: its answer, and whether to wait. Pending
    /// waits for the key. With a relay, a generation or key ID not heard of yet
    /// may be announced any moment (a record under it can arrive before the
    /// announce does): it waits too. Everything else is final.
    package func read(_ selector: KeySelector, withRelay: Bool) -> KeyRead {
        let availability = availability(of: selector)
        switch availability {
        case .pending(.awaitingApproval, _): return KeyRead(availability: availability, waits: true, pairingCode: enrollment.pairingCode)
        case .pending: return KeyRead(availability: availability, waits: true)
        case .unknown: return KeyRead(availability: availability, waits: withRelay)
        case .ready, .locked, .revoked, .destroyed: return KeyRead(availability: availability, waits: false)
        }
    }
}
