public import Foundation
import JWTKit

/// A local OpenID Connect issuer made by a test or the bench: an ES256 key, its
/// JWKS in a file for `keyvault-relay --identity-jwks`, and ID tokens signed
/// with it (or, to be refused, with what is wrong about them). Never shipped in
/// the daemon or the relay: only tests and the bench link it.
public struct TestIdentityIssuer: Sendable {
    public static let issuer = "https://issuer.test.keyvault"
    public static let audience = "app.keyvault.test"
    let keys: JWTKeyCollection
    /// Another key, in no JWKS: a token signed with it is wrongly signed.
    let stranger: JWTKeyCollection
    public let jwksPath: String

    struct IDToken: JWTPayload {
        var iss: IssuerClaim
        var aud: AudienceClaim
        var sub: SubjectClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim
        var nonce: String?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    public static func make(in directory: String) async throws -> TestIdentityIssuer {
        let key = ES256PrivateKey()
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: "test-key")
        let stranger = JWTKeyCollection()
        await stranger.add(ecdsa: ES256PrivateKey(), kid: "test-key")
        guard let point = key.parameters else { throw IssuerError.noPublicKey }
        let jwks: [String: Any] = ["keys": [["kty": "EC", "crv": "P-256", "x": point.x, "y": point.y, "kid": "test-key", "alg": "ES256", "use": "sig"]]]
        let path = directory + "/jwks.json"
        try JSONSerialization.data(withJSONObject: jwks).write(to: URL(fileURLWithPath: path))
        return TestIdentityIssuer(keys: keys, stranger: stranger, jwksPath: path)
    }

    /// `keyvault-relay`'s identity options for this issuer.
    public var relayArguments: [String] {
        ["--identity-issuer", Self.issuer, "--identity-audience", Self.audience, "--identity-jwks", jwksPath]
    }

    /// A token for `account` bound to `nonce`; each argument can be made wrong.
    public func token(account: String, nonce: String?, issuer: String = Self.issuer, audience: String = Self.audience,
               expiresIn: TimeInterval = 600, wronglySigned: Bool = false) async throws -> String {
        let now = Date()
        let payload = IDToken(iss: .init(value: issuer), aud: .init(value: [audience]), sub: .init(value: account),
                              iat: .init(value: now.addingTimeInterval(min(0, expiresIn) - 60)), exp: .init(value: now.addingTimeInterval(expiresIn)),
                              nonce: nonce)
        return try await (wronglySigned ? stranger : keys).sign(payload, kid: "test-key")
    }
}

enum IssuerError: Error { case noPublicKey }
