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

@Suite("Concurrent rotations while cut off from the relay")
struct PartitionTests {
    /// A and B each rotate while they cannot reach the relay; both new keys
    /// share generation number 2. Once both are back, every device holds both
    /// keys, lists the generations in the same order and has the same current key.
    @Test("A and B rotate while apart; after they reconnect all agree on the order and the current key, and both keys are everywhere", arguments: RelayKind.allCases)
    func rotateWhileApart(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        let c = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "part", "passphrase": "pa"])
        try await circle.enroll(b, into: "part", approver: a, name: "b")
        try await circle.enroll(c, into: "part", approver: a, name: "c")
        let first = try #require(try await a.request("GET", "/v1/accounts/part/keys/1")["key"])
        for device in [b, c] { #expect(try await device.request("GET", "/v1/accounts/part/keys/1?wait=20")["key"] == first) }

        // Cut A and B off: each restarts with a relay it cannot reach.
        for (device, passphrase) in [(a, "pa"), (b, "device passphrase")] {
            await device.stop()
            device.relay = circle.unreachableRelay
            try await device.start()
            #expect(try await device.request("POST", "/v1/accounts/part/unlock", json: ["passphrase": passphrase]).status == 200)
        }
        try await eventually { try await a.request("GET", "/v1/status").object["relay"].flatMap { ($0 as? [String: Any])?["state"] as? String } == "unreachable" }
        let status = try await a.request("GET", "/v1/status").object["relay"] as? [String: Any]
        #expect(status?["since"] as? String != nil, "\(String(describing: status)) \(a.logText().suffix(2500))")

        var rotated: [String: String] = [:]  // key ID → key
        for device in [a, b] {
            let answer = try await device.request("POST", "/v1/accounts/part/rotate", json: ["promote": "now"])
            #expect(answer.status == 200, "\(answer.object)")
            #expect(answer.object["generation"] as? Int == 2)
            #expect(answer.object["queued"] as? Bool == true)
            // Served here at once, as the current key, while the relay is away.
            let current = try await device.request("GET", "/v1/accounts/part/keys/current")
            #expect(current["keyId"] == answer["keyId"], "\(current.object)")
            rotated[try #require(answer["keyId"])] = current["key"]
            // What the device held before is still served.
            #expect(try await device.request("GET", "/v1/accounts/part/keys/1")["key"] == first)
        }
        #expect(rotated.count == 2, "two different keys")
        #expect(try await c.request("GET", "/v1/accounts/part/keys/current")["generation"] == nil)

        // Both come back.
        for (device, passphrase) in [(a, "pa"), (b, "device passphrase")] {
            await device.stop()
            device.relay = circle.relay
            try await device.start()
            #expect(try await device.request("POST", "/v1/accounts/part/unlock", json: ["passphrase": passphrase]).status == 200)
        }

        // Both keys reach every device, byte for byte.
        for device in [a, b, c] {
            for (keyID, key) in rotated {
                // Unknown until the announce reaches the device, then pending until its share does.
                try await eventually { try await device.request("GET", "/v1/accounts/part/keys/id/\(keyID)").state != "unknown" }
                let read = try await device.request("GET", "/v1/accounts/part/keys/id/\(keyID)?wait=20")
                #expect(read["key"] == key, "\(read.object)")
                #expect(read.object["generation"] as? Int == 2)
            }
            #expect(try await device.request("GET", "/v1/accounts/part/keys/1")["key"] == first)
        }
        // One order (generation, then key ID) and one current key: the later of the two.
        let winner = try #require(rotated.keys.max())
        var orders: [[String]] = []
        for device in [a, b, c] {
            try await eventually { try await device.request("GET", "/v1/accounts/part/keys/current")["keyId"] == winner }
            let export = try await device.request("GET", "/v1/accounts/part/export")
            let generations = try #require((export.object["export"] as? [String: Any])?["generations"] as? [[String: Any]], "\(export.object)")
            orders.append(generations.map { "\($0["generation"] ?? "")/\($0["keyId"] ?? "")" })
            #expect(generations.filter { $0["current"] as? Bool == true }.map { $0["keyId"] as? String } == [winner])
        }
        #expect(orders.count == 3 && orders.allSatisfy { $0 == orders[0] }, "\(orders)")
        #expect(orders.first?.count == 3, "\(orders)")
        // The independent reader of docs/FORMAT.md finds both keys of generation 2 in A's vault.
        let tool = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path + "/tools/recover-vault.py"
        let recovered = try await run("/usr/bin/python3", [tool, a.dataDirectory, "part"], stdin: "pa\n")
        #expect(recovered.status == 0, "\(recovered.err)")
        for key in rotated.values { #expect(recovered.out.contains(key)) }
        // …and, from the vault's current_generation alone, which of them is current.
        let recoveredObject = try JSONSerialization.jsonObject(with: Data(recovered.out.utf8)) as? [String: Any]
        #expect(recoveredObject?["currentGeneration"] as? Int == 2, "\(recovered.out)")
        let currentKeys = (recoveredObject?["generations"] as? [[String: Any]] ?? []).filter { $0["current"] as? Bool == true }
        #expect(currentKeys.map { $0["keyId"] as? String } == [winner], "\(recovered.out)")
        for device in [a, b, c] {
            #expect(!device.logText().contains("fork"), "\(device.logText().suffix(3000))")
            let relay = try await device.request("GET", "/v1/status").object["relay"] as? [String: Any]
            try await eventually { (try await device.request("GET", "/v1/status").object["relay"] as? [String: Any])?["queued"] as? Int == 0 }
            #expect(relay?["state"] as? String == "reachable")
        }
    }
}
