import NIOHTTP1
import KeyVaultEngine
import KeyVaultPolicy

/// One HTTP/1 connection's requests and answers, as its guard
/// (`ConnectionGuard`) sees them: a value with one method per event, each
/// returning what the guard is to do. No channel, no clock: tested alone.
///
/// It decides when a request's deadline runs (from its first byte to its
/// end), which answers keep the connection open (HTTP/1.0 only with
/// `keep-alive`, never after `Connection: close`), when a protocol error is
/// passed on to the request reading its body and when the guard answers it
/// itself, and that nothing is read after the request a connection ends with.
struct HTTPExchange {
    struct Framing: Equatable {
        var version: HTTPVersion
        var keepAlive: Bool
    }

    enum HeadAction: Equatable {
        /// Pass the head on; start the request's deadline if it is not running.
        case pass(startDeadline: Bool)
        case drop
        /// A refused connection's request: answer "too many connections" and close.
        case refuse
    }

    enum EndAction: Equatable {
        /// Pass the end on; the request has arrived whole: its deadline stops.
        case pass
        case drop
    }

    enum ParseErrorAction: Equatable {
        /// Within a request's body: the request reading it fails, and answers.
        case passOn
        /// Answer `invalid` and close.
        case answer
        /// The request was answered already: close.
        case close
        /// Answered once the answers owed before it are written, or nothing more to do.
        case none
    }

    enum DeadlineAction: Equatable {
        case none
        /// The request reading the body fails; close.
        case failRequest
        /// Answer `invalid` and close.
        case answer
        case close
    }

    enum ResponseEndAction: Equatable {
        case none
        case close
        /// The answer to a malformed request that was waiting its turn.
        case answerBadRequest
    }

    private let refused: Bool
    /// A request's first bytes have arrived and its end has not.
    private var receiving = false
    /// The head of the request being received was passed on.
    private var headPassed = false
    /// Requests passed on and not answered yet, in order.
    private var owed: [Framing] = []
    /// The answer being written keeps the connection open.
    private var answerKeeps = true
    /// A request asked for the connection to close after it: nothing after its end is read.
    private var lastRequestRead = false
    /// Nothing more is read from this connection.
    private var inputStopped = false
    private var badRequestOwed = false

    /// A refused connection's deadline runs from the start: it has that long to send the request to refuse.
    init(refused: Bool) {
        self.refused = refused
        self.receiving = refused
    }

    /// Receiving or answering: not a connection to close to make room.
    var isBusy: Bool { receiving || !owed.isEmpty }

    /// Raw bytes arrived. True: a request starts; its deadline starts.
    mutating func bytesArrived() -> Bool {
        guard !inputStopped, !receiving else { return false }
        receiving = true
        return true
    }

    mutating func headArrived(_ framing: Framing) -> HeadAction {
        guard !inputStopped else { return .drop }
        if refused {
            inputStopped = true
            receiving = false
            return .refuse
        }
        // A request that arrives whole in one read with the end of the one before has not started its deadline.
        let start = !receiving
        receiving = true
        headPassed = true
        owed.append(framing)
        if !framing.keepAlive { lastRequestRead = true }
        return .pass(startDeadline: start)
    }

    mutating func bodyArrived() -> Bool {
        !inputStopped
    }

    mutating func endArrived() -> EndAction {
        guard !inputStopped else { return .drop }
        receiving = false
        headPassed = false
        if lastRequestRead { inputStopped = true }
        return .pass
    }

    /// The HTTP parser failed: nothing more can be read.
    mutating func parseError() -> ParseErrorAction {
        let wasStopped = inputStopped
        inputStopped = true
        receiving = false
        // Already closing (or reading nothing more): nothing to add.
        if wasStopped { return .none }
        if headPassed {
            headPassed = false
            return owed.isEmpty ? .close : .passOn
        }
        if owed.isEmpty { return .answer }
        badRequestOwed = true
        return .none
    }

    mutating func deadlinePassed() -> DeadlineAction {
        guard receiving else { return .none }
        receiving = false
        inputStopped = true
        if refused { return .close }
        if headPassed { return owed.isEmpty ? .close : .failRequest }
        return owed.isEmpty ? .answer : .close
    }

    /// An answer's head is written: the version to write it with and the
    /// `Connection` header to set (nil: leave it).
    mutating func responseHead(hasContentLength: Bool, closeRequested: Bool) -> (version: HTTPVersion, connection: String?) {
        let framing = owed.first ?? Framing(version: .http1_1, keepAlive: true)
        let http10 = framing.version.major == 1 && framing.version.minor == 0
        // An HTTP/1.0 body without a length ends where the connection does.
        var keeps = framing.keepAlive && !closeRequested && (!http10 || hasContentLength)
        // Nothing more will be read: this is the last answer, unless a malformed request's is owed after it.
        if inputStopped && owed.count <= 1 && !badRequestOwed { keeps = false }
        answerKeeps = keeps
        let version: HTTPVersion = http10 ? .http1_0 : .http1_1
        if !keeps { return (version, "close") }
        return (version, http10 ? "keep-alive" : nil)
    }

    mutating func responseEnd() -> ResponseEndAction {
        if !owed.isEmpty { owed.removeFirst() }
        if !answerKeeps {
            inputStopped = true
            receiving = false
            return .close
        }
        if badRequestOwed && owed.isEmpty {
            badRequestOwed = false
            return .answerBadRequest
        }
        return .none
    }
}
