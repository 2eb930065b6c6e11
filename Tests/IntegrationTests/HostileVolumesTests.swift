import Foundation
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelay

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

extension HostileVolumesTests {
    @Test("20,000 pairing requests a hostile relay files: at most 64 kept, taken in a page per job; a lock, an unlock and a key read answer at once")
    func floodOfRequests() async throws {
        let circle = try await Circle(.sqlite)
        defer { circle.remove() }
        let a = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "flood", "passphrase": "a passphrase"]).status == 200)
        let relay = try await circle.store.open()
        let head = try await HostileNumbersTests.circle(on: relay, of: AccountID(validating: "flood"))
        var batch: [RelayRecord] = []
        for i in 0..<20_000 {
            let (signing, device) = HostileNumbersTests.relaysOwnDevice("junk \(i)")
            let request = try PairingRequest.make(account: head.account, device: device, signer: signing, code: "123456",
                                                  headHash: head.headHash, at: Date()).request
            batch.append(.request(request))
            if batch.count == 1_000 {
                try await relay.publish(batch: batch)
                batch = []
            }
        }
        await relay.shutdown()
        // A lock, an unlock and a key read are made at once (issue 34), not in the account's line
        // behind the pages of requests being taken in: each answers within 250 ms (the test KDF is cheap).
        let (locked, lockTime) = try await LockAtOnceTests.timed { try await a.request("POST", "/v1/accounts/flood/lock") }
        #expect(locked.status == 200)
        let (unlocked, unlockTime) = try await LockAtOnceTests.timed {
            try await a.request("POST", "/v1/accounts/flood/unlock", json: ["passphrase": "a passphrase"])
        }
        #expect(unlocked.status == 200)
        let (read, readTime) = try await LockAtOnceTests.timed { try await a.request("GET", "/v1/accounts/flood/keys/current") }
        #expect(read.status == 200)
        print("while 20,000 requests are taken in: lock \(lockTime), unlock \(unlockTime), key read \(readTime)")
        #expect(lockTime < .milliseconds(250) && unlockTime < .milliseconds(250) && readTime < .milliseconds(250),
                "lock \(lockTime), unlock \(unlockTime), key read \(readTime)")
        try await eventually {
            let listed = try await a.request("GET", "/v1/accounts/flood/enrollments")
            guard let count = (listed.object["enrollments"] as? [Any])?.count else { return false }
            #expect(count <= 64)
            return count == 64
        }
    }
}
