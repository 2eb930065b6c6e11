import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import KeyVaultClient
import KeyVaultTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Memory per waiting read: a daemon's resident memory with N `?wait` reads
/// open, beside the same daemon with N idle keep-alive connections (the
/// baseline: what any connection costs), each in a fresh process so neither
/// reuses the other's freed memory. Then the clients go away, and the time
/// until the daemon holds nothing of theirs is measured, beside the idle ones'.
enum WaitingMemoryBench {
    /// Rounds of each, alternating: one release of 10,000 connections is a
    /// second of both cores, which the shared machine's stalls move by tenths.
    static let rounds = 3

    struct Result {
        var count: Int
        var idle: (before: Int, after: Int)
        var waiting: (before: Int, after: Int, closed: Int)
        var waitersAfterClose: Int
        /// Each round's time until nothing was left: no waiter, no held read, no request in progress, no connection.
        var releaseSeconds: [Double]
        /// The baseline, each round: the same number of idle connections closed at once, until the
        /// daemon has closed its side of every one (what releasing a waiter cannot beat).
        var idleCloseSeconds: [Double]
        /// The daemon's CPU time (user + system) over each release, waiting and idle.
        var releaseCPUSeconds: [Double]
        var idleCloseCPUSeconds: [Double]

        var idlePerConnectionKiB: Double { Double(idle.after - idle.before) / Double(count) }
        var waitingPerReadKiB: Double { Double(waiting.after - waiting.before) / Double(count) }
    }

    static func measure(count: Int, in directory: String) async throws -> Result {
        var idle: [Run] = [], waiting: [Run] = []
        for round in 0..<rounds {
            idle.append(try await run(count: count, in: directory + "/idle-\(round)", waiting: false))
            waiting.append(try await run(count: count, in: directory + "/waiting-\(round)", waiting: true))
        }
        let first = (idle: idle[0], waiting: waiting[0])
        return Result(count: count, idle: (first.idle.before, first.idle.after),
                      waiting: (first.waiting.before, first.waiting.after, first.waiting.closed),
                      waitersAfterClose: waiting.map(\.waitersAfterClose).max() ?? 0,
                      releaseSeconds: waiting.map(\.releaseSeconds), idleCloseSeconds: idle.map(\.releaseSeconds),
                      releaseCPUSeconds: waiting.map(\.releaseCPUSeconds), idleCloseCPUSeconds: idle.map(\.releaseCPUSeconds))
    }

    private struct Run {
        var before = 0, after = 0, closed = 0, waitersAfterClose = 0
        var releaseSeconds = 0.0, releaseCPUSeconds = 0.0
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
        // Every client goes away without a word; the daemon is asked until nothing of theirs is left
        // (the query's own connection and request are the ones left). For idle connections that is
        // the connections alone.
        let cpuBefore = cpuSeconds(of: child.processID)
        let closed = ContinuousClock.now
        for fd in clients { close(fd) }
        clients = []
        _ = try await pollAsync(600, every: .milliseconds(10), until: {
            let now = try await held(socket)
            return now.waiters == 0 && now.reads == 0 && now.open <= 1 && now.inProgress <= 1
        })
        result.releaseSeconds = Load.seconds(ContinuousClock.now - closed)
        result.releaseCPUSeconds = cpuSeconds(of: child.processID) - cpuBefore
        result.waitersAfterClose = try await held(socket).waiters
        try await Task.sleep(for: .milliseconds(300))
        result.closed = MemoryBench.ProcessMemory.of(child.processID).residentBytes / 1024
        await child.stop()
        return result
    }

    /// User and system time the process has used, from `/proc/PID/stat` (in clock ticks).
    private static func cpuSeconds(of process: Int32) -> Double {
        let stat = (try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8)) ?? ""
        // The fields after the command name, which is in parentheses: utime and stime are the 12th and 13th.
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        guard fields.count > 12 else { return 0 }
        return ((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Asked on a raw socket: its connect waits in the listen queue behind the waiting reads,
    /// where the client library's gives up at once (EAGAIN).
    private static func held(_ socket: String) async throws -> (waiters: Int, reads: Int, open: Int, inProgress: Int) {
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
        return (held["hubWaiters"] as? Int ?? -1, held["waitingReads"] as? Int ?? -1, connections["open"] as? Int ?? -1,
                connections["requestsInProgress"] as? Int ?? -1)
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
        func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }
        func median(_ values: [Double]) -> Double { Percentile.of(values, 0.5) }
        return """
            ## Memory per waiting read

            One daemon (its own process, SQLite relay) with \(w.count) `GET …/keys/2?wait=300` reads open (a generation not \
            announced yet, so each waits), beside another with \(w.count) idle keep-alive connections that each read \
            `/v1/health` once: the resident memory (VmRSS) each added, in the first round.

            | | RSS before | RSS with \(w.count) open | per connection |
            |---|---:|---:|---:|
            | idle keep-alive connections (baseline) | \(mb(w.idle.before)) MB | \(mb(w.idle.after)) MB | \(String(format: "%.1f", w.idlePerConnectionKiB)) KiB |
            | waiting reads | \(mb(w.waiting.before)) MB | \(mb(w.waiting.after)) MB | **\(String(format: "%.1f", w.waitingPerReadKiB)) KiB** |

            Then every client goes away without a word, in \(WaitingMemoryBench.rounds) rounds of each (fresh daemons, \
            idle and waiting alternating). The time runs from the first `close()` until `GET /v1/server` shows nothing of \
            theirs left (no waiter in the hub, no held read, no request in progress, no connection; asked every 10 ms); \
            the daemon's CPU time (user + system, from `/proc`) is taken over the same span. The idle \
            connections are the baseline: closing a connection is what releasing a waiting read cannot beat.

            | \(w.count) clients gone | \((1...w.releaseSeconds.count).map { "round \($0)" }.joined(separator: " | ")) | median | daemon CPU, median |
            |---|\(String(repeating: "---:|", count: w.releaseSeconds.count))---:|---:|
            | idle connections closed (baseline) | \(w.idleCloseSeconds.map { seconds($0) }.joined(separator: " | ")) | \(seconds(median(w.idleCloseSeconds))) | \(seconds(median(w.idleCloseCPUSeconds))) |
            | waiting reads released | \(w.releaseSeconds.map { seconds($0) }.joined(separator: " | ")) | **\(seconds(median(w.releaseSeconds)))** | \(seconds(median(w.releaseCPUSeconds))) |

            Goal: 10,000 abandoned waiters release their memory within a second: **\(median(w.releaseSeconds) <= 1 ? "met" : "not met")** \
            (median; \(String(format: "%.2f", median(w.releaseSeconds) / max(median(w.idleCloseSeconds), 0.001)))× the baseline). \
            \(w.waitersAfterClose) waiters were left. RSS after the first round's release: \(mb(w.waiting.closed)) MB (freed memory \
            stays with the allocator, so RSS need not fall).


            """
    }
}
