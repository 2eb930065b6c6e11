import Foundation
import Synchronization
package import KeyVaultRelay

/// What the relay's operations and its listener share: the `wakeups()`
/// subscribers and whether the server answers.
package final class PostgresRelayState: Sendable {
    private struct State {
        var subscribers: [UUID: AsyncStream<RelayWake>.Continuation] = [:]
        var unreachableSince: Date?
        var lastProblem: String?
        /// When an operation last got an answer from the server (a row, or an error of its own).
        var lastAnswer: ContinuousClock.Instant?
        var finished = false
    }
    private let state = Mutex(State())

    package init() {}

    var unreachableSince: Date? { state.withLock { $0.unreachableSince } }
    package var lastProblem: String? { state.withLock { $0.lastProblem } }

    package func reached() {
        state.withLock {
            $0.unreachableSince = nil
            $0.lastProblem = nil
            $0.lastAnswer = .now
        }
    }

    /// Whether any operation got an answer from the server after `instant`.
    package func answered(since instant: ContinuousClock.Instant) -> Bool {
        state.withLock { $0.lastAnswer.map { $0 > instant } ?? false }
    }

    /// The store failed, showing `why`: the latest problem only, never nesting the one before,
    /// and at most `maxProblem` characters however long the server's message.
    package func failed(_ why: String) {
        let why = Self.bounded(why)
        state.withLock {
            if $0.unreachableSince == nil { $0.unreachableSince = Date() }
            $0.lastProblem = why
        }
    }

    /// An operation got no answer in time: unreachable since now, the last problem shown kept as it was.
    package func timedOut() {
        state.withLock {
            if $0.unreachableSince == nil { $0.unreachableSince = Date() }
        }
    }

    package static let maxProblem = 300

    /// `why` cut to `maxProblem` characters, saying it was.
    package static func bounded(_ why: String) -> String {
        guard why.count > maxProblem else { return why }
        return String(why.prefix(maxProblem - 1)) + "…"
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
