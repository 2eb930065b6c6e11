package import Foundation
import JWTKit

/// A local OpenID Connect issuer made by a test or the bench: an ES256 key, its
/// JWKS in a file for `keyvault-relay --identity-jwks`, and ID tokens signed
/// with it (or, to be refused, with what is wrong about them). Never shipped in
/// the daemon or the relay: only tests and the bench link it.
package struct TestIdentityIssuer: Sendable {
    package static let issuer = "https://issuer.test.keyvault"
    package static let audience = "app.keyvault.test"
    let keys: JWTKeyCollection
    /// Another key, in no JWKS: a token signed with it is wrongly signed.
    let stranger: JWTKeyCollection
    package let jwksPath: String
    /// The key ID tokens are signed with now.
    package var kid = "test-key"
    /// Every key published so far, as JWKS entries.
    var published: [[String: String]] = []

    struct IDToken: JWTPayload {
        var iss: IssuerClaim
        var aud: AudienceClaim
        var sub: SubjectClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim
        var nonce: String?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    package static func make(in directory: String) async throws -> TestIdentityIssuer {
        let key = ES256PrivateKey()
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: "test-key")
        let stranger = JWTKeyCollection()
        await stranger.add(ecdsa: ES256PrivateKey(), kid: "test-key")
        guard let point = key.parameters else { throw IssuerError.noPublicKey }
        let entry = ["kty": "EC", "crv": "P-256", "x": point.x, "y": point.y, "kid": "test-key", "alg": "ES256", "use": "sig"]
        let path = directory + "/jwks.json"
        var issuer = TestIdentityIssuer(keys: keys, stranger: stranger, jwksPath: path)
        issuer.published = [entry]
        try issuer.writeKeySet()
        return issuer
    }

    /// The issuer rotates its signing key: a new key named `kid` is published beside
    /// the old ones (the key set file is rewritten), and tokens are signed with it.
    package mutating func rotate(to kid: String) async throws {
        let key = ES256PrivateKey()
        guard let point = key.parameters else { throw IssuerError.noPublicKey }
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: kid))
        published.append(["kty": "EC", "crv": "P-256", "x": point.x, "y": point.y, "kid": kid, "alg": "ES256", "use": "sig"])
        self.kid = kid
        try writeKeySet()
    }

    private func writeKeySet() throws {
        try JSONSerialization.data(withJSONObject: ["keys": published]).write(to: URL(fileURLWithPath: jwksPath), options: .atomic)
    }

    /// `keyvault-relay`'s identity options for this issuer.
    package var relayArguments: [String] {
        ["--identity-issuer", Self.issuer, "--identity-audience", Self.audience, "--identity-jwks", jwksPath]
    }

    /// A token for `account` bound to `nonce`; each argument can be made wrong.
    /// `namingNoKey`: the header carries no `kid`.
    package func token(account: String, nonce: String?, issuer: String = Self.issuer, audience: String = Self.audience,
               expiresIn: TimeInterval = 600, wronglySigned: Bool = false, namingNoKey: Bool = false) async throws -> String {
        let now = Date()
        let payload = IDToken(iss: .init(value: issuer), aud: .init(value: [audience]), sub: .init(value: account),
                              iat: .init(value: now.addingTimeInterval(min(0, expiresIn) - 60)), exp: .init(value: now.addingTimeInterval(expiresIn)),
                              nonce: nonce)
        if namingNoKey { return try await keys.sign(payload) }
        return try await (wronglySigned ? stranger : keys).sign(payload, kid: JWKIdentifier(string: wronglySigned ? "test-key" : kid))
    }
}

enum IssuerError: Error { case noPublicKey }
