package import KeyVaultProtocol

/// A store the relay service owns (SQLite file, PostgreSQL): a `Relay` that
/// may also forget rows nobody needs any more (RELAY.md, "Retention").
/// Devices never remove rows; the daemon's embedded relay keeps its history.
package protocol RelayStore: Relay {
    /// Deletes these rows of the account; cursors not there are ignored.
    /// Cursors are never handed out again, so a reader's cursor stays valid.
    func remove(account: AccountID, cursors: [RelayCursor]) async throws
    /// One round trip to the store that reads nothing (`GET /v1/health`).
    func ping() async throws
    /// `publish(batch:)` and the write's nonce in one transaction: all of it, or
    /// none of it and `RelayError.nonceSpent` when the nonce was spent before.
    /// The batch is one account's, the nonce's. Returns the rows it stored (`StoredBatch`).
    /// It does not wake the store's readers: the caller wakes its own first, then `announce`s it.
    func publish(batch records: [RelayRecord], spending nonce: RequestNonce) async throws -> StoredBatch
    /// The store's wake-up for a write `publish(batch:spending:)` stored (other instances' readers;
    /// nothing if it stored no row).
    func announce(_ batch: StoredBatch)
    /// `rows(account:after:limit:)` that also ends before the row that would take its
    /// bodies past `byteBudget` bytes (the first row is always in it): what an answer
    /// holds in memory is bounded in bytes as well as rows, whatever the rows are.
    func rows(account: AccountID, after cursor: RelayCursor, limit: Int, byteBudget: Int) async throws -> [RelayRow]
    /// The account's last cursor (`.start` when it has no rows).
    func lastCursor(account: AccountID) async throws -> RelayCursor
    /// The largest cursor the store ever handed out for the account (its counter, which pruning
    /// does not lower; `.start` for none). A reader's cursor past it was handed out by a store this
    /// one no longer is: it was restored from an older backup.
    func handedOut(account: AccountID) async throws -> RelayCursor
    /// The account's rows of these kinds with cursors up to `through`, oldest first: what pruning
    /// judges, read by kind (an index's prefix), never the account's shares with them.
    func rows(account: AccountID, kinds: [RelayRecord.Kind], through: RelayCursor) async throws -> [RelayRow]
    /// Deletes the account's shares to `recipient` with cursors up to `through`, by the
    /// recipient (an index), reading none of them; how many went.
    func removeShares(account: AccountID, recipient: DeviceID, through: RelayCursor) async throws -> Int
}

/// An answer's byte budget (`rows(account:after:limit:byteBudget:)`), for those that cut a page themselves.
package enum PageBytes {
    /// How many of the rows `sizes` (their bodies' lengths, oldest first) fit in `byteBudget`: at least one.
    package static func fitting(_ sizes: [Int], byteBudget: Int) -> Int {
        var total = 0
        for (index, size) in sizes.enumerated() {
            total += size
            if total > byteBudget { return max(index, 1) }
        }
        return sizes.count
    }
}
