import Foundation
import Synchronization
import KeyVaultCrypto

/// Argon2id takes its cost in time and memory; each run has a thread of its own
/// (at most one run per core is under way, so at most that many threads), so it
/// never stalls the event loops or the cooperative pool, and the memory in use
/// at once is bounded.
///
/// Runs are taken in turn between callers (the uid a request came from,
/// `KDFRunner.caller`), not in arrival order: one uid with many unlocks,
/// passphrase changes or kit imports in flight delays another caller's by at
/// most the one run each core has under way (issue 32).
package enum KDFRunner {
    /// Who is asking, for fairness: set by the socket API for each request (its peer's uid).
    @TaskLocal package static var caller: UInt32?

    static let turns = FairTurns(slots: ProcessInfo.processInfo.activeProcessorCount)

    static func deriveKEK(passphrase: SecureBytes, salt: [UInt8], parameters: KDFParameters) async throws -> SecretKey {
        try await run { try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters) }
    }

    /// Runs `body` on a thread of its own when its caller's turn comes.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let caller = Self.caller ?? UInt32.max
        await turns.enter(caller)
        defer { turns.leave() }
        return try await OwnThread.run(body)
    }
}

/// At most `slots` holders at once; waiting callers are served round-robin, each
/// caller's own waiters first come, first served. A pure lock-protected queue: no
/// task is started for a waiter.
package final class FairTurns: Sendable {
    private struct State {
        var running = 0
        /// Each caller's waiting continuations, oldest first.
        var waiting: [UInt32: [CheckedContinuation<Void, Never>]] = [:]
        /// Callers with waiters, in the order their next turn comes.
        var order: [UInt32] = []
    }
    private let state = Mutex(State())
    package let slots: Int

    package init(slots: Int) { self.slots = max(1, slots) }

    package func enter(_ caller: UInt32) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.running < slots && state.order.isEmpty {
                    state.running += 1
                    return true
                }
                if state.waiting[caller, default: []].isEmpty { state.order.append(caller) }
                state.waiting[caller, default: []].append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    package func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.order.isEmpty else {
                state.running -= 1
                return nil
            }
            // The slot passes to the caller whose turn is next; it goes to the back of the line.
            let caller = state.order.removeFirst()
            let continuation = state.waiting[caller]!.removeFirst()
            if state.waiting[caller]!.isEmpty { state.waiting[caller] = nil } else { state.order.append(caller) }
            return continuation
        }
        next?.resume()
    }
}
