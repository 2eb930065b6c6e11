import Foundation
import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// A client of keyvaultd's socket API (docs/API.md), for an app's sync engine.
///
/// Every request first checks who serves the socket (`DaemonUID`): a
/// passphrase, a key or a record never goes to another user's process.
/// Answers are typed (`DaemonAnswer`): a key that is `ready`, `pending`
/// with its reason, or a refusal such as `locked`. Cheap to copy; each
/// request has a connection of its own.
public struct KeyVaultClient: Sendable {
    public struct Configuration: Sendable {
        public var socketPath: String
        public var daemonUID: DaemonUID

        public init(socketPath: String = DaemonSocket.clientPath, daemonUID: DaemonUID = .configured) {
            self.socketPath = socketPath
            self.daemonUID = daemonUID
        }
    }

    public var configuration: Configuration

    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    public init(socketPath: String, daemonUID: DaemonUID = .configured) {
        self.init(Configuration(socketPath: socketPath, daemonUID: daemonUID))
    }

    // MARK: The typed calls

    /// Reads a key. With `wait`, a `pending` read is held until the key lands or
    /// the wait ends (at most the daemon's `max_wait_seconds`, 300 by default).
    public func key(_ account: String, _ selector: KeySelector = .current, wait: Duration = .zero) async throws -> DaemonAnswer<AccountKey> {
        let seconds = Self.wholeSeconds(wait)
        var path = Self.accountPath(account) + "/keys/" + selector.pathComponent
        if seconds > 0 { path += "?wait=\(seconds)" }
        var response = try await send("GET", path, timeout: .seconds(Int64(seconds) + 30))
        // The body holds the key in base64: wiped once read.
        defer { response.body.withUnsafeMutableBytes(Wipe.bytes) }
        return try Answers.decode(response) { body in try Answers.key(body) }
    }

    /// Seals records under the account's current key (or the one `keyID` names), in one batch of 1 to 1000.
    public func seal(_ account: String, _ items: [SealItem], keyID: KeyIdentifier? = nil) async throws -> DaemonAnswer<SealedBatch> {
        let body = try JSONEncoder().encode(SealRequest(items: items.map { .init(plaintext: Data($0.plaintext), aad: Data($0.aad)) }, keyId: keyID))
        let response = try await send("POST", Self.accountPath(account) + "/seal", body: [UInt8](body))
        return try Answers.decode(response) { body in
            let sealed = try JSONDecoder().decode(SealResponse.self, from: body)
            guard sealed.envelopes.count == items.count else {
                throw KeyVaultClientError.malformedAnswer("\(sealed.envelopes.count) envelopes for \(items.count) items")
            }
            return SealedBatch(generation: sealed.generation, keyID: sealed.keyId, envelopes: sealed.envelopes.map { [UInt8]($0) })
        }
    }

    /// Opens envelopes under whichever generation each names; the plaintexts, in order.
    public func open(_ account: String, _ items: [OpenItem]) async throws -> DaemonAnswer<[[UInt8]]> {
        let body = try JSONEncoder().encode(OpenRequest(items: items.map { .init(envelope: Data($0.envelope), aad: Data($0.aad)) }))
        let response = try await send("POST", Self.accountPath(account) + "/open", body: [UInt8](body))
        return try Answers.decode(response) { body in
            let plaintexts = try JSONDecoder().decode(OpenResponse.self, from: body).plaintexts
            guard plaintexts.count == items.count else {
                throw KeyVaultClientError.malformedAnswer("\(plaintexts.count) plaintexts for \(items.count) envelopes")
            }
            return plaintexts.map { [UInt8]($0) }
        }
    }

    /// The account's events, resumed across dropped connections and daemon restarts.
    public func events(_ account: String, lastEventID: String? = nil) -> AccountEvents {
        AccountEvents(client: self, account: account, lastEventID: lastEventID)
    }

    /// Whether the daemon answers, and its version.
    public func health() async throws -> DaemonAnswer<String> {
        try Answers.decode(try await send("GET", "/v1/health")) { body in
            try JSONDecoder().decode(Health.self, from: body).version
        }
    }

    // MARK: Any request

    /// One request as it is, for what has no typed call (and for the CLI, which prints answers as they come).
    public func send(_ method: String, _ path: String, body: [UInt8]? = nil, headers: [(String, String)] = [],
                     timeout: Duration = .seconds(60)) async throws -> DaemonResponse {
        let response = try await start(method, path, body: body, headers: headers, timeout: timeout)
        var collected: ByteBuffer
        do {
            collected = try await response.body.collect(upTo: Self.maxAnswerBytes)
        } catch {
            throw Self.reachError(error, socket: configuration.socketPath)
        }
        let body = Array(collected.readableBytesView)
        // The answer may hold a key: the buffer it came in is wiped, leaving the one copy the caller has.
        collected.withUnsafeMutableReadableBytes(Wipe.bytes)
        return DaemonResponse(status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) }, body: body)
    }

    /// A request whose answer's body the caller reads (the event stream). `timeout` bounds the head only.
    func start(_ method: String, _ path: String, body: [UInt8]? = nil, headers: [(String, String)] = [],
               timeout: Duration) async throws -> HTTPClientResponse {
        let socket = try SocketTrust.verify(configuration.socketPath, daemonUID: configuration.daemonUID)
        guard let url = URL(httpURLWithSocketPath: socket, uri: path) else {
            throw KeyVaultClientError.unreachable(socket: configuration.socketPath, reason: "not a path a URL can carry")
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = HTTPMethod(rawValue: method)
        request.headers.add(name: "Host", value: "keyvaultd")
        // A connection per request, checked just before it (`SocketTrust`): a pooled one could be
        // closed by the daemon (after a body, or to make room) just as it is reused, and the
        // request would fail on a closed channel. On a Unix socket a connection costs little.
        request.headers.add(name: "Connection", value: "close")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
        }
        do {
            return try await Self.http.execute(request, timeout: TimeAmount.nanoseconds(Int64(timeout / .nanoseconds(1))))
        } catch {
            throw Self.reachError(error, socket: configuration.socketPath)
        }
    }

    /// The daemon's bodies are small: a batch is at most 64 KiB in, so less than twice that out.
    static let maxAnswerBytes = 4 << 20

    /// One pool for every client in the process; never shut down, as it lives as long as the process.
    private static let http = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            // No read timeout: an event stream is quiet for minutes, a waiting read for up to its wait.
            timeout: .init(connect: .seconds(5), read: nil),
            connectionPool: .init(idleTimeout: .seconds(30)),
            decompression: .disabled))

    static func reachError(_ error: any Error, socket: String) -> any Error {
        if error is CancellationError || error is KeyVaultClientError { return error }
        if let io = error as? IOError { return KeyVaultClientError.unreachable(socket: socket, reason: SocketTrust.reason(io.errnoCode)) }
        if let client = error as? HTTPClientError, client == .cancelled { return CancellationError() }
        return KeyVaultClientError.unreachable(socket: socket, reason: "\(error)")
    }

    static func accountPath(_ account: String) -> String {
        "/v1/accounts/" + PathSegment.encode(account)
    }

    static func wholeSeconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        return Int(clamping: seconds) + (attoseconds > 0 ? 1 : 0)
    }
}

private struct Health: Decodable { var version: String }
