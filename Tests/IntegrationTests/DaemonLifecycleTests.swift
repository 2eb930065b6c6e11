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

@Suite("The daemon's life: start, signals, sockets, policy")
struct DaemonLifecycleTests {
    @Test("SIGTERM exits 0 and removes the socket; a stale socket is replaced; a live one is refused")
    func socketsAndSignals() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        #expect(await daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socket))

        try await daemon.start()
        await daemon.kill9()
        #expect(FileManager.default.fileExists(atPath: daemon.socket), "SIGKILL leaves a stale socket behind")
        try await daemon.start()
        #expect(try await daemon.request("GET", "/v1/health").state == "ready")

        // A second daemon on the same socket refuses to start and leaves the first one serving.
        let second = try await run(DaemonProcess.binaryDirectory + "/keyvaultd", [
            "--data-dir", daemon.root + "/data2", "--socket", daemon.socket, "--policy", daemon.policyDirectory,
        ])
        #expect(second.status != 0)
        #expect(second.err.contains("another keyvaultd is answering"))
        #expect(try await daemon.request("GET", "/v1/health").state == "ready")

        // A second daemon on the same data directory (its own socket) refuses to start, naming the
        // first by its pid, and leaves the first one serving: two would both own the vault's accounts.
        let pid = try #require(daemon.process?.pid)
        let twin = try await run(DaemonProcess.binaryDirectory + "/keyvaultd", [
            "--data-dir", daemon.dataDirectory, "--socket", daemon.root + "/twin.sock", "--policy", daemon.policyDirectory,
        ], timeout: .seconds(10))
        #expect(twin.status == 1, "\(twin)")
        #expect(twin.err.contains("another keyvaultd (pid \(pid)) is using \(daemon.dataDirectory)"), "\(twin.err)")
        #expect(!FileManager.default.fileExists(atPath: daemon.root + "/twin.sock"))
        #expect(try await daemon.request("GET", "/v1/health").state == "ready")
        // Stopped, it lets the next one in.
        #expect(await daemon.stop() == 0)
        try await daemon.start()
        #expect(try await daemon.request("GET", "/v1/health").state == "ready")
    }

    @Test("a bad policy stops the daemon at start with the file, line and problem")
    func badPolicyAtStart() async throws {
        let daemon = try DaemonProcess(policy: """
            [[rule]]
            uid = "self"
            accounts = ["*"]
            allow = ["read", "raed"]
            """)
        defer { daemon.remove() }
        let result = try await run(DaemonProcess.binaryDirectory + "/keyvaultd", [
            "--data-dir", daemon.dataDirectory, "--socket", daemon.socket, "--policy", daemon.policyDirectory,
        ])
        #expect(result.status == 78)
        #expect(result.err.contains("test.toml:4: unknown permission 'raed'"), "\(result.err)")

        // A policy folder that is not there (the README's path before installing) says so, and what to do.
        let missing = try await run(DaemonProcess.binaryDirectory + "/keyvaultd", [
            "--data-dir", daemon.dataDirectory, "--socket", daemon.socket, "--policy", daemon.root + "/no-such-policy",
        ], timeout: .seconds(10))
        #expect(missing.status == 78)
        #expect(missing.err.contains("cannot read the policy directory: there is no such folder (leave out --policy"), "\(missing.err)")
    }

    @Test("SIGHUP applies a good policy and refuses a bad one, keeping the old")
    func sighupReload() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        _ = try await daemon.request("POST", "/v1/accounts", json: ["user": "hup", "passphrase": "pw"])
        #expect(try await daemon.request("GET", "/v1/accounts/hup/keys/current").status == 200)

        // A policy without `read`: after SIGHUP, reads are forbidden.
        try daemon.writePolicy(DaemonProcess.testPolicy.replacingOccurrences(of: #"allow = ["*"]"#, with: #"allow = ["health", "status", "unlock", "lock"]"#))
        daemon.signal(SIGHUP)
        try await eventually { try await daemon.request("GET", "/v1/accounts/hup/keys/current").status == 403 }

        // A broken policy: refused, and the one in force stays.
        try daemon.writePolicy("[[rule]]\nuid = \"self\"\naccounts = [\"*\"]\nallow = [\"*\"\n")
        daemon.signal(SIGHUP)
        try await eventually { daemon.logText().contains("policy reload refused") }
        #expect(try await daemon.request("GET", "/v1/accounts/hup/keys/current").status == 403)
        #expect(daemon.logText().contains("test.toml:"))
    }

    @Test("status lists only the accounts the caller's rules cover")
    func statusIsScoped() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        for user in ["app-one", "other"] { _ = try await daemon.request("POST", "/v1/accounts", json: ["user": user, "passphrase": "pw"]) }
        #expect((try await daemon.request("GET", "/v1/status").object["accounts"] as? [Any])?.count == 2)
        try daemon.writePolicy(DaemonProcess.testPolicy.replacingOccurrences(of: #"accounts = ["*"]"#, with: #"accounts = ["app-*"]"#))
        daemon.signal(SIGHUP)
        try await eventually {
            let accounts = try await daemon.request("GET", "/v1/status").object["accounts"] as? [[String: Any]] ?? []
            return accounts.count == 1 && accounts.first?["account"] as? String == "app-one"
        }
    }

    @Test("READY=1 goes to $NOTIFY_SOCKET")
    func systemdNotify() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        let path = daemon.root + "/notify.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in path.utf8.enumerated() { buffer[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        #expect(bound == 0)
        try await daemon.start(environment: ["NOTIFY_SOCKET": path])
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        #expect(count > 0)
        #expect(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self) == "READY=1")
    }

    /// The one test that runs the shipped policy: libsodium's MODERATE cost.
    @Test("the shipped default policy creates accounts at MODERATE cost")
    func shippedPolicy() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path + "/policy"
        try FileManager.default.removeItem(atPath: daemon.policyDirectory)
        try FileManager.default.copyItem(atPath: shipped, toPath: daemon.policyDirectory)
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "strong", "passphrase": "pw"]).status == 200)
        #expect(await daemon.stop() == 0)
        let record = try #require(try Vault(directory: daemon.dataDirectory).snapshot(of: AccountID(validating: "strong"))).account
        #expect(record.kdf == KDFParameters.moderate)
        #expect(record.kdf.memLimitBytes == 256 << 20)
        #expect(record.kdf.opsLimit == 3)
    }
}

/// Polls a condition for up to 15 seconds (generous: CI machines are shared and noisy).
func eventually(_ condition: () async throws -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    // Asked often (a condition is a request or two to a local process): the test goes on soon after it holds.
    let end = ContinuousClock.now + .seconds(15)
    while ContinuousClock.now < end {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    if try await condition() { return }
    Issue.record("condition not met within 15 s", sourceLocation: sourceLocation)
}
