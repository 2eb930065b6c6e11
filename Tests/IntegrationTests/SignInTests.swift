import Foundation
import Testing

/// The person's sign-in, through a daemon whose relay is a relay service: the
/// identity nonce a token is made for, and what the CLI says when one is missing.
@Suite("Sign-in through a daemon on a relay service")
struct SignInTests {
    @Test("a refused token leaves the identity nonce as it was: a token made again for it creates the account")
    func refusedTokenKeepsTheNonce() async throws {
        try await RelayServiceFixture.with(.sqlite) { f in
            let daemon = try DaemonProcess(relay: f.a.base)
            defer { daemon.remove() }
            try await daemon.start()
            let nonce = try #require(try await daemon.request("POST", "/v1/accounts/nina/identity-nonce")["nonce"])

            // A token the relay refuses (another app's audience): nothing is created.
            let foreign = try await f.issuer.token(account: "nina", nonce: nonce, audience: "com.example.other")
            let refused = try await daemon.request("POST", "/v1/accounts", json: ["user": "nina", "passphrase": "pw", "identityToken": foreign])
            #expect(refused.status != 200, "\(refused.raw.text)")
            #expect(try await daemon.request("GET", "/v1/accounts/nina/keys/current").state == "unknown")

            // The nonce is the same; the app's next sign-in, made for it, is taken.
            #expect(try await daemon.request("POST", "/v1/accounts/nina/identity-nonce")["nonce"] == nonce)
            let token = try await f.issuer.token(account: "nina", nonce: nonce)
            let created = try await daemon.request("POST", "/v1/accounts", json: ["user": "nina", "passphrase": "pw", "identityToken": token])
            #expect(created.status == 200, "\(created.raw.text)")
            #expect(try await daemon.request("GET", "/v1/accounts/nina/keys/current?wait=10").state == "ready")
            // The account holds that identity now; its nonce is the account's own.
            #expect(try await daemon.request("POST", "/v1/accounts/nina/identity-nonce")["nonce"] == nonce)
        }
    }

    @Test("the CLI without --identity-token-file names its own options, not the API's field")
    func cliNamesItsOptions() async throws {
        try await RelayServiceFixture.with(.sqlite) { f in
            let daemon = try DaemonProcess(relay: f.a.base)
            defer { daemon.remove() }
            try await daemon.start()
            let cli = DaemonProcess.binaryDirectory + "/keyvault"
            let passphrase = daemon.root + "/passphrase"
            try "pw\n".write(toFile: passphrase, atomically: true, encoding: .utf8)
            for command in [["account", "create"], ["enroll", "--device-name", "phone"]] {
                let said = try await run(cli, command + ["-a", "olaf", "--passphrase-file", passphrase, "--socket", daemon.socket])
                #expect(said.status == 1, "\(said.err)")
                #expect(said.err.contains("--identity-token-file FILE"), "\(said.err)")
                #expect(said.err.contains("keyvault account identity-nonce --account olaf"), "\(said.err)")
                #expect(!(said.out + said.err).contains("identityToken"), "\(said.out) \(said.err)")
            }
        }
    }
}
