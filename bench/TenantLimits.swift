import Foundation
import KeyVaultTestSupport
import Logging
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelayWire
import KeyVaultRelay
import KeyVaultRelayClient
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Issue 33: one tenant at each of the relay service's limits, and what another
/// tenant's read costs meanwhile, beside the same read on the idle relay, in one
/// run. One `keyvault-relay` on PostgreSQL (loopback); the bystander reads its
/// own account's first page (one genesis) with a signed request, as a device does.
///
/// The limits, one after another, each held while the bystander reads:
/// 1. a tenant's 20,000-entry log, and 8 strangers naming it, each sending the next
///    request when the last is refused (what made every tenant pay for a long log);
/// 2. 1,000 parked shares of 64 KiB read by 40 clients that never read their answers;
/// 3. 40 of the tenant's requests at once, each a batch of 64 KiB shares (about 1 MiB),
///    sent again as soon as answered.
enum TenantLimitsBench {
    struct Phase {
        var name: String
        var samples: [Double] = []
        /// Reads that failed (503 and the like): the goal is none.
        var failures = 0
        func percentile(_ p: Double) -> Double { Percentile.of(samples, p) }
    }

    struct Result {
        var idle: Phase
        var loaded: [Phase]
        var idleAfter: Phase
        /// The relay's peak resident memory over the whole run (VmHWM).
        var peakKiB: Int
        var strangerRefusals = 0
        var heavyBatches = 0
    }

    static let reads = 200
    static let logEntries = 20_000
    static let parked = 1_000
    static let shareBytes = 64 * 1024
    /// Shares per batch: 10 of 64 KiB are about 0.9 MiB in base64, under the 1 MiB body budget.
    static let sharesPerBatch = 10

    static func measure(logger: Logger) async throws -> Result {
        let relay = try await BenchRelay.postgresFromEnvironment(service: true).get()
        defer { relay.remove() }
        guard let port = URLComponents(string: relay.address)?.port, let pid = relay.servicePID else { throw BenchError("no relay service") }
        let bystanderID = try AccountID(validating: "bystander"), heavyID = try AccountID(validating: "heavy")
        let bystander = try await relay.foundAccount(bystanderID, logger: logger)
        let heavy = try await relay.foundAccount(heavyID, logger: logger)
        defer { Task { await bystander.client.shutdown(); await heavy.client.shutdown() } }

        func bystanderReads(_ name: String) async -> Phase {
            var phase = Phase(name: name)
            for _ in 0..<reads {
                let started = ContinuousClock.now
                do {
                    _ = try await bystander.client.rows(account: bystanderID, after: .start, limit: 100)
                    phase.samples.append(Load.seconds(ContinuousClock.now - started))
                } catch {
                    phase.failures += 1
                }
            }
            return phase
        }
        _ = await bystanderReads("warm-up")
        let idle = await bystanderReads("idle relay")
        var loaded: [Phase] = []

        // 1. A long log, and strangers naming it.
        var circle = heavy.circle
        var generation = Generation.first
        var batch: [RelayRecord] = []
        while circle.entries.count < logEntries {
            generation = generation.next!
            let keyID = KeyID(hash: Random.bytes(16))
            for body in [LogEntry.Body.announce(generation: generation, keyID: keyID, keyCreatedAt: 1), .promote(generation: generation, keyID: keyID)]
            where circle.entries.count < logEntries {
                let entry = circle.nextEntry(body, signer: heavy.signing, signerID: heavy.deviceID, at: Date())
                try circle.apply(entry)
                batch.append(.log(entry))
            }
            if batch.count >= 1000 || circle.entries.count >= logEntries {
                try await heavy.client.publish(batch: batch)
                batch.removeAll()
            }
        }
        let strangers = Flag()
        let refusals = Counter()
        // Threads of their own: their sockets block, and the concurrency pool (one thread per core) is the bench's.
        let strangerThreads = (0..<8).map { _ in
            BlockingThread {
                guard case .success(let fd) = LoopbackSocket.connect(port: port) else { return }
                defer { close(fd) }
                let key = SigningKey.generate(), keyID = DeviceID(hash: Random.bytes(16))
                while !strangers.isSet {
                    guard let status = try? exchange(fd, signedGet(path: "/v1/accounts/heavy/records", query: "after=0", keyID: keyID, key: key)),
                          status == 403 else { return }
                    refusals.add()
                }
            }
        }
        loaded.append(await bystanderReads("a 20,000-entry log, 8 strangers naming it"))
        strangers.set()
        for thread in strangerThreads { thread.join() }

        // 2. Parked shares read by clients that never read.
        let nobody = DeviceID(hash: Random.bytes(16))
        for start in stride(from: 0, to: parked, by: sharesPerBatch) {
            try await heavy.client.publish(batch: (start..<min(start + sharesPerBatch, parked)).map { _ in
                RelayRecord.share(account: heavyID, recipient: nobody, sealed: Random.bytes(shareBytes))
            })
        }
        var stalled: [Int32] = []
        for _ in 0..<40 {
            guard case .success(let fd) = LoopbackSocket.connect(port: port) else { throw BenchError("cannot connect") }
            let request = signedGet(path: "/v1/accounts/heavy/records", query: "after=0&limit=1000", keyID: heavy.deviceID, key: heavy.signing)
            _ = request.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            stalled.append(fd)
        }
        loaded.append(await bystanderReads("1,000 parked 64 KiB shares, 40 readers that never read"))
        for fd in stalled { close(fd) }

        // 3. Forty heavy requests at once, again and again, each from a thread of its own on a connection of
        // its own: a batch of 10 shares of 64 KiB to a new recipient (so each is stored), signed anew each time.
        let writers = Flag()
        let batches = Counter()
        let sealed = (0..<sharesPerBatch).map { _ in Base64.encode(Random.bytes(shareBytes)) }
        let writerThreads = (0..<40).map { _ in
            BlockingThread {
                guard case .success(let fd) = LoopbackSocket.connect(port: port) else { return }
                defer { close(fd) }
                while !writers.isSet {
                    let recipient = DeviceID(hash: Random.bytes(16)).hex
                    let records = sealed.map { #"{"kind":"share","recipient":"\#(recipient)","body":"\#($0)"}"# }
                    let body = Array(#"{"records":["#.utf8) + Array(records.joined(separator: ",").utf8) + Array("]}".utf8)
                    guard let status = try? exchange(fd, signedPost(path: "/v1/accounts/heavy/records", body: body,
                                                                    keyID: heavy.deviceID, key: heavy.signing)) else { return }
                    if status == 200 { batches.add() }
                }
            }
        }
        loaded.append(await bystanderReads("40 heavy requests at once (1 MiB batches)"))
        writers.set()
        for thread in writerThreads { thread.join() }

        let idleAfter = await bystanderReads("idle relay, after")
        return Result(idle: idle, loaded: loaded, idleAfter: idleAfter, peakKiB: peakResidentKiB(pid) ?? 0,
                      strangerRefusals: refusals.value, heavyBatches: batches.value)
    }

    /// A signed GET as a device sends it, on a keep-alive connection.
    static func signedGet(path: String, query: String, keyID: DeviceID, key: SigningKey) -> String {
        let signature = RequestSignature(method: "GET", path: path, query: query, body: [], created: Int64(Date().timeIntervalSince1970),
                                         nonce: RequestSignature.randomNonce(), keyID: keyID)
        return "GET \(path)?\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Digest: \(signature.contentDigest)\r\n"
            + "Signature-Input: \(signature.signatureInputHeader)\r\nSignature: \(signature.signatureHeader(signedBy: key))\r\n\r\n"
    }

    /// A signed POST of `body`, as a device sends it, on a keep-alive connection.
    static func signedPost(path: String, body: [UInt8], keyID: DeviceID, key: SigningKey) -> [UInt8] {
        let signature = RequestSignature(method: "POST", path: path, query: "", body: body, created: Int64(Date().timeIntervalSince1970),
                                         nonce: RequestSignature.randomNonce(), keyID: keyID)
        let head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n"
            + "Content-Digest: \(signature.contentDigest)\r\nSignature-Input: \(signature.signatureInputHeader)\r\n"
            + "Signature: \(signature.signatureHeader(signedBy: key))\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// Sends one request and reads its whole answer: the status.
    static func exchange(_ fd: Int32, _ request: String) throws -> Int {
        try RefusalTimingBench.exchange(fd, request)
    }

    static func exchange(_ fd: Int32, _ request: [UInt8]) throws -> Int {
        try RefusalTimingBench.exchange(fd, request)
    }

    /// VmHWM of `/proc/PID/status`: the most the process ever held resident.
    static func peakResidentKiB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }

    /// A thread running `body` once; `join` waits for its end.
    final class BlockingThread: Sendable {
        private let done = DispatchSemaphore(value: 0)

        init(_ body: @escaping @Sendable () -> Void) {
            let done = self.done
            Thread.detachNewThread {
                body()
                done.signal()
            }
        }

        func join() { done.wait() }
    }

    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    final class Counter: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }
}

extension Report {
    var tenantLimitsSection: String {
        guard let r = tenantLimits else {
            return tenantLimitsMissing.map { "## One tenant at its limits\n\nNot measured: \($0)\n\n" } ?? ""
        }
        func ms(_ s: Double) -> String { String(format: "%.2f ms", s * 1000) }
        let goalP50 = 1.5
        var text = """
            ## One tenant at its limits

            One `keyvault-relay` on PostgreSQL (loopback, the same 2 cores). Another tenant ("bystander") reads its own \
            account's first page with a signed request, \(TenantLimitsBench.reads) times in a row, on the idle relay and \
            while one tenant holds each limit in turn (issue 33). Goal: p50 at most \(goalP50)× the idle read's, no failed \
            read, and the relay's peak resident memory under 512 MiB.

            | the other tenant | bystander p50 | p99 | p50 ratio to idle | failed reads | goal met |
            |---|---:|---:|---:|---:|---|
            | \(r.idle.name) (baseline) | \(ms(r.idle.percentile(0.5))) | \(ms(r.idle.percentile(0.99))) | 1.00 | \(r.idle.failures) | |

            """
        for phase in r.loaded + [r.idleAfter] {
            let ratio = phase.percentile(0.5) / r.idle.percentile(0.5)
            let met = ratio <= goalP50 && phase.failures == 0
            text += "| \(phase.name) | \(ms(phase.percentile(0.5))) | \(ms(phase.percentile(0.99))) | \(String(format: "%.2f", ratio)) | \(phase.failures) | \(met ? "yes" : "**no**") |\n"
        }
        text += """

            The strangers were refused \(r.strangerRefusals) times while the bystander read (each `403` decided from the \
            signer index, no log read); the heavy tenant's writers stored \(r.heavyBatches) batches meanwhile. The relay's peak \
            resident memory over the whole run: **\(r.peakKiB / 1024) MiB** (goal: under 512 MiB: \(r.peakKiB < 512 * 1024 ? "met" : "**not met**")).


            """
        return text
    }
}
