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

/// `lock` must win over everything already in flight: a `whenUnlocked` key is
/// never served by a locked account, whatever was being stored when it locked.
@Suite("Locking races share arrivals and rotations")
struct LockRaceTests {
    @Test("a device locked while a rotated key reaches it, or while it rotates, never serves a whenUnlocked key")
    func lockRacesArrivals() async throws {
        let circle = try await Circle(.sqlite)
        defer { circle.remove() }
        let a = try await circle.device()
        let b = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "race", "passphrase": "pa"])
        try await circle.enroll(b, into: "race", approver: a, name: "b")
        #expect(try await b.request("GET", "/v1/accounts/race/keys/1?wait=20").state == "ready")

        var served: [String] = []
        var generation = 1
        for round in 0..<100 {
            // Every other round B rotates itself while it is being locked; otherwise A rotates and the share races the lock.
            let selfRotation = round % 2 == 1
            let rotator = selfRotation ? b : a
            async let rotated = rotator.request("POST", "/v1/accounts/race/rotate", json: ["promote": "now"])
            // Spread the lock over the window in which the share is opened and stored.
            try await Task.sleep(for: .milliseconds(round % 10 * 2))
            let locked = try await b.request("POST", "/v1/accounts/race/lock")
            #expect(locked.status == 200, "\(locked.object)")
            let rotation = try await rotated
            // After the lock answered: nothing this account holds is readable until it is unlocked.
            for path in ["current", "\(generation)", "\(generation + 1)"] {
                let read = try await b.request("GET", "/v1/accounts/race/keys/\(path)")
                if read.state == "ready" { served.append("round \(round): keys/\(path) served while locked") }
                #expect(read.state == "locked" || read.state == "unknown", "round \(round) keys/\(path): \(read.object)")
            }
            #expect(try await b.request("POST", "/v1/accounts/race/unlock", json: ["passphrase": "device passphrase"]).status == 200)
            if rotation.status == 200 { generation += 1 }
            // Aligned again before the next round: B holds the newest key.
            let latest = try await b.request("GET", "/v1/accounts/race/keys/\(generation)?wait=20")
            #expect(latest.state == "ready", "round \(round): \(latest.object)")
        }
        #expect(served.isEmpty, "\(served)")
        #expect(generation > 50, "most rotations went through (\(generation - 1))")
    }
}
