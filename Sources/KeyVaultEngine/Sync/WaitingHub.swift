package import Foundation
import KeyVaultPolicy
import Synchronization
package import KeyVaultProtocol
package import KeyVaultAccount

/// Where key reads wait and event streams listen, each on its account's owner
/// (`AccountWaiters`): no account's waits share a lock with another's. A
/// waiter registers before it checks, so a change between its check and its
/// wait is never lost. Waiters are woken in one place only: when an account's
/// owner publishes a state whose read model changed (`KeyVaultService.didPublish`).
package final class WaitingHub: Sendable {
    private let owners: AccountOwners

    /// When the waits run out: one timer for all of them, so a wait that ends
    /// early (a wake-up, a client gone) runs nothing and searches nothing.
    private let deadlines = WaitDeadlines()

    package init(owners: AccountOwners) {
        self.owners = owners
        deadlines.onExpiry { [weak self] in self?.fire($0.account, $0.id) }
    }

    /// Step 1: arm a waiter before checking the state.
    package func arm(_ account: AccountID) -> UUID {
        // An account this device does not hold has nothing to wake it: its read is answered at once.
        owners.holding(account)?.waiters.arm() ?? UUID()
    }

    /// Step 2: wait until the account's read model changes or `deadline` passes. Answers the
    /// state the change published, while nothing else has been published since: the read's
    /// answer is worked out from it, with no new slot and no second read. nil: decide again.
    package func wait(_ account: AccountID, _ id: UUID, until deadline: ContinuousClock.Instant) async -> AccountState? {
        guard let owner = owners.existing(account) else { return nil }
        let waiter = WaitDeadlines.Waiter(account: account, id: id)
        deadlines.add(waiter, at: deadline)
        let wake = await owner.waiters.wait(id)
        deadlines.remove(waiter)
        guard let wake, owner.isCurrent(wake.version) else { return nil }
        return wake.state
    }

    package func disarm(_ account: AccountID, _ id: UUID) {
        owners.existing(account)?.waiters.disarm(id)
    }

    /// Ends one waiter's wait now (its timer ran out, or its request ended).
    package func fire(_ account: AccountID, _ id: UUID) {
        owners.existing(account)?.waiters.fire(id)
    }

    /// Tells the account's event streams; wakes no read.
    func announce(_ account: AccountID, _ event: AccountEvent) {
        owners.holding(account)?.waiters.announce(event)
    }

    /// Waiters armed or waiting, and event listeners, across all accounts (`GET /v1/server`).
    package var counts: (waiters: Int, listeners: Int) {
        owners.held.reduce((0, 0)) { total, owner in
            let counts = owner.waiters.counts
            return (total.0 + counts.waiters, total.1 + counts.listeners)
        }
    }

    /// The account's events until the stream is dropped, after those a
    /// resuming stream missed (`Last-Event-ID`; see `EventBacklog`).
    package func events(_ account: AccountID, after lastEventID: String?) -> AsyncStream<NumberedEvent> {
        owners.withOwner(account) { $0.waiters.listen(after: lastEventID) }
    }
}

/// The reads waiting on one account, and its event streams.
final class AccountWaiters: Sendable {
    /// What a publish wakes a read with: the state, and the publish's number.
    struct Wake: Sendable {
        let state: AccountState
        let version: UInt64
    }

    /// A slot fired before its read waited keeps the wake (nil: a deadline, an end) for it.
    private enum Slot {
        case armed
        case waiting(CheckedContinuation<Wake?, Never>)
        case fired(Wake?)
    }

    private let slots = Mutex<[UUID: Slot]>([:])
    /// The backlog and the listeners share one lock: a listener is registered
    /// and given what it missed in one step, so no event falls between the two.
    private struct Streams {
        var backlog = EventBacklog()
        var listeners: [UUID: AsyncStream<NumberedEvent>.Continuation] = [:]
    }

    private let streams = Mutex(Streams())

    package func arm() -> UUID {
        let id = UUID()
        slots.withLock { $0[id] = .armed }
        return id
    }

    package func wait(_ id: UUID) async -> Wake? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Wake?, Never>) in
            let resumeNow = slots.withLock { slots -> Wake?? in
                switch slots[id] {
                case .armed:
                    slots[id] = .waiting(continuation)
                    return .none
                case .fired(let wake):
                    slots[id] = nil
                    return .some(wake)
                case .waiting, nil:
                    slots[id] = nil
                    return .some(nil)
                }
            }
            if case .some(let wake) = resumeNow { continuation.resume(returning: wake) }
        }
    }

    package func disarm(_ id: UUID) {
        slots.withLock { _ = $0.removeValue(forKey: id) }
    }

    package func fire(_ id: UUID) {
        let continuation = slots.withLock { slots -> CheckedContinuation<Wake?, Never>? in
            switch slots[id] {
            case .waiting(let c):
                slots[id] = nil
                return c
            case .armed:
                slots[id] = .fired(nil)
                return nil
            case .fired, nil:
                return nil
            }
        }
        continuation?.resume(returning: nil)
    }

    /// Every waiter is answered from `wake` (or decides again, if another publish follows it).
    /// Called only by `KeyVaultService.didPublish`.
    func wakeAll(with wake: Wake?) {
        let continuations = slots.withLock { slots -> [CheckedContinuation<Wake?, Never>] in
            var out: [CheckedContinuation<Wake?, Never>] = []
            for (id, slot) in slots {
                switch slot {
                case .waiting(let c):
                    out.append(c)
                    slots[id] = nil
                case .armed, .fired:
                    // Not waiting yet: it takes the latest wake when it does.
                    slots[id] = .fired(wake)
                }
            }
            return out
        }
        for c in continuations { c.resume(returning: wake) }
    }

    func announce(_ event: AccountEvent) {
        streams.withLock { streams in
            let numbered = streams.backlog.append(event)
            for listener in streams.listeners.values { listener.yield(numbered) }
        }
    }

    func listen(after lastEventID: String?) -> AsyncStream<NumberedEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<NumberedEvent>.makeStream(bufferingPolicy: .bufferingNewest(EventBacklog.capacity))
        continuation.onTermination = { [weak self] _ in _ = self?.streams.withLock { $0.listeners.removeValue(forKey: id) } }
        streams.withLock { streams in
            for missed in streams.backlog.replay(after: lastEventID) { continuation.yield(missed) }
            streams.listeners[id] = continuation
        }
        return stream
    }

    package var counts: (waiters: Int, listeners: Int) {
        (slots.withLock { $0.count }, streams.withLock { $0.listeners.count })
    }

    /// No read waits and no stream listens.
    var isIdle: Bool { counts == (0, 0) }
}
