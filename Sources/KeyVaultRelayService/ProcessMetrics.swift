import Foundation
import Prometheus
import Synchronization

/// The process families of `/metrics` (memory, descriptors, CPU, start time),
/// set from /proc at each scrape: nothing polls between scrapes.
final class ProcessMetrics: Sendable {
    private let cpuSeconds: Counter
    private let residentMemory: Gauge
    private let virtualMemory: Gauge
    private let openFiles: Gauge
    private let maxFiles: Gauge
    /// CPU seconds counted so far: a counter only goes up, by what each scrape adds to it.
    private let counted = Mutex<Double>(0)

    init(registry: PrometheusCollectorRegistry) {
        cpuSeconds = registry.makeCounter(descriptor: RelayMetricFamily.cpuSeconds.descriptor)
        residentMemory = registry.makeGauge(descriptor: RelayMetricFamily.residentMemory.descriptor)
        virtualMemory = registry.makeGauge(descriptor: RelayMetricFamily.virtualMemory.descriptor)
        openFiles = registry.makeGauge(descriptor: RelayMetricFamily.openFiles.descriptor)
        maxFiles = registry.makeGauge(descriptor: RelayMetricFamily.maxFiles.descriptor)
        let startTime = registry.makeGauge(descriptor: RelayMetricFamily.startTime.descriptor)
        if let stat = ProcessStat.read(), let boot = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)).flatMap(ProcessStat.bootTime) {
            startTime.set(to: Double(boot) + Double(stat.startTicks) / ProcessStat.ticksPerSecond)
        }
    }

    /// Reads /proc/self now; a figure it cannot read keeps its last value.
    func update() {
        if let stat = ProcessStat.read() {
            residentMemory.set(to: Double(stat.residentPages) * ProcessStat.pageSize)
            virtualMemory.set(to: Double(stat.virtualBytes))
            let seconds = Double(stat.cpuTicks) / ProcessStat.ticksPerSecond
            counted.withLock { counted in
                guard seconds > counted else { return }
                cpuSeconds.increment(by: seconds - counted)
                counted = seconds
            }
        }
        if let open = ProcessStat.openFiles() { openFiles.set(to: Double(open)) }
        if let limit = ProcessStat.maxFiles() { maxFiles.set(to: Double(limit)) }
    }
}
