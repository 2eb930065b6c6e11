import Synchronization
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient

/// One owner per account: every change to an account runs as one of its jobs,
/// one at a time, in the order they were queued, each to its end (vault
/// first, then memory) before the next begins. API calls, relay passes,
/// promotion timers and the follow-ups a job queues are all jobs; nothing
/// else writes an account's state (`KeyVaultService.update` checks). Readers
/// never wait here: they read the state the jobs publish.
///
/// A job's own steps may ask for the same account again (a rotation runs a
/// relay pass): that runs inline, as part of the job, never queued behind it.
final class AccountOwners: Sendable {
    /// The account whose job the current task is running, if any.
    @TaskLocal static var running: AccountID?

    private let queues = Mutex<[AccountID: JobQueue]>([:])

    /// Runs `body` as the account's next job (or inline, inside one of its jobs) and answers its result.
    func run<T: Sendable>(_ account: AccountID, _ body: () async throws -> T) async throws -> T {
        if Self.running == account { return try await body() }
        let queue = queue(for: account)
        let ticket = queue.take()
        await queue.wait(for: ticket)
        defer { queue.finish(ticket) }
        return try await Self.$running.withValue(account) { try await body() }
    }

    func run<T: Sendable>(_ account: AccountID, _ body: () async -> T) async -> T {
        if Self.running == account { return await body() }
        let queue = queue(for: account)
        let ticket = queue.take()
        await queue.wait(for: ticket)
        defer { queue.finish(ticket) }
        return await Self.$running.withValue(account) { await body() }
    }

    /// Queues a follow-up: its place is taken now (after every job queued so
    /// far, before any queued later), and nobody waits for it.
    func enqueue(_ account: AccountID, _ body: @escaping @Sendable () async -> Void) {
        let queue = queue(for: account)
        let ticket = queue.take()
        // Detached: a task-local "running" from the enqueuing job must not let it run inline.
        Task.detached {
            await queue.wait(for: ticket)
            await Self.$running.withValue(account) { await body() }
            queue.finish(ticket)
        }
    }

    private func queue(for account: AccountID) -> JobQueue {
        queues.withLock { queues in
            if let queue = queues[account] { return queue }
            let queue = JobQueue()
            queues[account] = queue
            return queue
        }
    }
}

/// A first-come, first-served line of tickets: `take` is synchronous, so a
/// place in line is fixed the moment it is asked for.
final class JobQueue: Sendable {
    private struct State {
        var next: UInt64 = 0
        var serving: UInt64 = 0
        var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    func take() -> UInt64 {
        state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
    }

    func wait(for ticket: UInt64) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.serving == ticket { return true }
                state.waiting[ticket] = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    func finish(_ ticket: UInt64) {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            precondition(state.serving == ticket, "a job finished out of turn")
            state.serving = ticket + 1
            return state.waiting.removeValue(forKey: ticket + 1)
        }
        next?.resume()
    }
}
