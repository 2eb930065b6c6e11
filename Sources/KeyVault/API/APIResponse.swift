package import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Hummingbird
import NIOCore
import KeyVaultProtocol
import KeyVaultAccount

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

/// RFC 3339 UTC with milliseconds, the contract's time format
/// (`2026-11-21T23:46:44.706Z`). Formatted by hand: it is on the key-read path.
package enum RFC3339 {
    package static func string(from date: Date) -> String {
        // Clamped to what a record may carry (0 … year 9999): no date, however it came, can trap here.
        let millis = Int64(Millis.of(date))
        var seconds = time_t(millis / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var out = [UInt8]()
        out.reserveCapacity(24)
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var v = value
            while divisor > 0 {
                out.append(UInt8(48 + (v / divisor) % 10))
                v %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4); out.append(45)
        digits(Int(parts.tm_mon) + 1, 2); out.append(45)
        digits(Int(parts.tm_mday), 2); out.append(84)
        digits(Int(parts.tm_hour), 2); out.append(58)
        digits(Int(parts.tm_min), 2); out.append(58)
        digits(Int(parts.tm_sec), 2); out.append(46)
        digits(Int(millis % 1000), 3); out.append(90)
        return String(decoding: out, as: UTF8.self)
    }
}
