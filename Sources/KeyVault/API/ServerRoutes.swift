import Hummingbird
import NIOCore
import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

/// `GET /v1/server`: the HTTP layer's limits and what clients hold now
/// (connections, requests in progress, waiting reads, event streams, waiters
/// in the hub), so an operator (and the tests) can see that nothing a client
/// abandoned is kept. `GET /v1/metrics`: the same, and the daemon's counters, as Prometheus text.
enum ServerRoutes {
    static func register(on router: Router<VaultRequestContext>, service: KeyVaultService, limiter: ConnectionLimiter, inProgress: RequestsInProgress,
                         options: KeyVaultServer.Options, metrics: DaemonMetrics) {
        let routes = GuardedRouter(router: router, policy: service.policy)
        let limits = ServerBody.Limits(
            maxConnections: options.maxConnections,
            requestTimeoutSeconds: Double(options.requestTimeout.components.seconds),
            idleTimeoutSeconds: Double(options.idleTimeout.components.seconds),
            maxBodyBytes: VaultRequestContext.maxBodySize)
        @Sendable func server() -> ServerBody {
            let counts = limiter.counts
            var reads = 0, streams = 0
            for connection in limiter.connections {
                let held = connection.heldCounts()
                reads += held.waitingReads
                streams += held.eventStreams
            }
            let hub = service.hub.counts
            return ServerBody(
                limits: limits,
                connections: .init(open: counts.open, requestsInProgress: inProgress.current, refusedWaiting: counts.refusedWaiting, refusedTotal: counts.refusedTotal, closedForRoomTotal: counts.evictedTotal,
                                    forbiddenByPolicyTotal: counts.unentitledTotal, maxPerCaller: limiter.perPeerLimit),
                held: .init(waitingReads: reads, eventStreams: streams, hubWaiters: hub.waiters, hubListeners: hub.listeners,
                            accountOwners: service.ownerCount))
        }
        routes.on(.get, "/v1/server", permission: .status) { _, _ in
            try APIResponse.ready(server())
        }
        routes.on(.get, "/v1/metrics", permission: .status) { _, _ in
            let relay = await service.publishing.relayStatus()
            return Response(status: .ok, headers: [.contentType: DaemonMetrics.contentType],
                            body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition(server(), relay: relay, lines: service.accountLines, sending: service.recordsSending))))
        }
    }
}

struct ServerBody: Encodable {
    struct Limits: Encodable {
        var maxConnections: Int
        var requestTimeoutSeconds: Double
        var idleTimeoutSeconds: Double
        var maxBodyBytes: Int
    }

    struct Connections: Encodable {
        /// Admitted and open now, this request's own included.
        var open: Int
        /// Requests a route is handling now, this one included: a waiting read is one until it is
        /// answered; an event stream leaves once its answer has begun (it is counted under `held`).
        var requestsInProgress: Int
        /// Refused (over the limit, none idle), waiting to be answered and closed.
        var refusedWaiting: Int
        var refusedTotal: Int
        /// Idle connections closed to make room for a new one, since the start.
        var closedForRoomTotal: Int
        /// Connections of callers the policy grants nothing, answered `forbidden` without taking a place.
        var forbiddenByPolicyTotal: Int
        /// What one uid may hold of `maxConnections`.
        var maxPerCaller: Int
    }

    struct Held: Encodable {
        var waitingReads: Int
        var eventStreams: Int
        /// Slots in the waiting hub (each waiting read holds one while it waits).
        var hubWaiters: Int
        var hubListeners: Int
        /// Owners in the account directory: the accounts held, and names something still needs
        /// (a job, a waiter, a stream, an exchange, a timer, a prepared identity).
        var accountOwners: Int
    }

    var state = ContractState.ready
    var limits: Limits
    var connections: Connections
    var held: Held
}
