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

/// One relay-service instance holding many waiting device connections: key
/// arrival for one device with none waiting, then with `count` signed held
/// reads open on another account (each its own TCP connection, as devices
/// would hold them), and the instance's resident memory per held read.
enum ServiceWaitingBench {
    struct Result {
        var count: Int
        var quiet: PropagationBench.Arrival
        var loaded: PropagationBench.Arrival
        var residentBefore: Int, residentWith: Int
        var perConnectionKiB: Double { Double(residentWith - residentBefore) / Double(count) }
    }

    static func measure(count: Int, enrollments: Int, logger: Logger) async throws -> Result {
        let relay = try await BenchRelay.postgresFromEnvironment(service: true).get()
        defer { relay.remove() }
        guard let pid = relay.servicePID, let port = URLComponents(string: relay.address)?.port else { throw BenchError("no relay service") }
        let quiet = try await PropagationBench.arrival(enrollments: enrollments, relay: relay, logger: logger, accountPrefix: "quiet")

        // The crowd: one account, founded through the service by a device whose held reads these are.
        let account = try AccountID(validating: "crowd")
        let holder = try await relay.foundAccount(account, logger: logger)
        let after = try await holder.client.rows(account: account, after: .start, limit: 10).last?.cursor ?? .start
        await holder.client.shutdown()

        try await Task.sleep(for: .milliseconds(500))
        let before = MemoryBench.ProcessMemory.of(pid).residentBytes / 1024
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        let path = "/v1/accounts/crowd/records", query = "after=\(after)&limit=1&wait=120"
        // The service holds at most 512 connections per client address: these come from one
        // loopback address per 400 (127.0.1.1, 127.0.1.2, …), as many clients would.
        for index in 0..<count {
            let signature = RequestSignature(method: "GET", path: path, query: query, body: [], created: Int64(Date().timeIntervalSince1970),
                                             nonce: RequestSignature.randomNonce(), keyID: holder.deviceID)
            let request = "GET \(path)?\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Digest: \(signature.contentDigest)\r\n"
                + "Signature-Input: \(signature.signatureInputHeader)\r\nSignature: \(signature.signatureHeader(signedBy: holder.signing))\r\n\r\n"
            let fd = try connectLoopback(port: port, from: "127.0.1.\(index / 400 + 1)")
            sockets.append(fd)
            _ = request.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        }
        // Each held read checks its signature and spends its nonce before it parks.
        try await Task.sleep(for: .seconds(3))
        let with = MemoryBench.ProcessMemory.of(pid).residentBytes / 1024
        let loaded = try await PropagationBench.arrival(enrollments: enrollments, relay: relay, logger: logger, accountPrefix: "loaded")
        return Result(count: count, quiet: quiet, loaded: loaded, residentBefore: before, residentWith: with)
    }

    private static func connectLoopback(port: Int, from source: String) throws -> Int32 {
        switch LoopbackSocket.connect(port: port, from: source) {
        case .success(let fd): return fd
        case .failure(let error): throw BenchError("\(error)")
        }
    }
}

extension Report {
    var serviceWaitingSection: String {
        guard let w = serviceWaiting else { return serviceWaitingMissing.map { "## A relay-service instance holding waiting devices\n\nNot measured: \($0)\n\n" } ?? "" }
        func ms(_ s: Double) -> String { String(format: "%.1f ms", s * 1000) }
        let ratio = w.loaded.percentile(0.5) / w.quiet.percentile(0.5)
        return """
            ## A relay-service instance holding waiting devices

            One `keyvault-relay` (PostgreSQL store, loopback): key arrival (as in the section below: enrollment approved on \
            one device, the waiting read answered on the other) with no other device waiting, then with \(w.count) signed \
            held reads open on another account, each its own TCP connection (at most 400 from each of several loopback addresses: the service holds at most 512 per client address), measured in the same run.

            | | arrival p50 | arrival p99 |
            |---|---:|---:|
            | no connection waiting (baseline) | \(ms(w.quiet.percentile(0.5))) | \(ms(w.quiet.percentile(0.99))) |
            | \(w.count) connections waiting | \(ms(w.loaded.percentile(0.5))) | \(ms(w.loaded.percentile(0.99))) |

            Ratio of p50s: **\(String(format: "%.2f", ratio))** (goal ≤ 1.5: \(ratio <= 1.5 ? "met" : "**not met**")). The instance's \
            resident memory went from \(w.residentBefore / 1024) MB to \(w.residentWith / 1024) MB with them: \
            **\(String(format: "%.1f", w.perConnectionKiB)) KiB per waiting connection**.


            """
    }
}
