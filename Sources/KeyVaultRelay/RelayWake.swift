package import KeyVaultProtocol

/// What a wake-up says landed: records of these accounts, or of any account
/// (a store that cannot tell, or a connection that was away and may have missed some).
package enum RelayWake: Sendable, Equatable {
    case any
    case accounts(Set<AccountID>)
    /// One account's commit, whose last row is at `through`: a reader that has read that far
    /// (its cursor, or what its last read covered) has nothing to read for it.
    case landed(AccountID, through: RelayCursor)
    /// The store was opened, or opened again after a failure: it may not be the
    /// store read before (a relay file deleted and made anew), so a device checks
    /// that it still holds what this device knows it held.
    case opened

    /// Whether a device holding `account` should read it again.
    package func concerns(_ account: AccountID) -> Bool {
        switch self {
        case .any, .opened: return true
        case .accounts(let touched): return touched.contains(account)
        case .landed(let touched, _): return touched == account
        }
    }

    /// PostgreSQL's NOTIFY payload for a commit (PROTOCOL.md): the account and its last cursor, one space apart.
    package static func payload(_ account: AccountID, through: RelayCursor) -> String {
        "\(account.rawValue) \(through.value)"
    }

    /// A NOTIFY payload read back: `account cursor`, or the account alone (a writer that does not
    /// say its cursor: every reader of the account wakes); anything else says nothing of which
    /// account, and wakes every reader.
    package init(payload: String) {
        let parts = payload.split(separator: " ", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let account = try? AccountID(validating: String(parts[0])) else {
            self = .any
            return
        }
        guard parts.count == 2 else {
            self = .accounts([account])
            return
        }
        guard let through = Int64(parts[1]), through > 0 else {
            self = .any
            return
        }
        self = .landed(account, through: RelayCursor(through))
    }
}
