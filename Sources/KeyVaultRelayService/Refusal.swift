import Hummingbird
import KeyVaultProtocol
import KeyVaultRelayWire
import Foundation
import NIOCore

/// Every refusal the relay answers (RELAY.md, "Answers"), rendered in one
/// place: a status, `{error, reason}`, and `Retry-After` where it applies.
/// A reason never names another account, device or token.
struct Refusal: HTTPResponseError, Sendable {
    let status: HTTPResponse.Status
    let wire: RelayWire.Refusal
    var retryAfter: Int?

    init(_ status: HTTPResponse.Status, _ error: String, _ reason: String, seq: LogSeq? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.wire = RelayWire.Refusal(error: error, reason: reason, seq: seq)
        self.retryAfter = retryAfter
    }

    static func invalid(_ reason: String) -> Refusal { Refusal(.badRequest, "invalid", reason) }
    static func unsigned(_ reason: String) -> Refusal { Refusal(.unauthorized, "unsigned", reason) }
    static func identity(_ reason: String) -> Refusal { Refusal(.unauthorized, "identity", reason) }
    /// One answer for "not allowed" and "no such account": a stranger learns nothing.
    static let forbidden = Refusal(.forbidden, "forbidden", "this signer may not do that to this account")
    static func logSeqTaken(_ seq: LogSeq) -> Refusal {
        Refusal(.conflict, "log-seq-taken", "log entry \(seq) is taken", seq: seq)
    }
    /// The reader's cursor is past every cursor the store handed out for the account: the store was
    /// restored from an older backup, and the reader should read again from the start. (It does not
    /// say how far the store goes: a revoked device reading would learn how much was written since.)
    static let cursorAhead = Refusal(.conflict, "cursor-ahead",
                                     "the store holds no cursor this far for this account (it was restored from an older backup); read again from the start")
    static let tooLarge = Refusal(.contentTooLarge, "too-large", "the body is over 1 MiB")
    static func tooMany(retryAfter: Int) -> Refusal {
        Refusal(.tooManyRequests, "too-many", "too many candidacies for this account this hour", retryAfter: retryAfter)
    }
    static let unavailable = Refusal(.serviceUnavailable, "unavailable", "the store does not answer", retryAfter: 1)
    /// The account's own requests in progress kept this one waiting past its turn's limit (`AccountWork`).
    static let busy = Refusal(.serviceUnavailable, "unavailable", "this account has too many requests in progress", retryAfter: 1)

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: JSON.encode(wire))))
    }
}
