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
import KeyVaultRelaySQLite
import KeyVaultRelayClient
import KeyVaultRelayStore

/// The embedded relay file under faults: a folder that is read-only when the
/// daemon starts, and a relay file deleted and made anew under running daemons.
@Suite("The embedded relay reopens, and a younger relay is repaired", .serialized)
struct EmbeddedRelayFaultTests {
    @Test("a relay folder read-only at start: records queue, and go out once it is writable, without a restart")
    func readOnlyFolderAtStart() async throws {
        var template = Array("/tmp/kvrelayro-XXXXXX".utf8CString)
        let root = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = root + "/relay"
        let disk = try SmallDisk(at: folder, megabytes: 16)
        defer { disk.unmount() }
        let address = "sqlite:" + folder + "/relay.sqlite"
        let a = try DaemonProcess(relay: address)
        defer { a.remove() }
        try await a.start()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "ro", "passphrase": "pa"]).status == 200)
        // Killed, so the relay's -wal and -shm stay: SQLite then opens the file read-only, and a handle
        // opened so never writes again, whatever the folder becomes.
        await a.kill9()

        try disk.remount(readOnly: true)
        try await a.start()
        #expect(try await a.request("POST", "/v1/accounts/ro/unlock", json: ["passphrase": "pa"]).status == 200)
        let rotated = try await a.request("POST", "/v1/accounts/ro/rotate", json: ["promote": "now"])
        #expect(rotated.status == 200 && rotated.object["queued"] as? Bool == true, "\(rotated.object)")
        #expect(try await Self.relayState(a) == "unreachable")

        try disk.remount(readOnly: false)
        try await eventually {
            let relay = try await a.request("GET", "/v1/status").object["relay"] as? [String: Any]
            return relay?["state"] as? String == "reachable" && relay?["queued"] as? Int == 0
        }
        let relay = try SQLiteRelay(path: folder + "/relay.sqlite")
        let entries = try await relay.all(.log, account: AccountID(validating: "ro"))
        #expect(entries.count >= 2, "the rotation's entry never reached the relay: \(a.logText().suffix(4000))")
    }

    @Test("a relay file deleted and made anew: the device says the relay is behind, publishes its log again, and the account works on the new file")
    func relayFileReplaced() async throws {
        let circle = try await Circle()
        defer { circle.remove() }
        let a = try await circle.device()
        #expect(try await a.request("POST", "/v1/accounts", json: ["user": "young", "passphrase": "pa"]).status == 200)
        #expect(try await a.request("POST", "/v1/accounts/young/rotate", json: ["promote": "now"]).status == 200)
        let keyA = try #require(try await a.request("GET", "/v1/accounts/young/keys/current")["key"])
        let path = circle.root + "/relay.sqlite"
        let before = try await SQLiteRelay(path: path).all(.log, account: AccountID(validating: "young")).count
        #expect(before >= 2)

        // The file goes, and a fresh one takes its place (as a restore or a careless cleanup would).
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let fresh = try SQLiteRelay(path: path)
        try await fresh.publish(RelayRecord(kind: .ack, account: AccountID(validating: "other"), recipient: nil, logSeq: nil, body: [1]))

        // The device notices, says so, and publishes its copy of the log.
        var behind: [String: Any] = [:]
        try await eventually {
            let relay = try await a.request("GET", "/v1/status").object["relay"] as? [String: Any]
            behind = (relay?["behind"] as? [[String: Any]])?.first { $0["account"] as? String == "young" } ?? [:]
            return behind["republished"] as? Bool == true
        }
        #expect((behind["missingEntries"] as? [Int])?.count == before, "\(behind)")
        #expect(try await fresh.all(.log, account: AccountID(validating: "young")).count == before)
        #expect(a.logText().contains("the relay lacks log entries"))

        // Nobody can found the account again on the new file, and a new device joins it.
        let d = try await circle.device()
        let squat = try await d.request("POST", "/v1/accounts", json: ["user": "young", "passphrase": "pd"])
        #expect(squat.state == "invalid", "\(squat.object)")
        let b = try await circle.device()
        try await circle.enroll(b, into: "young", approver: a)
        #expect(try await b.request("GET", "/v1/accounts/young/keys/current?wait=10")["key"] == keyA)

        // A caller whose rules cover other accounts does not see this one's name in the relay's lines either.
        try a.writePolicy(DaemonProcess.testPolicy.replacingOccurrences(of: "accounts = [\"*\"]", with: "accounts = [\"app-*\"]"))
        a.signal(SIGHUP)
        try await eventually { try await a.request("GET", "/v1/accounts/young/keys/current").status == 403 }
        let status = try await a.request("GET", "/v1/status")
        #expect(status.status == 200)
        #expect(!status.raw.text.contains("young"), "\(status.raw.text)")
    }

    static func relayState(_ daemon: DaemonProcess) async throws -> String? {
        (try await daemon.request("GET", "/v1/status").object["relay"] as? [String: Any])?["state"] as? String
    }
}

extension SmallDisk {
    /// Remounts the disk read-only (for root too) or writable again.
    func remount(readOnly: Bool) throws {
        let result = Process.runSync("/bin/mount", ["-o", "remount,\(readOnly ? "ro" : "rw")", path])
        guard result.status == 0 else { throw TestFailure("remount \(path): \(result.err)") }
    }
}
