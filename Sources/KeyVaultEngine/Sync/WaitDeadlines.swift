import Foundation
import HeapModule
import Synchronization
import KeyVaultProtocol

/// When the hub's waits run out: one timer (a task asleep until the earliest
/// deadline) stands for all of them. A wait that ends early (a key arrived,
/// its client went away) only leaves the table. Had each wait its own timer,
/// 10,000 waits ended together would be 10,000 timers to cancel.
final class WaitDeadlines: Sendable {
    struct Waiter: Hashable, Sendable {
        let account: AccountID
        package let id: UUID
    }

    private struct Due: Comparable {
        let deadline: ContinuousClock.Instant
        let waiter: Waiter

        static func < (a: Due, b: Due) -> Bool { a.deadline < b.deadline }
    }

    private struct State {
        /// Waits not yet ended.
        var live: Set<Waiter> = []
        /// Every deadline added; one whose wait ended early stays until it is
        /// reached or the heap is compacted (past twice the live count).
        var queue = Heap<Due>()
        /// The timer for the earliest deadline, if one is set.
        var timer: (at: ContinuousClock.Instant, task: Task<Void, Never>, id: UInt64)?
        /// Numbers the timers, so a timer that woke as it was replaced does not set another beside its successor.
        var timersMade: UInt64 = 0
    }

    private let expired = Mutex<(@Sendable (Waiter) -> Void)?>(nil)
    private let state = Mutex(State())

    init() {}

    /// What ends a wait whose deadline has passed (set once, by the hub that owns it).
    func onExpiry(_ handler: @escaping @Sendable (Waiter) -> Void) {
        expired.withLock { $0 = handler }
    }

    /// Ends `waiter` at `deadline` unless it is removed first.
    func add(_ waiter: Waiter, at deadline: ContinuousClock.Instant) {
        let replaced = state.withLock { state -> Task<Void, Never>? in
            state.live.insert(waiter)
            state.queue.insert(Due(deadline: deadline, waiter: waiter))
            guard state.timer.map({ deadline < $0.at }) ?? true else { return nil }
            let replaced = state.timer?.task
            state.timer = schedule(at: deadline, &state)
            return replaced
        }
        replaced?.cancel()
    }

    /// The wait ended before its deadline.
    func remove(_ waiter: Waiter) {
        state.withLock { state in
            guard state.live.remove(waiter) != nil else { return }
            if state.queue.count > 2 * state.live.count + 64 {
                let live = state.live
                state.queue.removeAll { !live.contains($0.waiter) }
            }
        }
    }

    /// How many waits it holds a deadline for.
    var count: Int { state.withLock { $0.live.count } }

    /// Deadlines kept, those of waits ended early included.
    var queuedCount: Int { state.withLock { $0.queue.count } }

    /// The number of the timer set now, and how many were ever made.
    var timers: (current: UInt64?, made: UInt64) { state.withLock { ($0.timer?.id, $0.timersMade) } }

    /// A task asleep until `deadline`; cancelled, it ends without a look at the table.
    private func schedule(at deadline: ContinuousClock.Instant, _ state: inout State) -> (at: ContinuousClock.Instant, task: Task<Void, Never>, id: UInt64) {
        state.timersMade += 1
        let id = state.timersMade
        let task = Task { [weak self] in
            guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
            self?.reached(timer: id)
        }
        return (deadline, task, id)
    }

    /// The timer went off: every wait whose deadline has passed ends; the timer is set for the next,
    /// unless another timer replaced this one meanwhile (it stands for the earliest deadline then).
    func reached(timer id: UInt64) {
        let ended = state.withLock { state -> [Waiter] in
            let now = ContinuousClock.now
            var ended: [Waiter] = []
            while let first = state.queue.min, first.deadline <= now || !state.live.contains(first.waiter) {
                state.queue.removeMin()
                if state.live.remove(first.waiter) != nil { ended.append(first.waiter) }
            }
            if state.timer?.id == id {
                state.timer = nil
                if let next = state.queue.min { state.timer = schedule(at: next.deadline, &state) }
            }
            return ended
        }
        guard !ended.isEmpty, let expired = expired.withLock({ $0 }) else { return }
        for waiter in ended { expired(waiter) }
    }
}
