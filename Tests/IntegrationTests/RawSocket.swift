import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import KeyVaultTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A client connection to the daemon's socket that writes exactly the bytes
/// it is given: for malformed, slow and abandoned requests that no HTTP
/// client library would send. Reads never block; waits are bounded.
final class RawSocket {
    let fd: Int32
    private(set) var received: [UInt8] = []
    private(set) var sawEOF = false

    init(path: String) throws {
        switch SocketPath.connect(path) {
        case .success(let fd): self.fd = fd
        case .failure(let error): throw TestFailure("connect() failed: errno \(error.code.rawValue)")
        }
    }

    /// A TCP connection to 127.0.0.1:`port` (a relay service on plain HTTP).
    init(tcpPort port: Int) throws {
        switch LoopbackSocket.connect(port: port) {
        case .success(let fd): self.fd = fd
        case .failure(let error): throw TestFailure("\(error)")
        }
    }

    deinit { Glibc.close(fd) }

    /// Writes everything, or returns false once the daemon has closed its side.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Closes the writing side only (`shutdown(SHUT_WR)`): the daemon sees the end of input, and
    /// this side can still read.
    func shutdownWrite() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Takes what has arrived, without waiting; false once nothing more will come (EOF or error).
    @discardableResult
    func readAvailable() -> Bool {
        guard !sawEOF else { return false }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) > 0 else { return true }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 {
                sawEOF = true
                return false
            }
            received += buffer.prefix(n)
        }
    }

    /// Reads until `done` holds on what was received, EOF, or `timeout` in all.
    /// (Sleeps between looks: no thread of the cooperative pool is blocked.)
    func read(until done: (RawSocket) -> Bool, timeout: Duration) async throws {
        let end = ContinuousClock.now + timeout
        while true {
            readAvailable()
            if done(self) || sawEOF || ContinuousClock.now >= end { return }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Reads until the daemon closes the connection (or `timeout`); true if it did.
    @discardableResult
    func readToEOF(timeout: Duration) async throws -> Bool {
        try await read(until: { _ in false }, timeout: timeout)
        return sawEOF
    }

    var text: String { String(decoding: received, as: UTF8.self) }

    /// The first answer received, once whole (by Content-Length).
    var response: RawResponse? { RawResponse(parsing: received) }

    func readResponse(timeout: Duration = .seconds(15)) async throws -> RawResponse? {
        try await read(until: { $0.response != nil }, timeout: timeout)
        return response
    }
}

/// An HTTP/1 answer as bytes came: status, headers, a body of Content-Length bytes.
struct RawResponse {
    let statusLine: String
    let status: Int
    let headers: [String: String]
    let body: [UInt8]
    /// What came after this answer.
    let rest: [UInt8]

    init?(parsing bytes: [UInt8]) {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        statusLine = head[0]
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let code = Int(parts[1]) else { return nil }
        status = code
        var fields: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        headers = fields
        let bodyStart = end + separator.count
        let length = Int(fields["content-length"] ?? "0") ?? 0
        guard bytes.count - bodyStart >= length else { return nil }
        body = Array(bytes[bodyStart..<(bodyStart + length)])
        rest = Array(bytes[(bodyStart + length)...])
    }

    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    var state: String? { object["state"] as? String }
}

/// The resident memory of a process, in KiB (VmRSS), or nil.
func residentKiB(of pid: Int32) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }
    return nil
}
