import KeyVaultProtocol
import Prometheus

/// One relay server's metrics (docs/RELAY.md, "Metrics and the access log"),
/// in a registry of this server's own: servers run side by side in one process
/// (the tests could), so nothing goes through the process-wide `MetricsSystem`.
/// Every family is made here with its `# HELP` line (`RelayMetricFamily`); the
/// swift-metrics factory would make them without one, and the registry refuses
/// a family's help changing. Labels are closed vocabularies (route templates,
/// refusal kinds, operation names), never a path, an account, a device or
/// anything a request carried.
package final class RelayMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()

    /// Where a held read learned that its account changed.
    enum PushPath: String {
        /// A publish on this instance: from its commit.
        case publish
        /// The store's wake-up (PostgreSQL NOTIFY, or the SQLite file changing): from its arrival here.
        case store
    }

    /// One use of the store, as `RelayHandlers.store` names it.
    enum StoreOperation: String {
        case ping, fileCandidacy = "file_candidacy", candidates, signers, circle, publish, rows, requests, remove
    }

    /// What SIGHUP reads again (`Reloader`).
    enum ReloadedFile: String {
        case tlsCertificate = "tls_certificate", identityKeySet = "identity_key_set"
    }

    /// The latency histograms' buckets: 1 ms to 5 s.
    private static let buckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
    ]

    let heldReads: Gauge
    /// Requests waiting for their account's turn (`AccountWork`): tenants at their bound.
    let turnWaits: Gauge
    let breakerOpen: Gauge
    let breakerTrips: Counter
    /// Rows pruning read from the store: what acks, approvals and candidacies cost (never the account's shares).
    let pruneRowsRead: Counter
    /// Log entries applied building accounts' verified views: what only a member's or a candidate's
    /// request costs (a stranger's is refused from the signer index before any log is read).
    let viewEntriesApplied: Counter
    let storeWakeups: Counter
    /// What the process uses (memory, files, CPU), read from /proc at each scrape.
    private let process: ProcessMetrics

    package init() {
        // Made now, so they are in the exposition from the start (at 0), before their first change.
        heldReads = registry.makeGauge(descriptor: RelayMetricFamily.heldReads.descriptor)
        turnWaits = registry.makeGauge(descriptor: RelayMetricFamily.turnWaits.descriptor)
        breakerOpen = registry.makeGauge(descriptor: RelayMetricFamily.breakerOpen.descriptor)
        breakerTrips = registry.makeCounter(descriptor: RelayMetricFamily.breakerTrips.descriptor)
        pruneRowsRead = registry.makeCounter(descriptor: RelayMetricFamily.pruneRowsRead.descriptor)
        viewEntriesApplied = registry.makeCounter(descriptor: RelayMetricFamily.viewEntriesApplied.descriptor)
        storeWakeups = registry.makeCounter(descriptor: RelayMetricFamily.storeWakeups.descriptor)
        registry.makeGauge(descriptor: RelayMetricFamily.buildInfo.descriptor, labels: [("version", KeyVaultVersion.string)]).set(to: 1)
        process = ProcessMetrics(registry: registry)
    }

    func request(method: String, route: String, status: Int) {
        registry.makeCounter(descriptor: RelayMetricFamily.requests.descriptor,
                             labels: [("method", method), ("route", route), ("status", String(status))]).increment()
    }

    func refusal(_ kind: String) {
        registry.makeCounter(descriptor: RelayMetricFamily.refusals.descriptor, labels: [("kind", kind)]).increment()
    }

    func pushed(_ path: PushPath, after latency: Duration) {
        registry.makeDurationHistogram(descriptor: RelayMetricFamily.pushLatency.descriptor, labels: [("path", path.rawValue)],
                                       buckets: Self.buckets).record(latency)
    }

    func store(_ operation: StoreOperation, took duration: Duration) {
        registry.makeDurationHistogram(descriptor: RelayMetricFamily.storeLatency.descriptor, labels: [("operation", operation.rawValue)],
                                       buckets: Self.buckets).record(duration)
    }

    func reload(_ file: ReloadedFile, refused: Bool) {
        registry.makeCounter(descriptor: RelayMetricFamily.reloads.descriptor,
                             labels: [("file", file.rawValue), ("outcome", refused ? "refused" : "reloaded")]).increment()
    }

    /// The Prometheus text exposition (version 0.0.4) of everything above, the process's figures read now.
    package func exposition() -> [UInt8] {
        process.update()
        return registry.emitToBuffer()
    }
}
