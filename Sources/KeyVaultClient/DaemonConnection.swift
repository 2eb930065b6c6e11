import NIOCore
import NIOHTTP1
import NIOPosix
import KeyVaultWipedBuffers
#if canImport(Glibc)
import Glibc
#endif

/// One connection to the daemon, checked once when it is made (`SocketTrust`:
/// the path, then the peer of this very connection) and kept for request after
/// request. One request at a time; the answer's parts are read as they are asked for.
final class DaemonConnection: Sendable {
    /// The socket and uid it was checked for.
    let key: ConnectionPool.Key
    private let channel: any Channel
    /// The descriptor under the channel: polled, on the channel's loop while it is open (so the
    /// number is still this socket's), to see that nothing waits to be read before a request goes.
    private let descriptor: Int32
    private let reader: NIOLoopBound<AnswerReader>
    private let watch: NIOLoopBound<FirstByteWatch>

    private init(key: ConnectionPool.Key, channel: any Channel, descriptor: Int32, reader: NIOLoopBound<AnswerReader>, watch: NIOLoopBound<FirstByteWatch>) {
        self.key = key
        self.channel = channel
        self.descriptor = descriptor
        self.reader = reader
        self.watch = watch
    }

    /// A new connection to the daemon at the key's socket, served by the uid its `daemonUID` expects.
    static func open(_ key: ConnectionPool.Key) async throws -> DaemonConnection {
        let descriptor = try SocketTrust.connect(key.socketPath, daemonUID: key.daemonUID)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.autoRead, value: false)
            // What the daemon answers (a key's encoding among it) is read into buffers zeroed when released.
            .channelOption(.allocator, value: .wiping)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(FirstByteWatch())  // next to the socket: it sees the request's bytes
                    try pipeline.addHTTPClientHandlers()
                    try pipeline.addHandler(AnswerReader())
                }
            }
            .withConnectedSocket(descriptor).get()  // the channel owns the descriptor now, and closes it if this fails
        let loop = channel.eventLoop
        return try await loop.submit {
            let pipeline = channel.pipeline.syncOperations
            return DaemonConnection(key: key, channel: channel, descriptor: descriptor,
                                    reader: NIOLoopBound(try pipeline.handler(type: AnswerReader.self), eventLoop: loop),
                                    watch: NIOLoopBound(try pipeline.handler(type: FirstByteWatch.self), eventLoop: loop))
        }.get()
    }

    /// Sends `request`; answers the first parts of its answer, whose head must come within `timeout`.
    /// Throws `ConnectionFailure.notSent` only when not a byte of the request reached the socket.
    func send(_ request: DaemonRequest, timeout: Duration) async throws -> [HTTPClientResponsePart] {
        let promise = channel.eventLoop.makePromise(of: [HTTPClientResponsePart].self)
        channel.eventLoop.execute { [channel, descriptor, reader, watch] in
            let reader = reader.value
            // A kept connection the daemon closed, or one with bytes no request asked for, carries nothing.
            guard channel.isActive, reader.isIdle, !Self.hasInput(descriptor) else {
                promise.fail(ConnectionFailure.notSent("the daemon closed the connection"))
                channel.close(promise: nil)
                return
            }
            watch.value.arm()
            channel.write(HTTPClientRequestPart.head(request.head), promise: nil)
            if let body = request.body { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil) }
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            reader.expectHead(within: timeout)
            reader.next(promise)
        }
        return try await parts(promise.futureResult)
    }

    /// The answer's next parts (at least one).
    func next() async throws -> [HTTPClientResponsePart] {
        let promise = channel.eventLoop.makePromise(of: [HTTPClientResponsePart].self)
        channel.eventLoop.execute { [reader] in reader.value.next(promise) }
        return try await parts(promise.futureResult)
    }

    func close() {
        channel.close(promise: nil)
    }

    /// No one can send on it any more: its socket goes too.
    deinit {
        channel.close(promise: nil)
    }

    /// Waits for parts; a cancelled task closes the connection (the daemon ends what it held for it).
    private func parts(_ future: EventLoopFuture<[HTTPClientResponsePart]>) async throws -> [HTTPClientResponsePart] {
        // Told on the loop, where whether the first byte went out is known.
        let told = future.flatMapErrorThrowing { [watch] error -> [HTTPClientResponsePart] in
            throw Self.failure(error, sent: watch.value.sent)
        }
        do {
            return try await withTaskCancellationHandler { try await told.get() } onCancel: { [channel] in channel.close(promise: nil) }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw error
        }
    }

    private static func failure(_ error: any Error, sent: Bool) -> any Error {
        switch error {
        case let failure as ConnectionFailure:
            return failure
        case AnswerReader.End.timedOut(let limit):
            return ConnectionFailure.timedOut(limit)
        case AnswerReader.End.failed(let cause as HTTPParserError):
            return ConnectionFailure.malformed("not an HTTP answer (\(cause))")
        case AnswerReader.End.failed(let cause as IOError):
            let reason = SocketTrust.reason(cause.errnoCode)
            return sent ? ConnectionFailure.lost(reason) : ConnectionFailure.notSent(reason)
        default:
            let reason = "the daemon closed the connection"
            return sent ? ConnectionFailure.lost(reason) : ConnectionFailure.notSent(reason)
        }
    }

    /// Whether the socket has anything to read (bytes, or the daemon's end of it), or cannot say.
    private static func hasInput(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) != 0
    }
}

/// One request as it goes on the wire.
struct DaemonRequest: Sendable {
    var head: HTTPRequestHead
    var body: [UInt8]?

    /// Throws `unwritableRequest` for a method, path or header that would change the request's
    /// framing on the wire (a CR or LF starts a header of the caller's choosing; NUL and other
    /// controls are refused with them): NIO writes what it is given.
    init(_ method: String, _ path: String, headers extra: [(String, String)], body: [UInt8]?) throws {
        func check(_ text: String, _ what: String, spaces: Bool) throws {
            guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (!spaces && $0 == " ") }) else {
                throw KeyVaultClientError.unwritableRequest("the \(what) holds a control character\(spaces ? "" : " or a space")")
            }
        }
        try check(method, "method", spaces: false)
        try check(path, "path", spaces: false)
        for (name, value) in extra {
            try check(name, "header name", spaces: false)
            try check(value, "\(name) header", spaces: true)
        }
        var headers = HTTPHeaders([("Host", "keyvaultd")])
        for (name, value) in extra { headers.add(name: name, value: value) }
        if let body {
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: String(body.count))
        }
        head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path, headers: headers)
        self.body = body
    }
}
