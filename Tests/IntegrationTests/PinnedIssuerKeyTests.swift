import Foundation
import JWTKit
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Issue 33, item 1: the issuer's keys each have one algorithm, fixed when the set
/// is read (RS256 for an RSA key, ES256 for a P-256 key), never chosen by a token's
/// header. JWTKit, given an RSA key published without "alg" (optional in RFC 7517),
/// built its verifier from the first token's header and kept it: one stranger's
/// token saying PS256 made every genuine RS256 token fail, for every account,
/// until restart.
@Suite("Relay service: the issuer's keys have pinned algorithms")
struct PinnedIssuerKeyTests {
    /// An RSA issuer whose key set publishes its key without "alg".
    struct RSAIssuer {
        let keys: JWTKeyCollection
        let kid = "rsa-key"

        static func make(in root: String) async throws -> RSAIssuer {
            let pemPath = root + "/rsa.pem"
            let made = try await run("/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", pemPath])
            guard made.status == 0 else { throw TestFailure("openssl: \(made.err)") }
            let key = try Insecure.RSA.PrivateKey(pem: try String(contentsOfFile: pemPath, encoding: .utf8))
            let (modulus, exponent) = try key.publicKey.getKeyPrimitives()
            let entry = ["kty": "RSA", "n": base64URL(modulus), "e": base64URL(exponent), "kid": "rsa-key", "use": "sig"]
            try JSONSerialization.data(withJSONObject: ["keys": [entry]]).write(to: URL(fileURLWithPath: root + "/jwks.json"))
            let keys = JWTKeyCollection()
            await keys.add(rsa: key, digestAlgorithm: .sha256, kid: "rsa-key")
            return RSAIssuer(keys: keys)
        }

        struct Claims: JWTPayload {
            var iss: IssuerClaim
            var aud: AudienceClaim
            var sub: SubjectClaim
            var exp: ExpirationClaim
            var nonce: String
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }

        static func claims(_ account: String, _ device: TestDevice) -> Claims {
            Claims(iss: .init(value: TestIssuer.issuer), aud: .init(value: [TestIssuer.audience]), sub: .init(value: account),
                   exp: .init(value: Date().addingTimeInterval(600)), nonce: device.identityNonce)
        }

        /// A genuine RS256 token.
        func token(_ account: String, _ device: TestDevice) async throws -> String {
            try await keys.sign(Self.claims(account, device), kid: JWKIdentifier(string: kid))
        }

        /// A stranger's token: any header it likes, the genuine claims, a junk signature.
        static func forged(_ account: String, _ device: TestDevice, alg: String, kid: String) throws -> String {
            let header = try JSONSerialization.data(withJSONObject: ["alg": alg, "kid": kid, "typ": "JWT"])
            let payload = try JSONEncoder().encode(claims(account, device))
            return base64URL(header) + "." + base64URL(payload) + "." + base64URL(Data(Random.bytes(256)))
        }

        static func base64URL(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    }

    /// The key set read from a file, and fetched by URL (where the stranger first forces a
    /// refetch with an unknown kid, then names the real kid in the fresh set).
    @Test("a stranger's token naming PS256 for the issuer's RSA key changes nothing: genuine RS256 tokens are still accepted",
          arguments: ["file", "url"])
    func headerCannotChooseTheAlgorithm(_ source: String) async throws {
        var template = Array("/tmp/kvrelay-XXXXXX".utf8CString)
        let root = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: root) }
        let issuer = try await RSAIssuer.make(in: root)
        var server: ChildProcess?
        var jwks = root + "/jwks.json"
        if source == "url" {
            let (served, port) = try await RelayServiceTests.serveFolder(root)
            server = served
            jwks = "http://127.0.0.1:\(port)/jwks.json"
        }
        defer { server?.killAndReap() }
        let (process, port) = try await RelayServiceTests.startRelay([
            "--store", "sqlite:" + root + "/relay.sqlite", "--listen", "127.0.0.1:0", "--plain-http",
            "--identity-issuer", TestIssuer.issuer, "--identity-audience", TestIssuer.audience,
            "--identity-jwks", jwks, "--identity-jwks-refetch", "1"], log: root + "/relay.log")
        let relay = RelayServiceProcess(attaching: process, port: port, logPath: root + "/relay.log")
        defer { relay.remove() }

        let stranger = TestDevice()
        if source == "url" {
            // An unknown kid has the set fetched again: the stranger's next token meets a fresh set.
            let unknown = try await relay.candidacy("victim", stranger, token: try RSAIssuer.forged("victim", stranger, alg: "RS256", kid: "nobody"))
            #expect(unknown.status == 401)
            try await Task.sleep(for: .milliseconds(1100))
        }
        for alg in ["PS256", "PS512", "RS512", "ES256", "RS256"] {
            let forged = try await relay.candidacy("victim", stranger, token: try RSAIssuer.forged("victim", stranger, alg: alg, kid: issuer.kid))
            #expect(forged.status == 401, "\(alg): \(forged.text)")
        }
        // Every account's genuine devices, after the stranger: still accepted.
        for account in ["victim", "bystander"] {
            let device = TestDevice()
            let filed = try await relay.candidacy(account, device, token: try await issuer.token(account, device))
            #expect(filed.status == 200, "\(account) after the stranger's token: \(filed.status) \(filed.text)")
        }
        #expect(await relay.stop() == 0)
    }

    /// A key published with an algorithm outside RELAY.md's allow-list is not loaded.
    @Test("a key whose alg the relay does not take is left out; a set with no usable key is refused at start")
    func keyOutsideTheAllowListIsLeftOut() async throws {
        var template = Array("/tmp/kvrelay-XXXXXX".utf8CString)
        let root = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: root) }
        _ = try await RSAIssuer.make(in: root)
        let set = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/jwks.json"))) as? [String: [[String: String]]]
        var entry = try #require(set?["keys"]?.first)
        entry["alg"] = "PS256"
        try JSONSerialization.data(withJSONObject: ["keys": [entry]]).write(to: URL(fileURLWithPath: root + "/jwks.json"))
        let process = try ChildProcess(DaemonProcess.binaryDirectory + "/keyvault-relay", [
            "--store", "sqlite:" + root + "/relay.sqlite", "--listen", "127.0.0.1:0", "--plain-http",
            "--identity-issuer", TestIssuer.issuer, "--identity-audience", TestIssuer.audience,
            "--identity-jwks", root + "/jwks.json"], stdoutPath: root + "/out", stderrPath: root + "/err")
        // A relay that takes the set starts and stays: stopped after 15 s, it fails the test.
        let deadline = ContinuousClock.now + .seconds(15)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let stayed = process.isRunning
        if stayed { process.signal(SIGKILL) }
        let status = await process.wait()
        let err = (try? String(contentsOfFile: root + "/err", encoding: .utf8)) ?? ""
        #expect(!stayed && status != 0, "the relay started with no usable key")
        #expect(err.contains("RS256 or ES256"), "\(err)")
    }
}
