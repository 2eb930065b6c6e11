import Foundation
import KeyVaultTestSupport
import Logging
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelayWire
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore
#if canImport(Glibc)
import Glibc
#endif

/// Whether the relay service's refusal says, by its time, that an account exists.
/// Signed reads that must be refused `forbidden`, interleaved on one keep-alive
/// connection, 2,000 of each: to an absent account (the baseline), to an existing
/// account from a key it does not know, and to an existing account under one of
/// its own devices' key IDs with a signature that does not verify. Each case is
/// compared with the baseline by the Mann-Whitney rank test (a z beyond ±3 is a
/// difference such a test sees).
enum RefusalTimingBench {
    struct Case {
        var name: String
        var samples: [Double]
        func percentile(_ p: Double) -> Double { Percentile.of(samples, p) }
    }

    struct Result {
        var absent: Case
        var others: [(Case, z: Double)]
    }

    static func measure(samples: Int, logger: Logger) async throws -> Result {
        let relay = try await BenchRelay.postgresFromEnvironment(service: true).get()
        defer { relay.remove() }
        guard let port = URLComponents(string: relay.address)?.port else { throw BenchError("no relay service") }
        let account = try AccountID(validating: "present")
        let holder = try await relay.foundAccount(account, logger: logger)
        await holder.client.shutdown()
        let stranger = SigningKey.generate()
        let strangerID = DeviceID(hash: Random.bytes(16))

        // What each case sends: a path, the key ID it names and the key that signs.
        let cases: [(name: String, path: String, keyID: DeviceID, key: SigningKey)] = [
            ("an absent account (baseline)", "/v1/accounts/absent-account/records", strangerID, stranger),
            ("an existing account, a key it does not know", "/v1/accounts/present/records", strangerID, stranger),
            ("an existing account, its device's key ID, a signature that does not verify", "/v1/accounts/present/records", holder.deviceID, stranger),
        ]
        let fd: Int32
        switch LoopbackSocket.connect(port: port) {
        case .success(let connected): fd = connected
        case .failure(let error): throw BenchError("\(error)")
        }
        defer { close(fd) }
        var times = Array(repeating: [Double](), count: cases.count)
        // Warm-up, then rounds in which the cases take turns in a shuffled order.
        for round in 0..<(samples + 50) {
            for index in cases.indices.shuffled() {
                let c = cases[index]
                let signature = RequestSignature(method: "GET", path: c.path, query: "after=0", body: [], created: Int64(Date().timeIntervalSince1970),
                                                 nonce: RequestSignature.randomNonce(), keyID: c.keyID)
                let request = "GET \(c.path)?after=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Digest: \(signature.contentDigest)\r\n"
                    + "Signature-Input: \(signature.signatureInputHeader)\r\nSignature: \(signature.signatureHeader(signedBy: c.key))\r\n\r\n"
                let started = ContinuousClock.now
                let status = try exchange(fd, request)
                let elapsed = ContinuousClock.now - started
                guard status == 403 else { throw BenchError("\(c.name): answered \(status), not 403") }
                if round >= 50 { times[index].append(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds)) }
            }
        }
        let absent = Case(name: cases[0].name, samples: times[0])
        let others = (1..<cases.count).map { index in
            let c = Case(name: cases[index].name, samples: times[index])
            return (c, z: mannWhitneyZ(c.samples, absent.samples))
        }
        return Result(absent: absent, others: others)
    }

    /// Sends one request and reads its whole answer (head, then `Content-Length` bytes): the status.
    static func exchange(_ fd: Int32, _ request: String) throws -> Int {
        try exchange(fd, Array(request.utf8))
    }

    /// The same for a request's bytes, sent whole however many writes that takes.
    static func exchange(_ fd: Int32, _ request: [UInt8]) throws -> Int {
        var offset = 0
        while offset < request.count {
            let sent = request[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw BenchError("send failed") }
            offset += sent
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { throw BenchError("the relay closed the connection") }
            received += buffer[0..<n]
            let text = String(decoding: received, as: UTF8.self)
            guard let end = text.range(of: "\r\n\r\n") else { continue }
            let head = text[..<end.lowerBound].lowercased()
            let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            guard received.count >= text[..<end.upperBound].utf8.count + length else { continue }
            return Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
    }

    /// The Mann-Whitney U statistic of `a` against `b`, as a z score (normal approximation, ties averaged).
    static func mannWhitneyZ(_ a: [Double], _ b: [Double]) -> Double {
        let all = (a.map { ($0, 0) } + b.map { ($0, 1) }).sorted { $0.0 < $1.0 }
        var ranks = [Double](repeating: 0, count: all.count)
        var i = 0
        while i < all.count {
            var j = i
            while j + 1 < all.count && all[j + 1].0 == all[i].0 { j += 1 }
            for k in i...j { ranks[k] = Double(i + j) / 2 + 1 }
            i = j + 1
        }
        let rankSumA = zip(all, ranks).filter { $0.0.1 == 0 }.map(\.1).reduce(0, +)
        let n1 = Double(a.count), n2 = Double(b.count)
        let u = rankSumA - n1 * (n1 + 1) / 2
        let mean = n1 * n2 / 2
        let sd = (n1 * n2 * (n1 + n2 + 1) / 12).squareRoot()
        return (u - mean) / sd
    }
}

extension Report {
    var refusalTimingSection: String {
        guard let r = refusalTiming else {
            return refusalTimingMissing.map { "## Refusals that do not tell whether an account exists\n\nNot measured: \($0)\n\n" } ?? ""
        }
        func µs(_ s: Double) -> String { String(format: "%.1f µs", s * 1e6) }
        var text = """
            ## Refusals that do not tell whether an account exists

            One `keyvault-relay` (PostgreSQL store, loopback). Signed reads the service must refuse `403 forbidden`, \
            \(r.absent.samples.count) of each case, taking turns in a shuffled order on one keep-alive connection (after 50 \
            rounds of warm-up). Each case is compared with the baseline by the Mann-Whitney rank test: a |z| beyond 3 is a \
            difference a test of this size sees.

            | refused read to | p50 | p90 | p99 | z against the baseline |
            |---|---:|---:|---:|---:|
            | \(r.absent.name) | \(µs(r.absent.percentile(0.5))) | \(µs(r.absent.percentile(0.9))) | \(µs(r.absent.percentile(0.99))) | |

            """
        for (c, z) in r.others {
            text += "| \(c.name) | \(µs(c.percentile(0.5))) | \(µs(c.percentile(0.9))) | \(µs(c.percentile(0.99))) | **\(String(format: "%.2f", z))** |\n"
        }
        let worst = r.others.map { abs($0.z) }.max() ?? 0
        text += "\nGoal: no difference a 2,000-sample test can see (|z| ≤ 3). Largest |z| in this run: **\(String(format: "%.2f", worst))** "
            + "(\(worst <= 3 ? "met" : "not met")).\n\n"
        return text
    }
}
