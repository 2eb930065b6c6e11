import Foundation
import KeyVaultClient
import KeyVaultTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The client library keeps its checked connections between requests: what
/// happens when the daemon closes one, or someone else's socket takes the
/// daemon's place, between two requests.
@Suite("The client library's kept connections")
struct ClientConnectionTests {
    @Test("requests share one kept connection; one the peer heard and then lost is not sent again")
    func keptAndNeverSentTwice() async throws {
        let folder = try DaemonProcess()
        defer { folder.remove() }
        // Answers every request on a connection until the third, which it hears and then closes without answering.
        let (peer, client, counts) = try await Self.scripted(in: folder, closingAt: 3)
        defer { peer.killAndReap() }
        #expect(try await client.health().value == "0.1.0")
        #expect(try await client.health().value == "0.1.0")
        do {
            _ = try await client.health()
            Issue.record("a request the peer heard and never answered was answered")
        } catch KeyVaultClientError.unreachable {}
        peer.signal(SIGTERM)
        _ = await peer.wait()
        // One connection for all three; the third request heard once, not again on a new connection.
        #expect(try String(contentsOfFile: counts, encoding: .utf8) == "1 connections, 3 requests")
    }

    @Test("a path or header with CR, LF or another control character is refused before anything is sent (no request of the caller's making)")
    func controlCharactersNeverSent() async throws {
        let folder = try DaemonProcess()
        defer { folder.remove() }
        let (peer, client, counts) = try await Self.scripted(in: folder, closingAt: 9)
        defer { peer.killAndReap() }
        #expect(try await client.health().value == "0.1.0")
        for (path, headers) in [("/v1/health", [("X-Note", "a\r\nContent-Length: 0\r\n\r\nGET /v1/accounts HTTP/1.1")]),
                                ("/v1/health", [("X-Note\n", "a")]), ("/v1/health", [("X-Note", "a\u{0}b")]),
                                ("/v1/health HTTP/1.1\r\nX: y", []), ("/v1/he alth", [])] {
            await #expect(throws: KeyVaultClientError.self) { _ = try await client.send("GET", path, headers: headers) }
        }
        // `keyvault events --last-event-id` passed its text into the header as given.
        var events = client.events("a", lastEventID: "7\r\nX-Injected: 1").makeAsyncIterator()
        do {
            _ = try await events.next()
            Issue.record("an event stream resumed after an ID with CR LF")
        } catch let error as KeyVaultClientError {
            #expect(error.description.contains("control character"), "\(error)")
        }
        #expect(try await client.health().value == "0.1.0")
        peer.signal(SIGTERM)
        _ = await peer.wait()
        #expect(try String(contentsOfFile: counts, encoding: .utf8) == "1 connections, 2 requests")
    }

    @Test("a kept connection that refuses a request's first byte (the peer's close met on the way in): the request goes on a new connection")
    func firstByteRefused() async throws {
        let folder = try DaemonProcess()
        defer { folder.remove() }
        let socket = folder.root + "/peer.sock", out = folder.root + "/out"
        let peer = try ChildProcess("/usr/bin/python3", ["-c", Self.halfClosingPeer, socket], stdoutPath: out, stderrPath: folder.root + "/err")
        defer { peer.killAndReap() }
        try await eventually { FileManager.default.fileExists(atPath: socket) }

        let client = KeyVaultClient(socketPath: socket)
        #expect(try await client.health().value == "0.1.0")
        // The peer stops reading the kept connection and says nothing: it looks open (nothing to read), but
        // the kernel refuses what is written on it, as a connection the daemon closes in that instant does.
        try await eventually { (try? String(contentsOfFile: out, encoding: .utf8))?.contains("stopped reading") == true }
        #expect(try await client.health().value == "0.1.0")
        try await eventually { (try? String(contentsOfFile: out, encoding: .utf8))?.contains("answered on connection 2") == true }
    }

    @Test("a connection the daemon closes between two requests (to make room, or restarting) does not fail the second")
    func closedBetweenRequests() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start(extraArguments: ["--max-connections", "1"])
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "kept", "passphrase": "pw"]).status == 200)
        let client = KeyVaultClient(socketPath: daemon.socket)
        let first = try #require(try await client.key("kept").value)

        // Another connection takes the only place: the daemon closes the client's kept one, idle, to make room.
        let other = try await SocketHTTPConnection.connect(path: daemon.socket)
        try await eventually {
            let server = Reply(try await other.request("GET", "/v1/server")).object["connections"] as? [String: Any] ?? [:]
            return server["open"] as? Int == 1 && server["closedForRoomTotal"] as? Int ?? 0 >= 1
        }
        let second = try #require(try await client.key("kept").value)
        #expect(second.keyID == first.keyID)
        await other.close()

        // The daemon restarts: the kept connection ends with it, and the next request is answered by the new one.
        await daemon.stop()
        try await daemon.start(extraArguments: ["--max-connections", "1"])
        guard case .refused(let refusal) = try await client.key("kept") else { Issue.record("a restarted daemon's key read was not refused"); return }
        #expect(refusal.state == .locked)
    }

    @Test("a socket replaced by another user's between two requests is refused before anything is sent on it",
          .enabled(if: geteuid() == 0, "listening as another uid needs root"))
    func replacedByAnotherUsersSocket() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "swapped", "passphrase": "pw"]).status == 200)
        let client = KeyVaultClient(socketPath: daemon.socket)
        #expect(try await client.key("swapped").value != nil)

        await daemon.stop()
        unlink(daemon.socket)
        // Bound by root in root's own folder, so the path passes every check; then listening as uid 65534,
        // so only the peer's credentials, read on the connection that would carry the request, tell.
        let out = daemon.root + "/impostor.out"
        let impostor = try ChildProcess("/usr/bin/python3", ["-c", Self.impostor, daemon.socket], stdoutPath: out, stderrPath: daemon.root + "/impostor.err")
        defer { impostor.killAndReap() }
        try await eventually { (try? String(contentsOfFile: out, encoding: .utf8))?.contains("listening") == true }

        do {
            _ = try await client.key("swapped")
            Issue.record("the client talked to another user's socket")
        } catch KeyVaultClientError.wrongPeer(_, let expected, let actual) {
            #expect(expected == 0)
            #expect(actual == 65534)
        }
        // The checking connection, closed unused: the impostor reads it to its end.
        try await eventually { (try? String(contentsOfFile: out, encoding: .utf8))?.contains("connection 1 ended") == true }
        let said = try String(contentsOfFile: out, encoding: .utf8)
        #expect(said.contains("connection 1 ended, 0 bytes heard"), "the impostor was sent bytes: \(said)")
    }

    /// Answers each request with a health answer, keeping the connection, until request number
    /// `argv[3]`, which it reads and then closes the connection on; at SIGTERM, writes what it saw.
    /// `scriptedPeer` listening in `folder`, closing without an answer at request `last`; a client of
    /// it, and the file it writes its counts to at SIGTERM.
    static func scripted(in folder: DaemonProcess, closingAt last: Int) async throws -> (ChildProcess, KeyVaultClient, String) {
        let socket = folder.root + "/peer.sock", counts = folder.root + "/counts"
        let peer = try ChildProcess("/usr/bin/python3", ["-c", scriptedPeer, socket, counts, String(last)],
                                    stdoutPath: folder.root + "/out", stderrPath: folder.root + "/err")
        try await eventually { FileManager.default.fileExists(atPath: socket) }
        return (peer, KeyVaultClient(socketPath: socket), counts)
    }

    static let scriptedPeer = """
        import os, socket, sys, signal
        path, out, last = sys.argv[1], sys.argv[2], int(sys.argv[3])
        connections = requests = 0
        def done(*_):
            open(out, "w").write(f"{connections} connections, {requests} requests"); sys.exit(0)
        signal.signal(signal.SIGTERM, done)
        # Bound under another name and moved into place once listening: a client that sees the path can connect.
        s = socket.socket(socket.AF_UNIX); s.bind(path + ".new"); s.listen(8); os.rename(path + ".new", path)
        while True:
            c, _ = s.accept()
            connections += 1
            pending = b""
            while c.fileno() >= 0:
                d = c.recv(65536)
                if not d: break
                pending += d
                while b"\\r\\n\\r\\n" in pending:
                    _, pending = pending.split(b"\\r\\n\\r\\n", 1)
                    requests += 1
                    if requests == last:
                        c.close(); break
                    c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: 35\\r\\n\\r\\n{"state":"ready","version":"0.1.0"}')
            c.close()
        """

    /// Answers one request, then shuts its reading side of that connection (writes to it fail at
    /// once, and nothing shows to the writer before it writes); answers one request on the next.
    static let halfClosingPeer = """
        import os, socket, sys, time
        answer = b'HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: 35\\r\\n\\r\\n{"state":"ready","version":"0.1.0"}'
        def answer_one(c):
            pending = b""
            while b"\\r\\n\\r\\n" not in pending:
                pending += c.recv(65536)
            c.sendall(answer)
        s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1] + ".new"); s.listen(8); os.rename(sys.argv[1] + ".new", sys.argv[1])
        first, _ = s.accept()
        answer_one(first)
        first.shutdown(socket.SHUT_RD)
        print("stopped reading connection 1", flush=True)
        second, _ = s.accept()
        answer_one(second)
        print("answered on connection 2", flush=True)
        time.sleep(60)
        """

    /// Binds as root, listens as uid 65534; says when it listens, and what it heard on each connection once it ends.
    static let impostor = """
        import os, socket, sys
        s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])
        os.setgroups([]); os.setgid(65534); os.setuid(65534)
        s.listen(8)
        print("listening", flush=True)
        accepted = 0
        while True:
            c, _ = s.accept()
            accepted += 1
            heard = 0
            while True:
                d = c.recv(65536)
                if not d: break
                heard += len(d)
            c.close()
            print(f"connection {accepted} ended, {heard} bytes heard", flush=True)
        """
}
