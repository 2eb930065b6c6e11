import Synchronization

/// While the store fails, one request at a time, at most one a second, goes
/// through to it to find out whether it is back; the others are answered
/// `unavailable` at once instead of each waiting out the store's own deadline
/// (5 s). A device then fails over, or queues its work, without waiting.
/// Its state and each time it opens are in the metrics.
final class StoreBreaker: Sendable {
    static let probeInterval: Duration = .seconds(1)

    private struct State {
        var failing = false
        var probing = false
        var lastFailure: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    private let metrics: RelayMetrics

    init(metrics: RelayMetrics) {
        self.metrics = metrics
    }

    /// Whether a request may go to the store now.
    func admit(now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            guard state.failing else { return true }
            guard !state.probing, state.lastFailure.map({ now - $0 >= Self.probeInterval }) ?? true else { return false }
            state.probing = true
            return true
        }
    }

    /// The store answered (a refusal of its own, like a taken log number, is an answer).
    func reached() {
        state.withLock { state in
            state = State()
            // Under the lock, so the gauge ends as the last change left the breaker.
            metrics.breakerOpen.set(to: 0)
        }
    }

    func failed(now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            if !state.failing { metrics.breakerTrips.increment() }
            state.failing = true
            state.probing = false
            state.lastFailure = now
            metrics.breakerOpen.set(to: 1)
        }
    }

    /// A probe that ended without an answer either way (its request was cancelled).
    func abandoned() {
        state.withLock { $0.probing = false }
    }
}
