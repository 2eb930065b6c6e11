import NIOCore
import NIOHTTP1

/// An answer as it arrives on its connection: the head, then the body as the
/// caller reads it (whole, or an event stream chunk by chunk).
struct OpenAnswer: Sendable {
    let head: HTTPResponseHead
    let connection: DaemonConnection
    /// Parts read with earlier ones and not yet taken.
    private var pending: ArraySlice<HTTPClientResponsePart>
    private(set) var complete = false

    init(_ parts: [HTTPClientResponsePart], on connection: DaemonConnection) throws(ConnectionFailure) {
        guard case .head(let head) = parts.first else { throw .malformed("an answer that does not begin with its head") }
        self.head = head
        self.connection = connection
        pending = parts.dropFirst()
    }

    /// The body's next bytes; nil once the answer is whole.
    mutating func nextChunk() async throws -> ByteBuffer? {
        while true {
            if pending.isEmpty {
                if complete { return nil }
                pending = try await connection.next()[...]
            }
            switch pending.removeFirst() {
            case .body(let bytes): return bytes
            case .end: complete = true
            case .head: throw ConnectionFailure.malformed("a second head in one answer")
            }
        }
    }

    /// The whole body, refused past `limit` bytes.
    mutating func collect(upTo limit: Int) async throws -> [UInt8] {
        var body: [UInt8] = []
        while let chunk = try await nextChunk() {
            guard body.count + chunk.readableBytes <= limit else { throw ConnectionFailure.malformed("an answer over \(limit) bytes") }
            body.append(contentsOf: chunk.readableBytesView)
        }
        return body
    }

    /// Whether the connection may carry another request: this answer is whole,
    /// nothing came after it, and the daemon did not say it closes the connection.
    var leavesConnectionOpen: Bool { complete && pending.isEmpty && head.isKeepAlive }
}
