import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What an operator sees: the relay service's `/metrics` and access log after
/// real daemons rotate through it, and the daemon's `GET /v1/metrics`.
@Suite("Operators' metrics and access log", .serialized)
struct OperatorMetricsTests {
    /// Two daemons on the relay service (two instances on PostgreSQL, each with a metrics listener):
    /// an enrollment and a rotation, then both instances scraped and their logs read.
    @Test("the relay's /metrics after a rotation: requests by route template, push latency, no secret; an access line per request")
    func relayMetricsAfterRotation() async throws {
        let circle = try await Circle(.service, serviceArguments: ["--metrics-listen", "127.0.0.1:0"])
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "ops", "passphrase": "pa"]).status == 200)
        // The enrollment by hand, to know the pairing code.
        let ticket = try await b.request("POST", "/v1/accounts/ops/enroll", json: ["passphrase": "pb", "deviceName": "b"])
        let deviceID = try #require(ticket["deviceId"])
        let code = try #require(ticket["pairingCode"])
        try await eventually {
            let list = try await a.request("GET", "/v1/accounts/ops/enrollments")
            return (list.object["enrollments"] as? [[String: Any]])?.contains { $0["deviceId"] as? String == deviceID } == true
        }
        #expect(try await a.request("POST", "/v1/accounts/ops/enrollments/\(deviceID)/approve", json: ["pairingCode": code]).status == 200)
        let first = try #require(try await b.request("GET", "/v1/accounts/ops/keys/1?wait=20")["key"])
        let rotated = try await a.request("POST", "/v1/accounts/ops/rotate", json: ["promote": "after-acks"])
        #expect(rotated.status == 200, "\(rotated.object)")
        let second = try #require(try await b.request("GET", "/v1/accounts/ops/keys/2?wait=20")["key"])
        #expect(try await a.request("GET", "/v1/accounts/ops/keys/2")["key"] == second)
        let tokens = a.presentedTokens + b.presentedTokens
        #expect(tokens.count == 2)

        var scraped: [String] = []
        for service in circle.store.services {
            let answer = try await Self.scrape(service)
            #expect(answer.contentType?.hasPrefix("text/plain; version=0.0.4") == true, "\(answer.contentType ?? "none")")
            scraped.append(answer.text)
        }
        let samples = scraped.flatMap(Self.samples)
        func total(_ prefix: String, _ parts: [String]) -> Double {
            samples.filter { $0.series.hasPrefix(prefix) && parts.allSatisfy($0.series.contains) }.map(\.value).reduce(0, +)
        }
        // The routes the daemons used, by template (never the account in the path), answered 200.
        for (method, route) in [("POST", "candidates"), ("POST", "records"), ("GET", "records")] {
            let count = total("keyvault_relay_requests_total{", [#"method="\#(method)""#, #"route="/v1/accounts/{account}/\#(route)""#, #"status="200""#])
            #expect(count > 0, "no \(method) \(route) counted: \(scraped)")
        }
        // Held reads were woken by what the other daemon published: the histogram has observations.
        #expect(total("keyvault_relay_push_latency_seconds_count{", []) > 0, "\(scraped)")
        #expect(total("keyvault_relay_store_latency_seconds_count{", [#"operation="publish""#]) > 0)
        #expect(samples.contains { $0.series == "keyvault_relay_store_breaker_open" && $0.value == 0 })
        // Nothing a request carried: no token, signature, key, pairing code or account path.
        let all = Data(scraped.joined().utf8)
        try SecretScan.expectAbsent(keys: [first, second], passphrases: tokens + ["eyJ", "kv=:", "keyid=", "Authorization", "/v1/accounts/ops"],
                                    in: all, where: "the relay's metrics")
        // The six digits of the code are looked for where no value prints digits: names and labels.
        #expect(!samples.contains { $0.series.contains(code) }, "the pairing code in a series")

        // An access-log line per request, by template and status; no token or signature in any line.
        var lines: [Substring] = []
        for service in circle.store.services {
            let log = (try? String(contentsOfFile: service.logPath, encoding: .utf8)) ?? ""
            lines += log.split(separator: "\n").filter { $0.contains("route=") }
            try SecretScan.expectAbsent(keys: [first, second], passphrases: tokens + ["eyJ", "kv=:", "keyid=", "after="],
                                        in: Data(log.utf8), where: "a relay service's log")
        }
        for route in ["/v1/accounts/{account}/candidates", "/v1/accounts/{account}/records"] {
            #expect(lines.contains { $0.contains("route=\(route)") && $0.contains("status=200") && $0.contains("seconds=") }, "\(lines.prefix(5))")
        }
        // A request is logged before it is counted, and the logs are read after the scrape: no fewer lines than requests counted.
        #expect(Double(lines.count) >= total("keyvault_relay_requests_total{", []), "\(lines.count) lines")
    }

    /// `GET /v1/metrics`: Prometheus text whose counters follow requests; a uid the policy grants `health` only is refused it.
    @Test("the daemon's GET /v1/metrics: counters move with requests; forbidden without the status permission",
          .enabled(if: geteuid() == 0, "switching to another uid needs root"))
    func daemonMetrics() async throws {
        let daemon = try DaemonProcess(policy: DaemonProcess.testPolicy + """

            [[rule]]
            uid = "65534"
            accounts = ["*"]
            allow = ["health"]
            """)
        defer { daemon.remove() }
        // With a relay, a read of a generation not yet announced waits for it.
        daemon.relay = "sqlite:" + daemon.root + "/relay.sqlite"
        try await daemon.start()
        chmod(daemon.root, 0o755)
        chmod(daemon.socket, 0o666)

        let before = try await Self.daemonMetrics(daemon)
        #expect(before.raw.header("Content-Type") == "text/plain; version=0.0.4")
        #expect(Self.value(before.raw.text, "keyvault_daemon_connections_open").map { $0 >= 1 } == true, "\(before.raw.text)")
        #expect(Self.value(before.raw.text, #"keyvault_daemon_key_reads_total{state="ready"}"#) == nil)

        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "meter", "passphrase": "right"]).status == 200)
        #expect(try await daemon.request("GET", "/v1/accounts/meter/keys/current").status == 200)
        #expect(try await daemon.request("GET", "/v1/accounts/meter/keys/1").status == 200)
        _ = try await daemon.request("POST", "/v1/accounts/meter/lock")
        #expect(try await daemon.request("GET", "/v1/accounts/meter/keys/current").state == "locked")
        #expect(try await daemon.request("POST", "/v1/accounts/meter/unlock", json: ["passphrase": "wrong"]).state == "denied")
        // Another uid: granted `health` only, so `/v1/metrics` is refused by its permission, not at the door.
        for path in ["/v1/health", "/v1/metrics"] {
            let (status, out, err) = try await run("/usr/bin/setpriv", [
                "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/curl", "-s", "--unix-socket", daemon.socket, "http://localhost" + path,
            ])
            #expect(status == 0, "curl as nobody failed: \(err)")
            let state = (try? JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])?["state"] as? String
            #expect(state == (path == "/v1/health" ? "ready" : "forbidden"), "\(path): \(out)")
            #expect(!out.contains("keyvault_"), "\(path) as uid 65534: \(out)")
        }
        // A uid the policy grants nothing is refused at the door, and counted.
        _ = try await run("/usr/bin/setpriv", [
            "--reuid=65533", "--regid=65533", "--clear-groups", "/usr/bin/curl", "-s", "--unix-socket", daemon.socket, "http://localhost/v1/metrics",
        ])

        let after = try await Self.daemonMetrics(daemon).raw.text
        #expect(Self.value(after, #"keyvault_daemon_key_reads_total{state="ready"}"#) == 2, "\(after)")
        #expect(Self.value(after, #"keyvault_daemon_key_reads_total{state="locked"}"#) == 1, "\(after)")
        #expect(Self.value(after, #"keyvault_daemon_unlock_failures_total{state="denied"}"#) == 1, "\(after)")
        let forbiddenBefore = Self.value(before.raw.text, "keyvault_daemon_connections_forbidden_by_policy_total") ?? 0
        #expect(Self.value(after, "keyvault_daemon_connections_forbidden_by_policy_total") == forbiddenBefore + 1, "\(after)")
        #expect(after.contains("# TYPE keyvault_daemon_key_reads_total counter"))
        // The relay's state and the account lines' depth.
        #expect(Self.value(after, "keyvault_daemon_relay_reachable") == 1, "\(after)")
        #expect(Self.value(after, "keyvault_daemon_relay_queued") == 0, "\(after)")
        #expect(Self.value(after, "keyvault_daemon_account_owners") == 1, "\(after)")
        #expect(Self.value(after, "keyvault_daemon_account_line_deepest") == 0, "\(after)")
        #expect(Self.value(after, "keyvault_daemon_relay_publishes") == 0, "\(after)")
        #expect(!after.contains("meter"), "an account in the metrics")
        // A held read shows while it waits (on another account: this one is in its unlock back-off).
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "held", "passphrase": "right"]).status == 200)
        // (Not awaited: it ends with the daemon.)
        _ = Task { try await daemon.request("GET", "/v1/accounts/held/keys/2?wait=20") }
        try await eventually { Self.value(try await Self.daemonMetrics(daemon).raw.text, "keyvault_daemon_waiting_reads") == 1 }
    }

    // MARK: Helpers

    private static func daemonMetrics(_ daemon: DaemonProcess) async throws -> Reply {
        let reply = try await daemon.request("GET", "/v1/metrics")
        #expect(reply.status == 200, "\(reply.raw.text)")
        return reply
    }

    /// The service's metrics address, from the line it printed when its listener was ready.
    private static func scrape(_ service: RelayServiceProcess) async throws -> (text: String, contentType: String?) {
        let out = String(service.logPath.dropLast(".log".count)) + ".out"
        var port: Int?
        try await eventually {
            let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            port = text.split(separator: "\n").first { $0.hasPrefix("metrics listening on ") }?.split(separator: ":").last.flatMap { Int($0) }
            return port != nil
        }
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port!)/metrics"), timeout: .seconds(10))
        #expect(response.status.code == 200)
        let body = try await response.body.collect(upTo: 4 << 20)
        return (String(buffer: body), response.headers.first(name: "Content-Type"))
    }

    /// Every sample line: the series (name and labels) and its value.
    private static func samples(_ text: String) -> [(series: String, value: Double)] {
        text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { return nil }
            return (String(line[..<space]), value)
        }
    }

    /// The value of exactly this series, if present.
    private static func value(_ text: String, _ series: String) -> Double? {
        samples(text).first { $0.series == series }?.value
    }
}
