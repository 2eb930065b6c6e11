import Foundation
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

/// A policy reload (SIGHUP) reaches the requests already held open: a waiting
/// read the new policy does not allow answers `forbidden`, an event stream
/// ends with a `forbidden` event; those it still allows go on.
@Suite("A revoke reaches waiting reads and event streams")
struct RevokeDuringHoldTests {
    /// Two rules: `kept` may do everything; `cut` everything but what `cutAllow` leaves out.
    static func policy(cutAllow: String) -> String {
        """
        [kdf-test]
        passes = 1
        memory_kib = 64

        [[rule]]
        uid = "self"
        accounts = ["kept"]
        allow = ["*"]

        [[rule]]
        uid = "self"
        accounts = ["cut"]
        allow = \(cutAllow)
        """
    }

    static let everything = #"["*"]"#
    static let allButRead = #"["health", "status", "create", "unlock", "lock", "wait", "subscribe", "rotate", "seal"]"#
    static let allButSubscribe = #"["health", "status", "create", "unlock", "lock", "read", "wait", "rotate", "seal"]"#

    private func startDaemon() async throws -> DaemonProcess {
        let daemon = try DaemonProcess(policy: Self.policy(cutAllow: Self.everything))
        // With a relay, a read of a generation not announced yet waits for it.
        daemon.relay = "sqlite:" + daemon.root + "/relay.sqlite"
        try await daemon.start()
        for user in ["kept", "cut"] {
            #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": user, "passphrase": "pw"]).status == 200)
        }
        return daemon
    }

    private func held(_ daemon: DaemonProcess) async throws -> [String: Any] {
        try await daemon.request("GET", "/v1/server").object["held"] as? [String: Any] ?? [:]
    }

    @Test("a waiting read whose `read` is taken away answers forbidden at once; another account's read waits on")
    func revokeDuringWait() async throws {
        let daemon = try await startDaemon()
        defer { daemon.remove() }
        let cut = try RawSocket(path: daemon.socket)
        cut.send("GET /v1/accounts/cut/keys/2?wait=60 HTTP/1.1\r\nHost: x\r\n\r\n")
        let kept = try RawSocket(path: daemon.socket)
        kept.send("GET /v1/accounts/kept/keys/2?wait=60 HTTP/1.1\r\nHost: x\r\n\r\n")
        try await eventually { try await held(daemon)["waitingReads"] as? Int == 2 }

        try daemon.writePolicy(Self.policy(cutAllow: Self.allButRead))
        daemon.signal(SIGHUP)
        let answer = try #require(try await cut.readResponse(timeout: .seconds(15)), "an answer before the wait ends: \(cut.text)")
        #expect(answer.status == 403)
        #expect(answer.state == "forbidden")
        #expect((answer.object["error"] as? String)?.contains("policy") == true)
        #expect(answer.object["key"] == nil)

        // The other account's read still waits, and gets its key when it arrives.
        #expect(try await held(daemon)["waitingReads"] as? Int == 1)
        kept.readAvailable()
        #expect(kept.response == nil)
        #expect(try await daemon.request("POST", "/v1/accounts/kept/rotate", json: ["promote": "now"]).status == 200)
        let key = try #require(try await kept.readResponse(timeout: .seconds(15)))
        #expect(key.state == "ready")
        #expect(key.object["generation"] as? Int == 2)

        // A new generation of `cut` is not read either: the refusal stands.
        #expect(try await daemon.request("POST", "/v1/accounts/cut/rotate", json: ["promote": "now"]).status == 200)
        #expect(try await daemon.request("GET", "/v1/accounts/cut/keys/2").state == "forbidden")
        try await eventually { try await held(daemon)["waitingReads"] as? Int == 0 }
    }

    @Test("an event stream whose `subscribe` is taken away ends with a forbidden event; another account's stream goes on")
    func revokeDuringEvents() async throws {
        let daemon = try await startDaemon()
        defer { daemon.remove() }
        let cut = try RawSocket(path: daemon.socket)
        cut.send("GET /v1/accounts/cut/events HTTP/1.1\r\nHost: x\r\n\r\n")
        let kept = try RawSocket(path: daemon.socket)
        kept.send("GET /v1/accounts/kept/events HTTP/1.1\r\nHost: x\r\n\r\n")
        for socket in [cut, kept] {
            try await socket.read(until: { $0.text.contains("keyvaultd events") }, timeout: .seconds(15))
            #expect(socket.text.contains("keyvaultd events"))
        }
        try await eventually { try await held(daemon)["eventStreams"] as? Int == 2 }

        try daemon.writePolicy(Self.policy(cutAllow: Self.allButSubscribe))
        daemon.signal(SIGHUP)
        // The stream says why, then ends (the chunked body's last chunk); the connection stays usable.
        try await cut.read(until: { $0.text.contains("\r\n0\r\n\r\n") }, timeout: .seconds(15))
        #expect(cut.text.contains("event: forbidden"))
        #expect(cut.text.contains(#""state":"forbidden""#))
        #expect(cut.text.contains("\r\n0\r\n\r\n"), "the stream ended: \(cut.text)")
        try await eventually { try await held(daemon)["eventStreams"] as? Int == 1 }

        // Events of `cut` reach nobody now; `kept`'s stream still carries its own.
        _ = try await daemon.request("POST", "/v1/accounts/cut/lock")
        _ = try await daemon.request("POST", "/v1/accounts/kept/lock")
        try await kept.read(until: { $0.text.contains("event: locked") }, timeout: .seconds(15))
        #expect(kept.text.contains("event: locked"))
        cut.readAvailable()
        #expect(!cut.text.contains("event: locked"))
        // Subscribing again is refused.
        #expect(try await daemon.request("GET", "/v1/accounts/cut/events").state == "forbidden")
    }
}
