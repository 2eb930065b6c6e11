public import Foundation
import Synchronization
import KeyVaultCrypto
public import KeyVaultProtocol

/// A relay opened when it first can be: the daemon starts and serves its vault
/// even when the relay cannot be opened yet (a volume not mounted, a server
/// that is down). Until it opens, every call fails as `unreachable` and is
/// tried again by the caller's back-off; wake-ups begin once it is open.
///
/// While it is unreachable, calls fail at once for a cool-down (500 ms,
/// doubling to 5 s) instead of each waiting out a connection timeout; a
/// wake-up from the relay (its listener is back) ends the cool-down.
public final class ReopeningRelay: Relay {
    private let address: RelayAddress
    private let opener: @Sendable (RelayAddress) async throws -> any Relay
    private struct State {
        var relay: (any Relay)?
        /// Wake-up streams handed out before the relay opened.
        var waiting: [AsyncStream<RelayWake>.Continuation] = []
        var coolDownUntil: ContinuousClock.Instant?
        var coolDown: Duration = .milliseconds(500)
        var lastFailure: RelayError?
    }
    private let state = Mutex(State())
    private static let longestCoolDown: Duration = .seconds(5)

    public init(address: RelayAddress, opener: @escaping @Sendable (RelayAddress) async throws -> any Relay) {
        self.address = address
        self.opener = opener
    }

    /// The relay, opening it if it is not yet.
    private func relay() async throws -> any Relay {
        if let relay = state.withLock({ $0.relay }) { return relay }
        let opened: any Relay
        do {
            opened = try await opener(address)
        } catch let error as RelayError {
            throw error
        } catch {
            throw RelayError.unreachable("\(error)")
        }
        let (relay, waiting) = state.withLock { state -> (any Relay, [AsyncStream<RelayWake>.Continuation]) in
            // Two callers may open at once: the first one kept wins.
            if let relay = state.relay { return (relay, []) }
            state.relay = opened
            defer { state.waiting = [] }
            return (opened, state.waiting)
        }
        for continuation in waiting { forward(relay.wakeups(), to: continuation) }
        return relay
    }

    public func publish(_ record: RelayRecord) async throws { try await guarded { try await $0.publish(record) } }
    public func publish(batch records: [RelayRecord]) async throws { try await guarded { try await $0.publish(batch: records) } }
    public func rows(account: AccountID, after cursor: Int64, limit: Int) async throws -> [RelayRow] {
        try await guarded { try await $0.rows(account: account, after: cursor, limit: limit) }
    }
    public func rows(after cursor: Int64, limit: Int) async throws -> [RelayRow] { try await guarded { try await $0.rows(after: cursor, limit: limit) } }

    private func guarded<T: Sendable>(_ operation: (any Relay) async throws -> T) async throws -> T {
        if let failure = state.withLock({ state -> RelayError? in
            guard let until = state.coolDownUntil, ContinuousClock.now < until else { return nil }
            return state.lastFailure
        }) {
            throw failure
        }
        do {
            let result = try await operation(try await relay())
            state.withLock { state in
                state.coolDownUntil = nil
                state.coolDown = .milliseconds(500)
            }
            return result
        } catch let error as RelayError {
            if case .unreachable = error {
                state.withLock { state in
                    state.lastFailure = error
                    state.coolDownUntil = ContinuousClock.now + state.coolDown
                    state.coolDown = min(state.coolDown * 2, Self.longestCoolDown)
                }
            }
            throw error
        }
    }

    /// The relay spoke: whatever kept it away is over.
    private func endCoolDown() {
        state.withLock { state in
            state.coolDownUntil = nil
            state.coolDown = .milliseconds(500)
        }
    }

    public var unreachableSince: Date? { state.withLock { $0.relay }?.unreachableSince }

    public func shutdown() async {
        let (relay, waiting) = state.withLock { ($0.relay, $0.waiting) }
        for continuation in waiting { continuation.finish() }
        await relay?.shutdown()
    }

    public func wakeups() -> AsyncStream<RelayWake> {
        let (stream, continuation) = AsyncStream.makeStream(of: RelayWake.self, bufferingPolicy: .unbounded)
        if let relay = state.withLock({ state -> (any Relay)? in
            if state.relay == nil { state.waiting.append(continuation) }
            return state.relay
        }) {
            forward(relay.wakeups(), to: continuation)
        }
        return stream
    }

    private func forward(_ source: AsyncStream<RelayWake>, to continuation: AsyncStream<RelayWake>.Continuation) {
        // Opening is itself news: what landed meanwhile is to be read.
        continuation.yield(.any)
        let task = Task { [weak self] in
            for await wake in source {
                self?.endCoolDown()
                continuation.yield(wake)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}
