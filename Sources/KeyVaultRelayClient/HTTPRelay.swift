package import Foundation
import AsyncHTTPClient
package import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization
package import KeyVaultProtocol
package import KeyVaultRelay
import KeyVaultRelayWire

/// The relay service (`keyvault-relay`, docs/RELAY.md) as a `Relay`: every
/// request signed with this device's key for the account (RFC 9421), reads
/// per account, and wake-ups from one held read per account this device can
/// sign for. Several URLs are tried in order when one does not answer.
///
/// An account whose key is locked away is not read (its records wait on the
/// relay until the unlock); its publishes fail as `needsUnlock`, and wait in
/// the vault like any other.
package final class HTTPRelay: Relay {
    private let urls: [String]
    private let client: HTTPClient
    private let credentials: RelayCredentials
    private let logger: Logger
    /// How long a held read waits at the service before answering empty.
    static let holdSeconds = 30
    static let requestTimeout: TimeAmount = .seconds(10)

    private struct State {
        /// The URL that answered last: tried first.
        var preferred = 0
        var unreachableSince: Date?
        /// After no instance answered, calls fail at once for a while rather than each waiting
        /// out the service's own timeout; a held read that gets an answer ends it early.
        var coolDown = RelayCoolDown()
        /// The highest cursor seen per account, where a held read resumes.
        var seen: [AccountID: RelayCursor] = [:]
        /// What a held read was answered with, by account and the cursor it read after: the
        /// read its wake-up causes is answered from here instead of asking the service again.
        var prefetched: [AccountID: (after: RelayCursor, rows: [RelayRow])] = [:]
        /// The cursor each account's held read is out after, while it is.
        var holding: [AccountID: RelayCursor] = [:]
        var subscribers: [Int: AsyncStream<RelayWake>.Continuation] = [:]
        var nextSubscriber = 0
        /// Accounts this device filed its candidacy for (with a sign-in presented) in this run.
        var candidacyFiled: Set<AccountID> = []
        var watchers: [AccountID: Task<Void, Never>] = [:]
        /// Accounts whose held read the service refused (not yet founded there, say):
        /// their watcher waits, and starts over when a request for the account succeeds.
        var refused: Set<AccountID> = []
        /// Accounts the service said its store went back for (`cursor-ahead`), not yet taken by the daemon.
        var goneBack: Set<AccountID> = []
        /// How many requests for each account the service took: a held read refused
        /// while one was taken (a genesis published meanwhile) is held again at once.
        var taken: [AccountID: UInt64] = [:]
        var reconciler: Task<Void, Never>?
    }
    private let state = Mutex(State())

    package init(urls: [String], certificateAuthority: String?, credentials: RelayCredentials, logger: Logger) throws {
        precondition(!urls.isEmpty)
        var tls = TLSConfiguration.makeClientConfiguration()
        if let certificateAuthority {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificateAuthority))
            } catch {
                throw RelayError.badAddress("--relay-ca \(certificateAuthority) holds no PEM certificate: \(error)")
            }
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        // One held read per account, besides the writes: a pool of 8 would starve them.
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 4096)
        configuration.timeout = .init(connect: .seconds(5))
        self.client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.urls = urls.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.credentials = credentials
        self.logger = logger
    }

    /// A relay dropped without `shutdown()` (a start that failed after it was made) still
    /// closes its client: async-http-client traps on a client released while running.
    deinit {
        let client = client
        Task { try? await client.shutdown() }
    }

    package var unreachableSince: Date? { state.withLock { $0.unreachableSince } }

    // MARK: Relay

    package func publish(_ record: RelayRecord) async throws {
        try await publish(batch: [record])
    }

    package func publish(batch records: [RelayRecord]) async throws {
        // A request names one account (the service checks each record against it).
        for group in Dictionary(grouping: records, by: \.account).sorted(by: { $0.key < $1.key }) {
            let body = try JSONEncoder().encode(RelayWire.Publish(records: group.value.map(RelayWire.Record.init)))
            _ = try await send(account: group.key, method: .POST, path: "/v1/accounts/\(group.key)/records", query: "", body: Array(body))
        }
    }

    package func rows(account: AccountID, after cursor: RelayCursor, limit: Int) async throws -> [RelayRow] {
        guard credentials.signer(for: account) != nil else { return [] }
        let prefetched = state.withLock { state -> [RelayRow]? in
            guard let held = state.prefetched.removeValue(forKey: account), held.after == cursor, held.rows.count <= limit else { return nil }
            return held.rows
        }
        if let prefetched { return prefetched }
        return try await read(account: account, after: cursor, limit: limit, wait: 0)
    }

    /// A held read answers as soon as a row lands after its cursor (RELAY.md), so while one is out
    /// after `cursor`, with no answer waiting, a read after `cursor` could only find what it is about
    /// to bring.
    package func covers(_ account: AccountID, after cursor: RelayCursor) -> Bool {
        state.withLock { $0.holding[account] == cursor && $0.prefetched[account] == nil }
    }

    /// The service hands out cursors per account; there is no store-wide one to compare
    /// (and no store file that could be made anew under this device).
    package func lastCursor() async throws -> RelayCursor? { nil }

    /// The operator's view across accounts is not offered to devices.
    package func rows(after cursor: RelayCursor, limit: Int) async throws -> [RelayRow] { [] }

    package func wakeups() -> AsyncStream<RelayWake> {
        let (stream, continuation) = AsyncStream<RelayWake>.makeStream()
        let start = state.withLock { state -> Bool in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            return state.reconciler == nil
        }
        if start {
            let changes = credentials.changes()
            let task = Task { [weak self] in
                for await _ in changes { self?.reconcileWatchers() }
            }
            state.withLock { $0.reconciler = task }
        }
        return stream
    }

    package func shutdown() async {
        let (tasks, subscribers) = state.withLock { state in
            let tasks = Array(state.watchers.values) + [state.reconciler].compactMap { $0 }
            state.watchers = [:]
            state.reconciler = nil
            let subscribers = Array(state.subscribers.values)
            state.subscribers = [:]
            return (tasks, subscribers)
        }
        for task in tasks { task.cancel() }
        for subscriber in subscribers { subscriber.finish() }
        try? await client.shutdown()
    }

    // MARK: Held reads

    /// One held read per account this device can sign for; none for the others.
    private func reconcileWatchers() {
        let wanted = credentials.accounts
        let (started, stopped) = state.withLock { state -> ([AccountID], [Task<Void, Never>]) in
            let stopped = state.watchers.filter { !wanted.contains($0.key) }
            for id in stopped.keys { state.watchers[id] = nil }
            let started = wanted.filter { state.watchers[$0] == nil }
            for id in started {
                state.watchers[id] = Task { [weak self] in await self?.watch(id) }
            }
            return (Array(started), Array(stopped.values))
        }
        for task in stopped { task.cancel() }
        // A newly signable account (an unlock, a new enrollment) is read now: what waited is taken in.
        if !started.isEmpty { announce(.accounts(Set(started))) }
    }

    /// Holds a read on the account's stream after the last cursor seen; each
    /// answer with records is a wake-up. An outage backs off (250 ms to 5 s);
    /// a refusal waits for this device's next successful request for the
    /// account (`restartIfRefused`), and retries besides, backing off from one
    /// second to a minute (each wait drawn from its second half, `BackOff.jittered`): another member may make this device one again (its
    /// approval republished after the service's store was restored from a
    /// backup older than it), and this device would not otherwise know.
    private func watch(_ account: AccountID) async {
        var delay = 0.25
        var refusedDelay = 1.0
        while !Task.isCancelled {
            let (after, takenBefore) = state.withLock { ($0.seen[account] ?? .start, $0.taken[account] ?? 0) }
            do {
                state.withLock { $0.holding[account] = after }
                defer { state.withLock { _ = $0.holding.removeValue(forKey: account) } }
                let rows = try await read(account: account, after: after, limit: 1000, wait: Self.holdSeconds)
                delay = 0.25
                refusedDelay = 1
                if !rows.isEmpty {
                    state.withLock { $0.prefetched[account] = (after, rows) }
                    announce(.accounts([account]))
                }
            } catch RelayError.needsUnlock {
                return
            } catch let error as RelayError where error.isAnswer {
                // A refusal that crossed a request the service took (the account's genesis, say:
                // the refusal comes at least 20 ms after the read, RELAY.md) is stale: read again now.
                let stale = state.withLock { state -> Bool in
                    guard (state.taken[account] ?? 0) == takenBefore else { return true }
                    state.refused.insert(account)
                    return false
                }
                if stale { continue }
                try? await Task.sleep(for: .seconds(BackOff.jittered(refusedDelay)))
                refusedDelay = min(refusedDelay * 2, 60)
                state.withLock { _ = $0.refused.remove(account) }
            } catch {
                if Task.isCancelled { return }
                try? await Task.sleep(for: .seconds(BackOff.jittered(delay)))
                delay = min(delay * 2, 5)
            }
        }
    }

    /// The service took a request for the account: a held read it refused before is held again now.
    private func restartIfRefused(_ account: AccountID) {
        let old = state.withLock { state -> Task<Void, Never>? in
            state.taken[account, default: 0] &+= 1
            guard state.refused.remove(account) != nil, let task = state.watchers[account] else { return nil }
            state.watchers[account] = Task { [weak self] in await self?.watch(account) }
            return task
        }
        old?.cancel()
    }

    private func announce(_ wake: RelayWake) {
        for subscriber in state.withLock({ Array($0.subscribers.values) }) { subscriber.yield(wake) }
    }

    private func read(account: AccountID, after cursor: RelayCursor, limit: Int, wait: Int) async throws -> [RelayRow] {
        var query = "after=\(cursor)&limit=\(limit)"
        if wait > 0 { query += "&wait=\(wait)" }
        let body: [UInt8]
        do {
            body = try await send(account: account, method: .GET, path: "/v1/accounts/\(account)/records", query: query, body: [],
                                  timeout: .seconds(Int64(wait)) + Self.requestTimeout, wait: wait)
        } catch is CursorAhead {
            // The service's store went back (a restore): the account is read again from its start, and the
            // daemon checks that the store holds what it knows it held (`RelayAudit`), woken as by a relay opened.
            state.withLock { state in
                state.seen[account] = .start
                state.goneBack.insert(account)
            }
            announce(.opened)
            return []
        }
        let decoded = try decode(RelayWire.Rows.self, body)
        let rows = try decoded.rows.map { wire -> RelayRow in
            guard let row = wire.row(account: account) else { throw RelayError.refused("the relay service answered a record this device cannot read") }
            return row
        }
        // At most the rows asked for, each after the cursor asked after and after the one before: a relay
        // answering otherwise (broken, or hostile) would have the daemon page the same rows for ever.
        guard rows.count <= limit, zip([cursor] + rows.map(\.cursor), rows).allSatisfy({ $0 < $1.cursor }) else {
            throw RelayError.refused("the relay service answered rows that do not move past the cursor asked after, or more than asked for")
        }
        if let last = rows.last?.cursor {
            state.withLock { $0.seen[account] = max($0.seen[account] ?? .start, last) }
        }
        return rows
    }

    // MARK: Requests

    /// Sends one signed request. While a sign-in is being presented, this device
    /// first becomes a candidate of the account (once a run: the service refuses a
    /// stranger slowly, on purpose), and a `forbidden` answer all the same (its
    /// candidacy lapsed) files it again and tries once more.
    private func send(account: AccountID, method: HTTPMethod, path: String, query: String, body: [UInt8],
                      timeout: TimeAmount = HTTPRelay.requestTimeout, wait: Int = 0) async throws -> [UInt8] {
        guard let signer = credentials.signer(for: account) else { throw RelayError.needsUnlock }
        func fileCandidacy(_ token: String) async throws {
            let candidacy = try JSONEncoder().encode(RelayWire.Candidacy(signing: signer.key.publicKey, box: signer.box, identityToken: token))
            _ = try check(try await exchange(signer: signer, method: .POST, path: "/v1/accounts/\(account)/candidates", query: "",
                                             body: Array(candidacy), timeout: Self.requestTimeout))
            state.withLock { _ = $0.candidacyFiled.insert(account) }
        }
        if let token = credentials.identityToken(for: account), !state.withLock({ $0.candidacyFiled.contains(account) }) {
            try await fileCandidacy(token)
        }
        var answer = try await exchange(signer: signer, method: method, path: path, query: query, body: body, timeout: timeout, held: wait > 0)
        if answer.status == .forbidden, let token = credentials.identityToken(for: account) {
            try await fileCandidacy(token)
            answer = try await exchange(signer: signer, method: method, path: path, query: query, body: body, timeout: timeout)
        }
        let body = try check(answer)
        if wait == 0 { restartIfRefused(account) }
        return body
    }

    private struct Answer {
        var status: HTTPResponseStatus
        var body: [UInt8]
    }

    /// One request, signed afresh for each URL tried (a new nonce each time).
    private func exchange(signer: RelayCredentials.Signer, method: HTTPMethod, path: String, query: String, body: [UInt8],
                          timeout: TimeAmount, held: Bool = false) async throws -> Answer {
        let (first, coolingDown) = state.withLock { ($0.preferred, held ? nil : $0.coolDown.active()) }
        if let coolingDown { throw coolingDown }
        var problem = "no answer"
        for step in 0..<urls.count {
            let index = (first + step) % urls.count
            let signature = RequestSignature(method: method.rawValue, path: path, query: query, body: body,
                                             created: Int64(Date().timeIntervalSince1970), nonce: RequestSignature.randomNonce(), keyID: signer.deviceID)
            var request = HTTPClientRequest(url: urls[index] + path + (query.isEmpty ? "" : "?" + query))
            request.method = method
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "Content-Digest", value: signature.contentDigest)
            request.headers.add(name: "Signature-Input", value: signature.signatureInputHeader)
            request.headers.add(name: "Signature", value: signature.signatureHeader(signedBy: signer.key))
            if !body.isEmpty { request.body = .bytes(body) }
            do {
                let response = try await client.execute(request, timeout: timeout)
                let bytes = Array(buffer: try await response.body.collect(upTo: 16 << 20))
                if response.status == .serviceUnavailable {
                    problem = "\(urls[index]) answered 503"
                    continue
                }
                state.withLock { state in
                    state.preferred = index
                    state.unreachableSince = nil
                    state.coolDown.answered()
                }
                return Answer(status: response.status, body: bytes)
            } catch {
                if Task.isCancelled { throw CancellationError() }
                problem = "\(urls[index]): \(error)"
            }
        }
        state.withLock { state in
            state.unreachableSince = state.unreachableSince ?? Date()
            state.coolDown.failed(.unreachable(problem))
        }
        throw RelayError.unreachable(problem)
    }

    package func takeAccountsGoneBack() -> Set<AccountID> {
        state.withLock { state in
            defer { state.goneBack = [] }
            return state.goneBack
        }
    }

    /// `cursor-ahead`: the reader's cursor is past what the service's store holds for the account.
    private struct CursorAhead: Error {}

    /// The body of a 2xx answer; the refusal named otherwise.
    private func check(_ answer: Answer) throws -> [UInt8] {
        if (200..<300).contains(answer.status.code) { return answer.body }
        let refusal = try? JSONDecoder().decode(RelayWire.Refusal.self, from: Data(answer.body))
        let reason = refusal?.reason ?? "HTTP \(answer.status.code)"
        switch (answer.status, refusal?.error) {
        case (.conflict, "log-seq-taken"):
            throw RelayError.logSeqTaken(refusal?.seq ?? 0)
        case (.conflict, "cursor-ahead"):
            throw CursorAhead()
        case (_, "identity"):
            throw RelayError.identity(reason)
        case (.forbidden, _):
            throw RelayError.refused("this device is not a member of the account there (\(reason))")
        default:
            throw RelayError.refused(reason)
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8]) throws -> T {
        do { return try JSONDecoder().decode(type, from: Data(body)) } catch {
            throw RelayError.refused("the relay service answered something that is not RELAY.md's JSON")
        }
    }
}
