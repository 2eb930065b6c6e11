package import Foundation
import Synchronization
package import KeyVaultProtocol

/// A relay opened when it first can be, and opened again after it fails:
/// the daemon starts and serves its vault even when the relay cannot be opened
/// yet (a volume not mounted, a folder not writable yet, a server that is
/// down). Until it opens, every call fails as `unreachable` and is tried again
/// by the caller's back-off; wake-ups begin once it is open.
///
/// An embedded relay (a file) that fails is dropped and opened afresh at the
/// next call: a handle opened read-only, or on a file since deleted or
/// replaced, never recovers by itself. Every opening is announced on the
/// wake-ups as `.opened`, so the daemon checks that the store still holds
/// what it knows it held. A PostgreSQL relay keeps its handle: its pool
/// reconnects by itself.
///
/// While it is unreachable, calls fail at once for a cool-down (500 ms,
/// doubling to 5 s) instead of each waiting out a connection timeout; a
/// wake-up from the relay (its listener is back) ends the cool-down.
package final class ReopeningRelay: Relay {
    private let address: RelayAddress
    private let opener: @Sendable (RelayAddress) async throws -> any Relay
    private struct State {
        var relay: (any Relay)?
        /// Every wake-up stream handed out, fed from whichever relay is open.
        var subscribers: [UUID: AsyncStream<RelayWake>.Continuation] = [:]
        /// The tasks feeding them from the open relay (replaced at a reopening).
        var feeds: [UUID: Task<Void, Never>] = [:]
        var coolDown = RelayCoolDown()
    }
    private let state = Mutex(State())
    /// Whether a failed handle is dropped and opened again (a file: yes).
    private var reopensAfterFailure: Bool {
        if case .sqlite = address { return true }
        return false
    }

    package init(address: RelayAddress, opener: @escaping @Sendable (RelayAddress) async throws -> any Relay) {
        self.address = address
        self.opener = opener
    }

    /// The relay, opening it if it is not open.
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
        let kept = state.withLock { state -> (any Relay)? in
            // Two callers may open at once: the first one kept wins.
            if let relay = state.relay { return relay }
            state.relay = opened
            for task in state.feeds.values { task.cancel() }
            state.feeds = [:]
            for (id, continuation) in state.subscribers { state.feeds[id] = feed(opened, to: continuation) }
            return nil
        }
        return kept ?? opened
    }

    /// Drops a handle that failed, so the next call opens the store again.
    private func drop(_ failed: any Relay) async {
        guard reopensAfterFailure else { return }
        let dropped = state.withLock { state -> Bool in
            guard let relay = state.relay, relay as AnyObject === failed as AnyObject else { return false }
            state.relay = nil
            return true
        }
        // Its connections closed: SQLite shares what it knows of a file among a process's handles.
        if dropped { await failed.shutdown() }
    }

    package func publish(_ record: RelayRecord) async throws { try await guarded { try await $0.publish(record) } }
    package func publish(batch records: [RelayRecord]) async throws { try await guarded { try await $0.publish(batch: records) } }
    package func rows(account: AccountID, after cursor: RelayCursor, limit: Int) async throws -> [RelayRow] {
        try await guarded { try await $0.rows(account: account, after: cursor, limit: limit) }
    }
    package func rows(after cursor: RelayCursor, limit: Int) async throws -> [RelayRow] { try await guarded { try await $0.rows(after: cursor, limit: limit) } }
    package func lastCursor() async throws -> RelayCursor? { try await guarded { try await $0.lastCursor() } }

    private func guarded<T: Sendable>(_ operation: (any Relay) async throws -> T) async throws -> T {
        if let failure = state.withLock({ $0.coolDown.active() }) { throw failure }
        let relay = try await relay()
        do {
            let result = try await operation(relay)
            endCoolDown()
            return result
        } catch RelayError.logSeqTaken(let seq) {
            endCoolDown()
            throw RelayError.logSeqTaken(seq)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // Whatever else the store threw (a read-only file, a disk error, a file replaced) is the
            // relay being away: said as such, and a file is opened afresh next time.
            let failure = (error as? RelayError) ?? RelayError.unreachable("\(error)")
            await drop(relay)
            state.withLock { $0.coolDown.failed(failure) }
            throw failure
        }
    }

    /// The relay spoke: whatever kept it away is over.
    private func endCoolDown() {
        state.withLock { $0.coolDown.answered() }
    }

    package var unreachableSince: Date? { state.withLock { $0.relay }?.unreachableSince }

    package func shutdown() async {
        let (relay, subscribers, feeds) = state.withLock { ($0.relay, $0.subscribers, $0.feeds) }
        for task in feeds.values { task.cancel() }
        for continuation in subscribers.values { continuation.finish() }
        await relay?.shutdown()
    }

    package func wakeups() -> AsyncStream<RelayWake> {
        let (stream, continuation) = AsyncStream.makeStream(of: RelayWake.self, bufferingPolicy: .unbounded)
        let id = UUID()
        state.withLock { state in
            state.subscribers[id] = continuation
            if let relay = state.relay { state.feeds[id] = feed(relay, to: continuation) }
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.subscribers[id] = nil
                state.feeds.removeValue(forKey: id)?.cancel()
            }
        }
        return stream
    }

    /// Feeds one subscriber from `relay` until the relay is replaced or the subscriber goes.
    private func feed(_ relay: any Relay, to continuation: AsyncStream<RelayWake>.Continuation) -> Task<Void, Never> {
        // Opening is itself news: what landed meanwhile is to be read, and the store checked.
        continuation.yield(.opened)
        let source = relay.wakeups()
        return Task { [weak self] in
            for await wake in source {
                if Task.isCancelled { return }
                self?.endCoolDown()
                continuation.yield(wake)
            }
        }
    }
}
