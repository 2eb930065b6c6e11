import Foundation
import Hummingbird
import HTTPTypes
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelayWire
import KeyVaultRelay
import RawStructuredFieldValues

/// A request's HTTP Message Signature, parsed and checked from its head alone,
/// as far as it can be without knowing the signer's key (RELAY.md, "Signed
/// requests"): the one shape RELAY.md fixes and a `created` within the window.
/// The signature covers the `Content-Digest`, so it can be verified before the
/// body is read; the body, once whole, must match that digest (`checkBody`).
/// Whose key it is, the account decides.
struct SignedRequest: Sendable {
    let signature: RequestSignature
    let signatureBytes: [UInt8]
    /// The SHA-256 the `Content-Digest` names: what the body must hash to.
    let digest: [UInt8]

    var keyID: DeviceID { signature.keyID }

    static let signatureInput = HTTPField.Name("Signature-Input")!
    static let signatureName = HTTPField.Name("Signature")!
    static let contentDigest = HTTPField.Name("Content-Digest")!

    /// The head's signature. `target` is the request target exactly as sent (`path?query`); `now` in seconds since the epoch.
    static func parse(method: String, target: String, headers: HTTPFields, now: Int64) throws(Refusal) -> SignedRequest {
        guard let inputText = headers[signatureInput], let signatureText = headers[signatureName] else {
            throw .unsigned("the request carries no Signature-Input and Signature")
        }
        guard let digestText = headers[contentDigest] else { throw .unsigned("the request carries no Content-Digest") }
        guard let digest = try? byteSequence(of: digestText, key: "sha-256"), digest.count == 32 else {
            throw .unsigned("Content-Digest has no sha-256 value")
        }

        let params = try parameters(of: inputText)
        let (skew, overflow) = params.created.subtractingReportingOverflow(now)
        guard !overflow, skew <= RequestSignature.window, skew >= -RequestSignature.window else {
            throw .unsigned("the signature's created time is more than \(RequestSignature.window) s from the relay's clock")
        }
        guard let signatureBytes = try? byteSequence(of: signatureText, key: RequestSignature.label),
              signatureBytes.count == SigningKey.signatureByteCount else {
            throw .unsigned("Signature has no 64-byte kv value")
        }
        let (path, query) = split(target)
        // The digest as the signer's base has it: the one sha-256 member, in canonical base64.
        let signature = RequestSignature(method: method, path: path, query: query, contentDigest: RequestSignature.contentDigest(sha256: digest),
                                         created: params.created, nonce: params.nonce, keyID: params.keyID)
        return SignedRequest(signature: signature, signatureBytes: signatureBytes, digest: digest)
    }

    /// The body, once whole, is the one the signed digest names.
    func checkBody(_ body: [UInt8]) throws(Refusal) {
        guard ConstantTime.equal(digest, SHA256.hash(body)) else { throw .unsigned("Content-Digest does not match the body") }
    }

    func isValid(by key: SigningPublicKey) -> Bool { signature.isValid(signature: signatureBytes, by: key) }

    /// `path?query` into its two parts, neither decoded.
    static func split(_ target: Substring) -> (path: String, query: String) {
        guard let mark = target.firstIndex(of: "?") else { return (String(target), "") }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }

    static func split(_ target: String) -> (path: String, query: String) { split(target[...]) }

    private struct Parameters {
        var created: Int64
        var nonce: String
        var keyID: DeviceID
    }

    /// `kv=("@method" "@path" "@query" "content-digest");created=…;nonce="…";keyid="…";alg="ed25519"`, nothing else.
    private static func parameters(of text: String) throws(Refusal) -> Parameters {
        var parser = StructuredFieldValueParser(Array(text.utf8))
        guard let dictionary = try? parser.parseDictionaryFieldValue() else { throw .unsigned("Signature-Input does not parse") }
        guard dictionary.count == 1, case .innerList(let list)? = dictionary[RequestSignature.label] else {
            throw .unsigned("Signature-Input must hold one signature labelled kv")
        }
        let components = list.bareInnerList.map { item -> String? in
            guard item.rfc9651Parameters.count == 0, case .string(let name) = item.rfc9651BareItem else { return nil }
            return name
        }
        guard components == ["@method", "@path", "@query", "content-digest"] else {
            throw .unsigned("the signature must cover @method, @path, @query and content-digest, in that order")
        }
        let names = list.rfc9651Parameters.map { $0.0 }
        guard names == ["created", "nonce", "keyid", "alg"],
              case .integer(let created)? = list.rfc9651Parameters["created"],
              case .string(let nonce)? = list.rfc9651Parameters["nonce"],
              case .string(let keyID)? = list.rfc9651Parameters["keyid"],
              case .string("ed25519")? = list.rfc9651Parameters["alg"] else {
            throw .unsigned("the signature's parameters must be created, nonce, keyid and alg=\"ed25519\", in that order")
        }
        guard Base64.decode(nonce)?.count == 16 else { throw .unsigned("the nonce must be 16 bytes in base64") }
        guard let deviceID = DeviceID(hex: keyID) else { throw .unsigned("keyid must be a device ID (32 lowercase hex digits)") }
        return Parameters(created: created, nonce: nonce, keyID: deviceID)
    }

    /// The byte sequence a dictionary field holds under `key`.
    private static func byteSequence(of text: String, key: String) throws -> [UInt8]? {
        var parser = StructuredFieldValueParser(Array(text.utf8))
        let dictionary = try parser.parseDictionaryFieldValue()
        guard case .item(let item)? = dictionary[key], case .undecodedByteSequence(let base64) = item.rfc9651BareItem else { return nil }
        return Base64.decode(base64)
    }
}

extension SignedRequest {
    /// This request's nonce, as a write spends it in the store.
    func nonce(for account: AccountID) -> RequestNonce {
        RequestNonce(account: account, keyID: keyID, nonce: signature.nonce, created: signature.created)
    }
}
