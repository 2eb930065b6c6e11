import Foundation
import JWTKit
import KeyVaultCrypto
import KeyVaultProtocol

/// Checks an OpenID Connect ID token offline against the issuer's keys
/// (RELAY.md, "Identity: candidates"). Each failure is its own sentence; the
/// token itself is never kept, logged or echoed.
struct IdentityVerifier: Sendable {
    let issuer: String
    let audience: String
    private let keys: IssuerKeys
    /// A token that expired less than this long ago still passes (clocks differ).
    static let leeway: TimeInterval = 30

    init(issuer: String, audience: String, keys: IssuerKeys) {
        self.issuer = issuer
        self.audience = audience
        self.keys = keys
    }

    /// The claims the relay reads; the rest of the token is ignored.
    struct Claims: JWTPayload {
        var iss: IssuerClaim?
        var aud: AudienceClaim?
        var sub: SubjectClaim?
        var exp: ExpirationClaim?
        var nonce: String?

        /// Checked after the signature, one claim at a time, so each failure can say which.
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// Throws `identity` saying which check failed.
    func verify(_ token: String, account: AccountID, signing: SigningPublicKey, box: BoxPublicKey, now: Date) async throws(Refusal) {
        guard token.utf8.count <= 16 * 1024, token.split(separator: ".", omittingEmptySubsequences: false).count == 3 else {
            throw .identity("the identity token is not a JWT")
        }
        // The key the header names, before anything else: none named is refused, and one the set lacks
        // has the set fetched again (the issuer may have rotated its keys), at most once a minute.
        let header: JWTHeader
        do {
            header = try DefaultJWTParser().parse(Array(token.utf8), as: Claims.self).header
        } catch {
            throw .identity("the identity token is malformed")
        }
        guard let kid = header.kid, !kid.isEmpty else { throw .identity("the identity token names no key (kid) to check it with") }
        guard let (collection, algorithm) = await keys.keys(for: kid) else {
            throw .identity("the identity token is signed by a key the issuer does not publish")
        }
        // The key's one algorithm, fixed when the set was read: a header naming another is refused, never obeyed.
        guard header.alg == algorithm else {
            throw .identity("the identity token is signed with an algorithm the relay does not accept")
        }
        let claims: Claims
        do {
            claims = try await collection.verify(token, as: Claims.self)
        } catch let error as JWTError {
            switch error.errorType {
            case .signatureVerificationFailed: throw .identity("the identity token's signature does not verify with the issuer's key")
            case .unknownKID, .missingKIDHeader: throw .identity("the identity token is signed by a key the issuer does not publish")
            case .unsupportedAlgorithm, .signingAlgorithmFailure: throw .identity("the identity token is signed with an algorithm the relay does not accept")
            default: throw .identity("the identity token is malformed")
            }
        } catch {
            throw .identity("the identity token is malformed")
        }
        guard claims.iss?.value == issuer else { throw .identity("the identity token is from another issuer") }
        guard let aud = claims.aud, aud.value.contains(audience) else { throw .identity("the identity token is for another audience") }
        guard let exp = claims.exp else { throw .identity("the identity token has no expiry") }
        guard exp.value.addingTimeInterval(Self.leeway) > now else { throw .identity("the identity token has expired") }
        guard claims.sub?.value == account.rawValue else { throw .identity("the identity token is for another account") }
        guard let nonce = claims.nonce, ConstantTime.equal(Array(nonce.utf8), Array(IdentityNonce.of(signing: signing, box: box).utf8)) else {
            throw .identity("the identity token's nonce is bound to other device keys")
        }
    }
}
