import Foundation
import NIOCore
import NIOPosix
import Synchronization
import KeyVaultCrypto
package import KeyVaultProtocol
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient

/// Where key reads wait and event streams listen. A wake-up for an account
/// resumes every waiter on it at once: one wake-up per change, not one poll
/// per waiter. A waiter registers before it checks, so a change between its
/// check and its wait is never lost.
package final class WaitingHub: Sendable {
    private enum Slot {
        case armed
        case waiting(CheckedContinuation<Void, Never>)
        case fired
    }

    private let slots = Mutex<[AccountID: [UUID: Slot]]>([:])
    private let listeners = Mutex<[AccountID: [UUID: AsyncStream<AccountEvent>.Continuation]]>([:])

    /// Step 1: arm a waiter before checking the state.
    func arm(_ account: AccountID) -> UUID {
        let id = UUID()
        slots.withLock { $0[account, default: [:]][id] = .armed }
        return id
    }

    /// When the waits run out: one timer on an event loop for all of them, so a
    /// wait that ends early (a wake-up, a client gone) runs nothing and searches nothing.
    private let deadlines = WaitDeadlines(on: MultiThreadedEventLoopGroup.singleton.next())

    package init() {
        deadlines.onExpiry { [weak self] in self?.fire($0.account, $0.id) }
    }

    /// Step 2: wait until the account changes or `deadline` passes.
    func wait(_ account: AccountID, _ id: UUID, until deadline: ContinuousClock.Instant) async {
        let waiter = WaitDeadlines.Waiter(account: account, id: id)
        deadlines.add(waiter, at: .now() + TimeAmount(deadline - .now))
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = slots.withLock { slots -> Bool in
                guard case .armed = slots[account]?[id] else {
                    slots[account]?[id] = nil
                    return true
                }
                slots[account]?[id] = .waiting(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        deadlines.remove(waiter)
    }

    func disarm(_ account: AccountID, _ id: UUID) {
        slots.withLock { _ = $0[account]?.removeValue(forKey: id) }
    }

    /// Ends one waiter's wait now (its timer ran out, or its request ended).
    func fire(_ account: AccountID, _ id: UUID) {
        let continuation = slots.withLock { slots -> CheckedContinuation<Void, Never>? in
            switch slots[account]?[id] {
            case .waiting(let c):
                slots[account]?[id] = nil
                return c
            case .armed:
                slots[account]?[id] = .fired
                return nil
            case .fired, nil:
                return nil
            }
        }
        continuation?.resume()
    }

    /// Something about the account changed: wake every waiter, tell every listener.
    func wake(_ account: AccountID, _ event: AccountEvent?) {
        let continuations = slots.withLock { slots -> [CheckedContinuation<Void, Never>] in
            var out: [CheckedContinuation<Void, Never>] = []
            for (id, slot) in slots[account] ?? [:] {
                switch slot {
                case .waiting(let c):
                    out.append(c)
                    slots[account]?[id] = nil
                case .armed:
                    slots[account]?[id] = .fired
                case .fired:
                    break
                }
            }
            return out
        }
        for c in continuations { c.resume() }
        if let event {
            listeners.withLock { for listener in ($0[account] ?? [:]).values { listener.yield(event) } }
        }
    }

    /// Waiters armed or waiting, and event listeners, across all accounts (`GET /v1/server`).
    var counts: (waiters: Int, listeners: Int) {
        let waiters = slots.withLock { $0.values.reduce(0) { $0 + $1.count } }
        let listeners = listeners.withLock { $0.values.reduce(0) { $0 + $1.count } }
        return (waiters, listeners)
    }

    /// The account's events until the stream is dropped.
    package func events(_ account: AccountID) -> AsyncStream<AccountEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<AccountEvent>.makeStream(bufferingPolicy: .bufferingNewest(64))
        continuation.onTermination = { [weak self] _ in
            _ = self?.listeners.withLock { $0[account]?.removeValue(forKey: id) }
        }
        listeners.withLock { $0[account, default: [:]][id] = continuation }
        return stream
    }
}
