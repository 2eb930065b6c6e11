import Foundation
package import KeyVaultProtocol

/// The `state` field of every answer (docs/API.md): a client can switch on it
/// alone. Each state has one HTTP status (`ContractState+HTTP` in the API).
package enum ContractState: String, Sendable, Codable, CaseIterable {
    case ready, pending, locked, unknown, revoked, forbidden, denied, throttled, destroyed, invalid
    /// What this device holds failed a check the right passphrase would have
    /// passed (a wrapped blob moved or altered, a key not matching its key ID):
    /// damage or tampering, never a wrong passphrase and never the daemon's own failure.
    case damaged
    /// A failure of the daemon itself; the body says nothing more.
    case error
}

/// A refusal in the contract's terms: its state, a sentence for a person, and
/// for `throttled` how long to wait. Never carries a secret.
package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
    package var state: ContractState
    package var message: String
    package var retryAfterSeconds: Int?

    package init(_ state: ContractState, _ message: String, retryAfterSeconds: Int? = nil) {
        self.state = state
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }

    package var description: String { "\(state): \(message)" }

    package static func invalid(_ message: String) -> Refusal { Refusal(.invalid, message) }
    package static func unknownAccount(_ id: AccountID) -> Refusal { Refusal(.unknown, "there is no account \(id) on this device") }
    package static func damaged(_ id: AccountID, _ what: String) -> Refusal {
        Refusal(.damaged, "the data stored for \(id) on this device is damaged: \(what); nothing was changed (docs/FORMAT.md says how to recover)")
    }
    package static func throttled(_ id: AccountID, retryAfterSeconds wait: Int) -> Refusal {
        Refusal(.throttled, "too many wrong passphrases for \(id); try again in \(wait) s", retryAfterSeconds: wait)
    }
    package static func locked(_ id: AccountID) -> Refusal {
        Refusal(.locked, "the account \(id) is locked; unlock it with its passphrase")
    }
}
