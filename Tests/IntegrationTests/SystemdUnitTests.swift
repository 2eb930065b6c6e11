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

/// `dist/keyvaultd.service`: systemd accepts it, it has the hardening the
/// README promises, and the daemon runs with the arguments it gives.
@Suite("The systemd unit")
struct SystemdUnitTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let unitPath = repository + "/dist/keyvaultd.service"
    static let analyze = "/usr/bin/systemd-analyze"

    static func unit() throws -> String {
        try String(contentsOfFile: unitPath, encoding: .utf8)
    }

    static func execStart(_ unit: String) throws -> [String] {
        guard let line = unit.split(separator: "\n").first(where: { $0.hasPrefix("ExecStart=") }) else { throw TestFailure("the unit has no ExecStart=") }
        return line.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
    }

    /// `systemd-analyze verify` on `dist/NAME.service` with the built `binary` in its ExecStart: no error, no warning.
    static func verify(unit name: String, binary: String) async throws {
        // Like PostgreSQL for the relay tests: a missing tool fails the test, it does not skip it.
        guard FileManager.default.isExecutableFile(atPath: analyze) else {
            Issue.record("systemd-analyze is not installed (\(analyze)): the unit cannot be verified; run `make deps` (it installs systemd)")
            return
        }
        let folder = NSTemporaryDirectory() + "kvunit-\(name)-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = try String(contentsOfFile: repository + "/dist/\(name).service", encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/\(binary)", with: DaemonProcess.binaryDirectory + "/" + binary)
        try text.write(toFile: folder + "/\(name).service", atomically: true, encoding: .utf8)
        let result = try await run(analyze, ["verify", "--man=no", folder + "/\(name).service"])
        #expect(result.status == 0, "systemd-analyze verify: \(result.err)")
        #expect(result.err.isEmpty, "warnings: \(result.err)")
        #expect(result.out.isEmpty, "\(result.out)")
    }

    @Test("systemd-analyze verify accepts it (with the built keyvaultd in ExecStart)")
    func verifies() async throws {
        try await Self.verify(unit: "keyvaultd", binary: "keyvaultd")
    }

    @Test("systemd-analyze verify accepts the relay service's unit too (with the built keyvault-relay), hardened like keyvaultd's")
    func relayUnitVerifies() async throws {
        try await Self.verify(unit: "keyvault-relay", binary: "keyvault-relay")
        let lines = Set(try String(contentsOfFile: Self.repository + "/dist/keyvault-relay.service", encoding: .utf8).split(separator: "\n").map(String.init))
        for directive in ["NoNewPrivileges=yes", "ProtectSystem=strict", "LimitCORE=0", "User=keyvault-relay", "UMask=0077", "PrivateTmp=yes",
                          "ExecReload=/bin/kill -HUP $MAINPID", "RestartPreventExitStatus=64 65 66"] {
            #expect(lines.contains(directive), "missing \(directive)")
        }
    }

    @Test("it is Type=notify and hardened as the README says")
    func hardened() throws {
        let lines = Set(try Self.unit().split(separator: "\n").map(String.init))
        for directive in [
            "Type=notify", "LimitMEMLOCK=64M", "LimitCORE=0", "ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes",
            "ProtectHome=yes", "RuntimeDirectory=keyvaultd", "StateDirectory=keyvaultd", "StateDirectoryMode=0700", "UMask=0077",
            "ExecReload=/bin/kill -HUP $MAINPID", "User=keyvaultd",
        ] {
            #expect(lines.contains(directive), "missing \(directive)")
        }
    }

    @Test("keyvaultd runs with the unit's arguments and tells systemd it is ready")
    func argumentsRun() async throws {
        let root = NSTemporaryDirectory() + "kvunit-run-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: root) }
        for folder in ["state", "runtime/keyvaultd", "config/keyvaultd/policy"] {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        try DaemonProcess.testPolicy.write(toFile: root + "/config/keyvaultd/policy/test.toml", atomically: true, encoding: .utf8)
        // %S, %t and %E are the state, runtime and configuration roots.
        let arguments = try Self.execStart(try Self.unit()).dropFirst().map {
            $0.replacingOccurrences(of: "%S", with: root + "/state").replacingOccurrences(of: "%t", with: root + "/runtime")
                .replacingOccurrences(of: "%E", with: root + "/config")
        }
        let notify = root + "/notify.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in notify.utf8.enumerated() { buffer[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        #expect(bound == 0)

        let process = try ChildProcess(DaemonProcess.binaryDirectory + "/keyvaultd", arguments, environment: ["NOTIFY_SOCKET": notify],
                                       stdoutPath: root + "/log", stderrPath: root + "/log")
        defer {
            process.signal(SIGKILL)
        }
        var message = ""
        for _ in 0..<400 where message.isEmpty {
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { message = String(decoding: buffer.prefix(count), as: UTF8.self) }
            if process.poll() != nil { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        #expect(message == "READY=1", "\((try? String(contentsOfFile: root + "/log", encoding: .utf8)) ?? "")")
        #expect(FileManager.default.fileExists(atPath: root + "/runtime/keyvaultd/keyvaultd.sock"))
        process.signal(SIGTERM)
        #expect(await process.wait() == 0)
    }
}
