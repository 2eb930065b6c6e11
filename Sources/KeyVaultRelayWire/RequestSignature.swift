package import KeyVaultCrypto
package import KeyVaultProtocol

/// An HTTP Message Signature (RFC 9421, `ed25519`) over a relay-service
/// request, in the one shape RELAY.md fixes: label `kv`, components
/// `@method @path @query content-digest`, then `created`, `nonce`, `keyid`,
/// `alg` in that order. Both sides build the signature base here; the
/// server parses the headers with a structured-field parser and rebuilds it.
package struct RequestSignature: Sendable, Equatable {
    package static let label = "kv"
    /// How far `created` may be from the verifier's clock, either way.
    package static let window: Int64 = 60
    package static let components = #"("@method" "@path" "@query" "content-digest")"#

    package var method: String
    /// The request target's path, exactly as sent.
    package var path: String
    /// The query exactly as sent, without `?` (empty: none).
    package var query: String
    package var contentDigest: String
    package var created: Int64
    /// 16 random bytes, base64.
    package var nonce: String
    /// The signer's device ID.
    package var keyID: DeviceID

    package init(method: String, path: String, query: String, body: [UInt8], created: Int64, nonce: String, keyID: DeviceID) {
        self.init(method: method, path: path, query: query, contentDigest: Self.contentDigest(of: body),
                  created: created, nonce: nonce, keyID: keyID)
    }

    package init(method: String, path: String, query: String, contentDigest: String, created: Int64, nonce: String, keyID: DeviceID) {
        self.method = method.uppercased()
        self.path = path
        self.query = query
        self.contentDigest = contentDigest
        self.created = created
        self.nonce = nonce
        self.keyID = keyID
    }

    /// RFC 9530 `Content-Digest` with SHA-256.
    package static func contentDigest(of body: [UInt8]) -> String { contentDigest(sha256: SHA256.hash(body)) }

    /// The same from the digest itself (what a verifier has before the body).
    package static func contentDigest(sha256 digest: [UInt8]) -> String { "sha-256=:\(Base64.encode(digest)):" }

    /// The value of `Signature-Input`, and the `@signature-params` line's value.
    package var signatureParams: String {
        #"\#(Self.components);created=\#(created);nonce="\#(nonce)";keyid="\#(keyID)";alg="ed25519""#
    }

    package var signatureInputHeader: String { "\(Self.label)=\(signatureParams)" }

    /// RFC 9421 §2.5: one line per component, then the parameters; `\n` between, none at the end.
    package var base: [UInt8] {
        let lines = [
            #""@method": \#(method)"#,
            #""@path": \#(path)"#,
            #""@query": ?\#(query)"#,
            #""content-digest": \#(contentDigest)"#,
            #""@signature-params": \#(signatureParams)"#,
        ]
        return Array(lines.joined(separator: "\n").utf8)
    }

    /// The value of the `Signature` header.
    package func signatureHeader(signedBy key: SigningKey) -> String {
        "\(Self.label)=:\(Base64.encode(key.signature(for: base))):"
    }

    package func isValid(signature: [UInt8], by key: SigningPublicKey) -> Bool {
        key.isValidSignature(signature, for: base)
    }

    /// A fresh nonce for a request.
    package static func randomNonce() -> String { Base64.encode(Random.bytes(16)) }
}
