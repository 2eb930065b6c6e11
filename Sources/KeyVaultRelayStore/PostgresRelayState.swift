import Foundation
import Synchronization
import KeyVaultCrypto
import KeyVaultProtocol
package import KeyVaultRelay

/// What the relay's operations and its listener share: the `wakeups()`
/// subscribers and whether the server answers.
package final class PostgresRelayState: Sendable {
    private struct State {
        var subscribers: [UUID: AsyncStream<RelayWake>.Continuation] = [:]
        var unreachableSince: Date?
        var lastProblem: String?
        var finished = false
    }
    private let state = Mutex(State())

    var unreachableSince: Date? { state.withLock { $0.unreachableSince } }
    package var lastProblem: String? { state.withLock { $0.lastProblem } }

    package func reached() {
        state.withLock {
            $0.unreachableSince = nil
            $0.lastProblem = nil
        }
    }

    package func failed(_ why: String) {
        state.withLock {
            if $0.unreachableSince == nil { $0.unreachableSince = Date() }
            $0.lastProblem = why
        }
    }

    package func ring(_ wake: RelayWake) {
        state.withLock { for continuation in $0.subscribers.values { continuation.yield(wake) } }
    }

    /// Unbounded: each wake-up names an account, and none may be dropped (they are small, and read at once).
    package func subscribe() -> AsyncStream<RelayWake> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<RelayWake>.makeStream(bufferingPolicy: .unbounded)
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) } }
        let finished = state.withLock { state -> Bool in
            if !state.finished { state.subscribers[id] = continuation }
            return state.finished
        }
        if finished { continuation.finish() }
        return stream
    }

    /// At shutdown: every stream ends.
    package func finishAll() {
        let all = state.withLock { state -> [AsyncStream<RelayWake>.Continuation] in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        all.forEach { $0.finish() }
    }
}
