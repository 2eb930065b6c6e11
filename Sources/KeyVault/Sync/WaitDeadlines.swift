import Foundation
import HeapModule
import NIOCore
import Synchronization
import KeyVaultProtocol

/// When the hub's waits run out: one event-loop timer, for the earliest
/// deadline, stands for all of them. A wait that ends early (a key arrived,
/// its client went away) only leaves the table. Had each wait its own NIO
/// timer, cancelling one would search the loop's whole timer heap for it:
/// 10,000 waits ended together were 10,000 searches of 10,000 entries.
final class WaitDeadlines: Sendable {
    struct Waiter: Hashable, Sendable {
        let account: AccountID
        let id: UUID
    }

    private struct Due: Comparable {
        let deadline: NIODeadline
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
        var timer: (at: NIODeadline, scheduled: Scheduled<Void>)?
    }

    private let loop: any EventLoop
    private let expired = Mutex<(@Sendable (Waiter) -> Void)?>(nil)
    private let state = Mutex(State())

    init(on loop: any EventLoop) {
        self.loop = loop
    }

    /// What ends a wait whose deadline has passed (set once, by the hub that owns it).
    func onExpiry(_ handler: @escaping @Sendable (Waiter) -> Void) {
        expired.withLock { $0 = handler }
    }

    /// Ends `waiter` at `deadline` unless it is removed first.
    func add(_ waiter: Waiter, at deadline: NIODeadline) {
        let replaced = state.withLock { state -> Scheduled<Void>? in
            state.live.insert(waiter)
            state.queue.insert(Due(deadline: deadline, waiter: waiter))
            guard state.timer.map({ deadline < $0.at }) ?? true else { return nil }
            let replaced = state.timer?.scheduled
            state.timer = (deadline, schedule(at: deadline))
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

    private func schedule(at deadline: NIODeadline) -> Scheduled<Void> {
        loop.scheduleTask(deadline: deadline) { [weak self] in self?.reached() }
    }

    /// The timer went off: every wait whose deadline has passed ends; the timer is set for the next.
    private func reached() {
        let ended = state.withLock { state -> [Waiter] in
            let now = NIODeadline.now()
            var ended: [Waiter] = []
            while let first = state.queue.min, first.deadline <= now || !state.live.contains(first.waiter) {
                state.queue.removeMin()
                if state.live.remove(first.waiter) != nil { ended.append(first.waiter) }
            }
            state.timer = state.queue.min.map { ($0.deadline, schedule(at: $0.deadline)) }
            return ended
        }
        guard !ended.isEmpty, let expired = expired.withLock({ $0 }) else { return }
        for waiter in ended { expired(waiter) }
    }
}
