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

/// `tools/recover-vault.py` is an independent reading of docs/FORMAT.md
/// (Python, sqlite3 and libsodium through ctypes): it must recover the keys a
/// real daemon stored.
@Suite("The independent recovery tool")
struct RecoveryToolTests {
    static let tool = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path + "/tools/recover-vault.py"

    @Test("recovers every key from a live daemon's vault, and refuses a wrong passphrase",
          .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/python3")))
    func recoversKeys() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "rec", "passphrase": "recovery passphrase"])
        let key = try #require(try await daemon.request("GET", "/v1/accounts/rec/keys/current")["key"])

        let recovered = try await run("/usr/bin/python3", [Self.tool, daemon.dataDirectory, "rec"], stdin: "recovery passphrase\n")
        #expect(recovered.status == 0, "\(recovered.err)")
        #expect(recovered.out.contains(key))

        let wrong = try await run("/usr/bin/python3", [Self.tool, daemon.dataDirectory, "rec"], stdin: "not the passphrase\n")
        #expect(wrong.status == 1)
        #expect(!wrong.out.contains(key))

        let example = try await run("/usr/bin/python3", [Self.tool, "--example"])
        #expect(example.status == 0)
        #expect(example.out.contains("199ec22ed2428ae5f074ab7d9d641503"))
    }

    @Test("opens a version 2 recovery kit a daemon made: its keys, and its member, which the circle lists as the recovery kit",
          .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/python3")))
    func opensKits() async throws {
        let circle = try await Circle(.sqlite)
        defer { circle.remove() }
        let a = try await circle.device()
        _ = try await a.request("POST", "/v1/accounts", json: ["user": "kitted", "passphrase": "p"])
        let key = try #require(try await a.request("GET", "/v1/accounts/kitted/keys/current")["key"])
        let kit = try #require(try await a.request("POST", "/v1/accounts/kitted/recovery-kit", json: ["kitPassphrase": "kit passphrase"])["kit"])
        let path = circle.root + "/kit.bin"
        try Data(base64Encoded: kit)!.write(to: URL(fileURLWithPath: path))
        let opened = try await run("/usr/bin/python3", [Self.tool, "--kit", path], stdin: "kit passphrase\n")
        #expect(opened.status == 0, "\(opened.err)")
        #expect(opened.out.contains(key))
        #expect(opened.out.contains("\"version\": 2"))
        let devices = try #require(try await a.request("GET", "/v1/accounts/kitted/devices").object["devices"] as? [[String: Any]])
        let member = try #require(devices.first { $0["status"] as? String == "recovery-kit" }?["deviceId"] as? String)
        #expect(opened.out.contains(member), "\(opened.out)")
        let wrong = try await run("/usr/bin/python3", [Self.tool, "--kit", path], stdin: "not it\n")
        #expect(wrong.status == 1)
    }
}
