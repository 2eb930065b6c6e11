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

/// docs/PAIRING.md, "Versions": a device that still pairs by version 1 (commit,
/// challenge, reveal) files its request on an embedded relay file, which checks
/// nothing. The trusted device does not answer it, but lists it with what the
/// person must do, and an approval says the same.
@Suite("A device on the retired pairing version")
struct RetiredPairingTests {
    @Test("its request is listed with the update it needs, and approving it says so")
    func retiredRequestListed() async throws {
        let circle = try await Circle(.sqlite)
        defer { circle.remove() }
        let a = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "old", "passphrase": "pa"])

        let relay = try await circle.store.open()
        let account = try AccountID(validating: "old")
        let genesis = try #require(try await TamperTests.logEntries(relay, account: "old").first?.entry)
        let signer = SigningKey.generate()
        let device = DeviceKeys(signing: signer.publicKey, box: BoxSecretKey.generate().publicKey, name: "old laptop")
        let request = EnrollmentRequest.make(account: account, device: device, signer: signer, headHash: genesis.hash,
                                             secret: Random.bytes(32), at: Date())
        try await relay.publish(.request(request))

        var listed: [String: Any] = [:]
        try await eventually {
            let enrollments = try await a.request("GET", "/v1/accounts/old/enrollments").object["enrollments"] as? [[String: Any]] ?? []
            listed = enrollments.first { $0["deviceId"] as? String == device.deviceID.hex } ?? [:]
            return !listed.isEmpty
        }
        #expect(listed["pairingVersion"] as? Int == 1)
        #expect((listed["problem"] as? String)?.contains("update keyvaultd on that device") == true, "\(listed)")

        let approve = try await a.request("POST", "/v1/accounts/old/enrollments/\(device.deviceID)/approve", json: ["pairingCode": "123456"])
        #expect(approve.status == 400, "\(approve.object)")
        #expect(approve["error"]?.contains("pairing version 1, which is retired") == true, "\(approve.object)")
        // Nothing was sent for it: no response, no approval, no entry.
        #expect(try await relay.rows(after: 0, limit: 1000).filter { $0.record.kind == .challenge }.isEmpty)
        #expect(try await TamperTests.logEntries(relay, account: "old").count == 1)

        // A version 2 request from a device lists as version 2; dismissing the old one takes it off the list.
        let b = try await circle.device()
        let ticket = try await b.request("POST", "/v1/accounts/old/enroll", json: ["passphrase": "pb", "deviceName": "phone"])
        try await eventually {
            let enrollments = try await a.request("GET", "/v1/accounts/old/enrollments").object["enrollments"] as? [[String: Any]] ?? []
            return enrollments.contains { $0["deviceId"] as? String == ticket["deviceId"] && $0["pairingVersion"] as? Int == 2 }
        }
        #expect(try await a.request("POST", "/v1/accounts/old/enrollments/\(device.deviceID)/dismiss").status == 200)
        let after = try await a.request("GET", "/v1/accounts/old/enrollments").object["enrollments"] as? [[String: Any]] ?? []
        #expect(after.map { $0["deviceId"] as? String } == [ticket["deviceId"]])
        await relay.shutdown()
    }
}
