import Foundation
import Logging
import KeyVaultProtocol
import KeyVaultRelay
import KeyVaultRelayStore

/// Each account's circle as the relay verified it, built from the account's
/// stored `log` rows and kept with the cursor it was built to. Before each
/// authorization only the rows after that cursor are read (one per-account
/// query), so an instance sees what other instances on the store accepted.
/// At most `capacity` accounts are kept; past it the least recently used half
/// is forgotten (and rebuilt from the store when next asked for).
actor VerifiedViews {
    private struct View {
        var circle: CircleState
        var cursor: RelayCursor
        var used: UInt64 = 0
    }

    private let relay: any Relay
    private let logger: Logger
    private let capacity: Int
    private var views: [AccountID: View] = [:]
    private var clock: UInt64 = 0

    init(relay: any Relay, logger: Logger, capacity: Int = 20_000) {
        self.relay = relay
        self.logger = logger
        self.capacity = capacity
    }

    /// How many accounts' views are kept now.
    var count: Int { views.count }

    /// The account's verified circle as of now (empty: no account).
    func circle(of account: AccountID) async throws -> CircleState {
        var view = views[account] ?? View(circle: CircleState(account: account), cursor: .start)
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
        clock += 1
        // Another refresh of this account may have run meanwhile (the actor is reentrant): keep the furthest.
        if let current = views[account], current.cursor > view.cursor {
            views[account]?.used = clock
            return current.circle
        }
        view.used = clock
        views[account] = view
        if views.count > capacity { forgetLeastRecentlyUsed() }
        return view.circle
    }

    private func forgetLeastRecentlyUsed() {
        let oldest = views.sorted { $0.value.used < $1.value.used }.prefix(views.count - capacity / 2).map(\.key)
        for account in oldest { views[account] = nil }
    }
}
