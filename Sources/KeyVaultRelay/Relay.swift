package import Foundation
package import KeyVaultProtocol

/// The untrusted relay, whatever stores it (SQLite file, PostgreSQL): append,
/// read one account's records after that account's cursor, and be woken when
/// something lands. A device reads only its own accounts: what other accounts
/// write costs it nothing but a wake-up it ignores.
package protocol Relay: Sendable {
    /// Appends a record. A log entry whose number is taken throws `logSeqTaken`.
    func publish(_ record: RelayRecord) async throws
    /// Appends records all at once (one transaction where the store has them): a delivery to many devices.
    func publish(batch records: [RelayRecord]) async throws
    /// One account's records after `cursor`, in the relay's order, at most
    /// `limit`. Within an account, cursors commit in order, so a reader that
    /// resumes after the last cursor it saw misses nothing.
    func rows(account: AccountID, after cursor: RelayCursor, limit: Int) async throws -> [RelayRow]
    /// The highest cursor the store has handed out (`start`: none), or nil for
    /// a relay with no store-wide order. A store whose last cursor is below one
    /// a device has read is not the store it read.
    func lastCursor() async throws -> RelayCursor?
    /// Every account's records after `cursor`: an operator's (or a test's) view.
    /// Across accounts cursors may commit out of order, and on PostgreSQL each
    /// account numbers its own (this view orders by cursor, then account); devices read per account.
    func rows(after cursor: RelayCursor, limit: Int) async throws -> [RelayRow]
    /// Yields whenever something may have landed, and for which accounts
    /// (possibly spuriously); never polls on a timer. Nothing is dropped: the
    /// stream buffers every wake-up until it is read.
    func wakeups() -> AsyncStream<RelayWake>
    /// Closes connections and ends the wake-ups (a file needs nothing).
    func shutdown() async
    /// Since when the relay's own connections have been failing, if it keeps
    /// connections (nil: reachable, or nothing to tell).
    var unreachableSince: Date? { get }
    /// The accounts whose store was found to have gone back (restored from an older backup)
    /// since this was last asked, with no store-wide order to tell it (`lastCursor()` nil):
    /// each is read again from its start. Taking them forgets them.
    func takeAccountsGoneBack() -> Set<AccountID>
    /// Whether a read of `account` after `cursor` would tell nothing that a wake-up will not:
    /// a held read of the account after that very cursor is out, and nothing it answered waits
    /// to be read. A pass may end there instead of asking; what lands after the cursor comes
    /// with the held read's answer, a round trip later at most. (False: read.)
    func covers(_ account: AccountID, after cursor: RelayCursor) -> Bool
}

extension Relay {
    package func shutdown() async {}
    package var unreachableSince: Date? { nil }
    package func takeAccountsGoneBack() -> Set<AccountID> { [] }
    package func covers(_ account: AccountID, after cursor: RelayCursor) -> Bool { false }

    package func publish(batch records: [RelayRecord]) async throws {
        for record in records { try await publish(record) }
    }

    /// Every record of one kind for one account, oldest first (read by account).
    package func all(_ kind: RelayRecord.Kind, account: AccountID) async throws -> [RelayRow] {
        var out: [RelayRow] = []
        var cursor = RelayCursor.start
        while true {
            let batch = try await rows(account: account, after: cursor, limit: 1000)
            out += batch.filter { $0.record.kind == kind }
            guard let last = batch.last else { return out }
            cursor = last.cursor
        }
    }
}
