import KeyVaultProtocol
import KeyVaultRelay
import KeyVaultRelayStore

/// Each account's requests, one at a time (issue 33, "bulkheads between
/// tenants"): at most `perAccount` of one account's members' requests are being
/// checked, decoded, stored and answered at once, whatever their addresses (and
/// as many of its guests'); the rest wait their turn, in order, for at most
/// `wait`, and are then answered `unavailable`. So forty heavy requests from one
/// tenant cost the relay's cores what one does, and other tenants' requests find
/// a core free (with two turns each, on 2 cores, the bench's other tenant read
/// at 3.3 times its idle time; with one, 1.8). A held read gives its turn back
/// while it waits.
///
/// Only a request whose signer the account knows, and whose head's signature
/// verifies, takes a turn (`RelayHandlers.admit`), and only once its body has
/// arrived: a stranger naming an account cannot spend its turns, nor can a
/// device that sends its body slowly hold one.
struct AccountWork: Sendable {
    /// Members' requests take their account's turns; candidates' and revoked devices' (and a
    /// device its batch's approval re-joins) take the guests' turn of that account, so a
    /// revoked device's or a candidate's requests never take the members' turns.
    enum Lane: Sendable { case members, guests }

    let members: AccountTurns
    let guests: AccountTurns
    let wait: Duration
    let metrics: RelayMetrics

    init(metrics: RelayMetrics, perAccount: Int = 1, guestsPerAccount: Int = 1, wait: Duration = .seconds(5)) {
        members = AccountTurns(perAccount: perAccount)
        guests = AccountTurns(perAccount: guestsPerAccount)
        self.wait = wait
        self.metrics = metrics
    }

    private func turns(_ lane: Lane) -> AccountTurns { lane == .members ? members : guests }

    func take(_ account: AccountID, _ lane: Lane) async throws {
        metrics.turnWaits.increment()
        defer { metrics.turnWaits.decrement() }
        do {
            try await turns(lane).take(account.rawValue, waitingAtMost: wait)
        } catch is DeadlineExceeded {
            throw Refusal.busy
        }
    }

    func give(_ account: AccountID, _ lane: Lane) { turns(lane).give(account.rawValue) }
}
