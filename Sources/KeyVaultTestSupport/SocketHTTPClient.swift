import NIOCore
import NIOHTTP1
import NIOPosix
package import KeyVaultClient
package import KeyVaultUnixSocket
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 answer from the daemon, as the client library gives it.
package typealias HTTPResult = DaemonResponse

// What follows speaks HTTP/1.1 by hand on one connection, in order: for the tests and
// benches that must say several things on one connection (keep-alive, a held read
// beside a second request). Everything else, the CLI and apps included, uses
// `KeyVaultClient`, over async-http-client.

package enum SocketHTTPError: Error, CustomStringConvertible {
    case connectionClosed
    case cannotConnect(path: String, reason: String)
    /// The socket answers, but from another uid than the daemon's: nothing was sent.
    case wrongPeer(UnixSocket.Failure)

    package var description: String {
        switch self {
        case .connectionClosed: return "the daemon closed the connection before answering"
        case .cannotConnect(let path, let reason):
            return "cannot reach keyvaultd at \(path) (\(reason)); is it running? (--socket, or $XDG_RUNTIME_DIR)"
        case .wrongPeer(let failure): return failure.description
        }
    }
}

/// A keep-alive HTTP/1.1 connection to the daemon's Unix socket. Requests on
/// one connection are answered in order.
package final class SocketHTTPConnection: Sendable {
    private let channel: any Channel

    private init(channel: any Channel) { self.channel = channel }

    /// Connects, and checks the socket is served by `expectedPeerUID` (by default
    /// this process's own uid; nil: anyone) before a byte is sent.
    package static func connect(path: String, expectedPeerUID: UInt32? = UnixSocket.ownUID) async throws -> SocketHTTPConnection {
        let fd: Int32
        do {
            fd = try UnixSocket.connect(path, expectedUID: expectedPeerUID)
        } catch .wrongPeer(let path, let expected, let actual) {
            throw SocketHTTPError.wrongPeer(.wrongPeer(path: path, expected: expected, actual: actual))
        } catch .cannotConnect(let path, let code) {
            throw SocketHTTPError.cannotConnect(path: path, reason: String(cString: strerror(code)))
        } catch {
            throw SocketHTTPError.cannotConnect(path: path, reason: error.description)
        }
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ResponseCollector())
                    }
                }
                .withConnectedSocket(fd).get()
            return SocketHTTPConnection(channel: channel)
        } catch {
            // The channel owned the descriptor from the start, and closed it as it failed.
            throw SocketHTTPError.cannotConnect(path: path, reason: "\(error)")
        }
    }

    package func request(
        _ method: String, _ path: String, body: [UInt8]? = nil, headers extra: [(String, String)] = []
    ) async throws -> HTTPResult {
        let channel = self.channel
        let promise = channel.eventLoop.makePromise(of: HTTPResult.self)
        channel.eventLoop.execute {
            do {
                let collector = try channel.pipeline.syncOperations.handler(type: ResponseCollector.self)
                // A connection the daemon closed (or was killed on) fails at once, not never.
                guard collector.expect(promise) else { return }
                var headers = HTTPHeaders([("Host", "keyvaultd")])
                for (name, value) in extra { headers.add(name: name, value: value) }
                if let body {
                    headers.add(name: "Content-Type", value: "application/json")
                    headers.add(name: "Content-Length", value: String(body.count))
                }
                let head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path, headers: headers)
                channel.write(HTTPClientRequestPart.head(head), promise: nil)
                if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil) }
                let written = channel.eventLoop.makePromise(of: Void.self)
                written.futureResult.whenFailure { promise.fail($0) }
                channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: written)
            } catch {
                promise.fail(error)
            }
        }
        return try await promise.futureResult.get()
    }

    package func close() async {
        try? await channel.close()
    }
}

/// Gathers response parts into `HTTPResult`s, one per request, in order.
private final class ResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private var waiting: [EventLoopPromise<HTTPResult>] = []
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []
    private var closed = false

    /// Queues the promise for the next answer; fails it at once on a closed connection.
    func expect(_ promise: EventLoopPromise<HTTPResult>) -> Bool {
        guard !closed else {
            promise.fail(SocketHTTPError.connectionClosed)
            return false
        }
        waiting.append(promise)
        return true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(let buffer):
            body += buffer.readableBytesView
        case .end:
            guard let head, !waiting.isEmpty else { return }
            let result = HTTPResult(status: Int(head.status.code), headers: head.headers.map { ($0.name, $0.value) }, body: body)
            self.head = nil
            body = []
            waiting.removeFirst().succeed(result)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        failAll(SocketHTTPError.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        closed = true
        failAll(error)
        context.close(promise: nil)
    }

    private func failAll(_ error: any Error) {
        let promises = waiting
        waiting = []
        for promise in promises { promise.fail(error) }
    }
}

/// One request on a fresh connection.
package enum SocketHTTPClient {
    package static func request(
        socket: String, _ method: String, _ path: String, body: [UInt8]? = nil, headers: [(String, String)] = [],
        expectedPeerUID: UInt32? = UnixSocket.ownUID
    ) async throws -> HTTPResult {
        let connection = try await SocketHTTPConnection.connect(path: socket, expectedPeerUID: expectedPeerUID)
        defer { Task { await connection.close() } }
        return try await connection.request(method, path, body: body, headers: headers)
    }
}

/// One worker's connection to the daemon, kept alive, and made again after an
/// answer that closes it (the daemon ends a connection after a request with a body).
package actor KeepAliveConnection {
    private let socket: String
    private var connection: SocketHTTPConnection?

    package init(socket: String) {
        self.socket = socket
    }

    package func request(_ method: String, _ path: String, body: [UInt8]? = nil, headers: [(String, String)] = []) async throws -> HTTPResult {
        let connection: SocketHTTPConnection
        if let open = self.connection {
            connection = open
        } else {
            connection = try await SocketHTTPConnection.connect(path: socket)
            self.connection = connection
        }
        let result = try await connection.request(method, path, body: body, headers: headers)
        if result.header("Connection")?.lowercased() == "close" {
            await connection.close()
            self.connection = nil
        }
        return result
    }

    package func close() async {
        await connection?.close()
        connection = nil
    }
}
