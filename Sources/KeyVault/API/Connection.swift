import NIOCore
import Synchronization
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

/// One client connection as the requests on it see it: who is calling (read
/// once, when it was accepted) and the requests it holds open. Its guard
/// (`ConnectionGuard`) closes it; closing ends what it holds.
final class Connection: Sendable {
    private struct State {
        var peer: PeerCredentials?
        var held: [ObjectIdentifier: HeldRequest] = [:]
        /// How it ended, once it has: what a request held on it from then on ends with.
        var ended: HeldRequest.End?
    }

    private let state = Mutex(State())

    /// The caller's credentials; nil if they could not be read (every request is then refused).
    var peer: PeerCredentials? { state.withLock { $0.peer } }

    func setPeer(_ peer: PeerCredentials) {
        state.withLock { $0.peer = peer }
    }

    /// Files a held request under this connection. On a connection already
    /// closed it comes back already ended.
    func hold(_ kind: HeldRequest.Kind, account: AccountID, needs: [Permission]) -> HeldRequest {
        let held = HeldRequest(kind: kind, account: account, needs: needs) { [weak self] held in
            _ = self?.state.withLock { $0.held.removeValue(forKey: ObjectIdentifier(held)) }
        }
        let ended = state.withLock { state -> HeldRequest.End? in
            if state.ended == nil { state.held[ObjectIdentifier(held)] = held }
            return state.ended
        }
        if let ended { held.finish(ended) }
        return held
    }

    /// The client has closed its side (`.halfClosed`) or the connection is
    /// closed (`.gone`): ends everything it holds. The first call wins.
    func close(_ end: HeldRequest.End) {
        let held = state.withLock { state -> [HeldRequest] in
            guard state.ended == nil else { return [] }
            state.ended = end
            defer { state.held.removeAll() }
            return Array(state.held.values)
        }
        for request in held { request.finish(end) }
    }

    /// Ends the held requests the policy no longer allows.
    func recheck(_ policy: Policy) {
        let ended = state.withLock { state -> [(HeldRequest, PeerCredentials?)] in
            let peer = state.peer
            var ended: [(HeldRequest, PeerCredentials?)] = []
            for (id, request) in state.held {
                let allowed = peer.map { peer in request.needs.allSatisfy { policy.allows(peer, $0, account: request.account) } } ?? false
                if !allowed {
                    ended.append((request, peer))
                    state.held[id] = nil
                }
            }
            return ended
        }
        for (request, peer) in ended {
            let who = peer.map { "uid \($0.uid)" } ?? "the caller"
            let what = request.kind == .waitingRead ? "wait for a key of" : "follow the events of"
            request.finish(.forbidden(Refusal(.forbidden, "\(who) may no longer \(what) account \(request.account): the policy was reloaded while the request was open")))
        }
    }

    /// How many requests of each kind it holds.
    func heldCounts() -> (waitingReads: Int, eventStreams: Int) {
        state.withLock { state in
            var reads = 0, streams = 0
            for request in state.held.values {
                switch request.kind {
                case .waitingRead: reads += 1
                case .eventStream: streams += 1
                }
            }
            return (reads, streams)
        }
    }
}

/// Live connections by channel, for the request context to find its own.
final class ConnectionDirectory: Sendable {
    static let shared = ConnectionDirectory()
    private let entries = Mutex<[ObjectIdentifier: Connection]>([:])

    func register(_ channel: any Channel, _ connection: Connection) {
        entries.withLock { $0[ObjectIdentifier(channel)] = connection }
    }

    func remove(_ channel: any Channel) {
        _ = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    func lookup(_ channel: any Channel) -> Connection? {
        entries.withLock { $0[ObjectIdentifier(channel)] }
    }
}
