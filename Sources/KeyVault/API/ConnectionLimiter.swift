import NIOCore
import Synchronization
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore

/// The server's connections, bounded. Up to `limit` are admitted. At the
/// limit a new connection takes the place of the one idle the longest (no
/// request being received or answered): that one is closed, as an idle
/// keep-alive connection may be at any time. When none is idle, the new one
/// is refused: its first request is answered `error` (503) and it is closed.
/// Refused connections waiting for that request are bounded too (`limit`
/// more); past that a connection is closed as soon as it is accepted.
final class ConnectionLimiter: Sendable {
    enum Admission {
        case admitted
        case refused
        case dropped
    }

    struct Counts: Sendable {
        var open: Int
        var refusedWaiting: Int
        var refusedTotal: Int
        var evictedTotal: Int
    }

    private struct Entry {
        let channel: any Channel
        let connection: Connection
        var busy: Bool
        /// When it last became idle, as a sequence number: the smallest is the oldest.
        var idleSince: UInt64
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var refusedWaiting = 0
        var refusedTotal = 0
        var evictedTotal = 0
        var tick: UInt64 = 0
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        precondition(limit >= 1, "the connection limit is checked where it is configured")
        self.limit = limit
    }

    /// A connection was accepted: admit it (closing the longest-idle one if
    /// full), refuse it, or drop it.
    func admit(_ channel: any Channel, _ connection: Connection) -> Admission {
        let (admission, evicted) = state.withLock { state -> (Admission, (any Channel)?) in
            var evicted: (any Channel)?
            if state.entries.count >= limit {
                var oldest: (id: ObjectIdentifier, since: UInt64)?
                for (id, entry) in state.entries where !entry.busy {
                    if oldest.map({ entry.idleSince < $0.since }) ?? true { oldest = (id, entry.idleSince) }
                }
                guard let oldest else {
                    guard state.refusedWaiting < limit else { return (.dropped, nil) }
                    state.refusedWaiting += 1
                    state.refusedTotal += 1
                    return (.refused, nil)
                }
                evicted = state.entries.removeValue(forKey: oldest.id)?.channel
                state.evictedTotal += 1
            }
            state.tick += 1
            state.entries[ObjectIdentifier(channel)] = Entry(channel: channel, connection: connection, busy: false, idleSince: state.tick)
            return (.admitted, evicted)
        }
        evicted?.close(promise: nil)
        return admission
    }

    /// A connection admitted earlier closed (or was closed to make room).
    func closed(_ channel: any Channel) {
        _ = state.withLock { $0.entries.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// A refused connection closed.
    func refusedClosed() {
        state.withLock { $0.refusedWaiting -= 1 }
    }

    /// Whether the connection is receiving or answering a request (not to be closed for room).
    func setBusy(_ channel: any Channel, _ busy: Bool) {
        state.withLock { state in
            let id = ObjectIdentifier(channel)
            guard state.entries[id] != nil else { return }
            state.entries[id]?.busy = busy
            if !busy {
                state.tick += 1
                state.entries[id]?.idleSince = state.tick
            }
        }
    }

    var counts: Counts {
        state.withLock { Counts(open: $0.entries.count, refusedWaiting: $0.refusedWaiting, refusedTotal: $0.refusedTotal, evictedTotal: $0.evictedTotal) }
    }

    var connections: [Connection] {
        state.withLock { $0.entries.values.map(\.connection) }
    }

    /// After a policy reload: every held request is checked against the new policy.
    func recheck(_ policy: Policy) {
        for connection in connections { connection.recheck(policy) }
    }
}
