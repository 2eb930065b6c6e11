import Synchronization

/// The connections a client keeps between requests, each already checked
/// (`SocketTrust`), so a request costs no new connection and no new check.
///
/// A connection is kept only after an answer that leaves it open, at most
/// `maxIdle` of them, and taken again only within `maxIdleTime`: the daemon
/// closes one idle for 30 s, and a request must not meet that close on its way
/// in. One the daemon closed sooner (to make room, or restarting) is found
/// closed before anything is sent on it, or fails its first byte, and the
/// request goes on a new connection (`KeyVaultClient.exchange`).
final class ConnectionPool: Sendable {
    static let maxIdle = 8
    static let maxIdleTime: Duration = .seconds(20)

    /// What a connection was checked for: a socket path as given, and the uid expected there.
    struct Key: Equatable {
        var socketPath: String
        var daemonUID: DaemonUID
    }

    private struct Kept {
        var key: Key
        var connection: DaemonConnection
        var since: ContinuousClock.Instant
    }

    private let kept = Mutex<[Kept]>([])

    /// The connection kept last for `key`, if one is young enough; older ones are closed.
    func take(_ key: Key) -> DaemonConnection? {
        let now = ContinuousClock.now
        let (found, stale) = kept.withLock { kept -> (DaemonConnection?, [DaemonConnection]) in
            var stale: [DaemonConnection] = []
            kept.removeAll { entry in
                guard now - entry.since > Self.maxIdleTime else { return false }
                stale.append(entry.connection)
                return true
            }
            guard let index = kept.lastIndex(where: { $0.key == key }) else { return (nil, stale) }
            return (kept.remove(at: index).connection, stale)
        }
        for connection in stale { connection.close() }
        return found
    }

    /// Keeps a connection whose answer left it open; past `maxIdle`, the oldest kept is closed.
    func put(_ connection: DaemonConnection) {
        let evicted = kept.withLock { kept -> DaemonConnection? in
            kept.append(Kept(key: connection.key, connection: connection, since: .now))
            return kept.count > Self.maxIdle ? kept.removeFirst().connection : nil
        }
        evicted?.close()
    }

    deinit {
        for entry in kept.withLock({ $0 }) { entry.connection.close() }
    }
}
