import Foundation
package import KeyVaultProtocol

extension KeyAvailability {
    /// The contract answer for a key that is neither `ready` nor `pending`
    /// (those two carry a body of their own). One mapping for key reads and envelopes.
    package func refusal(_ account: AccountID) -> Refusal {
        switch self {
        case .locked:
            return Refusal.locked(account)
        case .unknown(let why):
            return Refusal(.unknown, why)
        case .revoked:
            return Refusal(.revoked, "this device was removed from the circle of \(account)")
        case .destroyed:
            return Refusal(.destroyed, "that generation of \(account) was destroyed on purpose")
        case .ready, .pending:
            preconditionFailure("ready and pending are answers, not refusals")
        }
    }
}
