import Foundation
import Testing
import KeyVaultProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The relay's metrics listener as a scraper and a load balancer read it (issue 36):
/// every family with its `# HELP`, the build and the process, and `/health` beside them.
@Suite("keyvault-relay's metrics listener")
struct RelayMetricsTests {
    @Test("every family has # HELP and # TYPE; build info names the version; the process's memory, descriptors and CPU come from /proc")
    func families() async throws {
        let root = try RelaySettingsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await TestIssuer.make(in: root)
        let relay = try await RelayServiceProcess.start(store: "sqlite:" + root + "/relay.sqlite", issuer: issuer, root: root, name: "metrics",
                                                        arguments: ["--metrics-listen", "127.0.0.1:0"])
        defer { relay.remove() }
        // A few requests, so the labelled families have series: an answer, a refusal, a store latency.
        #expect(try await relay.send("GET", "/v1/health", as: nil).status == 200)
        #expect(try await relay.read("nobody", as: TestDevice()).status == 403)

        let first = try await relay.metricsListener("/metrics")
        #expect(first.status == 200)
        #expect(first.contentType?.hasPrefix("text/plain; version=0.0.4") == true, "\(first.contentType ?? "none")")
        let lines = first.text.split(separator: "\n")
        let typed = lines.filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        let helped = Set(lines.filter { $0.hasPrefix("# HELP ") }.map { $0.split(separator: " ")[2] })
        for family in ["keyvault_relay_requests_total", "keyvault_relay_refusals_total", "keyvault_relay_held_reads",
                       "keyvault_relay_store_latency_seconds", "keyvault_relay_store_breaker_open", "keyvault_relay_build_info",
                       "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_max_fds",
                       "process_start_time_seconds"] {
            #expect(typed.contains(Substring(family)), "no \(family) in \(first.text)")
        }
        for family in typed {
            #expect(helped.contains(family), "\(family) has no # HELP")
        }
        #expect(lines.allSatisfy { !$0.hasPrefix("# HELP ") || $0.split(separator: " ").count > 3 }, "an empty # HELP")

        #expect(RelayExposition.value(first.text, #"keyvault_relay_build_info{version="\#(KeyVaultVersion.string)"}"#) == 1, "\(first.text)")
        let resident = try #require(RelayExposition.value(first.text, "process_resident_memory_bytes"))
        let virtual = try #require(RelayExposition.value(first.text, "process_virtual_memory_bytes"))
        #expect(resident > 1_048_576 && resident <= virtual, "\(resident) of \(virtual)")
        let open = try #require(RelayExposition.value(first.text, "process_open_fds"))
        let limit = try #require(RelayExposition.value(first.text, "process_max_fds"))
        #expect(open >= 3 && open <= limit, "\(open) of \(limit)")
        let cpu = try #require(RelayExposition.value(first.text, "process_cpu_seconds_total"))
        #expect(cpu > 0)
        let started = try #require(RelayExposition.value(first.text, "process_start_time_seconds"))
        let now = Date().timeIntervalSince1970
        #expect(started <= now && started > now - 3600, "started at \(started), now \(now)")

        // A counter: never less at the next scrape.
        #expect(try #require(try await relay.metric("process_cpu_seconds_total")) >= cpu)
        #expect(await relay.stop() == 0)
    }

    @Test("GET /health on the metrics listener answers as /v1/health does: ready while the store answers, 503 unavailable once it does not")
    func health() async throws {
        let root = try RelaySettingsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await TestIssuer.make(in: root)
        let relay = try await RelayServiceProcess.start(store: "sqlite:" + root + "/relay.sqlite", issuer: issuer, root: root, name: "health",
                                                        arguments: ["--metrics-listen", "127.0.0.1:0"])
        defer { relay.remove() }
        let ready = try await relay.metricsListener("/health")
        #expect(ready.status == 200 && ready.text == #"{"state":"ready"}"#, "\(ready)")
        #expect(try await relay.metricsListener("/nothing").status == 404)

        // The store's file removed under it: the relay's own check and the listener's agree.
        for name in try FileManager.default.contentsOfDirectory(atPath: root) where name.hasPrefix("relay.sqlite") {
            try FileManager.default.removeItem(atPath: root + "/" + name)
        }
        let devices = try await relay.send("GET", "/v1/health", as: nil)
        #expect(devices.status == 503, "\(devices.text)")
        let listener = try await relay.metricsListener("/health")
        #expect(listener.status == 503, "\(listener)")
        #expect(listener.text.contains(#""error":"unavailable""#), "\(listener.text)")
        #expect(await relay.stop() == 0)
    }
}
