import NIOCore
import Synchronization
import KeyVaultEngine
import KeyVaultPolicy

/// The server's connections, bounded, and shared fairly between callers.
///
/// - A caller the policy grants nothing (by its peer credentials, read when the
///   connection is accepted) takes no place: its first request is answered
///   `forbidden` and it is closed. At most `limit / 8` (at least 8) such
///   connections wait for that at once; past that they are closed as accepted.
/// - Up to `limit` are admitted, and a uid other than the daemon's own holds at
///   most `perPeerLimit` of them (three quarters), so no other caller can crowd
///   out the daemon's user and its sync engine: past its share, a new
///   connection of that uid takes the place of its own longest-idle one, or is
///   refused. The daemon's own uid has no share: it may use every place.
/// - At the limit a new connection takes the place of the one idle the longest
///   (no request being received or answered): that one is closed, as an idle
///   keep-alive connection may be at any time. When none is idle, the new one
///   is refused: its first request is answered `error` (503) and it is closed.
///   Refused connections waiting for that request are bounded too (`limit`
///   more); past that a connection is closed as soon as it is accepted.
///
/// A connection is idle from the moment the server accepted it, in the order it
/// was accepted (`accepted`, on the server channel), not from when its own
/// event loop set it up: with two loops, one may set up connections accepted
/// after another's, and a client whose request is already on its way would
/// otherwise be taken for newer than the flood accepted before it. A connection
/// set up after every idle one became idle has waited longest itself: it takes
/// the place of a kept connection that has carried a request (whose client
/// reconnects without losing one), and if there is none, among connections that
/// never carried one, it is the one closed (the newer one may be a client whose
/// request is on its way).
final class ConnectionLimiter: Sendable {
    enum Admission {
        case admitted
        /// Answered 503 at its first request.
        case refused
        /// The policy grants this caller nothing: answered 403 at its first request.
        case unentitled
        case dropped
    }

    struct Counts: Sendable {
        var open: Int
        var refusedWaiting: Int
        var refusedTotal: Int
        var evictedTotal: Int
        var unentitledTotal: Int
    }

    private struct Entry {
        let channel: any Channel
        let connection: Connection
        let uid: UInt32?
        var busy: Bool
        /// Whether it has carried a request: closing it then loses none (its client reconnects).
        var served = false
        /// When it last became idle, as a sequence number: the smallest is the oldest.
        var idleSince: UInt64
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var perUID: [UInt32: Int] = [:]
        var refusedWaiting = 0
        var unentitledWaiting = 0
        var refusedTotal = 0
        var evictedTotal = 0
        var unentitledTotal = 0
        var tick: UInt64 = 0
        /// Connections accepted and not closed yet, with when they were accepted.
        var acceptedAt: [ObjectIdentifier: UInt64] = [:]

        mutating func remove(_ id: ObjectIdentifier) -> Entry? {
            guard let entry = entries.removeValue(forKey: id) else { return nil }
            if let uid = entry.uid {
                perUID[uid, default: 1] -= 1
                if perUID[uid] == 0 { perUID[uid] = nil }
            }
            return entry
        }

        mutating func nextTick() -> UInt64 {
            tick += 1
            return tick
        }

        /// The longest-idle admitted connection, of `uid` only if given, among those that carried a request if `served`.
        func longestIdle(of uid: UInt32?, served: Bool = false) -> (id: ObjectIdentifier, since: UInt64)? {
            var oldest: (id: ObjectIdentifier, since: UInt64)?
            for (id, entry) in entries where !entry.busy && (uid == nil || entry.uid == uid) && (!served || entry.served) {
                if oldest.map({ entry.idleSince < $0.since }) ?? true { oldest = (id, entry.idleSince) }
            }
            return oldest
        }
    }

    let limit: Int
    /// What one uid (but `uncappedUID`) may hold of `limit`.
    let perPeerLimit: Int
    /// The daemon's own uid, whose connections are bounded by `limit` alone.
    let uncappedUID: UInt32?
    /// Connections of callers granted nothing, waiting for their `forbidden`.
    let unentitledLimit: Int
    /// Whether the policy grants this caller anything at all.
    private let entitled: @Sendable (PeerCredentials) -> Bool
    private let state = Mutex(State())

    init(limit: Int, uncappedUID: UInt32? = nil, entitled: @escaping @Sendable (PeerCredentials) -> Bool = { _ in true }) {
        precondition(limit >= 1, "the connection limit is checked where it is configured")
        self.limit = limit
        // Three quarters, and never every place while there are two.
        self.perPeerLimit = limit == 1 ? 1 : min(limit - 1, limit - limit / 4)
        self.uncappedUID = uncappedUID
        self.unentitledLimit = max(8, limit / 8)
        self.entitled = entitled
    }

    /// A connection was accepted, from `peer` (nil: the kernel would not say, and
    /// every request is refused): admit it (closing the longest-idle one if full),
    /// refuse it, or drop it.
    func admit(_ channel: any Channel, _ connection: Connection, peer: PeerCredentials?) -> Admission {
        let isEntitled = peer.map(entitled) ?? false
        let (admission, evicted) = state.withLock { state -> (Admission, (any Channel)?) in
            guard isEntitled else {
                guard state.unentitledWaiting < unentitledLimit else { return (.dropped, nil) }
                state.unentitledWaiting += 1
                state.unentitledTotal += 1
                return (.unentitled, nil)
            }
            let uid = peer?.uid
            let since = state.acceptedAt[ObjectIdentifier(channel)] ?? state.nextTick()
            var evicted: (any Channel)?
            // Past its share, a caller makes room among its own connections only.
            let overShare = uid.map { $0 != uncappedUID && state.perUID[$0, default: 0] >= perPeerLimit } ?? false
            if overShare || state.entries.count >= limit {
                let among = overShare ? uid : nil
                guard var oldest = state.longestIdle(of: among) else {
                    guard state.refusedWaiting < limit else { return (.dropped, nil) }
                    state.refusedWaiting += 1
                    state.refusedTotal += 1
                    return (.refused, nil)
                }
                if since < oldest.since {
                    // Accepted before every idle one became idle: a kept connection makes room if
                    // there is one; otherwise this one has waited longest, and gives way.
                    guard let kept = state.longestIdle(of: among, served: true) else {
                        state.evictedTotal += 1
                        return (.dropped, nil)
                    }
                    oldest = kept
                }
                evicted = state.remove(oldest.id)?.channel
                state.evictedTotal += 1
            }
            state.entries[ObjectIdentifier(channel)] = Entry(channel: channel, connection: connection, uid: uid, busy: false, idleSince: since)
            if let uid { state.perUID[uid, default: 0] += 1 }
            return (.admitted, evicted)
        }
        evicted?.close(promise: nil)
        return admission
    }

    /// The server accepted `channel` (on the server channel's loop, in the order
    /// of acceptance), before its own loop sets it up and `admit`s it.
    func accepted(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { $0.acceptedAt[id] = $0.nextTick() }
        // The channel is alive until its close completes, so its identifier is not yet anyone else's.
        channel.closeFuture.whenComplete { [self] _ in _ = state.withLock { $0.acceptedAt.removeValue(forKey: id) } }
    }

    /// A connection admitted earlier closed (or was closed to make room).
    func closed(_ channel: any Channel) {
        _ = state.withLock { $0.remove(ObjectIdentifier(channel)) }
    }

    /// A refused connection closed.
    func refusedClosed() {
        state.withLock { $0.refusedWaiting -= 1 }
    }

    /// A connection of a caller granted nothing closed.
    func unentitledClosed() {
        state.withLock { $0.unentitledWaiting -= 1 }
    }

    /// Whether the connection is receiving or answering a request (not to be closed for room).
    func setBusy(_ channel: any Channel, _ busy: Bool) {
        state.withLock { state in
            let id = ObjectIdentifier(channel)
            guard state.entries[id] != nil else { return }
            state.entries[id]?.busy = busy
            if busy {
                state.entries[id]?.served = true
            } else {
                let now = state.nextTick()
                state.entries[id]?.idleSince = now
            }
        }
    }

    var counts: Counts {
        state.withLock {
            Counts(open: $0.entries.count, refusedWaiting: $0.refusedWaiting, refusedTotal: $0.refusedTotal, evictedTotal: $0.evictedTotal,
                   unentitledTotal: $0.unentitledTotal)
        }
    }

    /// Connections accepted and not closed yet (admitted or not): each is forgotten at its close.
    var acceptedWaiting: Int {
        state.withLock { $0.acceptedAt.count }
    }

    var connections: [Connection] {
        state.withLock { $0.entries.values.map(\.connection) }
    }

    /// After a policy reload: every held request is checked against the new policy.
    func recheck(_ policy: Policy) {
        for connection in connections { connection.recheck(policy) }
    }
}
