import Foundation
import Synchronization
import Testing
import KeyVaultRelay
import KeyVaultRelayStore

/// An account's turns (issue 33): a few of one account's requests at a time,
/// another account's at once, and a wait with a limit that leaves the queue
/// without a turn, or with one, never both.
@Suite("Account turns")
struct AccountTurnsTests {
    @Test("two turns held by one account: its third waits, another account's first is granted at once")
    func oneAccountWaitsAloneForItsTurns() async throws {
        let turns = AccountTurns(perAccount: 2)
        try await turns.take("heavy")
        try await turns.take("heavy")
        let third = Task { try await turns.take("heavy", waitingAtMost: .seconds(30)) }
        try await turns.take("other", waitingAtMost: .milliseconds(1))
        #expect(turns.holding("other") == 1)
        #expect(turns.holding("heavy") == 2)
        turns.give("heavy")
        try await third.value
        #expect(turns.holding("heavy") == 2)
        turns.give("heavy")
        turns.give("heavy")
        turns.give("other")
        #expect(turns.holding("heavy") == 0 && turns.holding("other") == 0)
    }

    @Test("a wait past its limit throws DeadlineExceeded and holds no turn")
    func waitPastItsLimit() async throws {
        let turns = AccountTurns(perAccount: 1)
        try await turns.take("a")
        await #expect(throws: DeadlineExceeded.self) { try await turns.take("a", waitingAtMost: .milliseconds(20)) }
        turns.give("a")
        #expect(turns.holding("a") == 0)
    }

    /// Limits that end while turns are being given: each waiter either took a turn (and gives it
    /// back) or left without one; at the end nobody holds any, so no turn leaked to a waiter that failed.
    @Test("400 waiters whose limits race with the turns given: no turn is lost or leaked")
    func limitsRacingGrants() async throws {
        let turns = AccountTurns(perAccount: 2)
        let granted = Tally(), timedOut = Tally()
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<400 {
                group.addTask {
                    do {
                        try await turns.take("a", waitingAtMost: .microseconds(50 * (i % 40)))
                        granted.add()
                        try? await Task.sleep(for: .microseconds(100))
                        turns.give("a")
                    } catch {
                        timedOut.add()
                    }
                }
            }
        }
        #expect(granted.value + timedOut.value == 400)
        #expect(granted.value >= 2)
        #expect(turns.holding("a") == 0)
        // Both turns are free: two takes succeed at once.
        try await turns.take("a", waitingAtMost: .milliseconds(1))
        try await turns.take("a", waitingAtMost: .milliseconds(1))
        #expect(turns.holding("a") == 2)
    }
}

private final class Tally: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
