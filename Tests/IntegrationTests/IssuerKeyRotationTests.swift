import Foundation
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
#if canImport(Glibc)
import Glibc
#endif

@Suite("Relay service: the issuer's keys change under it")
struct IssuerKeyRotationTests {
    /// The issuer publishes a new key and signs with it: the relay, which fetched the set
    /// at start, fetches it again for the first token naming the new key (at most once per
    /// `--identity-jwks-refetch`), and accepts it. A token naming no key is refused.
    @Test("a token signed with the issuer's new key is accepted once the set is fetched again; one naming no key is refused")
    func issuerRotatesItsKeys() async throws {
        var template = Array("/tmp/kvrelay-XXXXXX".utf8CString)
        let root = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: root) }
        var issuer = try await TestIssuer.make(in: root)
        let (server, port) = try await RelayServiceTests.serveFolder(root)
        defer { server.killAndReap() }
        let (process, relayPort) = try await RelayServiceTests.startRelay([
            "--store", "sqlite:" + root + "/relay.sqlite", "--listen", "127.0.0.1:0", "--plain-http",
            "--identity-issuer", TestIssuer.issuer, "--identity-audience", TestIssuer.audience,
            "--identity-jwks", "http://127.0.0.1:\(port)/jwks.json", "--identity-jwks-refetch", "2"], log: root + "/relay.log")
        let relay = RelayServiceProcess(attaching: process, port: relayPort, logPath: root + "/relay.log")
        defer { relay.remove() }

        let before = TestDevice()
        #expect(try await relay.candidacy("quinn", before, token: try await issuer.token(for: "quinn", device: before)).status == 200)
        let noKey = TestDevice()
        let unnamed = try await relay.candidacy("quinn", noKey, token: try await issuer.token(for: "quinn", device: noKey, namingNoKey: true))
        #expect(unnamed.status == 401)
        #expect(unnamed.text.contains("names no key"), "\(unnamed.text)")

        try await issuer.rotate(to: "rotated-key")
        let after = TestDevice()
        let token = try await issuer.token(for: "quinn", device: after)
        var answers: [Int] = []
        // Each try is a fresh look; the relay fetches again at most every 2 s. 30 s bounds a relay that never does.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let filed = try await relay.candidacy("quinn", after, token: token)
            answers.append(filed.status)
            if filed.status == 200 { break }
            #expect(filed.status == 401, "\(filed.text)")
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(answers.last == 200, "the new key was never accepted: \(answers)")
        // The old key is still published, and still good.
        let old = TestDevice()
        var oldIssuer = issuer
        oldIssuer.kid = "test-key"
        #expect(try await relay.candidacy("quinn", old, token: try await oldIssuer.token(for: "quinn", device: old)).status == 200)
        let fetches = try String(contentsOfFile: root + "/http.log", encoding: .utf8).components(separatedBy: "GET /jwks.json").count - 1
        #expect(fetches >= 2 && fetches <= 2 + answers.count / 8, "the set was fetched \(fetches) times")
        #expect(await relay.stop() == 0)
    }
}
