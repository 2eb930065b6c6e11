import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import Testing
#if canImport(Glibc)
import Glibc
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore
#endif

/// Several real daemons on one relay file, in temporary folders.
final class Circle: @unchecked Sendable {
    let root: String
    let store: TestRelayStore
    /// `--relay` for the circle's devices.
    var relay: String { store.address }
    /// A `--relay` that cannot be reached: a device given it is cut off.
    var unreachableRelay: String { store.unreachableAddress }
    private(set) var devices: [DaemonProcess] = []

    /// `serviceArguments`: more options for the relay service's instances (with `.service`).
    init(_ kind: RelayKind = .sqlite, serviceArguments: [String] = []) async throws {
        var template = Array("/tmp/kvcircle-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
        root = String(cString: made)
        store = try await TestRelayStore.make(kind, in: root, serviceArguments: serviceArguments)
    }

    func device(policy: String = DaemonProcess.testPolicy) async throws -> DaemonProcess {
        let daemon = try DaemonProcess(policy: policy)
        daemon.relays = store.addresses(forDevice: devices.count)
        daemon.identityIssuer = store.issuer
        try await daemon.start()
        devices.append(daemon)
        return daemon
    }

    func remove() {
        for device in devices { device.remove() }
        store.stop()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// `new` asks to join `account`; `approver` approves it with the code `new` shows.
    @discardableResult
    func enroll(_ new: DaemonProcess, into account: String, approver: DaemonProcess, name: String = "device") async throws -> String {
        let ticket = try await new.request("POST", "/v1/accounts/\(account)/enroll", json: ["passphrase": "device passphrase", "deviceName": name])
        #expect(ticket.status == 202, "\(ticket.object)")
        let deviceID = try #require(ticket["deviceId"])
        let code = try #require(ticket["pairingCode"], "no code; approver: \(approver.logText().suffix(3000)) new: \(new.logText().suffix(2000))")
        try await eventually {
            let list = try await approver.request("GET", "/v1/accounts/\(account)/enrollments")
            return (list.object["enrollments"] as? [[String: Any]])?.contains { $0["deviceId"] as? String == deviceID } == true
        }
        let approved = try await approver.request("POST", "/v1/accounts/\(account)/enrollments/\(deviceID)/approve", json: ["pairingCode": code])
        #expect(approved.status == 200, "\(approved.object)")
        return deviceID
    }
}

@Suite("Devices, enrollment and propagation over each relay (the embedded file, the relay service)")
struct MultiDeviceTests {
    @Test("two devices: pending with the reason, the code compared, a waiting read returns the approver's key", arguments: RelayKind.allCases)
    func twoDevices(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "alice", "passphrase": "a passphrase", "deviceName": "laptop"]).status == 200)
        let keyA = try #require(try await a.request("GET", "/v1/accounts/alice/keys/current")["key"])

        let ticket = try await b.request("POST", "/v1/accounts/alice/enroll", json: ["passphrase": "b passphrase", "deviceName": "phone"])
        #expect(ticket.status == 202)
        #expect(ticket.state == "pending")
        #expect(ticket["reason"] == "awaiting-approval")
        let deviceID = try #require(ticket["deviceId"])
        let code = try #require(ticket["pairingCode"])
        #expect(code.count == 6)
        #expect(try await RotationTests.membership(b, "alice") == "joining")

        let early = try await b.request("GET", "/v1/accounts/alice/keys/current")
        #expect(early.status == 202)
        #expect(early["reason"] == "awaiting-approval")
        #expect(early.raw.header("Retry-After") != nil)
        #expect(early["since"] != nil)

        try await eventually {
            let list = try await a.request("GET", "/v1/accounts/alice/enrollments")
            return (list.object["enrollments"] as? [[String: Any]])?.first?["deviceId"] as? String == deviceID
        }
        let listed = try await a.request("GET", "/v1/accounts/alice/enrollments")
        #expect(!listed.raw.text.contains(code), "the code must not be listed on the approving side")

        // A wrong code fails the exchange on both sides: A says so, B says why, and asks again with a new code.
        let wrongCode = code == "000000" ? "111111" : "000000"
        let wrong = try await a.request("POST", "/v1/accounts/alice/enrollments/\(deviceID)/approve", json: ["pairingCode": wrongCode])
        #expect(wrong.status == 401)
        #expect(wrong.state == "denied")
        #expect(wrong["error"]?.contains("did not match") == true, "\(wrong.object)")
        try await eventually { try await b.request("GET", "/v1/accounts/alice/keys/current")["reason"] == "code-mismatch" }
        let again = try await b.request("POST", "/v1/accounts/alice/enroll", json: ["passphrase": "b passphrase", "deviceName": "phone"])
        #expect(again.status == 202)
        #expect(again["deviceId"] == deviceID)
        let newCode = try #require(again["pairingCode"])
        #expect(try await b.request("GET", "/v1/accounts/alice/keys/current")["reason"] == "awaiting-approval")
        try await eventually {
            let list = try await a.request("GET", "/v1/accounts/alice/enrollments")
            return (list.object["enrollments"] as? [[String: Any]])?.first?["deviceId"] as? String == deviceID
        }

        // B waits; A approves; the held read answers with A's key.
        let waiting = Task { try await b.request("GET", "/v1/accounts/alice/keys/current?wait=20") }
        try await b.waitUntilHolding()
        let approved = try await a.request("POST", "/v1/accounts/alice/enrollments/\(deviceID)/approve", json: ["pairingCode": newCode])
        #expect(approved.status == 200, "\(approved.object)")
        let answer = try await waiting.value
        #expect(answer.status == 200, "\(answer.object)")
        #expect(answer["key"] == keyA)
        #expect(answer["keyId"] == (try await a.request("GET", "/v1/accounts/alice/keys/current"))["keyId"])

        try await eventually {
            let devices = try await a.request("GET", "/v1/accounts/alice/devices")
            let list = devices.object["devices"] as? [[String: Any]] ?? []
            return list.count == 2 && list.allSatisfy { $0["status"] as? String == "trusted" && ($0["generations"] as? [Int]) == [1] }
        }
    }

    @Test("three devices: the second approves the third, whose key matches", arguments: RelayKind.allCases)
    func threeDevices(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        let c = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "trio", "passphrase": "a passphrase"])
        let key = try await a.request("GET", "/v1/accounts/trio/keys/current")["key"]
        try await circle.enroll(b, into: "trio", approver: a, name: "b")
        #expect(try await b.request("GET", "/v1/accounts/trio/keys/current?wait=20")["key"] == key)
        try await circle.enroll(c, into: "trio", approver: b, name: "c")
        #expect(try await c.request("GET", "/v1/accounts/trio/keys/1?wait=20")["key"] == key)
        // A learns of C through the log it verifies.
        try await eventually {
            let devices = try await a.request("GET", "/v1/accounts/trio/devices").object["devices"] as? [[String: Any]] ?? []
            return devices.count == 3
        }
    }

    @Test("every older generation reaches a new device, not just the current one", arguments: RelayKind.allCases)
    func olderGenerations(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "old", "passphrase": "pa"])
        for _ in 0..<2 { #expect(try await a.request("POST", "/v1/accounts/old/rotate", json: ["promote": "now"]).status == 200) }
        try await circle.enroll(b, into: "old", approver: a, name: "b")
        for generation in 1...3 {
            let expected = try await a.request("GET", "/v1/accounts/old/keys/\(generation)")["key"]
            #expect(expected != nil)
            #expect(try await b.request("GET", "/v1/accounts/old/keys/\(generation)?wait=20")["key"] == expected, "generation \(generation)")
        }
        #expect(try await b.request("GET", "/v1/accounts/old/keys/current").object["generation"] as? Int == 3)
    }

    @Test("bad input to the device endpoints is answered invalid and changes nothing", arguments: RelayKind.allCases)
    func badInputs(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "bad", "passphrase": "pa"])
        let cases: [(DaemonProcess, String, String, [String: Any]?)] = [
            (b, "POST", "/v1/accounts/bad/enroll", ["passphrase": "pb", "deviceName": ""]),
            (b, "POST", "/v1/accounts/bad/enroll", ["passphrase": "pb", "deviceName": String(repeating: "n", count: 200)]),
            (b, "POST", "/v1/accounts/bad/enroll", ["passphrase": "pb", "deviceName": "tab\there"]),
            (b, "POST", "/v1/accounts/bad/enroll", ["deviceName": "b"]),
            (a, "POST", "/v1/accounts/bad/enrollments/xyz/approve", ["pairingCode": "123456"]),
            (a, "POST", "/v1/accounts/bad/enrollments/\(String(repeating: "a", count: 32))/approve", ["pairingCode": "12ab56"]),
            (a, "DELETE", "/v1/accounts/bad/devices/NOT-A-DEVICE", nil),
            (a, "DELETE", "/v1/accounts/bad?everywhere=maybe", nil),
            (a, "POST", "/v1/accounts/bad/recovery-kit", ["kitPassphrase": ""]),
            (a, "POST", "/v1/accounts/import", ["kit": "!!!", "kitPassphrase": "k", "passphrase": "p"]),
            (a, "POST", "/v1/accounts/import", ["kit": "AAAA", "kitPassphrase": "k", "passphrase": "p"]),
        ]
        for (device, method, path, body) in cases {
            let reply = try await device.request(method, path, json: body)
            #expect(reply.status == 400, "\(method) \(path): \(reply.object)")
            #expect(reply.state == "invalid")
            #expect(reply["error"]?.isEmpty == false)
        }
        // Nothing changed: the account is still there with its one device and its key.
        #expect(try await a.request("GET", "/v1/accounts/bad/keys/current").status == 200)
        #expect((try await a.request("GET", "/v1/accounts/bad/devices").object["devices"] as? [Any])?.count == 1)
        #expect(try await b.request("GET", "/v1/accounts/bad/keys/current").status == 404)
    }

    @Test("one exchange per code: a wrong code burns it on both sides, the right one after it is refused, a new code enrolls", arguments: RelayKind.allCases)
    func oneExchangePerCode(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "codes", "passphrase": "pa"])
        let ticket = try await b.request("POST", "/v1/accounts/codes/enroll", json: ["passphrase": "pb", "deviceName": "b"])
        let deviceID = try #require(ticket["deviceId"]), code = try #require(ticket["pairingCode"])
        try await eventually { (try await a.request("GET", "/v1/accounts/codes/enrollments").object["enrollments"] as? [Any])?.count == 1 }
        // Both devices' event streams say the exchange failed, and why.
        var streams: [(String, ChildProcess)] = []
        for (name, device) in [("a", a), ("b", b)] {
            let path = circle.root + "/events-\(name).txt"
            let curl = try ChildProcess("/usr/bin/curl", ["-sN", "--max-time", "20", "--unix-socket", device.socket,
                                                          "http://localhost/v1/accounts/codes/events"],
                                        stdoutPath: path, stderrPath: circle.root + "/curl-\(name).err")
            try await eventually { ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").contains("keyvaultd events") }
            streams.append((path, curl))
        }
        let wrong = code == "123456" ? "654321" : "123456"
        #expect(try await a.request("POST", "/v1/accounts/codes/enrollments/\(deviceID)/approve", json: ["pairingCode": wrong]).status == 401)
        for (path, curl) in streams {
            try await eventually { ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").contains("event: pairing-failed") }
            curl.signal(SIGTERM)
            _ = await curl.wait()
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.contains(#""reason":"code-mismatch""#) && text.contains(deviceID), "\(text)")
        }
        // The request is no longer listed, and its right code is refused: the one guess was spent.
        #expect((try await a.request("GET", "/v1/accounts/codes/enrollments").object["enrollments"] as? [Any])?.isEmpty == true)
        let late = try await a.request("POST", "/v1/accounts/codes/enrollments/\(deviceID)/approve", json: ["pairingCode": code])
        #expect(late.status == 401)
        #expect(late["error"]?.contains("already tried") == true, "\(late.object)")
        try await eventually { try await b.request("GET", "/v1/accounts/codes/keys/current")["reason"] == "code-mismatch" }
        // Asked again, B shows a new code, which enrolls it.
        let again = try await b.request("POST", "/v1/accounts/codes/enroll", json: ["passphrase": "pb", "deviceName": "b"])
        let newCode = try #require(again["pairingCode"])
        try await eventually { (try await a.request("GET", "/v1/accounts/codes/enrollments").object["enrollments"] as? [Any])?.count == 1 }
        #expect(try await a.request("POST", "/v1/accounts/codes/enrollments/\(deviceID)/approve", json: ["pairingCode": newCode]).status == 200)
        #expect(try await b.request("GET", "/v1/accounts/codes/keys/current?wait=20").status == 200)
    }

    @Test("a device restarted in the middle of enrollment asks again for a new code and joins; a locked device gets a rotated key after unlock", arguments: RelayKind.allCases)
    func restartAndLocked(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "later", "passphrase": "pa"])
        let key = try await a.request("GET", "/v1/accounts/later/keys/current")["key"]
        let ticket = try await b.request("POST", "/v1/accounts/later/enroll", json: ["passphrase": "pb", "deviceName": "b"])
        let deviceID = try #require(ticket["deviceId"])

        // B stops before anyone types its code: its exchange, held in memory, ends with it.
        #expect(await b.stop() == 0)
        try await b.start()
        try await eventually { try await b.request("GET", "/v1/accounts/later/keys/current").status == 423 }
        #expect(try await b.request("POST", "/v1/accounts/later/unlock", json: ["passphrase": "pb"]).status == 200)
        #expect(try await b.request("GET", "/v1/accounts/later/keys/current")["reason"] == "code-mismatch")
        let again = try await b.request("POST", "/v1/accounts/later/enroll", json: ["passphrase": "pb", "deviceName": "b"])
        #expect(again["deviceId"] == deviceID)
        let code = try #require(again["pairingCode"], "\(again.object)")
        try await eventually {
            let list = try await a.request("GET", "/v1/accounts/later/enrollments").object["enrollments"] as? [[String: Any]] ?? []
            return list.count == 1
        }
        #expect(try await a.request("POST", "/v1/accounts/later/enrollments/\(deviceID)/approve", json: ["pairingCode": code]).status == 200)
        #expect(try await b.request("GET", "/v1/accounts/later/keys/current?wait=20")["key"] == key)

        // B locked while A rotates: locked wins; after unlock the new key arrives.
        #expect(try await b.request("POST", "/v1/accounts/later/lock").status == 200)
        #expect(try await a.request("POST", "/v1/accounts/later/rotate", json: ["promote": "now"]).status == 200)
        let rotated = try await a.request("GET", "/v1/accounts/later/keys/2")["key"]
        // (Through the relay service a locked device cannot sign its reads: the announce waits there until the unlock.)
        if relay == .sqlite { try await eventually { try await b.request("GET", "/v1/accounts/later/keys/2").status == 423 } }
        #expect(try await b.request("POST", "/v1/accounts/later/unlock", json: ["passphrase": "pb"]).status == 200)
        #expect(try await b.request("GET", "/v1/accounts/later/keys/2?wait=20")["key"] == rotated)
    }

    @Test("no key, passphrase, identity token or pairing code (nor a value derived from it alone) reaches the relay, a log or a vault, in any form", arguments: RelayKind.allCases)
    func relayHoldsNoSecret(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        let passphrases = ["relay scan passphrase A", "relay scan passphrase B"]
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "scan", "passphrase": passphrases[0]])
        let key = try #require(try await a.request("GET", "/v1/accounts/scan/keys/current")["key"])
        let ticket = try await b.request("POST", "/v1/accounts/scan/enroll", json: ["passphrase": passphrases[1], "deviceName": "b"])
        try await eventually { (try await a.request("GET", "/v1/accounts/scan/enrollments").object["enrollments"] as? [Any])?.count == 1 }
        // The pairing code, and CPace's generator, the one value derived from it and public values alone (< 128 bits of secret).
        let code = try #require(ticket["pairingCode"])
        let scan = try AccountID(validating: "scan")
        let requestRow = try #require(try await circle.store.open().rows(account: scan, after: 0, limit: 1000).first { $0.record.kind == .request })
        let request = try PairingRequest.decode(requestRow.record.body)
        let generator = CPace.calculateGenerator(password: SecureBytes(copying: Array(code.utf8)),
                                                 channelID: Pairing.channelID(account: scan, device: request.device),
                                                 sessionID: request.session).bytes.base64EncodedString()
        _ = try await a.request("POST", "/v1/accounts/scan/enrollments/\(ticket["deviceId"]!)/approve", json: ["pairingCode": ticket["pairingCode"]!])
        #expect(try await b.request("GET", "/v1/accounts/scan/keys/current?wait=20")["key"] == key)
        _ = await a.stop()
        _ = await b.stop()
        let stored = try await circle.store.dump(root: circle.root)
        #expect(stored.count > 1000, "the relay holds the circle's records")
        // Through the service, each device signed in once (creation, enrollment); its token is forwarded, never kept.
        let tokens = a.presentedTokens + b.presentedTokens
        #expect(tokens.count == (relay == .service ? 2 : 0))
        // (The code's six digits are looked for where no timestamp prints microseconds: the SQLite store, the logs, the vaults.)
        let codeText = relay == .sqlite ? [code] : []
        try SecretScan.expectAbsent(keys: [key, generator], passphrases: passphrases + tokens + codeText, in: stored, where: "the \(relay) relay")
        for service in circle.store.services {
            let log = (try? Data(contentsOf: URL(fileURLWithPath: service.logPath))) ?? Data()
            try SecretScan.expectAbsent(keys: [key, generator], passphrases: passphrases + tokens + [code], in: log, where: "a relay service's log")
        }
        for device in [a, b] {
            try SecretScan.expectAbsent(keys: [key, generator], passphrases: passphrases + tokens + [code], in: Data(device.logText().utf8),
                                        where: "a daemon's log")
            var vault = Data()
            for name in try FileManager.default.contentsOfDirectory(atPath: device.dataDirectory) {
                vault += (try? Data(contentsOf: URL(fileURLWithPath: device.dataDirectory + "/" + name))) ?? Data()
            }
            #expect(!vault.isEmpty)
            try SecretScan.expectAbsent(keys: [generator], passphrases: tokens + [code], in: vault, where: "a daemon's vault")
        }
    }

    @Test("the events stream tells the new device's sync engine: unlocked, key-ready", arguments: RelayKind.allCases)
    func eventStream(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "ev", "passphrase": "pa"])
        let ticket = try await b.request("POST", "/v1/accounts/ev/enroll", json: ["passphrase": "pb", "deviceName": "b"])
        let events = circle.root + "/events.txt"
        let curl = try ChildProcess("/usr/bin/curl", ["-sN", "--max-time", "8", "--unix-socket", b.socket, "http://localhost/v1/accounts/ev/events"],
                                    stdoutPath: events, stderrPath: circle.root + "/curl.err")
        try await eventually { ((try? String(contentsOfFile: events, encoding: .utf8)) ?? "").contains("keyvaultd events") }
        _ = try await b.request("POST", "/v1/accounts/ev/lock")
        _ = try await b.request("POST", "/v1/accounts/ev/unlock", json: ["passphrase": "pb"])
        try await eventually { (try await a.request("GET", "/v1/accounts/ev/enrollments").object["enrollments"] as? [Any])?.count == 1 }
        #expect(try await a.request("POST", "/v1/accounts/ev/enrollments/\(ticket["deviceId"]!)/approve", json: ["pairingCode": ticket["pairingCode"]!]).status == 200)
        try await eventually { ((try? String(contentsOfFile: events, encoding: .utf8)) ?? "").contains("event: key-ready") }
        curl.signal(SIGTERM)
        _ = await curl.wait()
        let text = try String(contentsOfFile: events, encoding: .utf8)
        #expect(text.contains("event: locked"))
        #expect(text.contains("event: unlocked"))
        #expect(text.contains("event: device-enrolled"))
        #expect(text.contains(#""generation":1,"#), "a generation is a number in an event, as everywhere else")
    }
}
