import Foundation
import Logging
import KeyVaultProtocol
import KeyVaultStore

/// Each account's circle as the relay verified it, built from the account's
/// stored `log` rows and kept with the cursor it was built to. Before each
/// authorization only the rows after that cursor are read (one per-account
/// query), so an instance sees what other instances on the store accepted.
actor VerifiedViews {
    private struct View {
        var circle: CircleState
        var cursor: Int64
    }

    private let relay: any Relay
    private let logger: Logger
    private var views: [AccountID: View] = [:]

    init(relay: any Relay, logger: Logger) {
        self.relay = relay
        self.logger = logger
    }

    /// The account's verified circle as of now (empty: no account).
    func circle(of account: AccountID) async throws -> CircleState {
        var view = views[account] ?? View(circle: CircleState(account: account), cursor: 0)
        while true {
            let rows = try await relay.rows(account: account, after: view.cursor, limit: 1000)
            for row in rows where row.record.kind == .log {
                do {
                    try view.circle.apply(try LogEntry.decode(row.record.body))
                } catch {
                    // Every stored entry was verified before it was stored; one that is not is skipped, not trusted.
                    logger.error("a stored log entry does not verify", metadata: ["cursor": "\(row.cursor)", "why": "\(error)"])
                }
            }
            guard let last = rows.last else { break }
            view.cursor = last.cursor
            if rows.count < 1000 { break }
        }
        // Another refresh of this account may have run meanwhile (the actor is reentrant): keep the furthest.
        if let current = views[account], current.cursor > view.cursor { return current.circle }
        views[account] = view
        return view.circle
    }
}
