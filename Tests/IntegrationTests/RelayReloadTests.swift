import Foundation
import KeyVaultTestSupport
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
#if canImport(Glibc)
import Glibc
#endif

/// SIGHUP (`systemctl reload`) on a running keyvault-relay: its TLS certificate and
/// its identity key set read again without a restart, so no held read is dropped;
/// a file that does not load is refused and the one in force kept (issue 36).
@Suite("keyvault-relay reloads its certificate and key set at SIGHUP")
struct RelayReloadTests {
    @Test("the next connection gets the new certificate while a held read rides across the reload; a bad certificate, or a key that is not its, is refused and the one in force kept")
    func certificate() async throws {
        let root = try RelaySettingsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let first = try await RelayServiceTLSTests.makeCertificates(in: try Self.folder(root + "/first"))
        let second = try await RelayServiceTLSTests.makeCertificates(in: try Self.folder(root + "/second"))
        let served = (certificate: root + "/cert.pem", key: root + "/key.pem")
        try Self.install(first.certificate, at: served.certificate)
        try Self.install(first.key, at: served.key)
        let issuer = try await TestIssuer.make(in: root)
        let relay = try await RelayServiceProcess.start(store: "sqlite:" + root + "/relay.sqlite", issuer: issuer, root: root, name: "tls",
                                                        tls: served, arguments: ["--metrics-listen", "127.0.0.1:0"])
        defer { relay.remove() }
        #expect(try await Self.fingerprint(servedBy: relay) == Self.fingerprint(of: first.certificate))

        // A device's read held on a connection made under the first certificate.
        let device = TestDevice()
        #expect(try await relay.candidacy("hup", device, token: try await issuer.token(for: "hup", device: device)).status == 200)
        var circle = CircleState(account: try AccountID(validating: "hup"))
        let genesis = circle.nextEntry(.genesis(device: device.keys, generation: .first, keyID: KeyID(Random.bytes(16)), keyCreatedAt: 1),
                                       signer: device.signing, signerID: device.id, at: Date())
        try circle.apply(genesis)
        #expect(try await relay.publish("hup", [.log(genesis)], as: device).status == 200)
        let after = try #require(try await relay.rows("hup", as: device).last).cursor
        let held = Task { try await relay.rows("hup", after: after, wait: 60, as: device) }
        try await eventually { try await relay.metric("keyvault_relay_held_reads") == 1 }

        // Renewed: both files replaced, then SIGHUP.
        try Self.install(second.certificate, at: served.certificate)
        try Self.install(second.key, at: served.key)
        relay.process.signal(SIGHUP)
        try await eventually { try await relay.metric(Self.reloads("tls_certificate", "reloaded")) == 1 }
        #expect(try await Self.fingerprint(servedBy: relay) == Self.fingerprint(of: second.certificate))
        #expect(try await relay.metric("keyvault_relay_held_reads") == 1)
        // A record lands: the read held across the reload answers with it.
        let announce = circle.nextEntry(.announce(generation: Generation.first.next!, keyID: KeyID(Random.bytes(16)), keyCreatedAt: 2),
                                        signer: device.signing, signerID: device.id, at: Date())
        #expect(try await relay.publish("hup", [.log(announce)], as: device).status == 200)
        let answered = try await held.value
        #expect(answered.count == 1 && answered.first.map { $0.cursor > after } == true, "\(answered)")

        // Not a certificate: refused, the second one still served.
        try Self.install(contents: "not a certificate\n", at: served.certificate)
        relay.process.signal(SIGHUP)
        try await eventually { try await relay.metric(Self.reloads("tls_certificate", "refused")) == 1 }
        #expect(try await Self.fingerprint(servedBy: relay) == Self.fingerprint(of: second.certificate))
        // The first certificate beside the second's key: not its key, refused too.
        try Self.install(first.certificate, at: served.certificate)
        relay.process.signal(SIGHUP)
        try await eventually { try await relay.metric(Self.reloads("tls_certificate", "refused")) == 2 }
        #expect(try await Self.fingerprint(servedBy: relay) == Self.fingerprint(of: second.certificate))
        #expect(try await relay.send("GET", "/v1/health", as: nil).status == 200)
        #expect(try await relay.metric(Self.reloads("tls_certificate", "reloaded")) == 1)

        #expect(await relay.stop() == 0)
        let log = try String(contentsOfFile: relay.logPath, encoding: .utf8)
        #expect(log.contains("the TLS certificate was reloaded"), "\(log.suffix(2000))")
        #expect(log.contains("the TLS certificate was not reloaded; the one in force stays"), "\(log.suffix(2000))")
        #expect(log.contains("--tls-cert: cannot load a PEM certificate chain from \(served.certificate)"), "\(log.suffix(2000))")
        #expect(log.contains("--tls-key: \(served.key) is not the key of the certificate in \(served.certificate)"), "\(log.suffix(2000))")
    }

    @Test("the identity key set file read again: a token of the issuer's new key is accepted after SIGHUP, not before; a set that does not load is refused and the one in force kept")
    func keySet() async throws {
        let root = try RelaySettingsTests.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var issuer = try await TestIssuer.make(in: root)
        let relay = try await RelayServiceProcess.start(store: "sqlite:" + root + "/relay.sqlite", issuer: issuer, root: root, name: "keys",
                                                        arguments: ["--metrics-listen", "127.0.0.1:0"])
        defer { relay.remove() }

        // The issuer publishes a new key and signs with it: a file is not read again by itself.
        try await issuer.rotate(to: "rotated-key")
        let early = TestDevice()
        let refused = try await relay.candidacy("keys", early, token: try await issuer.token(for: "keys", device: early))
        #expect(refused.status == 401 && refused.text.contains("signed by a key the issuer does not publish"), "\(refused.text)")

        relay.process.signal(SIGHUP)
        try await eventually { try await relay.metric(Self.reloads("identity_key_set", "reloaded")) == 1 }
        #expect(try await relay.candidacy("keys", early, token: try await issuer.token(for: "keys", device: early)).status == 200)

        // Not a key set, then one with no key it can use: each refused, the rotated set still in force.
        for (index, text) in ["{not json", #"{"keys": []}"#].enumerated() {
            try Self.install(contents: text, at: issuer.jwksPath)
            relay.process.signal(SIGHUP)
            try await eventually { try await relay.metric(Self.reloads("identity_key_set", "refused")) == Double(index + 1) }
            let device = TestDevice()
            let filed = try await relay.candidacy("keys", device, token: try await issuer.token(for: "keys", device: device))
            #expect(filed.status == 200, "\(filed.text)")
        }
        #expect(try await relay.metric(Self.reloads("tls_certificate", "reloaded")) == nil)
        #expect(await relay.stop() == 0)
        let log = try String(contentsOfFile: relay.logPath, encoding: .utf8)
        #expect(log.contains("the identity key set was not reloaded; the one in force stays"), "\(log.suffix(2000))")
        #expect(log.contains("holds no RS256 or ES256 key with a key ID"), "\(log.suffix(2000))")
    }

    // MARK: Helpers

    static func reloads(_ file: String, _ outcome: String) -> String {
        #"keyvault_relay_reloads_total{file="\#(file)",outcome="\#(outcome)"}"#
    }

    static func folder(_ path: String) throws -> String {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Replaces `path` whole (a rename), as a renewal tool writes a certificate: never half a file.
    static func install(_ source: String, at path: String) throws {
        try install(contents: try String(contentsOfFile: source, encoding: .utf8), at: path)
    }

    static func install(contents: String, at path: String) throws {
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The SHA-256 fingerprint of a PEM certificate file.
    static func fingerprint(of file: String) async throws -> String {
        let result = try await run("/usr/bin/openssl", ["x509", "-in", file, "-noout", "-fingerprint", "-sha256"])
        guard result.status == 0 else { throw TestFailure("openssl x509: \(result.err)") }
        return result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The fingerprint of the certificate the relay serves to a new connection.
    static func fingerprint(servedBy relay: RelayServiceProcess) async throws -> String {
        let result = try await run("/bin/sh", ["-c", """
            /usr/bin/openssl s_client -connect 127.0.0.1:\(relay.port) </dev/null 2>/dev/null \
            | /usr/bin/openssl x509 -noout -fingerprint -sha256
            """])
        guard result.status == 0 else { throw TestFailure("openssl s_client: \(result.err)") }
        return result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
