import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Hummingbird
import NIOCore
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultEngine
import KeyVaultPolicy

/// Renders a contract answer: a JSON object with a `state` field, the HTTP
/// status that state maps to, and `Retry-After` where the state calls for it.
enum APIResponse {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.string(from: date))
        }
        return encoder
    }()

    static func ready(_ body: some Encodable) throws -> Response {
        try json(.ready, body)
    }

    static func json(_ state: ContractState, _ body: some Encodable, retryAfter: Int? = nil) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        let data = try encoder.encode(body)
        return Response(status: .init(code: state.httpStatus), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func refusal(_ refusal: Refusal) -> Response {
        // Encoding two strings cannot fail.
        try! json(refusal.state, RefusalBody(state: refusal.state, error: refusal.message), retryAfter: refusal.retryAfterSeconds)
    }

    /// A refusal's body alone, for answers written below the router (`ConnectionGuard`).
    static func body(_ refusal: Refusal) -> ByteBuffer {
        // Encoding two strings cannot fail.
        ByteBuffer(bytes: try! encoder.encode(RefusalBody(state: refusal.state, error: refusal.message)))
    }
}

struct RefusalBody: Encodable {
    var state: ContractState
    var error: String
}

struct StateBody: Encodable {
    var state: ContractState = .ready
}

