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

@Suite("Who may ask, and where keys must never appear")
struct IsolationTests {
    /// The socket is opened to everyone for this test, so the uid check in the
    /// daemon is what refuses the other user, not the file mode.
    @Test("a process of another uid is refused", .enabled(if: geteuid() == 0, "switching to another uid needs root"))
    func otherUIDRefused() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "alice", "passphrase": "pw"])
        let key = try #require(try await daemon.request("GET", "/v1/accounts/alice/keys/current")["key"])
        chmod(daemon.root, 0o755)
        chmod(daemon.socket, 0o666)

        for path in ["/v1/accounts/alice/keys/current", "/v1/accounts/alice/keys/1", "/v1/status", "/v1/health"] {
            let (status, out, err) = try await run("/usr/bin/setpriv", [
                "--reuid=65534", "--regid=65534", "--clear-groups",
                "/usr/bin/curl", "-s", "--unix-socket", daemon.socket, "http://localhost" + path,
            ])
            #expect(status == 0, "curl as nobody failed: \(err)")
            let object = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]
            #expect(object?["state"] as? String == "forbidden", "\(path): \(out)")
            #expect(!out.contains(key))
            try SecretScan.expectAbsent(keys: [key], in: Data(out.utf8), where: "the answer to uid 65534")
        }
        // The daemon's own uid is still served.
        #expect(try await daemon.request("GET", "/v1/accounts/alice/keys/current")["key"] == key)
    }

    @Test("no key or passphrase in the logs, the data folder or other callers' answers")
    func secretsNeverLeak() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start(extraArguments: ["--log-level", "trace"])
        var keys: [String] = []
        let passphrases = ["leak-check passphrase one", "leak-check passphrase two"]
        for user in ["erin", "frank", "grace"] {
            #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": user, "passphrase": passphrases[0]]).status == 200)
            keys.append(try #require(try await daemon.request("GET", "/v1/accounts/\(user)/keys/current")["key"]))
            // The change first, then a wrong try: its back-off holds back nothing that follows.
            #expect(try await daemon.request("POST", "/v1/accounts/\(user)/passphrase", json: ["old": passphrases[0], "new": passphrases[1]]).status == 200)
            _ = try await daemon.request("POST", "/v1/accounts/\(user)/lock")
            #expect(try await daemon.request("POST", "/v1/accounts/\(user)/unlock", json: ["passphrase": "wrong"]).status == 401)
        }
        // Answers that are not `ready` carry no key.
        var others = Data()
        for path in ["/v1/status", "/v1/accounts/erin/keys/2", "/v1/accounts/erin/keys/id/00000000000000000000000000000000"] {
            others += Data(try await daemon.request("GET", path).raw.body)
        }
        _ = try await daemon.request("POST", "/v1/accounts/erin/lock")
        others += Data(try await daemon.request("GET", "/v1/accounts/erin/keys/current").raw.body)
        #expect(await daemon.stop() == 0)

        let log = Data(daemon.logText().utf8)
        #expect(daemon.logText().contains("key released"), "the audit line is missing")
        try SecretScan.expectAbsent(keys: keys, passphrases: passphrases, in: log, where: "the daemon's log")
        try SecretScan.expectAbsent(keys: keys, passphrases: passphrases, in: others, where: "non-ready answers")
        for name in try FileManager.default.contentsOfDirectory(atPath: daemon.dataDirectory) {
            let data = try Data(contentsOf: URL(fileURLWithPath: daemon.dataDirectory + "/" + name))
            try SecretScan.expectAbsent(keys: keys, passphrases: passphrases, in: data, where: "data file \(name)")
        }
    }

    @Test("the data folder is 0700 and its files 0600; the socket is 0600")
    func permissions() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "perm", "passphrase": "pw"])
        #expect(try mode(daemon.dataDirectory) == 0o700)
        #expect(try mode(daemon.socket) == 0o600)
        for name in try FileManager.default.contentsOfDirectory(atPath: daemon.dataDirectory) {
            #expect(try mode(daemon.dataDirectory + "/" + name) == 0o600, "\(name)")
        }
    }

    private func mode(_ path: String) throws -> mode_t {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw TestFailure("no \(path)") }
        return info.st_mode & 0o777
    }
}

/// Looks for every form a key or passphrase could leak in: raw bytes, hex
/// (both cases), base64 (standard and URL-safe, with and without padding).
enum SecretScan {
    static func forms(ofKey base64: String) -> [Data] {
        guard let raw = Base64.decode(base64) else { return [] }
        let hex = Hex.encode(raw)
        let unpadded = base64.replacingOccurrences(of: "=", with: "")
        let urlSafe = unpadded.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        return [Data(raw), Data(hex.utf8), Data(hex.uppercased().utf8), Data(base64.utf8), Data(unpadded.utf8), Data(urlSafe.utf8),
                Data(base64.replacingOccurrences(of: "/", with: "\\/").utf8)]
    }

    static func expectAbsent(keys: [String], passphrases: [String] = [], in data: Data, where place: String) throws {
        for key in keys {
            for form in forms(ofKey: key) where data.range(of: form) != nil {
                Issue.record("a key appears in \(place)")
            }
        }
        for passphrase in passphrases where data.range(of: Data(passphrase.utf8)) != nil {
            Issue.record("a passphrase appears in \(place)")
        }
    }
}
