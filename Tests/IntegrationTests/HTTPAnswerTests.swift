import Foundation
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

/// Whatever bytes arrive, the answer keeps the API's rules: protocol errors
/// are `invalid` (400) in the contract's shape, bodies are bounded on every
/// route, path segments are percent-decoded, `wait` is plain digits, and
/// HTTP/1.0 and `Connection: close` are honoured.
@Suite("HTTP answers: malformed requests, limits, framing")
struct HTTPAnswerTests {
    /// Sends `bytes` on a fresh connection and returns the first answer; expects the connection closed after it.
    private func exchange(_ daemon: DaemonProcess, _ bytes: [UInt8], closes: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) async throws -> RawResponse {
        let socket = try RawSocket(path: daemon.socket)
        socket.send(bytes)
        let answer = try #require(try await socket.readResponse(), "no answer: \(socket.text)", sourceLocation: sourceLocation)
        if closes {
            #expect(try await socket.readToEOF(timeout: .seconds(5)), "the connection is closed after the answer", sourceLocation: sourceLocation)
        }
        return answer
    }

    private func exchange(_ daemon: DaemonProcess, _ text: String, closes: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) async throws -> RawResponse {
        try await exchange(daemon, Array(text.utf8), closes: closes, sourceLocation: sourceLocation)
    }

    @Test("protocol errors are 400 `invalid` with a JSON body, never 500")
    func protocolErrors() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "m", "passphrase": "pw"]).status == 200)

        let manyHeaders = (0..<70).map { "X-H\($0): v\r\n" }.joined()
        let cases: [(String, String)] = [
            ("a bad chunk size", "POST /v1/accounts/m/unlock HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"),
            ("an unknown transfer coding", "POST /v1/accounts/m/unlock HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n{}"),
            ("a malformed request line", "GET /v1/health HTTP/1.1 trailing\r\nHost: x\r\n\r\n"),
            ("not HTTP at all", "HELLO\r\n\r\n"),
            ("a bad header line", "GET /v1/health HTTP/1.1\r\nHost x\r\n\r\n"),
            ("too many header fields", "GET /v1/health HTTP/1.1\r\nHost: x\r\n\(manyHeaders)\r\n"),
            ("both a length and chunks", "POST /v1/accounts/m/lock HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ]
        for (what, request) in cases {
            let answer = try await exchange(daemon, request)
            #expect(answer.status == 400, "\(what): \(answer.statusLine)")
            #expect(answer.state == "invalid", "\(what): \(String(decoding: answer.body, as: UTF8.self))")
            #expect(answer.headers["content-type"] == "application/json", "\(what)")
            #expect((answer.object["error"] as? String)?.isEmpty == false, "\(what)")
        }
        // None of them did anything: the account is as it was, and the daemon serves on.
        #expect(try await daemon.request("GET", "/v1/accounts/m/keys/current").state == "ready")
    }

    @Test("a body over 64 KiB is refused on every route, before the route acts")
    func bodiesBoundedEverywhere() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "big", "passphrase": "pw"]).status == 200)
        let big = [UInt8](repeating: UInt8(ascii: " "), count: 10 * 1024 * 1024)

        // By its Content-Length: refused at once, the 10 MB never read.
        let declared = try RawSocket(path: daemon.socket)
        declared.send("POST /v1/accounts/big/lock HTTP/1.1\r\nHost: x\r\nContent-Length: \(big.count)\r\n\r\n")
        declared.send(Array(big.prefix(100_000)))
        let answer = try #require(try await declared.readResponse())
        #expect(answer.status == 400)
        #expect(answer.state == "invalid")
        #expect((answer.object["error"] as? String)?.contains("64 KiB") == true)
        #expect(try await declared.readToEOF(timeout: .seconds(5)))

        // Declared over the limit but within 1 MiB, sent whole before the answer is read (as socat and
        // many clients send): the daemon reads it to its end, so every byte goes, and then refuses it.
        // Refused unread, the sending met a closed socket and such a client never read why.
        let whole = try RawSocket(path: daemon.socket)
        whole.send("POST /v1/accounts/big/lock HTTP/1.1\r\nHost: x\r\nContent-Length: 900000\r\n\r\n")
        let sentWhole = whole.send(Array(big.prefix(900_000)))
        #expect(sentWhole, "the body could not be sent whole")
        let afterWhole = try #require(try await whole.readResponse())
        #expect(afterWhole.status == 400 && afterWhole.state == "invalid", "\(afterWhole.object)")

        // Chunked, with no length to go by: refused once past 64 KiB.
        let chunked = try RawSocket(path: daemon.socket)
        chunked.send("POST /v1/accounts/big/lock HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        var sent = 0
        while sent < big.count {
            let piece = 256 * 1024
            guard chunked.send(String(piece, radix: 16) + "\r\n"), chunked.send(Array(big[sent..<(sent + piece)])), chunked.send("\r\n") else { break }
            sent += piece
        }
        let refused = try #require(try await chunked.readResponse())
        #expect(refused.status == 400)
        #expect(refused.state == "invalid")

        // The lock never ran.
        #expect(try await daemon.request("GET", "/v1/accounts/big/keys/current").state == "ready")
        // A body that fits goes through (a lock ignores it).
        let fits = try await exchange(daemon, "POST /v1/accounts/big/lock HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        #expect(fits.state == "ready")
        #expect(try await daemon.request("GET", "/v1/accounts/big/keys/current").state == "locked")
    }

    @Test("path segments are percent-decoded; wait is plain digits")
    func pathsAndQueries() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()
        #expect(try await daemon.request("POST", "/v1/accounts", json: ["user": "acct1", "passphrase": "pw"]).status == 200)
        let key = try #require(try await daemon.request("GET", "/v1/accounts/acct1/keys/current")["key"])

        #expect(try await daemon.request("GET", "/v1/accounts/acct%31/keys/current")["key"] == key)
        #expect(try await daemon.request("GET", "/v1/accounts/%61cct1/keys/%31")["key"] == key)
        #expect(try await daemon.request("GET", "/v1/accounts/acct%zz/keys/current").state == "invalid")
        #expect(try await daemon.request("GET", "/v1/accounts/acct%2F1/keys/current").state == "invalid")

        for wait in ["+5", "%2B5", "-0", "5.0", "", "%205", "0x5", "99999999999999999999"] {
            let reply = try await daemon.request("GET", "/v1/accounts/acct1/keys/current?wait=\(wait)")
            #expect(reply.status == 400, "wait=\(wait)")
            #expect(reply.state == "invalid", "wait=\(wait)")
        }
        #expect(try await daemon.request("GET", "/v1/accounts/acct1/keys/current?wait=5")["key"] == key)
        #expect(try await daemon.request("GET", "/v1/accounts/acct1/keys/current?wait=0")["key"] == key)
    }

    @Test("HTTP/1.0 is closed after its answer unless it asks for keep-alive; Connection: close is honoured")
    func connectionFraming() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.remove() }
        try await daemon.start()

        let plain = try await exchange(daemon, "GET /v1/health HTTP/1.0\r\n\r\n")
        #expect(plain.status == 200)
        #expect(plain.statusLine.hasPrefix("HTTP/1.0 "))
        #expect(plain.state == "ready")

        // HTTP/1.0 with keep-alive: two requests on one connection, the second with the default (close).
        let kept = try RawSocket(path: daemon.socket)
        kept.send("GET /v1/health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let first = try #require(try await kept.readResponse())
        #expect(first.state == "ready")
        #expect(first.headers["connection"]?.lowercased() == "keep-alive")
        #expect(!kept.sawEOF)
        kept.send("GET /v1/health HTTP/1.0\r\n\r\n")
        #expect(try await kept.readToEOF(timeout: .seconds(5)), "closed after the second answer")
        #expect(kept.text.components(separatedBy: "HTTP/1.0 200").count == 3, "\(kept.text)")

        // HTTP/1.1 with Connection: close; a request pipelined behind it is not answered.
        let closing = try RawSocket(path: daemon.socket)
        closing.send("GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await closing.readToEOF(timeout: .seconds(5)))
        #expect(closing.text.components(separatedBy: "HTTP/1.1 200").count == 2, "\(closing.text)")

        // HTTP/1.1 keeps the connection by default.
        let kept11 = try RawSocket(path: daemon.socket)
        kept11.send("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await kept11.readResponse()?.state == "ready")
        try await kept11.read(until: { _ in false }, timeout: .milliseconds(300))
        #expect(!kept11.sawEOF)
    }
}
