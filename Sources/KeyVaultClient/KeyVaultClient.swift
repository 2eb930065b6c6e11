public import KeyVaultUnixSocket
import FoundationEssentials
import NIOCore

/// A client of keyvaultd's socket API (docs/API.md), for an app's sync engine.
///
/// No request goes to a socket before its peer is checked (`SocketTrust`): a
/// passphrase, a key or a record never goes to another user's process.
/// Answers are typed (`DaemonAnswer`): a key that is `ready`, `pending`
/// with its reason, or a refusal such as `locked`. Cheap to copy: copies share
/// the connections kept between requests (`ConnectionPool`), each checked once,
/// when it was made.
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
    /// Checked connections kept between requests; closed when the last copy of this client goes.
    let connections = ConnectionPool()

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
        return try Answers.decode(response, Answers.KeyFields.self, ready: Answers.key)
    }

    /// Seals records under the account's current key (or the one `keyID` names), in one batch of 1 to 1000.
    public func seal(_ account: String, _ items: [SealItem], keyID: KeyIdentifier? = nil) async throws -> DaemonAnswer<SealedBatch> {
        let body = try JSONEncoder().encode(SealRequest(items: items.map { .init(plaintext: Data($0.plaintext), aad: Data($0.aad)) }, keyId: keyID))
        let response = try await send("POST", Self.accountPath(account) + "/seal", body: [UInt8](body))
        return try Answers.decode(response, SealResponse.self) { sealed in
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
        return try Answers.decode(response, OpenResponse.self) { opened in
            let plaintexts = opened.plaintexts
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
        try Answers.decode(try await send("GET", "/v1/health"), Health.self) { $0.version }
    }

    // MARK: Any request

    /// One request as it is, for what has no typed call (and for the CLI, which prints answers as they come).
    public func send(_ method: String, _ path: String, body: [UInt8]? = nil, headers: [(String, String)] = [],
                     timeout: Duration = .seconds(60)) async throws -> DaemonResponse {
        try await exchangeWhole(try DaemonRequest(method, path, headers: headers, body: body), timeout: timeout)
    }

    /// The daemon's bodies are small: a batch is at most 64 KiB in, so less than twice that out.
    static let maxAnswerBytes = 4 << 20

    static func reachError(_ error: any Error, socket: String) -> any Error {
        switch error {
        case is CancellationError, is KeyVaultClientError: return error
        case ConnectionFailure.malformed(let what): return KeyVaultClientError.malformedAnswer(what)
        case let failure as ConnectionFailure: return KeyVaultClientError.unreachable(socket: socket, reason: failure.description)
        case let io as IOError: return KeyVaultClientError.unreachable(socket: socket, reason: SocketTrust.reason(io.errnoCode))
        default: return KeyVaultClientError.unreachable(socket: socket, reason: "\(error)")
        }
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
