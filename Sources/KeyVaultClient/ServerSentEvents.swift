/// One event of a `text/event-stream`.
struct ServerSentEvent: Equatable {
    var id: String?
    var name: String
    var data: String
}

/// Splits a `text/event-stream` into events, as the HTML standard's
/// "Interpreting an event stream" says: lines end in LF, CRLF or CR; a line
/// starting with `:` is a comment; a blank line ends an event; `data` lines
/// join with LF; an event without `event:` is a `message`.
struct ServerSentEventParser {
    /// A line, or an event's data, longer than this is not the daemon's: the stream is refused.
    static let maxLineBytes = 1 << 20

    struct TooLong: Error {}

    private var line: [UInt8] = []
    private var afterCR = false
    private var id: String?
    private var name = ""
    private var data: [String] = []
    private var hasData = false
    private var dataBytes = 0

    /// Feeds bytes; answers the events they complete.
    mutating func feed(_ bytes: some Sequence<UInt8>) throws -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                afterCR = byte == UInt8(ascii: "\r")
                if let event = try endLine() { events.append(event) }
            default:
                guard line.count < Self.maxLineBytes else { throw TooLong() }
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() throws -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else { return dispatch() }
        guard line.first != UInt8(ascii: ":") else { return nil }
        let field: String, value: String
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = String(decoding: line[..<colon], as: UTF8.self)
            var rest = line[(colon + 1)...]
            if rest.first == UInt8(ascii: " ") { rest = rest.dropFirst() }
            value = String(decoding: rest, as: UTF8.self)
        } else {
            field = String(decoding: line, as: UTF8.self)
            value = ""
        }
        switch field {
        case "event": name = value
        case "data":
            dataBytes += value.utf8.count + 1
            guard dataBytes <= Self.maxLineBytes else { throw TooLong() }
            data.append(value)
            hasData = true
        case "id" where !value.contains("\0"): id = value
        default: break  // `retry` and unknown fields: the client's reconnection has its own pace
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            name = ""
            data = []
            hasData = false
            dataBytes = 0
        }
        guard hasData else { return nil }
        return ServerSentEvent(id: id, name: name.isEmpty ? "message" : name, data: data.joined(separator: "\n"))
    }
}
