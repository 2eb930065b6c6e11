import KeyVaultProtocol
import KeyVaultRelay
import KeyVaultRelayStore

/// Each account's requests, a few at a time (issue 33, "bulkheads between
/// tenants"): at most `perAccount` of one account's requests are being checked,
/// decoded, stored and answered at once, whatever their addresses; the rest
/// wait their turn, in order, for at most `wait`, and are then answered
/// `unavailable`. So forty heavy requests from one tenant cost the relay's
/// cores what two do, and other tenants' requests find a core free. A held
/// read gives its turn back while it waits.
///
/// Only a request whose signer the account knows, and whose head's signature
/// verifies, takes a turn (`RelayHandlers.admit`), and only once its body has
/// arrived: a stranger naming an account cannot spend its turns, nor can a
/// device that sends its body slowly hold one.
struct AccountWork: Sendable {
    let turns: AccountTurns
    let wait: Duration
    let metrics: RelayMetrics

    init(metrics: RelayMetrics, perAccount: Int = 2, wait: Duration = .seconds(5)) {
        turns = AccountTurns(perAccount: perAccount)
        self.wait = wait
        self.metrics = metrics
    }

    func take(_ account: AccountID) async throws {
        metrics.turnWaits.increment()
        defer { metrics.turnWaits.decrement() }
        do {
            try await turns.take(account.rawValue, waitingAtMost: wait)
        } catch is DeadlineExceeded {
            throw Refusal.busy
        }
    }

    func give(_ account: AccountID) { turns.give(account.rawValue) }
}
