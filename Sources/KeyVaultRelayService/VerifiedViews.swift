import Foundation
import Logging
import KeyVaultProtocol
import KeyVaultRelay
import KeyVaultRelayStore

/// Each account's circle as the relay verified it, built from the account's
/// stored `log` rows and kept with the cursor it was built to. Before each
/// authorization only the rows after that cursor are read (one per-account
/// query), so an instance sees what other instances on the store accepted.
///
/// Bounded and not steerable (issue 33): an account's view is built once however
/// many ask at the same time (the others await that build); a name with no log
/// is never kept, so strangers naming accounts that do not exist flush nothing;
/// and what is kept is bounded in bytes (the encoded entries), past which the
/// least recently used views are forgotten down to half the budget, and rebuilt
/// from the store when next asked for. Building is linear in the entries
/// (`CircleState.apply` changes the state in place).
actor VerifiedViews {
    private struct View {
        var circle: CircleState
        var cursor: RelayCursor
        var bytes: Int
        var used: UInt64 = 0
    }

    private let relay: any Relay
    private let logger: Logger
    private let metrics: RelayMetrics?
    private let capacity: Int
    private let byteBudget: Int
    private var views: [AccountID: View] = [:]
    private var bytes = 0
    private var clock: UInt64 = 0
    /// Builds under way, by account: later askers await the same one.
    private var building: [AccountID: Task<View, any Error>] = [:]

    init(relay: any Relay, logger: Logger, metrics: RelayMetrics? = nil, capacity: Int = 20_000, byteBudget: Int = 64 << 20) {
        self.relay = relay
        self.logger = logger
        self.metrics = metrics
        self.capacity = capacity
        self.byteBudget = byteBudget
    }

    /// How many accounts' views are kept now, and their entries' bytes.
    var count: Int { views.count }
    var keptBytes: Int { bytes }

    /// The account's verified circle as of now (empty: no account).
    func circle(of account: AccountID) async throws -> CircleState {
        if let running = building[account] { return try await running.value.circle }
        let start = views[account] ?? View(circle: CircleState(account: account), cursor: .start, bytes: 0)
        let relay = self.relay, logger = self.logger, metrics = self.metrics
        let task = Task { try await Self.extend(start, account: account, relay: relay, logger: logger, metrics: metrics) }
        building[account] = task
        defer { building[account] = nil }
        var view = try await task.value
        clock += 1
        view.used = clock
        // A name with no log is no account: nothing is kept for it.
        guard !view.circle.isEmpty else { return view.circle }
        bytes += view.bytes - (views[account]?.bytes ?? 0)
        views[account] = view
        if views.count > capacity || bytes > byteBudget { forgetLeastRecentlyUsed() }
        return view.circle
    }

    /// The account's circle as kept here, without reading the store, and the cursor up to which
    /// it has read the store (nil: none kept, or one being built): what this instance last
    /// verified, which other instances' writes may have passed.
    func kept(_ account: AccountID) -> (circle: CircleState, through: RelayCursor)? {
        guard building[account] == nil, let view = views[account] else { return nil }
        return (view.circle, view.cursor)
    }

    /// A write this instance checked against `base` (`Authorization.publish`, which verified its
    /// entries into `circle`) and has just stored as `batch`: the account's view takes `circle` if it
    /// is still `base`, and, if it had read the store up to where the write began, passes the
    /// write's rows too, so its next read of the store starts after them. A view that moved
    /// meanwhile, or was forgotten, is left as it is; one that had not read up to the write keeps
    /// its cursor, and its next read finds the write's entries held already (the same hash at the
    /// same place) and does not verify them a second time.
    ///
    /// Sound because a store takes a batch's log rows only at log sequence numbers no row holds,
    /// in the same transaction as the rest (`logSeqTaken` otherwise, the batch not stored): once
    /// stored, the store's log is `base` and then these entries; and it numbers an account's rows
    /// in turn (`StoredBatch`). A store that did not hold to that must not be used with this.
    func adopt(_ circle: CircleState, extending base: CircleState, stored batch: StoredBatch) {
        guard building[circle.account] == nil, var view = views[circle.account], view.circle.headHash == base.headHash,
              view.circle.entries.count == base.entries.count else { return }
        let added = circle.entries.dropFirst(base.entries.count).reduce(0) { $0 + $1.encoded.count }
        clock += 1
        view.used = clock
        view.circle = circle
        if view.cursor == batch.after { view.cursor = batch.through }
        view.bytes += added
        bytes += added
        views[circle.account] = view
        if bytes > byteBudget { forgetLeastRecentlyUsed() }
    }

    /// `view` with the account's log rows after its cursor applied.
    private static func extend(_ start: View, account: AccountID, relay: any Relay, logger: Logger, metrics: RelayMetrics?) async throws -> View {
        var view = start
        while true {
            let rows = try await relay.rows(account: account, after: view.cursor, limit: 1000)
            for row in rows where row.record.kind == .log {
                do {
                    let entry = try LogEntry.decode(row.record.body)
                    // Adopted already (`adopt`): verified before it was stored, and neither counted nor its bytes added again.
                    if view.circle.holds(entry) { continue }
                    metrics?.viewEntriesApplied.increment()
                    try view.circle.apply(entry)
                    view.bytes += row.record.body.count
                } catch {
                    // Every stored entry was verified before it was stored; one that is not is skipped, not trusted.
                    logger.error("a stored log entry does not verify", metadata: ["cursor": "\(row.cursor)", "why": "\(error)"])
                }
            }
            guard let last = rows.last else { break }
            view.cursor = last.cursor
            if rows.count < 1000 { break }
        }
        return view
    }

    /// Forgets the least recently used views, down to half the count and half the bytes allowed.
    private func forgetLeastRecentlyUsed() {
        for (account, view) in views.sorted(by: { $0.value.used < $1.value.used }) {
            guard views.count > capacity / 2 || bytes > byteBudget / 2 else { break }
            views[account] = nil
            bytes -= view.bytes
        }
    }
}
