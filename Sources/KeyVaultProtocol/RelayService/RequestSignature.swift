public import KeyVaultCrypto

/// An HTTP Message Signature (RFC 9421, `ed25519`) over a relay-service
/// request, in the one shape RELAY.md fixes: label `kv`, components
/// `@method @path @query content-digest`, then `created`, `nonce`, `keyid`,
/// `alg` in that order. Both sides build the signature base here; the
/// server parses the headers with a structured-field parser and rebuilds it.
public struct RequestSignature: Sendable, Equatable {
    public static let label = "kv"
    /// How far `created` may be from the verifier's clock, either way.
    public static let window: Int64 = 60
    public static let components = #"("@method" "@path" "@query" "content-digest")"#

    public var method: String
    /// The request target's path, exactly as sent.
    public var path: String
    /// The query exactly as sent, without `?` (empty: none).
    public var query: String
    public var contentDigest: String
    public var created: Int64
    /// 16 random bytes, base64.
    public var nonce: String
    /// The signer's device ID.
    public var keyID: String

    public init(method: String, path: String, query: String, body: [UInt8], created: Int64, nonce: String, keyID: String) {
        self.init(method: method, path: path, query: query, contentDigest: Self.contentDigest(of: body),
                  created: created, nonce: nonce, keyID: keyID)
    }

    public init(method: String, path: String, query: String, contentDigest: String, created: Int64, nonce: String, keyID: String) {
        self.method = method.uppercased()
        self.path = path
        self.query = query
        self.contentDigest = contentDigest
        self.created = created
        self.nonce = nonce
        self.keyID = keyID
    }

    /// RFC 9530 `Content-Digest` with SHA-256.
    public static func contentDigest(of body: [UInt8]) -> String {
        "sha-256=:\(Base64.encode(SHA256.hash(body))):"
    }

    /// The value of `Signature-Input`, and the `@signature-params` line's value.
    public var signatureParams: String {
        #"\#(Self.components);created=\#(created);nonce="\#(nonce)";keyid="\#(keyID)";alg="ed25519""#
    }

    public var signatureInputHeader: String { "\(Self.label)=\(signatureParams)" }

    /// RFC 9421 §2.5: one line per component, then the parameters; `\n` between, none at the end.
    public var base: [UInt8] {
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
    public func signatureHeader(signedBy key: SigningKey) -> String {
        "\(Self.label)=:\(Base64.encode(key.signature(for: base))):"
    }

    public func isValid(signature: [UInt8], by key: SigningPublicKey) -> Bool {
        key.isValidSignature(signature, for: base)
    }

    /// A fresh nonce for a request.
    public static func randomNonce() -> String { Base64.encode(Random.bytes(16)) }
}
