import CoreMetrics
import Prometheus

/// One relay server's metrics (docs/RELAY.md, "Metrics and the access log"),
/// made with swift-metrics' types through a factory over a registry of this
/// server's own: servers run side by side in one process (the tests could), so
/// nothing goes through the process-wide `MetricsSystem.bootstrap`. Labels are
/// closed vocabularies (route templates, refusal kinds, operation names),
/// never a path, an account, a device or anything a request carried.
package final class RelayMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory

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

    /// The latency histograms' buckets: 1 ms to 5 s.
    private static let buckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
    ]

    let heldReads: Meter
    let breakerOpen: CoreMetrics.Gauge
    let breakerTrips: CoreMetrics.Counter
    /// Rows pruning read from the store: what acks, approvals and candidacies cost (never the account's shares).
    let pruneRowsRead: CoreMetrics.Counter
    /// Log entries applied building accounts' verified views: what only a member's or a candidate's
    /// request costs (a stranger's is refused from the signer index before any log is read).
    let viewEntriesApplied: CoreMetrics.Counter

    package init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.buckets
        self.factory = factory
        heldReads = Meter(label: "keyvault_relay_held_reads", factory: factory)
        breakerOpen = CoreMetrics.Gauge(label: "keyvault_relay_store_breaker_open", factory: factory)
        breakerTrips = CoreMetrics.Counter(label: "keyvault_relay_store_breaker_trips_total", factory: factory)
        pruneRowsRead = CoreMetrics.Counter(label: "keyvault_relay_prune_rows_read_total", factory: factory)
        viewEntriesApplied = CoreMetrics.Counter(label: "keyvault_relay_view_entries_applied_total", factory: factory)
        // Present from the start, at 0, so a dashboard has them before the first change.
        heldReads.set(0)
        breakerOpen.record(0)
    }

    func request(method: String, route: String, status: Int) {
        CoreMetrics.Counter(label: "keyvault_relay_requests_total", dimensions: [("method", method), ("route", route), ("status", String(status))],
                            factory: factory).increment()
    }

    func refusal(_ kind: String) {
        CoreMetrics.Counter(label: "keyvault_relay_refusals_total", dimensions: [("kind", kind)], factory: factory).increment()
    }

    func pushed(_ path: PushPath, after latency: Duration) {
        Timer(label: "keyvault_relay_push_latency_seconds", dimensions: [("path", path.rawValue)], factory: factory)
            .recordNanoseconds(Self.nanoseconds(latency))
    }

    func store(_ operation: StoreOperation, took duration: Duration) {
        Timer(label: "keyvault_relay_store_latency_seconds", dimensions: [("operation", operation.rawValue)], factory: factory)
            .recordNanoseconds(Self.nanoseconds(duration))
    }

    /// The Prometheus text exposition (version 0.0.4) of everything above.
    package func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}
