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

/// Tampering with the vault is reported as damage: never as a wrong
/// passphrase (which would start the back-off against the owner), never as a 500.
@Suite("A damaged vault says so")
struct VaultDamageTests {
    static func sql(_ daemon: DaemonProcess, _ statement: String) async throws {
        let done = try await run("/usr/bin/sqlite3", [daemon.dataDirectory + "/vault.sqlite", statement])
        #expect(done.status == 0, "\(done.err)")
    }

    @Test("wrapped blobs swapped between slots: the right passphrase answers damaged (409), no back-off; a wrong one is still denied")
    func swappedBlobs() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "dmg", "passphrase": "right"])
        _ = await daemon.stop()
        // The signing key's blob and the box key's blob trade places: each fails its own AAD.
        try await Self.sql(daemon, """
            UPDATE items SET wrapped = CASE kind
                WHEN 'device-signing-key' THEN (SELECT wrapped FROM items WHERE kind = 'device-box-key' AND account = 'dmg')
                WHEN 'device-box-key' THEN (SELECT wrapped FROM items WHERE kind = 'device-signing-key' AND account = 'dmg') END
            WHERE account = 'dmg' AND kind IN ('device-signing-key', 'device-box-key');
            """)
        try await daemon.start()
        for _ in 0..<3 {
            let unlock = try await daemon.request("POST", "/v1/accounts/dmg/unlock", json: ["passphrase": "right"])
            #expect(unlock.status == 409, "\(unlock.object)")
            #expect(unlock.state == "damaged")
            #expect(unlock["error"]?.contains("damaged") == true)
        }
        let wrong = try await daemon.request("POST", "/v1/accounts/dmg/unlock", json: ["passphrase": "wrong"])
        #expect(wrong.state == "denied", "\(wrong.object)")
        #expect(!daemon.logText().contains("internal error"))
    }

    @Test("a stored key that does not match its key ID: damaged (409), not a 500")
    func keyIDMismatch() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "kid", "passphrase": "right"])
        _ = await daemon.stop()
        // The wrapped key is intact (its AAD names no key ID), but the ID it is filed under is another's.
        let other = String(repeating: "ab", count: 16)
        try await Self.sql(daemon, "UPDATE items SET key_id = '\(other)' WHERE account = 'kid' AND kind = 'generation-key'; UPDATE generations SET key_id = '\(other)' WHERE account = 'kid';")
        try await daemon.start()
        let unlock = try await daemon.request("POST", "/v1/accounts/kid/unlock", json: ["passphrase": "right"])
        #expect(unlock.status == 409, "\(unlock.object)")
        #expect(unlock.state == "damaged")
    }
}
