package import KeyVaultProtocol

/// After the relay did not answer, calls fail at once for a while (500 ms,
/// doubling to 5 s) with the failure that started it, rather than each waiting
/// out a connection or service timeout; any answer ends it. A pure value: the
/// relay that holds it keeps it under its own lock.
package struct RelayCoolDown: Sendable {
    package static let first: Duration = .milliseconds(500)
    package static let longest: Duration = .seconds(5)

    private var until: ContinuousClock.Instant?
    private var next = Self.first
    private var failure: RelayError?

    package init() {}

    /// The failure to answer with at once, while cooling down.
    package func active(at now: ContinuousClock.Instant = .now) -> RelayError? {
        guard let until, now < until else { return nil }
        return failure
    }

    package mutating func failed(_ failure: RelayError, at now: ContinuousClock.Instant = .now) {
        self.failure = failure
        until = now + next
        next = min(next * 2, Self.longest)
    }

    /// The relay answered: whatever kept it away is over.
    package mutating func answered() {
        until = nil
        next = Self.first
    }
}
