import Foundation
import Hummingbird
import NIOCore

/// JSON in and out of the routes: a body that does not decode is `invalid`, never a 500.
enum JSON {

    static func encode(_ value: some Encodable) -> [UInt8] {
        // Encoding our own wire types cannot fail; a failure is a bug in them.
        // Sorted keys: one refusal is the same bytes every time (a stranger compares answers).
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { preconditionFailure("a wire type did not encode") }
        return [UInt8](data)
    }

    static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws(Refusal) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(body))
        } catch {
            throw .invalid("the body is not the JSON this route takes")
        }
    }

    static func response(_ value: some Encodable) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: encode(value))))
    }
}
