import Synchronization
import KeyVaultRelay

/// A fair share of the store's pool per account (issue 33, item 5): at most
/// `perAccount` operations of one account hold a connection at once; the rest of
/// that account's wait their turn here, in order, before asking the pool, so one
/// account's many heavy requests leave the other connections to other accounts.
/// A waiter whose task is cancelled (its deadline passed) leaves the queue.
package final class AccountTurns: Sendable {
    package let perAccount: Int

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
        /// What ends its wait at its limit, if it has one: cancelled once it is granted.
        var timer: Task<Void, Never>?
    }
    private struct State {
        var holding: [String: Int] = [:]
        var waiting: [String: [Waiter]] = [:]
        var nextID: UInt64 = 0
    }
    private let state = Mutex(State())

    package init(perAccount: Int) {
        precondition(perAccount > 0)
        self.perAccount = perAccount
    }

    /// Waits for one of the account's turns; throws `CancellationError` if cancelled first.
    package func take(_ account: String) async throws { try await take(account, waitingAtMost: nil) }

    /// The same, leaving the queue with `DeadlineExceeded` once `limit` passed without a turn.
    /// Decided under the one lock that grants turns, so a turn is never taken by a waiter that then fails.
    package func take(_ account: String, waitingAtMost limit: Duration?) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case granted, queued, cancelled }
                let outcome = state.withLock { state -> Outcome in
                    // Checked under the lock: a cancellation after it finds the waiter queued and removes it.
                    if Task.isCancelled { return .cancelled }
                    if state.holding[account, default: 0] < perAccount, state.waiting[account]?.isEmpty ?? true {
                        state.holding[account, default: 0] += 1
                        return .granted
                    }
                    state.waiting[account, default: []].append(Waiter(id: id, continuation: continuation))
                    return .queued
                }
                switch outcome {
                case .granted: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .queued:
                    guard let limit else { break }
                    let timer = Task { [self] in
                        guard (try? await Task.sleep(for: limit)) != nil else { return }
                        leave(account, id: id, with: DeadlineExceeded())
                    }
                    let waiting = state.withLock { state -> Bool in
                        guard let index = state.waiting[account]?.firstIndex(where: { $0.id == id }) else { return false }
                        state.waiting[account]?[index].timer = timer
                        return true
                    }
                    if !waiting { timer.cancel() }
                }
            }
        } onCancel: {
            leave(account, id: id, with: CancellationError())
        }
    }

    /// A waiter still in the queue leaves it with `error`; one already granted keeps its turn.
    private func leave(_ account: String, id: UInt64, with error: any Error) {
        let removed = state.withLock { state -> Waiter? in
            guard var queue = state.waiting[account], let index = queue.firstIndex(where: { $0.id == id }) else { return nil }
            let waiter = queue.remove(at: index)
            state.waiting[account] = queue.isEmpty ? nil : queue
            return waiter
        }
        removed?.timer?.cancel()
        removed?.continuation.resume(throwing: error)
    }

    /// Gives a turn back: the account's next waiter takes it.
    package func give(_ account: String) {
        let next = state.withLock { state -> Waiter? in
            if var queue = state.waiting[account], !queue.isEmpty {
                let waiter = queue.removeFirst()
                state.waiting[account] = queue.isEmpty ? nil : queue
                return waiter
            }
            let held = state.holding[account, default: 1] - 1
            state.holding[account] = held > 0 ? held : nil
            return nil
        }
        next?.timer?.cancel()
        next?.continuation.resume()
    }

    /// When an operation got its turn, if it did (before its deadline passed, or not).
    package final class Taken: Sendable {
        private let at: Mutex<ContinuousClock.Instant?>
        package init(at instant: ContinuousClock.Instant?) { at = Mutex(instant) }
        package func set() { at.withLock { $0 = .now } }
        package var instant: ContinuousClock.Instant? { at.withLock { $0 } }
    }

    /// How many of the account's operations hold a turn now (for tests).
    package func holding(_ account: String) -> Int { state.withLock { $0.holding[account] ?? 0 } }
}
