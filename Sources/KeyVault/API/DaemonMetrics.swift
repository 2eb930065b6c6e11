import Prometheus
import Synchronization
import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

/// The daemon's counters as Prometheus text (`GET /v1/metrics`, docs/API.md),
/// in a registry of this daemon's own. What `GET /v1/server` shows is read at
/// scrape time; key reads and unlock failures are counted as they happen.
/// Labels are contract states only: never an account, a uid or a path.
final class DaemonMetrics: Sendable {
    static let contentType = "text/plain; version=0.0.4"

    private let registry = PrometheusCollectorRegistry()
    /// The totals `GET /v1/server` keeps, as last carried into the registry's counters.
    private let carried = Mutex<[String: Int]>([:])

    /// `keyvault_daemon_NAME_UNIT` with its help line (computed: a descriptor is not `Sendable`).
    private static func named(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "keyvault", subsystem: "daemon", metricName: name, unitName: unit, helpText: help)
    }

    private static var keyReads: MetricNameDescriptor {
        named("key_reads", "total", "Key reads answered, by the state answered (ready, pending, locked, forbidden, ...).")
    }
    private static var unlockFailures: MetricNameDescriptor {
        named("unlock_failures", "total", "Unlocks refused, by state: denied (a wrong passphrase) or throttled (inside the back-off).")
    }

    /// A key read was answered with `state`.
    func keyRead(_ state: ContractState) {
        registry.makeCounter(descriptor: Self.keyReads, labels: [("state", state.rawValue)]).increment()
    }

    /// An unlock was refused with `state`.
    func unlockFailed(_ state: ContractState) {
        registry.makeCounter(descriptor: Self.unlockFailures, labels: [("state", state.rawValue)]).increment()
    }

    /// The exposition, with `server` (what `GET /v1/server` answers now) carried in first.
    func exposition(_ server: ServerBody, relay: RelayStatus?, lines: (queued: Int, deepest: Int, publishing: Int), sending: Int) -> [UInt8] {
        let connections = server.connections, held = server.held
        gauge("connections_open", "Connections admitted and open now.", connections.open)
        gauge("connections_max", "Connections served at once (--max-connections).", server.limits.maxConnections)
        gauge("requests_in_progress", "Requests a route is handling now (a waiting read until it is answered).", connections.requestsInProgress)
        gauge("connections_refused_waiting", "Connections refused (over the limit), waiting to be answered and closed.", connections.refusedWaiting)
        gauge("waiting_reads", "Key reads held now (?wait=).", held.waitingReads)
        gauge("event_streams", "Event streams open now.", held.eventStreams)
        gauge("hub_waiters", "Slots in the waiting hub.", held.hubWaiters)
        gauge("hub_listeners", "Listeners in the waiting hub.", held.hubListeners)
        gauge("account_owners", "Owners in the account directory: accounts held, and names something still needs.", held.accountOwners)
        gauge("account_jobs_queued", "Jobs running or waiting in every account's line.", lines.queued)
        gauge("account_line_deepest", "Jobs running or waiting in the longest account line.", lines.deepest)
        gauge("relay_publishes", "Relay writes of log entries and shares under way or waiting their turn (one at a time per account, in a job or after it).", lines.publishing)
        gauge("relay_records_sending", "Records handed to the relay outside the accounts' lines whose write has not finished.", sending)
        if let relay {
            gauge("relay_reachable", "1 if the relay answered last, 0 if it is unreachable or not heard from yet.", relay.state == "reachable" ? 1 : 0)
            gauge("relay_queued", "Log entries, owed deliveries and records waiting for the relay, and unlocks still being followed up.", relay.queued)
            gauge("relay_accounts_behind", "Accounts whose confirmed log entries the relay was found to lack.", relay.behind?.count ?? 0)
        }
        total("connections_refused", "Connections refused over the limit, since the start.", connections.refusedTotal)
        total("connections_closed_for_room", "Idle connections closed to make room for a new one, since the start.", connections.closedForRoomTotal)
        total("connections_forbidden_by_policy", "Connections of callers the policy grants nothing, since the start.", connections.forbiddenByPolicyTotal)
        return registry.emitToBuffer()
    }

    private func gauge(_ name: String, _ help: String, _ value: Int) {
        registry.makeGauge(descriptor: Self.named(name, "", help)).set(Double(value))
    }

    /// A total kept elsewhere, carried into a counter by what it grew since the last scrape
    /// (under one lock, so two scrapes at once do not both add the same growth).
    private func total(_ name: String, _ help: String, _ value: Int) {
        let counter = registry.makeCounter(descriptor: Self.named(name, "total", help))
        carried.withLock { carried in
            let grown = value - (carried[name] ?? 0)
            if grown > 0 { counter.increment(by: Int64(grown)) }
            carried[name] = max(value, carried[name] ?? 0)
        }
    }
}
