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

/// Per-account relay streams and the enrollment queue: a device reads only its
/// own accounts, after its own cursor, and keeps what it needs in its vault;
/// junk requests cannot keep a genuine device from getting a pairing code.
@Suite("Per-account relay streams and the enrollment queue")
struct AccountStreamTests {
    static func enrollments(_ device: DaemonProcess, _ account: String) async throws -> [String] {
        let list = try await device.request("GET", "/v1/accounts/\(account)/enrollments")
        return (list.object["enrollments"] as? [[String: Any]] ?? []).compactMap { $0["deviceId"] as? String }
    }

    /// A request the relay made up: valid in form, from a device nobody will approve.
    static func junkRequest(_ relay: any Relay, account: String, name: String) async throws -> DeviceID {
        let id = try AccountID(validating: account)
        let genesis = try #require(try await relay.rows(account: id, after: 0, limit: 10).first { $0.record.kind == .log })
        let signer = SigningKey.generate()
        let device = DeviceKeys(signing: signer.publicKey, box: BoxSecretKey.generate().publicKey, name: name)
        let started = try PairingRequest.make(account: id, device: device, signer: signer, code: Pairing.drawCode(),
                                              headHash: try LogEntry.decode(genesis.record.body).hash, at: Date())
        try await relay.publish(.request(started.request))
        return device.deviceID
    }

    @Test("eight junk requests do not starve a genuine one; dismissed requests are not listed, answered or approvable", arguments: RelayKind.allCases)
    func junkCannotStarve(_ kind: RelayKind) async throws {
        let circle = try await Circle(kind)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "flood", "passphrase": "pa"])
        let relay = try await circle.store.open()
        var junk: [String] = []
        for i in 0..<8 { junk.append(try await Self.junkRequest(relay, account: "flood", name: "junk \(i)").hex) }
        try await eventually { try await Self.enrollments(a, "flood").count == 8 }

        // The genuine device still gets its code, and is approved with it.
        let ticket = try await b.request("POST", "/v1/accounts/flood/enroll", json: ["passphrase": "pb", "deviceName": "b"])
        let deviceB = try #require(ticket["deviceId"])
        let code = try #require(ticket["pairingCode"], "no pairing code with 8 junk requests open: \(a.logText().suffix(2000))")
        try await eventually { try await Self.enrollments(a, "flood").contains(deviceB) }

        // The person dismisses what is not theirs (CLI, global option first): gone from the list, and for good.
        let cli = DaemonProcess.binaryDirectory + "/keyvault"
        for id in junk.prefix(4) {
            let dismissed = try await run(cli, ["--socket", a.socket, "enrollments", "dismiss", "--account", "flood", "--device-id", id])
            #expect(dismissed.status == 0, "\(dismissed.err)")
        }
        for id in junk.dropFirst(4) {
            #expect(try await a.request("POST", "/v1/accounts/flood/enrollments/\(id)/dismiss").object["dismissed"] as? Bool == true)
        }
        #expect(try await Self.enrollments(a, "flood") == [deviceB])
        let refused = try await a.request("POST", "/v1/accounts/flood/enrollments/\(junk[0])/approve", json: ["pairingCode": "123456"])
        #expect(refused.state == "unknown", "\(refused.object)")
        #expect(try await a.request("POST", "/v1/accounts/flood/enrollments/\(String(repeating: "0", count: 32))/dismiss").state == "unknown")
        let malformed = try await a.request("POST", "/v1/accounts/flood/enrollments/not-a-device/dismiss")
        #expect(malformed.status == 400 && malformed["error"]?.contains("device ID") == true, "\(malformed.object)")
        let badCLI = try await run(cli, ["--socket", a.socket, "enrollments", "dismiss", "--account", "flood", "--device-id", "XYZ"])
        #expect(badCLI.status != 0 && badCLI.err.contains("device ID"), "\(badCLI.err)")
        _ = await a.stop()
        try await a.start()
        #expect(try await a.request("POST", "/v1/accounts/flood/unlock", json: ["passphrase": "pa"]).status == 200)
        try await eventually { try await Self.enrollments(a, "flood") == [deviceB] }

        let approved = try await a.request("POST", "/v1/accounts/flood/enrollments/\(deviceB)/approve", json: ["pairingCode": code])
        #expect(approved.status == 200, "\(approved.object)")
        #expect(try await b.request("GET", "/v1/accounts/flood/keys/current?wait=20").state == "ready")
    }

    // A request's expiry after the policy's lifetime is tested on the engine's own clock, without
    // waiting it out: EngineClockTests.requestsExpire (and its setting's parsing in PolicyTests).

    @Test("a restart reads only what is new: requests and acknowledgements come back from the vault, not from the relay", arguments: RelayKind.allCases)
    func restartReadsOnlyWhatIsNew(_ kind: RelayKind) async throws {
        let circle = try await Circle(kind)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        let c = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "own", "passphrase": "pa"])
        try await circle.enroll(b, into: "own", approver: a, name: "b")
        #expect(try await b.request("GET", "/v1/accounts/own/keys/1?wait=20").state == "ready")
        let ticket = try await c.request("POST", "/v1/accounts/own/enroll", json: ["passphrase": "pc", "deviceName": "c"])
        let deviceC = try #require(ticket["deviceId"]), code = try #require(ticket["pairingCode"])
        try await eventually { try await Self.enrollments(a, "own").contains(deviceC) }
        // A has heard B acknowledge generation 1.
        try await eventually {
            let devices = try await a.request("GET", "/v1/accounts/own/devices").object["devices"] as? [[String: Any]] ?? []
            return devices.contains { ($0["generations"] as? [Int]) == [1] && $0["deviceName"] as? String == "b" }
        }

        // A stops; every record of the account that A has read leaves the relay. What A knew, it
        // knows again at start from its own vault: nothing of that is read from the relay again.
        _ = await a.stop()
        // (Through the relay service C's request stays: the service checks C's confirmation against it.)
        try await circle.store.sql("DELETE FROM \(circle.store.table) WHERE kind IN (\(kind == .sqlite ? "'request', " : "")'challenge', 'ack')")
        try await a.start()
        #expect(try await a.request("POST", "/v1/accounts/own/unlock", json: ["passphrase": "pa"]).status == 200)
        #expect(try await Self.enrollments(a, "own") == [deviceC])
        let devices = try await a.request("GET", "/v1/accounts/own/devices").object["devices"] as? [[String: Any]] ?? []
        #expect(devices.contains { ($0["generations"] as? [Int]) == [1] && $0["deviceName"] as? String == "b" }, "\(devices)")
        // And the enrollment in progress completes across the restart.
        let approved = try await a.request("POST", "/v1/accounts/own/enrollments/\(deviceC)/approve", json: ["pairingCode": code])
        #expect(approved.status == 200, "\(approved.object)")
        #expect(try await c.request("GET", "/v1/accounts/own/keys/current?wait=20").state == "ready")
    }
}
