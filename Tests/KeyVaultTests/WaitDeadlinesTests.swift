import Foundation
import Synchronization
import Testing
@testable import KeyVault
@testable import KeyVaultEngine
@testable import KeyVaultPolicy
import KeyVaultProtocol
import KeyVaultAccount

/// The hub's one timer for every wait: deadlines end their waits in order,
/// whatever order they were added in; a wait removed first never ends by it;
/// what early ends leave behind does not pile up.
@Suite("Wait deadlines")
struct WaitDeadlinesTests {
    let account = try! AccountID(validating: "deadlines")

    func waiter() -> WaitDeadlines.Waiter { .init(account: account, id: UUID()) }

    @Test("each deadline ends its wait, earliest first, an earlier one added later included; a removed wait is never ended")
    func endsInOrder() async throws {
        let deadlines = WaitDeadlines()
        let ended = Mutex<[(id: UUID, at: ContinuousClock.Instant)]>([])
        deadlines.onExpiry { waiter in ended.withLock { $0.append((waiter.id, ContinuousClock.now)) } }
        let late = waiter(), early = waiter(), removed = waiter(), last = waiter()
        let now = ContinuousClock.now
        let due = [late.id: now + .milliseconds(120), early.id: now + .milliseconds(30), last.id: now + .milliseconds(200)]
        deadlines.add(late, at: due[late.id]!)
        deadlines.add(removed, at: now + .milliseconds(60))
        deadlines.add(early, at: due[early.id]!)  // earlier than the timer already set
        deadlines.add(last, at: due[last.id]!)
        deadlines.remove(removed)
        #expect(deadlines.count == 3)

        let end = ContinuousClock.now + .seconds(10)
        while ended.withLock({ $0.count }) < 3, ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(100))
        let order = ended.withLock { $0 }
        #expect(order.map(\.id) == [early.id, late.id, last.id])
        for (id, at) in order { #expect(at >= due[id]!, "no wait ends before its deadline") }
        #expect(deadlines.count == 0)
    }

    /// A timer can wake in the moment a nearer deadline replaces it (its sleep ended before the cancel
    /// reached it): it ends what is due, but sets no timer beside its successor's, which stands for the
    /// earliest deadline now. Played here by calling the replaced timer's wake-up by hand.
    @Test("a timer that wakes as a nearer deadline replaces it sets no second timer")
    func replacedTimerSetsNoSecondChain() async throws {
        let deadlines = WaitDeadlines()
        let now = ContinuousClock.now
        deadlines.add(waiter(), at: now + .seconds(60))
        let first = try #require(deadlines.timers.current)
        deadlines.add(waiter(), at: now + .seconds(30))
        let second = try #require(deadlines.timers.current)
        #expect(second != first)
        deadlines.reached(timer: first)
        #expect(deadlines.timers.current == second, "the replaced timer's wake-up set a timer of its own")
        #expect(deadlines.timers.made == 2)
        #expect(deadlines.count == 2, "a wake-up before any deadline ended a wait")
        // The current timer's own wake-up (here before its deadline: nothing due) sets the next one.
        deadlines.reached(timer: second)
        #expect(deadlines.timers.made == 3)
        #expect(deadlines.count == 2)
    }

    @Test("10,000 waits ended early leave nothing behind, and the one left still ends at its deadline")
    func earlyEndsDoNotPileUp() async throws {
        let deadlines = WaitDeadlines()
        let ended = Mutex<[UUID]>([])
        deadlines.onExpiry { waiter in ended.withLock { $0.append(waiter.id) } }
        let now = ContinuousClock.now
        let abandoned = (0..<10_000).map { _ in waiter() }
        for (i, waiter) in abandoned.enumerated() { deadlines.add(waiter, at: now + .seconds(300) + .nanoseconds(i)) }
        let kept = waiter()
        deadlines.add(kept, at: .now + .seconds(2))
        for waiter in abandoned { deadlines.remove(waiter) }
        #expect(deadlines.count == 1)
        #expect(deadlines.queuedCount <= 2 * 1 + 64, "removed deadlines are compacted away")

        let end = ContinuousClock.now + .seconds(10)
        while ended.withLock({ $0.isEmpty }), ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(20)) }
        #expect(ended.withLock { $0 } == [kept.id])
        #expect(deadlines.count == 0)
    }
}
