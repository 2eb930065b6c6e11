import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The journeys a user walks first (issue 31), against real daemons on each relay:
/// an account made on a device on its own that later meets a relay and gains a
/// second device, and an account restored from its recovery kit after every device
/// is lost. Each also with a SIGKILL at a random point of its founding or restore.
@Suite("Journeys: one device first, a second later; every device lost, the account restored from its kit")
struct JourneyTests {
    static let passphrase = ["passphrase": "a passphrase"]

    /// The daemon killed at a random point of `request` (or after it), restarted, unlocked.
    private static func killDuring(_ device: DaemonProcess, _ request: @escaping @Sendable () async throws -> Void) async throws {
        let task = Task { try? await request() }
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...120)))
        await device.kill9()
        _ = await task.value
        try await device.start()
    }

    @Test("a device created alone joins a relay later: its circle is founded there, a second device enrolls, a rotation reaches it",
          arguments: RelayKind.allCases, [false, true])
    func aloneThenRelay(_ relay: RelayKind, killed: Bool) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        // Device A, on its own: an account, and a rotation made alone.
        let a = try DaemonProcess()
        defer { a.remove() }
        try await a.start()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "solo", "passphrase": "a passphrase", "deviceName": "laptop"]).status == 200)
        #expect(try await a.request("POST", "/v1/accounts/solo/rotate").status == 200)
        let first = try #require(try await a.request("GET", "/v1/accounts/solo/keys/1")["key"])
        let second = try #require(try await a.request("GET", "/v1/accounts/solo/keys/current")["key"])
        _ = await a.stop()

        // A meets the relay: the unlock founds the circle (a relay service needs the sign-in: `found`).
        a.relays = circle.store.addresses(forDevice: 0)
        a.identityIssuer = circle.store.issuer
        try await a.start()
        let found: @Sendable () async throws -> Void = {
            _ = try await a.request("POST", "/v1/accounts/solo/unlock", json: Self.passphrase)
            if relay == .service { _ = try await a.request("POST", "/v1/accounts/solo/circle", json: [:]) }
        }
        if killed { try await Self.killDuring(a, found) }
        try await found()
        try await eventually {
            let devices = try await a.request("GET", "/v1/accounts/solo/devices")
            let status = try await a.request("GET", "/v1/status")
            return (devices.object["devices"] as? [[String: Any]])?.count == 1 && status.raw.text.contains("\"queued\":0")
        }
        let log = try await a.request("GET", "/v1/accounts/solo/export")
        let entries = (log.object["export"] as? [String: Any])?["circleLog"] as? [[String: Any]]
        #expect(entries?.map { $0["kind"] as? String } == ["genesis", "announce", "promote"], "\(log.object)")
        #expect(try await a.request("GET", "/v1/accounts/solo/keys/current")["key"] == second)

        // B enrolls into it and gets both generations; a rotation on A reaches B.
        let b = try await circle.device()
        try await circle.enroll(b, into: "solo", approver: a, name: "phone")
        #expect(try await b.request("GET", "/v1/accounts/solo/keys/current?wait=20")["key"] == second)
        #expect(try await b.request("GET", "/v1/accounts/solo/keys/1?wait=20")["key"] == first)
        let rotated = try await a.request("POST", "/v1/accounts/solo/rotate")
        #expect(rotated.status == 200, "\(rotated.object)")
        let third = try #require(try await a.request("GET", "/v1/accounts/solo/keys/3?wait=20")["key"])
        #expect(try await b.request("GET", "/v1/accounts/solo/keys/3?wait=20")["key"] == third)
        try await eventually { try await a.request("GET", "/v1/accounts/solo/keys/current")["key"] == third }

        // Device C held an account of the same ID on its own: the relay's circle is not overwritten nor
        // merged; C's account stays usable, and the answer, the status and the log say what happened.
        let c = try DaemonProcess()
        defer { c.remove() }
        try await c.start()
        #expect(try await c.request("POST", "/v1/accounts", json: ["user": "solo", "passphrase": "c passphrase"]).status == 200)
        let mine = try #require(try await c.request("GET", "/v1/accounts/solo/keys/current")["key"])
        _ = await c.stop()
        c.relays = circle.store.addresses(forDevice: 2)
        c.identityIssuer = circle.store.issuer
        try await c.start()
        _ = try await c.request("POST", "/v1/accounts/solo/unlock", json: ["passphrase": "c passphrase"])
        let conflict = try await c.request("POST", "/v1/accounts/solo/circle", json: [:])
        #expect(conflict.status == 400, "\(conflict.object)")
        #expect(conflict["error"]?.contains("already holds a circle") == true, "\(conflict.object)")
        #expect(try await c.request("GET", "/v1/status").raw.text.contains("conflicts"))
        #expect(c.logText().contains("already holds a circle"))
        #expect(try await c.request("GET", "/v1/accounts/solo/keys/current")["key"] == mine)
        #expect(try await a.request("GET", "/v1/accounts/solo/keys/current")["key"] == third)
        #expect((try await a.request("GET", "/v1/accounts/solo/devices").object["devices"] as? [[String: Any]])?.count == 2)
    }

    @Test("every device lost: the kit restores the account, which approves a new device, rotates, and revokes the lost ones",
          arguments: RelayKind.allCases, [false, true])
    func restoredFromKit(_ relay: RelayKind, killed: Bool) async throws {
        let circle = try await Circle(relay)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "kept", "passphrase": "a passphrase", "deviceName": "laptop"]).status == 200)
        let lostA = try #require(try await a.request("GET", "/v1/status").object["accounts"] as? [[String: Any]])[0]["deviceId"] as? String
        let lostB = try await circle.enroll(b, into: "kept", approver: a, name: "phone")
        let made = try await a.request("POST", "/v1/accounts/kept/recovery-kit", json: ["kitPassphrase": "kit passphrase"])
        let kit = try #require(made["kit"], "\(made.object)")
        let member = try #require(made["memberDeviceId"], "\(made.object)")
        // A generation made after the kit: shared to the kit's member, so the kit restores it too.
        #expect(try await a.request("POST", "/v1/accounts/kept/rotate", json: ["promote": "now"]).status == 200)
        var keys: [String] = []
        for generation in 1...2 { keys.append(try #require(try await b.request("GET", "/v1/accounts/kept/keys/\(generation)?wait=20")["key"])) }
        try await eventually { try await a.request("GET", "/v1/status").raw.text.contains("\"queued\":0") }

        // Both devices lost: their vaults are gone.
        await a.kill9()
        await b.kill9()
        try FileManager.default.removeItem(atPath: a.dataDirectory)
        try FileManager.default.removeItem(atPath: b.dataDirectory)

        // The kit on a new device restores the account into its circle.
        let r = try await circle.device()
        let restore: @Sendable () async throws -> Void = {
            let imported = try await r.request("POST", "/v1/accounts/import", json: [
                "kit": kit, "kitPassphrase": "kit passphrase", "passphrase": "r passphrase", "deviceName": "restored"])
            // The answer says what the kit did: into the circle, not keys only.
            if imported.status == 200 { #expect(imported["restored"]?.hasPrefix("restored into its circle") == true, "\(imported.object)") }
        }
        if killed {
            try await Self.killDuring(r, restore)
            if try await r.request("POST", "/v1/accounts/kept/unlock", json: ["passphrase": "r passphrase"]).status != 200 { try await restore() }
        } else {
            try await restore()
        }
        for generation in 1...2 { #expect(try await r.request("GET", "/v1/accounts/kept/keys/\(generation)")["key"] == keys[generation - 1]) }
        #expect(try await r.request("GET", "/v1/accounts/kept/keys/current")["key"] == keys[1])
        try await eventually { try await r.request("GET", "/v1/status").raw.text.contains("\"queued\":0") }
        let listed = try #require(try await r.request("GET", "/v1/accounts/kept/devices").object["devices"] as? [[String: Any]])
        #expect(Set(listed.compactMap { $0["status"] as? String }) == ["trusted", "recovery-kit"], "\(listed)")
        #expect(listed.first { $0["status"] as? String == "recovery-kit" }?["deviceId"] as? String == member)

        // The restored device approves a new one, revokes the lost ones (rotating), and the new one has every key.
        let n = try await circle.device()
        try await circle.enroll(n, into: "kept", approver: r, name: "new phone")
        #expect(try await n.request("GET", "/v1/accounts/kept/keys/2?wait=20")["key"] == keys[1])
        for lost in [lostA, lostB].compactMap({ $0 }) {
            let revoked = try await r.request("DELETE", "/v1/accounts/kept/devices/\(lost)")
            #expect(revoked.status == 200, "\(revoked.object)")
        }
        let current = try #require(try await r.request("GET", "/v1/accounts/kept/keys/current")["key"])
        #expect(!keys.contains(current))
        try await eventually { try await n.request("GET", "/v1/accounts/kept/keys/current")["key"] == current }
        let rotated = try await r.request("POST", "/v1/accounts/kept/rotate", json: ["promote": "now"])
        let generation = try #require(rotated.object["generation"] as? Int, "\(rotated.object)")
        let newest = try #require(try await r.request("GET", "/v1/accounts/kept/keys/\(generation)")["key"])
        #expect(try await n.request("GET", "/v1/accounts/kept/keys/\(generation)?wait=20")["key"] == newest)
        let after = try #require(try await n.request("GET", "/v1/accounts/kept/devices").object["devices"] as? [[String: Any]])
        #expect(after.filter { $0["status"] as? String == "revoked" }.count == 2, "\(after)")
    }

    @Test("a kit made on a device on its own carries no member: it restores the keys, as a device on its own")
    func versionOneKit() async throws {
        let a = try DaemonProcess()
        defer { a.remove() }
        try await a.start()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "old", "passphrase": "a passphrase"]).status == 200)
        let key = try #require(try await a.request("GET", "/v1/accounts/old/keys/current")["key"])
        let kit = try #require(try await a.request("POST", "/v1/accounts/old/recovery-kit", json: ["kitPassphrase": "kit passphrase"])["kit"])
        // A kit made here (no circle) carries no member: it restores keys only, and says so in its version's label.
        #expect(Data(base64Encoded: kit).map { String(decoding: $0, as: UTF8.self).contains("keyvault/v2/recovery-kit") } == true)
        let fresh = try DaemonProcess()
        defer { fresh.remove() }
        try await fresh.start()
        let imported = try await fresh.request("POST", "/v1/accounts/import", json: ["kit": kit, "kitPassphrase": "kit passphrase", "passphrase": "p"])
        #expect(imported.status == 200, "\(imported.object)")
        #expect(imported["restored"]?.hasPrefix("keys only") == true, "\(imported.object)")
        #expect(try await fresh.request("GET", "/v1/accounts/old/keys/current")["key"] == key)
    }
}
