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
}
