import Foundation
import Synchronization
import KeyVaultProtocol

/// An account's timers (a promotion's deadline), kept by its owner so that a
/// shutdown cancels them instead of leaving them to outlive the relay. What a
/// timer does when it fires is one of the account's jobs.
final class AccountTimers: Sendable {
    private struct Timer {
        var token: UUID
        var task: Task<Void, Never>
    }
    private let timers = Mutex<[KeyID: Timer]>([:])

    /// Starts `body` after `delay` of `clock`'s time, replacing (and cancelling) a timer set for the same key.
    func set(_ keyID: KeyID, after delay: Duration, on clock: any EngineClock, _ body: @escaping @Sendable () async -> Void) {
        let token = UUID()
        // Started and recorded under one lock: a timer that ends at once still finds
        // itself recorded, and removes its entry instead of leaving it behind.
        let replaced = timers.withLock { timers in
            let task = Task.detached { [weak self] in
                if delay > .zero { try? await clock.sleep(for: delay) }
                guard !Task.isCancelled else { return }
                await body()
                self?.timers.withLock { timers in
                    if timers[keyID]?.token == token { timers[keyID] = nil }
                }
            }
            return timers.updateValue(Timer(token: token, task: task), forKey: keyID)
        }
        replaced?.task.cancel()
    }

    /// No timer set.
    var isEmpty: Bool { timers.withLock { $0.isEmpty } }

    func cancelAll() {
        let all = timers.withLock { timers in
            defer { timers = [:] }
            return Array(timers.values)
        }
        for timer in all { timer.task.cancel() }
    }
}
