import Foundation
import Testing
import KeyVaultTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The relay service over HTTPS with a private CA, as an operator would run it
/// without a terminator: a device that trusts the CA (`--relay-ca`) creates an
/// account through it; one that does not is refused the connection and nothing
/// is created.
@Suite("The relay service over TLS")
struct RelayServiceTLSTests {
    /// A CA and a certificate for 127.0.0.1 it signed, made with openssl.
    static func makeCertificates(in root: String) async throws -> (ca: String, certificate: String, key: String) {
        let ca = root + "/ca.pem", caKey = root + "/ca.key", key = root + "/relay.key", csr = root + "/relay.csr"
        let certificate = root + "/relay.pem", ext = root + "/san.ext"
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: ext, atomically: true, encoding: .utf8)
        for arguments in [
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", caKey, "-out", ca,
             "-subj", "/CN=keyvault test CA", "-days", "2"],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out", certificate, "-days", "2", "-extfile", ext],
        ] {
            let result = try await run("/usr/bin/openssl", arguments)
            guard result.status == 0 else { throw TestFailure("openssl \(arguments[0]): \(result.err)") }
        }
        return (ca, certificate, key)
    }

    @Test("a device trusting the private CA creates an account over HTTPS; one that does not is refused and creates nothing")
    func privateCA() async throws {
        var template = Array("/tmp/kvtls-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
        let root = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (ca, certificate, key) = try await Self.makeCertificates(in: root)
        let issuer = try await TestIdentityIssuer.make(in: root)
        let relay = try await RelayServiceProcess.start(store: "sqlite:" + root + "/relay.sqlite", issuer: issuer, root: root, name: "tls",
                                                        tls: (certificate, key))
        defer { relay.remove() }
        let url = "https://127.0.0.1:\(relay.port)"

        let trusting = try DaemonProcess()
        trusting.relays = [url]
        trusting.identityIssuer = issuer
        try await trusting.start(extraArguments: ["--relay-ca", ca])
        defer { trusting.remove() }
        let created = try await trusting.request("POST", "/v1/accounts", json: ["user": "tls-user", "passphrase": "pp"])
        #expect(created.status == 200, "\(created.object) \(trusting.logText().suffix(2000))")
        let status = try await trusting.request("GET", "/v1/status").object["relay"] as? [String: Any]
        #expect(status?["state"] as? String == "reachable", "\(String(describing: status))")

        let doubting = try DaemonProcess()
        doubting.relays = [url]
        doubting.identityIssuer = issuer
        try await doubting.start()
        defer { doubting.remove() }
        let refused = try await doubting.request("POST", "/v1/accounts", json: ["user": "tls-other", "passphrase": "pp"])
        #expect(refused.status != 200, "an untrusted certificate was accepted: \(refused.object)")
        #expect(refused.state == "error", "\(refused.object)")
        #expect((try await doubting.request("GET", "/v1/accounts/tls-other/keys/current")).state == "unknown")
    }
}
