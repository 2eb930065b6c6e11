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
    /// The batch is one account's, the nonce's.
    func publish(batch records: [RelayRecord], spending nonce: RequestNonce) async throws
}
