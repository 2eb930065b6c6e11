import Foundation
import KeyVault
import KeyVaultClient
#if canImport(Glibc)
import Glibc
#endif

/// Memory per waiting read: a daemon's resident memory with N `?wait` reads
/// open, beside the same daemon with N idle keep-alive connections (the
/// baseline: what any connection costs), each in a fresh process so neither
/// reuses the other's freed memory. Then the waiting clients go away and the
/// daemon's waiter count must return to 0.
enum WaitingMemoryBench {
    struct Result {
        var count: Int
        var idle: (before: Int, after: Int)
        var waiting: (before: Int, after: Int, closed: Int)
        var waitersAfterClose: Int
        var releaseSeconds: Double
        /// The baseline: the same number of idle connections closed at once, until the
        /// daemon has closed its side of every one (what releasing a waiter cannot beat).
        var idleCloseSeconds: Double

        var idlePerConnectionKiB: Double { Double(idle.after - idle.before) / Double(count) }
        var waitingPerReadKiB: Double { Double(waiting.after - waiting.before) / Double(count) }
    }

    static func measure(count: Int, in directory: String) async throws -> Result {
        let idle = try await run(count: count, in: directory + "/idle", waiting: false)
        let waiting = try await run(count: count, in: directory + "/waiting", waiting: true)
        return Result(count: count, idle: (idle.before, idle.after), waiting: (waiting.before, waiting.after, waiting.closed),
                      waitersAfterClose: waiting.waitersAfterClose, releaseSeconds: waiting.releaseSeconds,
                      idleCloseSeconds: idle.releaseSeconds)
    }

    private struct Run {
        var before = 0, after = 0, closed = 0, waitersAfterClose = 0
        var releaseSeconds = 0.0
    }

    private static func run(count: Int, in directory: String, waiting: Bool) async throws -> Run {
        let relay = try BenchRelay.sqlite(in: directory)
        let socket = directory + "/kv.sock"
        let child = try ChildDevice(vault: directory + "/vault", socket: socket, relay: relay.address)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard try await poll(400, every: .milliseconds(25), until: { SocketPath.isAnswering(socket) }) else {
            await child.stop()
            throw BenchError("the bench daemon on \(socket) did not start")
        }
        let created = try await SocketHTTPClient.request(socket: socket, "POST", "/v1/accounts", body: Array(#"{"user":"bench","passphrase":"bench"}"#.utf8))
        guard created.status == 200 else { throw BenchError("create: \(created.text)") }
        for _ in 0..<50 { _ = try await SocketHTTPClient.request(socket: socket, "GET", "/v1/accounts/bench/keys/current") }
        try await Task.sleep(for: .milliseconds(300))

        var result = Run()
        result.before = MemoryBench.ProcessMemory.of(child.processID).residentBytes / 1024
        var clients: [Int32] = []
        defer { for fd in clients { close(fd) } }
        for _ in 0..<count {
            let fd = try connectRaw(socket)
            clients.append(fd)
            // Generation 2 is not announced: with a relay, such a read waits for it.
            let request = waiting ? "GET /v1/accounts/bench/keys/2?wait=300 HTTP/1.1\r\nHost: x\r\n\r\n" : "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
            _ = request.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            if !waiting { readAnswer(fd) }
        }
        if waiting {
            guard try await pollAsync(600, every: .milliseconds(50), until: { try await held(socket).waiters == count }) else {
                throw BenchError("the \(count) waiting reads did not all arrive")
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        result.after = MemoryBench.ProcessMemory.of(child.processID).residentBytes / 1024
        if !waiting {
            let closed = ContinuousClock.now
            for fd in clients { close(fd) }
            clients = []
            // The query's own connection is the one left open.
            _ = try await pollAsync(600, every: .milliseconds(10), until: { try await held(socket).open <= 1 })
            result.releaseSeconds = Load.seconds(ContinuousClock.now - closed)
        }
        if waiting {
            let closed = ContinuousClock.now
            for fd in clients { close(fd) }
            clients = []
            _ = try await pollAsync(600, every: .milliseconds(10), until: { try await held(socket).waiters == 0 })
            result.releaseSeconds = Load.seconds(ContinuousClock.now - closed)
            result.waitersAfterClose = try await held(socket).waiters
            try await Task.sleep(for: .milliseconds(300))
            result.closed = MemoryBench.ProcessMemory.of(child.processID).residentBytes / 1024
        }
        await child.stop()
        return result
    }

    /// Asked on a raw socket: its connect waits in the listen queue behind the waiting reads,
    /// where the client library's gives up at once (EAGAIN).
    private static func held(_ socket: String) async throws -> (waiters: Int, reads: Int, open: Int) {
        let fd = try connectRaw(socket)
        defer { close(fd) }
        _ = "GET /v1/server HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer.prefix(n)
        }
        let separator = Array("\r\n\r\n".utf8)
        guard let end = received.indices.first(where: { received[$0...].starts(with: separator) }) else { throw BenchError("GET /v1/server: no answer") }
        let object = try JSONSerialization.jsonObject(with: Data(received[(end + 4)...])) as? [String: Any]
        let held = object?["held"] as? [String: Any] ?? [:]
        let connections = object?["connections"] as? [String: Any] ?? [:]
        return (held["hubWaiters"] as? Int ?? -1, held["waitingReads"] as? Int ?? -1, connections["open"] as? Int ?? -1)
    }

    private static func pollAsync(_ attempts: Int, every interval: Duration, until condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<attempts {
            if try await condition() { return true }
            try await Task.sleep(for: interval)
        }
        return false
    }

    private static func connectRaw(_ path: String) throws -> Int32 {
        switch SocketPath.connect(path) {
        case .success(let fd): return fd
        case .failure(let error): throw BenchError("connect(): errno \(error.code.rawValue)")
        }
    }

    /// Reads one small answer (the health JSON ends with `}`), blocking.
    private static func readAnswer(_ fd: Int32) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !(received.last == UInt8(ascii: "}")) {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return }
            received += buffer.prefix(n)
        }
    }
}

extension Report {
    var waitingSection: String {
        guard let w = waiting else { return "" }
        func mb(_ kib: Int) -> String { String(format: "%.1f", Double(kib) / 1024) }
        return """
            ## Memory per waiting read

            One daemon (its own process, SQLite relay) with \(w.count) `GET …/keys/2?wait=300` reads open (a generation not \
            announced yet, so each waits), beside another with \(w.count) idle keep-alive connections that each read \
            `/v1/health` once: the resident memory (VmRSS) each added. Then the waiting clients close their connections \
            without a word, and the daemon's waiters (`GET /v1/server`, `held.hubWaiters`) are counted until none is left.

            | | RSS before | RSS with \(w.count) open | per connection |
            |---|---:|---:|---:|
            | idle keep-alive connections (baseline) | \(mb(w.idle.before)) MB | \(mb(w.idle.after)) MB | \(String(format: "%.1f", w.idlePerConnectionKiB)) KiB |
            | waiting reads | \(mb(w.waiting.before)) MB | \(mb(w.waiting.after)) MB | **\(String(format: "%.1f", w.waitingPerReadKiB)) KiB** |

            After the \(w.count) waiting clients went away: \(w.waitersAfterClose) waiters left, all released in \
            **\(String(format: "%.3f", w.releaseSeconds)) s**; RSS \(mb(w.waiting.closed)) MB (freed memory stays with the \
            allocator, so RSS need not fall). Baseline, same run: the \(w.count) idle connections closed the same way \
            were all closed on the daemon's side in \(String(format: "%.3f", w.idleCloseSeconds)) s \
            (**\(String(format: "%.2f", w.releaseSeconds / max(w.idleCloseSeconds, 0.001)))×**): noticing that a client \
            went away, before any waiter is touched.


            """
    }
}
