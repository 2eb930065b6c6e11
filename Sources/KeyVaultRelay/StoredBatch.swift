package import KeyVaultProtocol

/// What one signed write stored, as its readers would read it: every row of the
/// account with a cursor after `after`, up to `through`, with its cursor (a record
/// the store held already is not among them: it took no row).
///
/// A store numbers an account's cursors in turn and commits them in that order
/// (the account's cursor row stays locked until the commit), so once the write
/// has committed, every row of the account up to `after` was committed before
/// it. A held read that had read everything up to `after` can be answered from
/// these rows without asking the store again (RELAY.md, `GET …/records`).
package struct StoredBatch: Sendable, Equatable {
    package let account: AccountID
    /// The account's last cursor handed out before this write.
    package let after: RelayCursor
    /// The last cursor this write handed out (`after` when it took none).
    package let through: RelayCursor
    /// The rows it stored, oldest first.
    package let rows: [RelayRow]

    package init(account: AccountID, after: RelayCursor, through: RelayCursor, rows: [RelayRow]) {
        self.account = account
        self.after = after
        self.through = through
        self.rows = rows
    }
}
