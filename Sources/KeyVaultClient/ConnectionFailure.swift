/// Why a connection did not carry a request to its answer, and so whether the
/// request may go again on another connection.
enum ConnectionFailure: Error, CustomStringConvertible {
    /// Not a byte of the request reached the socket (the kept connection was
    /// found closed, or the write of its first byte failed): the daemon cannot
    /// have acted on it, so it may be sent again.
    case notSent(String)
    /// Some of the request may have reached the daemon: it is never sent again.
    case lost(String)
    /// No answer's head within the request's timeout.
    case timedOut(Duration)
    /// What came back is not an answer this client reads.
    case malformed(String)

    var description: String {
        switch self {
        case .notSent(let reason), .lost(let reason): return reason
        case .timedOut(let limit): return "no answer within \(limit)"
        case .malformed(let what): return what
        }
    }
}
