package import Foundation

/// Where an account stands on this device, each phase with its own facts. Derived
/// from the account's value (`AccountState.phase`), never kept beside it: each phase
/// is a fact the vault already holds (its log, how much of it the relay holds, its
/// enrollment row), so a phase cannot disagree with what a restart loads.
package enum AccountPhase: Sendable, Equatable {
    /// Its genesis is this device's, made with the account (`since`), and the relay does not hold it yet.
    case founding(since: Date)
    /// It asked to join (`since`) and no approval is authenticated yet; `failed` once its
    /// exchange failed or a restart ended it.
    case joining(since: Date, failed: Bool)
    /// In the circle since `since` (or a device on its own, without a relay, since its creation).
    case member(since: Date)
    /// Removed from the circle: it keeps what it held and gets nothing after.
    case revoked
    /// The circle destroyed the account: its keys are shredded.
    case destroyed

    /// Its name in the socket API (`membership`).
    package var name: String {
        switch self {
        case .founding: "founding"
        case .joining: "joining"
        case .member: "member"
        case .revoked: "revoked"
        case .destroyed: "destroyed"
        }
    }
}
