import Foundation
import Testing

/// Work whose cost a caller chooses (issue 32, item 3): a name used once keeps
/// nothing, and identities prepared for a sign-in are bounded.
@Suite("Hostile volumes: names that do not exist cost nothing that lasts")
struct HostileVolumesTests {
    static func owners(_ daemon: DaemonProcess) async throws -> Int {
        let server = try await daemon.request("GET", "/v1/server")
        return try #require((server.object["held"] as? [String: Any])?["accountOwners"] as? Int, "\(server.object)")
    }

    @Test("thousands of locks and unlocks of names that do not exist leave no owner behind; identity nonces keep at most 256 identities")
    func namesThatDoNotExist() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "real", "passphrase": "p"]).status == 200)
        for i in 0..<2_000 {
            let answer = try await daemon.request("POST", "/v1/accounts/ghost-\(i)/lock")
            if i == 0 { #expect(answer.state == "unknown", "\(answer.object)") }
        }
        #expect(try await Self.owners(daemon) == 1)

        let before = try #require(try await LockedMemoryTests.lockedMemory(daemon)["secrets"] as? Int)
        var first: String?
        for i in 0..<600 {
            let nonce = try await daemon.request("POST", "/v1/accounts/app-\(i)/identity-nonce")
            if i == 0 { first = nonce["nonce"] }
        }
        #expect(try await Self.owners(daemon) == 1 + 256)
        let after = try #require(try await LockedMemoryTests.lockedMemory(daemon)["secrets"] as? Int)
        // An identity holds three secrets (the Ed25519 seed and expanded key, the X25519 key).
        #expect(after - before <= 3 * 256, "\(before) → \(after) secrets in locked memory")
        // The newest are kept (asking again answers the same nonce); the oldest was forgotten (a new one).
        #expect(try await daemon.request("POST", "/v1/accounts/app-599/identity-nonce")["nonce"] != nil)
        let again = try await daemon.request("POST", "/v1/accounts/app-0/identity-nonce")["nonce"]
        #expect(again != nil && again != first)
        #expect(try await daemon.request("GET", "/v1/accounts/real/keys/current").status == 200)
    }
}
