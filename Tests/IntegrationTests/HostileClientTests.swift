import Foundation
import KeyVaultClient
import Testing
#if canImport(Glibc)
import Glibc
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore
#endif

/// What a client may hold is bounded: a request's time, the connections, the
/// waiters of reads whose client went away. Real daemons, raw sockets.
@Suite("Hostile clients: slow requests, floods, abandoned waits")
struct HostileClientTests {
    @Test("a request whose head or body trickles in is closed at its deadline, and the action is not done")
    func slowRequestsClosedAtDeadline() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start(extraArguments: ["--request-timeout", "2"])
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "slow", "passphrase": "pw"]).status == 200)

        // A head a byte at a time, beside the body below (each on its own connection, each its own 2 s).
        async let slowHead = Self.trickleHead(daemon.socket)

        // A body a byte at a time: every byte used to reset the idle timer.
        let body = try RawSocket(path: daemon.socket)
        let started = ContinuousClock.now
        body.send("POST /v1/accounts/slow/lock HTTP/1.1\r\nHost: localhost\r\nContent-Length: 200\r\n\r\n")
        var sent = 0
        while sent < 200, body.send(" ") {
            sent += 1
            try await Task.sleep(for: .milliseconds(100))
            body.readAvailable()
            if body.sawEOF || ContinuousClock.now - started > .seconds(15) { break }
        }
        #expect(try await body.readToEOF(timeout: .seconds(10)), "the daemon closed the trickling request")
        #expect(sent < 200, "closed before the body was whole (\(sent) of 200 bytes sent)")
        // Cut off at its deadline, the lock never ran.
        #expect(try await daemon.request("GET", "/v1/accounts/slow/keys/current").state == "ready")

        // The slow head is answered `invalid` and closed.
        let head = try await slowHead
        let answer = try #require(try await head.readResponse(), "an answer to the slow head: \(head.text)")
        #expect(answer.status == 400)
        #expect(answer.state == "invalid")
        #expect((answer.object["error"] as? String)?.contains("did not arrive whole within 2 s") == true)
        #expect(try await head.readToEOF(timeout: .seconds(5)))
        // The daemon serves on.
        #expect(try await daemon.request("GET", "/v1/health").state == "ready")
    }

    /// A request head sent a byte at a time, then a header's value a byte every 100 ms, until the
    /// daemon answers or closes: the socket, to read what it said.
    static func trickleHead(_ socket: String) async throws -> RawSocket {
        let head = try RawSocket(path: socket)
        for byte in "GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ".utf8 {
            guard head.send([byte]) else { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        var more = 0
        while more < 100, head.send("a") {
            more += 1
            try await Task.sleep(for: .milliseconds(100))
            head.readAvailable()
            if head.sawEOF || head.response != nil { break }
        }
        return head
    }

    @Test("past the connection limit: idle connections make room, busy ones do not, and the refusal is a contract answer")
    func connectionFlood() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start(extraArguments: ["--max-connections", "8", "--request-timeout", "60"])
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "flood", "passphrase": "pw"]).status == 200)
        let key = try #require(try await daemon.request("GET", "/v1/accounts/flood/keys/current")["key"])

        // A flood of idle connections (connected, nothing sent): each new one takes the place of the
        // one idle longest, so the daemon holds at most 8, and a normal client still reads its key.
        var flood: [RawSocket] = []
        for _ in 0..<200 { flood.append(try RawSocket(path: daemon.socket)) }
        #expect(try await daemon.request("GET", "/v1/accounts/flood/keys/current")["key"] == key)
        try await eventually {
            let server = try await daemon.request("GET", "/v1/server").object
            let connections = server["connections"] as? [String: Any] ?? [:]
            return (connections["open"] as? Int ?? 99) <= 8 && (connections["closedForRoomTotal"] as? Int ?? 0) >= 192
        }
        var stillOpen = 0
        for socket in flood {
            if !(try await socket.readToEOF(timeout: .milliseconds(50))) { stillOpen += 1 }
        }
        #expect(stillOpen <= 8, "\(stillOpen) of the flood still open")
        flood.removeAll()
        try await eventually { (try await daemon.request("GET", "/v1/server").object["connections"] as? [String: Any])?["open"] as? Int == 1 }

        // Connections in the middle of a request are not closed for room: with all 8 busy, a new
        // connection's request is refused in the contract's shape, and the connection closed.
        var busy: [RawSocket] = []
        for _ in 0..<8 {
            let socket = try RawSocket(path: daemon.socket)
            socket.send("GET /v1/health HTTP/1.1\r\nHost: localhost\r\n")  // the head is not finished
            busy.append(socket)
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(300))
        let refused = try RawSocket(path: daemon.socket)
        refused.send("GET /v1/accounts/flood/keys/current HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let answer = try #require(try await refused.readResponse(), "the refusal: \(refused.text)")
        #expect(answer.status == 503)
        #expect(answer.state == "error")
        #expect((answer.object["error"] as? String)?.contains("too many connections") == true)
        #expect(answer.headers["retry-after"] == "1")
        #expect(!refused.text.contains(key))
        #expect(try await refused.readToEOF(timeout: .seconds(5)))

        // The busy ones finish their requests; then a normal client is served again.
        for socket in busy { socket.send("\r\n") }
        for socket in busy { #expect(try await socket.readResponse()?.state == "ready") }
        busy.removeAll()
        #expect(try await daemon.request("GET", "/v1/accounts/flood/keys/current")["key"] == key)
    }

    @Test("10,000 waiting reads whose clients went away release their waiters")
    func abandonedWaitersReleased() async throws {
        let count = 10_000
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        daemon.relay = "sqlite:" + daemon.root + "/relay.sqlite"
        try await daemon.start(extraArguments: ["--max-connections", "11000"])
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "w", "passphrase": "pw"]).status == 200)
        let pid = try #require(daemon.process?.pid)

        // Asked on a raw socket: its connect waits in the listen queue behind the flood, where the
        // client library's gives up at once (EAGAIN).
        func held() async throws -> (reads: Int, waiters: Int, open: Int, inProgress: Int) {
            let socket = try RawSocket(path: daemon.socket)
            socket.send("GET /v1/server HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            let server = try #require(try await socket.readResponse(timeout: .seconds(30))).object
            let held = server["held"] as? [String: Any] ?? [:]
            let connections = server["connections"] as? [String: Any] ?? [:]
            return (held["waitingReads"] as? Int ?? -1, held["hubWaiters"] as? Int ?? -1, connections["open"] as? Int ?? -1,
                    connections["requestsInProgress"] as? Int ?? -1)
        }
        let before = residentKiB(of: pid) ?? 0

        // Generation 2 has not been announced: with a relay, such a read waits for it.
        var sockets: [RawSocket] = []
        sockets.reserveCapacity(count)
        for _ in 0..<count {
            let socket = try RawSocket(path: daemon.socket)
            socket.send("GET /v1/accounts/w/keys/2?wait=60 HTTP/1.1\r\nHost: localhost\r\n\r\n")
            sockets.append(socket)
        }
        try await Self.eventuallyWithin(.seconds(60)) { try await held().waiters == count }
        #expect(try await held().reads == count)
        #expect(try await held().inProgress == count + 1, "each waiting read, and the query itself")
        let waiting = residentKiB(of: pid) ?? 0

        // Every client goes away without a word: the waiters are released, then the connections close.
        let closed = ContinuousClock.now
        sockets.removeAll()
        try await Self.eventuallyWithin(.seconds(60)) {
            let now = try await held()
            return now.reads == 0 && now.waiters == 0
        }
        let released = ContinuousClock.now - closed
        // The query's own connection and request are the ones left.
        try await Self.eventuallyWithin(.seconds(60)) {
            let now = try await held()
            return now.open == 1 && now.inProgress == 1
        }
        let gone = ContinuousClock.now - closed
        let after = residentKiB(of: pid) ?? 0
        print("abandoned waiters: RSS \(before / 1024) MB idle, \(waiting / 1024) MB with \(count) waiting reads, \(after / 1024) MB after they closed; waiters released in \(released), connections and requests ended in \(gone)")
        #expect(try await daemon.request("GET", "/v1/health").state == "ready")
    }
}

extension HostileClientTests {
    @Test("SIGTERM answers a waiting read with the state as it is and exits 0, without waiting out the wait")
    func stopEndsWaits() async throws {
        let (daemon, waiting) = try await Self.oneWaitingRead()
        defer { daemon.remove() }
        daemon.signal(SIGTERM)
        let answer = try #require(try await waiting.readResponse(timeout: .seconds(30)), "answered before the wait ends: \(waiting.text)")
        #expect(answer.state == "unknown", "generation 2 was never announced")
        #expect(await daemon.stop() == 0)
    }

    @Test("a client that closes only its writing side while its key read waits is answered at once, with the state as it is")
    func halfClosedWaitIsAnswered() async throws {
        let (daemon, waiting) = try await Self.oneWaitingRead()
        defer { daemon.remove() }
        waiting.shutdownWrite()
        let answer = try #require(try await waiting.readResponse(timeout: .seconds(30)), "answered before the wait ends: \(waiting.text)")
        #expect(answer.state == "unknown", "generation 2 was never announced")
        let server = try await daemon.request("GET", "/v1/server").object
        #expect((server["held"] as? [String: Any])?["hubWaiters"] as? Int == 0)
        #expect((server["connections"] as? [String: Any])?["requestsInProgress"] as? Int == 1)
    }

    /// A daemon with a relay and one account, and a raw client whose read of
    /// generation 2 (never announced, so it waits) the daemon holds.
    static func oneWaitingRead() async throws -> (DaemonProcess, RawSocket) {
        let daemon = try DaemonProcess()
        do {
            daemon.relay = "sqlite:" + daemon.root + "/relay.sqlite"
            try await daemon.start()
            #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "held", "passphrase": "pw"]).status == 200)
            let waiting = try RawSocket(path: daemon.socket)
            waiting.send("GET /v1/accounts/held/keys/2?wait=300 HTTP/1.1\r\nHost: localhost\r\n\r\n")
            try await eventually {
                (try await daemon.request("GET", "/v1/server").object["held"] as? [String: Any])?["waitingReads"] as? Int == 1
            }
            return (daemon, waiting)
        } catch {
            daemon.remove()
            throw error
        }
    }

    /// Polls a condition until `timeout`; a failure says so.
    static func eventuallyWithin(_ timeout: Duration, _ condition: () async throws -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("condition not met within \(timeout)", sourceLocation: sourceLocation)
    }
}
