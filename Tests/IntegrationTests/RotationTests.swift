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

@Suite("Rotation and revocation across three daemons")
struct RotationTests {
    static func current(_ device: DaemonProcess, _ account: String) async throws -> Int? {
        try await device.request("GET", "/v1/accounts/\(account)/keys/current").object["generation"] as? Int
    }

    @Test("rotate: every device gets the new generation, promotion follows, old generations stay readable; revoke: the rest rotate, the removed device answers revoked", arguments: RelayKind.allCases)
    func rotateThenRevoke(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        let c = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "rot", "passphrase": "pa"])
        try await circle.enroll(b, into: "rot", approver: a, name: "b")
        let deviceC = try await circle.enroll(c, into: "rot", approver: a, name: "c")
        let first = try await a.request("GET", "/v1/accounts/rot/keys/1")["key"]
        for device in [b, c] { #expect(try await device.request("GET", "/v1/accounts/rot/keys/1?wait=20")["key"] == first) }

        let rotated = try await a.request("POST", "/v1/accounts/rot/rotate", json: ["promote": "after-acks"])
        #expect(rotated.status == 200, "\(rotated.object)")
        #expect(rotated.object["generation"] as? Int == 2)
        let second = try await a.request("GET", "/v1/accounts/rot/keys/2")["key"]
        #expect(second != nil && second != first)
        for device in [a, b, c] {
            #expect(try await device.request("GET", "/v1/accounts/rot/keys/2?wait=20")["key"] == second)
            // Promotion follows the acknowledgements, and every device agrees.
            try await eventually { try await Self.current(device, "rot") == 2 }
            #expect(try await device.request("GET", "/v1/accounts/rot/keys/1")["key"] == first)
        }

        // Revoke C: A rotates and promotes at once; C gets nothing of generation 3.
        let revoked = try await a.request("DELETE", "/v1/accounts/rot/devices/\(deviceC)")
        #expect(revoked.status == 200, "\(revoked.object)")
        #expect(revoked.object["rotatedTo"] as? Int == 3)
        let third = try await a.request("GET", "/v1/accounts/rot/keys/3")["key"]
        #expect(try await b.request("GET", "/v1/accounts/rot/keys/3?wait=20")["key"] == third)
        try await eventually { try await Self.current(b, "rot") == 3 }
        try await eventually { try await c.request("GET", "/v1/accounts/rot/keys/3").state == "revoked" }
        let cCurrent = try await c.request("GET", "/v1/accounts/rot/keys/current")
        #expect(cCurrent.status == 403)
        #expect(cCurrent.state == "revoked")
        #expect(cCurrent["key"] == nil)
        // What C held before it was removed stays readable there; its status says it was removed, A's that A is a member.
        #expect(try await c.request("GET", "/v1/accounts/rot/keys/2")["key"] == second)
        #expect(try await Self.membership(c, "rot") == "revoked")
        #expect(try await Self.membership(a, "rot") == "member")
        let devices = try await a.request("GET", "/v1/accounts/rot/devices").object["devices"] as? [[String: Any]] ?? []
        #expect(devices.first { $0["deviceId"] as? String == deviceC }?["status"] as? String == "revoked")
        // A removed device cannot destroy the account everywhere: revoked, not an internal error.
        let destroy = try await c.request("DELETE", "/v1/accounts/rot?everywhere=true")
        #expect(destroy.status == 403, "\(destroy.object)")
        #expect(destroy.state == "revoked")
        #expect(try await b.request("GET", "/v1/accounts/rot/keys/3")["key"] == third)
        // No share of generation 3 was sealed to C. The embedded relay keeps C's shares of generations 1 and 2;
        // the relay service prunes every share to a revoked device (RELAY.md "Retention").
        let store = try await circle.store.open()
        let sharesToC = try await store.rows(after: 0, limit: 1000).filter { $0.record.kind == .share && $0.record.recipient?.hex == deviceC }
        #expect(sharesToC.count == (relay == .service ? 0 : 2), "C got shares of generations 1 and 2 only")
    }

    @Test("the last device cannot be revoked; rotate --promote now is current at once", arguments: RelayKind.allCases)
    func lastDeviceAndPromoteNow(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "solo", "passphrase": "pa"])
        let devices = try await a.request("GET", "/v1/accounts/solo/devices").object["devices"] as? [[String: Any]] ?? []
        let me = try #require(devices.first?["deviceId"] as? String)
        let refused = try await a.request("DELETE", "/v1/accounts/solo/devices/\(me)")
        #expect(refused.status == 400)
        #expect(refused["error"]?.contains("last device") == true)
        let rotated = try await a.request("POST", "/v1/accounts/solo/rotate", json: ["promote": "now"])
        #expect(rotated.object["promoted"] as? Bool == true)
        #expect(try await Self.current(a, "solo") == 2)
        #expect(try await a.request("POST", "/v1/accounts/solo/rotate", json: ["promote": "soon"]).state == "invalid")
    }

    @Test("drill: exits 0 with a row per device; with a device stopped, exits non-zero naming it; the device catches up after restart", arguments: RelayKind.allCases)
    func drill(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        let c = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "drill", "passphrase": "pa", "deviceName": "laptop"])
        try await circle.enroll(b, into: "drill", approver: a, name: "phone")
        try await circle.enroll(c, into: "drill", approver: a, name: "tablet")
        for device in [b, c] { _ = try await device.request("GET", "/v1/accounts/drill/keys/1?wait=20") }
        let cli = DaemonProcess.binaryDirectory + "/keyvault"

        let healthy = try await run(cli, ["drill", "rotate", "--account", "drill", "--deadline", "20s", "--socket", a.socket])
        #expect(healthy.status == 0, "\(healthy.err)")
        for name in ["laptop", "phone", "tablet"] { #expect(healthy.out.contains(name)) }
        #expect(healthy.out.contains("TIME TO KEY"))
        #expect(!healthy.out.contains("NO "))

        #expect(await c.stop() == 0)
        let missed = try await run(cli, ["drill", "rotate", "--account", "drill", "--deadline", "2s", "--json", "--socket", a.socket])
        #expect(missed.status == 1)
        #expect(missed.err.contains("tablet"))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(missed.out.utf8)) as? [String: Any])
        let generation = try #require(report["generation"] as? Int)
        #expect((report["missed"] as? [String])?.count == 1)

        // C comes back, is unlocked, takes in what it missed and acknowledges it.
        try await c.start()
        #expect(try await c.request("POST", "/v1/accounts/drill/unlock", json: ["passphrase": "device passphrase"]).status == 200)
        #expect(try await c.request("GET", "/v1/accounts/drill/keys/\(generation)?wait=20")["key"] == (try await a.request("GET", "/v1/accounts/drill/keys/\(generation)"))["key"])
        try await eventually {
            let devices = try await a.request("GET", "/v1/accounts/drill/devices").object["devices"] as? [[String: Any]] ?? []
            return devices.allSatisfy { ($0["generations"] as? [Int])?.contains(generation) == true }
        }
        let final = try await a.request("GET", "/v1/accounts/drill/devices")
        #expect((final.object["devices"] as? [[String: Any]] ?? []).allSatisfy { ($0["generations"] as? [Int])?.contains(generation) == true },
                "\(final.raw.text) A: \(a.logText().suffix(1500)) C: \(c.logText().suffix(1500))")
    }

    @Test("export lists items, generations, devices and the circle log, and no key", arguments: RelayKind.allCases)
    func export(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "exp", "passphrase": "pa", "deviceName": "laptop"])
        try await circle.enroll(b, into: "exp", approver: a, name: "phone")
        _ = try await a.request("POST", "/v1/accounts/exp/rotate", json: ["promote": "now"])
        var keys: [String] = []
        for generation in 1...2 {
            keys.append(try #require(try await b.request("GET", "/v1/accounts/exp/keys/\(generation)?wait=20")["key"]))
        }
        for device in [a, b] {
            let reply = try await device.request("GET", "/v1/accounts/exp/export")
            #expect(reply.status == 200)
            let export = try #require(reply.object["export"] as? [String: Any])
            let items = export["items"] as? [[String: Any]] ?? []
            #expect(items.contains { $0["kind"] as? String == "generation-key" && $0["generation"] as? Int == 2 && $0["synchronizable"] as? Bool == true })
            #expect(items.contains { $0["kind"] as? String == "device-signing-key" && $0["synchronizable"] as? Bool == false })
            #expect((export["generations"] as? [[String: Any]])?.count == 2)
            #expect((export["devices"] as? [[String: Any]])?.count == 2)
            let log = export["circleLog"] as? [[String: Any]] ?? []
            #expect(log.map { $0["kind"] as? String ?? "" } == ["genesis", "approve", "announce", "promote"])
            try SecretScan.expectAbsent(keys: keys, in: Data(reply.raw.body), where: "an export")
            #expect(!reply.raw.text.contains("wrapped"))
        }
        #expect(try await a.request("GET", "/v1/accounts/nobody/export").status == 404)
    }

    @Test("delete here removes the account; destroy everywhere leaves no key on any device", arguments: RelayKind.allCases)
    func deleteAndDestroy(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        let c = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "gone", "passphrase": "pa"])
        try await circle.enroll(b, into: "gone", approver: a, name: "b")
        try await circle.enroll(c, into: "gone", approver: a, name: "c")
        _ = try await a.request("POST", "/v1/accounts/gone/rotate", json: ["promote": "now"])
        var keys: [String] = []
        for generation in 1...2 {
            for device in [b, c] { _ = try await device.request("GET", "/v1/accounts/gone/keys/\(generation)?wait=20") }
            keys.append(try #require(try await a.request("GET", "/v1/accounts/gone/keys/\(generation)")["key"]))
        }
        // A second account on A, deleted from this device only.
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "local", "passphrase": "pl"])
        #expect(try await a.request("DELETE", "/v1/accounts/local").status == 200)
        #expect(try await a.request("GET", "/v1/accounts/local/keys/current").status == 404)

        #expect(try await a.request("DELETE", "/v1/accounts/gone?everywhere=true").status == 200)
        for device in [a, b, c] {
            try await eventually { try await device.request("GET", "/v1/accounts/gone/keys/current").status == 410 }
            for generation in 1...2 {
                let read = try await device.request("GET", "/v1/accounts/gone/keys/\(generation)")
                #expect(read.state == "destroyed")
                #expect(read["key"] == nil)
            }
        }
        for device in [a, b, c] { _ = await device.stop() }
        for device in [a, b, c] {
            for name in try FileManager.default.contentsOfDirectory(atPath: device.dataDirectory) {
                let data = try Data(contentsOf: URL(fileURLWithPath: device.dataDirectory + "/" + name))
                // Wrapped keys are gone too: nothing is left to unwrap, even with the passphrase.
                try SecretScan.expectAbsent(keys: keys, in: data, where: "data file \(name) after destroy")
            }
            let snapshot = try #require(try Vault(directory: device.dataDirectory).snapshot(of: AccountID(validating: "gone")))
            #expect(!snapshot.items.contains { $0.attributes.kind == .generationKey })
            #expect(snapshot.generations.allSatisfy { $0.state == .destroyed })
        }
    }

    /// Through the relay service, with the policy read from its file. On the embedded relay the same
    /// engine is tested on its own clock, without waiting the age out (EngineClockTests.maxKeyAge).
    @Test("a key past the policy's maximum age is rotated automatically, and every device gets the new one", arguments: [RelayKind.service])
    func maxKeyAge(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let policy = DaemonProcess.testPolicy + "\n[rotation]\nmax_key_age_seconds = 2\n"
        let a = try await circle.device(policy: policy)
        let b = try await circle.device(policy: policy)
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "aged", "passphrase": "pa"])
        try await circle.enroll(b, into: "aged", approver: a, name: "b")
        try await eventually { (try await Self.current(a, "aged") ?? 0) >= 2 }
        let generation = try #require(try await Self.current(a, "aged"))
        let key = try await a.request("GET", "/v1/accounts/aged/keys/\(generation)")["key"]
        #expect(try await b.request("GET", "/v1/accounts/aged/keys/\(generation)?wait=20")["key"] == key)
        #expect(a.logText().contains("key past its maximum age") || b.logText().contains("key past its maximum age"))
    }

    @Test("a recovery kit restores every key on a fresh daemon; a wrong kit passphrase is denied", arguments: RelayKind.allCases)
    func recoveryKit(_ relay: RelayKind) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "kit", "passphrase": "pa"])
        for _ in 0..<2 { _ = try await a.request("POST", "/v1/accounts/kit/rotate", json: ["promote": "now"]) }
        var keys: [String] = []
        for generation in 1...3 { keys.append(try #require(try await a.request("GET", "/v1/accounts/kit/keys/\(generation)")["key"])) }

        let cli = DaemonProcess.binaryDirectory + "/keyvault"
        let kitFile = circle.root + "/kit.bin", kitPass = circle.root + "/kitpass", newPass = circle.root + "/newpass"
        try "kit passphrase\n".write(toFile: kitPass, atomically: true, encoding: .utf8)
        try "restored passphrase\n".write(toFile: newPass, atomically: true, encoding: .utf8)
        let exported = try await run(cli, ["export", "--account", "kit", "--recovery-kit", kitFile, "--kit-passphrase-file", kitPass, "--socket", a.socket])
        #expect(exported.status == 0, "\(exported.err)")
        try SecretScan.expectAbsent(keys: keys, in: try Data(contentsOf: URL(fileURLWithPath: kitFile)), where: "the recovery kit")

        let fresh = try DaemonProcess()
        defer { fresh.remove() }
        try await fresh.start()
        try "not the kit passphrase\n".write(toFile: circle.root + "/wrong", atomically: true, encoding: .utf8)
        let wrong = try await run(cli, ["import", "--recovery-kit", kitFile, "--kit-passphrase-file", circle.root + "/wrong", "--passphrase-file", newPass, "--socket", fresh.socket])
        #expect(wrong.status == 1)
        #expect(wrong.err.contains("denied"))
        // A wrong kit passphrase backs off, as an unlock does: the next guess at once is throttled, with no KDF work.
        let again = try await fresh.request("POST", "/v1/accounts/import", json: [
            "kit": Data(try Data(contentsOf: URL(fileURLWithPath: kitFile))).base64EncodedString(), "kitPassphrase": "not the kit passphrase", "passphrase": "p"])
        #expect(again.state == "throttled", "\(again.object)")
        #expect(again.raw.header("Retry-After") != nil)
        // A kit whose cost is out of Argon2id's range, or below the policy's, is refused before any KDF work.
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: kitFile)))
        // field(header) = len || field(label) || field(account) || field(u64 passes) || field(u64 memory) || field(salt)
        let costAt = 4 + 4 + "keyvault/v1/recovery-kit".utf8.count + 4 + "kit".utf8.count + 4
        func withCost(passes: UInt64, memory: UInt64) -> String {
            var kit = original
            for i in 0..<8 {
                kit[costAt + i] = UInt8((passes >> UInt64(56 - 8 * i)) & 0xff)
                kit[costAt + 12 + i] = UInt8((memory >> UInt64(56 - 8 * i)) & 0xff)
            }
            return Data(kit).base64EncodedString()
        }
        for (passes, memory, words) in [(UInt64(0), UInt64(65536), "outside"), (1, 8192, "below this daemon's policy"), (1, 1 << 40, "outside")] {
            let refused = try await fresh.request("POST", "/v1/accounts/import", json: [
                "kit": withCost(passes: passes, memory: memory), "kitPassphrase": "kit passphrase", "passphrase": "restored passphrase"])
            #expect(refused.status == 400, "\(passes) passes over \(memory) bytes: \(refused.object)")
            #expect(refused["error"]?.contains(words) == true, "\(refused.object)")
        }
        // Once the back-off has run (a throttled answer costs no KDF work), the right kit passphrase restores.
        var imported: (status: Int32, out: String, err: String) = (1, "", "")
        try await eventually {
            imported = try await run(cli, ["import", "--recovery-kit", kitFile, "--kit-passphrase-file", kitPass, "--passphrase-file", newPass, "--socket", fresh.socket])
            return !imported.err.contains("throttled")
        }
        #expect(imported.status == 0, "\(imported.err)")
        for generation in 1...3 {
            #expect(try await fresh.request("GET", "/v1/accounts/kit/keys/\(generation)")["key"] == keys[generation - 1])
        }
        #expect(try await fresh.request("GET", "/v1/accounts/kit/keys/current").object["generation"] as? Int == 3)
        // The restored vault opens with the new passphrase after a restart.
        _ = await fresh.stop()
        try await fresh.start()
        #expect(try await fresh.request("POST", "/v1/accounts/kit/unlock", json: ["passphrase": "restored passphrase"]).status == 200)
        #expect(try await fresh.request("GET", "/v1/accounts/kit/keys/2")["key"] == keys[1])
    }

    /// `membership` of the account in the device's `GET /v1/status`.
    static func membership(_ device: DaemonProcess, _ account: String) async throws -> String? {
        let accounts = try await device.request("GET", "/v1/status").object["accounts"] as? [[String: Any]] ?? []
        return accounts.first { $0["account"] as? String == account }?["membership"] as? String
    }
}
