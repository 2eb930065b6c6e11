import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// A relay-service instance dies in the middle of a rotation drill; then
/// PostgreSQL goes away in the middle of another and comes back.
@Suite("Outages of the relay service during drills", .serialized)
struct OutageTests {
    static func cluster(_ command: String) async throws {
        guard let dir = ProcessInfo.processInfo.environment["KEYVAULT_TEST_PG_DIR"], !dir.isEmpty else {
            throw TestFailure("KEYVAULT_TEST_PG_DIR is not set: run `make test`, or scripts/with-test-postgres.sh swift test …")
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let result = try await run("/bin/bash", [root + "/scripts/pg-cluster.sh", command, dir])
        guard result.status == 0 else { throw TestFailure("pg-cluster.sh \(command): \(result.err)") }
    }

    @Test("one relay instance is killed during a drill, which completes through the other; then PostgreSQL is down while a drill rotates: held keys are still served and status says since when; it comes back; the drill completes and every device holds every generation")
    func outageDuringDrill() async throws {
        let circle = try await Circle(.service)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        let c = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "outage", "passphrase": "pa", "deviceName": "laptop"])
        try await circle.enroll(b, into: "outage", approver: a, name: "phone")
        try await circle.enroll(c, into: "outage", approver: a, name: "tablet")
        let first = try #require(try await a.request("GET", "/v1/accounts/outage/keys/1")["key"])
        for device in [b, c] { #expect(try await device.request("GET", "/v1/accounts/outage/keys/1?wait=20")["key"] == first) }

        let cli = DaemonProcess.binaryDirectory + "/keyvault"
        // A's first instance dies as its drill starts: every device fails over to the other.
        let failover = Task { try await run(cli, ["drill", "rotate", "--account", "outage", "--deadline", "60s", "--json", "--socket", a.socket]) }
        await circle.store.services[0].kill9()
        let failedOver = try await failover.value
        #expect(failedOver.status == 0, "drill through the other instance: \(failedOver.out) \(failedOver.err) A: \(a.logText().suffix(2000))")
        let firstReport = try #require(try JSONSerialization.jsonObject(with: Data(failedOver.out.utf8)) as? [String: Any], "\(failedOver.out)")
        let rotatedID = try #require(firstReport["keyId"] as? String, "\(firstReport)")
        let rotated = try #require(try await a.request("GET", "/v1/accounts/outage/keys/id/\(rotatedID)")["key"])

        var restarted = false
        var drill: Task<(status: Int32, out: String, err: String), any Error>?
        do {
            // The server stops; the drill starts: its rotation is stored and served on A and waits for the relay.
            try await Self.cluster("stop")
            drill = Task { try await run(cli, ["drill", "rotate", "--account", "outage", "--deadline", "90s", "--json", "--socket", a.socket]) }
            try await eventually { a.logText().contains("rotated here; queued for the relay") }
            if !a.logText().contains("rotated here; queued for the relay") { Issue.record("A: \(a.logText().suffix(4000))") }
            // Held keys are still served, from each device's vault.
            for device in [a, b, c] {
                #expect(try await device.request("GET", "/v1/accounts/outage/keys/1")["key"] == first)
            }
            let current = try await a.request("GET", "/v1/accounts/outage/keys/current")
            #expect(current.status == 200, "\(current.object)")
            try await eventually {
                let relay = try await a.request("GET", "/v1/status").object["relay"] as? [String: Any]
                return relay?["state"] as? String == "unreachable" && relay?["since"] is String
            }
            try await Task.sleep(for: .seconds(2))
            try await Self.cluster("start")
            restarted = true
        } catch {
            if !restarted { try? await Self.cluster("start") }
            throw error
        }

        let result = try await #require(drill).value
        #expect(result.err.contains("relay is unreachable"), "\(result.err)")
        #expect(result.status == 0, "drill: \(result.out) \(result.err) A: \(a.logText().suffix(2000))")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any], "\(result.out)")
        let keyID = try #require(report["keyId"] as? String, "\(report)")
        let second = try #require(try await a.request("GET", "/v1/accounts/outage/keys/id/\(keyID)")["key"])
        for device in [a, b, c] {
            #expect(try await device.request("GET", "/v1/accounts/outage/keys/1")["key"] == first)
            #expect(try await device.request("GET", "/v1/accounts/outage/keys/id/\(rotatedID)?wait=30")["key"] == rotated)
            #expect(try await device.request("GET", "/v1/accounts/outage/keys/id/\(keyID)?wait=30")["key"] == second)
        }
        try await eventually { (try await a.request("GET", "/v1/status").object["relay"] as? [String: Any])?["state"] as? String == "reachable" }
    }
}
