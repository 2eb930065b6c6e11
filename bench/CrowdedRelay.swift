import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore
import KeyVaultClient
import KeyVaultTestSupport
import Logging

/// Restart and key arrival on a relay crowded with other accounts' records,
/// beside the same on an empty relay, in the same run (issue: devices read
/// per account, so what other accounts wrote must cost them nothing).
///
/// Per relay kind, two circles of two in-process devices run side by side:
/// one on an empty relay, one on a relay that also holds `crowdRecords`
/// records of `crowdAccounts` other accounts, written through the relay API
/// after the circle was set up (so the account's own records lie on both
/// sides of them). The measurements alternate between the two circles.
enum CrowdBench {
    static let crowdAccounts = 100_000
    static let crowdRecords = 1_000_000
    /// Accounts per `publish(batch:)`: PostgreSQL takes one advisory lock per account per transaction.
    static let accountsPerBatch = 100
    static let bodyBytes = 160
    static let restarts = 100
    static let arrivals = 500
    static let user = "crowd"

    struct Samples {
        /// B's start → its socket answers.
        var socketUp: [Double] = []
        /// B's start → its unlock is answered.
        var unlocked: [Double] = []
        /// B's start → B answers the key rotated while it was down.
        var restart: [Double] = []
        /// A's rotate sent → B's waiting read answered.
        var arrival: [Double] = []
    }

    struct Result {
        var empty = Samples()
        var crowded = Samples()
        var fillSeconds: Double = 0
        var fillBatches = 0
    }

    /// Which sample `Percentile.of(_, 0.99)` picks, in words: "the slowest", "the 5th slowest".
    static func p99Rank(_ count: Int) -> String {
        let rank = count - min(count - 1, Int(Double(count) * 0.99))
        switch rank {
        case 1: return "the slowest"
        case 2: return "the 2nd slowest"
        case 3: return "the 3rd slowest"
        default: return "the \(rank)th slowest"
        }
    }


    /// Both circles on `kind`; `relay` makes a fresh relay (a file in a folder, or a database).
    static func run(kind: BenchRelay.Kind, relay: (String) async throws -> BenchRelay, logger: Logger) async throws -> Result {
        let emptyRelay = try await relay("crowd-empty")
        defer { emptyRelay.remove() }
        let crowdedRelay = try await relay("crowd-full")
        defer { crowdedRelay.remove() }
        let tag = kind == .sqlite ? "sqlite" : "pg"
        return try await DeviceCircle.with(devices: 2, relay: emptyRelay, name: "crowd-empty-\(tag)", logger: logger) { empty -> Result in
            try await DeviceCircle.with(devices: 2, relay: crowdedRelay, name: "crowd-full-\(tag)", logger: logger) { crowded -> Result in
                try await empty.createAndEnrollAll(user)
                try await crowded.createAndEnrollAll(user)
                var result = Result()
                let fillStart = ContinuousClock.now
                result.fillBatches = try await fill(crowdedRelay, writers: kind == .postgres ? 4 : 1)
                result.fillSeconds = Load.seconds(ContinuousClock.now - fillStart)
                say("\(kind.rawValue) crowd: \(crowdRecords) records of \(crowdAccounts) accounts in \(result.fillBatches) batches, "
                      + "\(String(format: "%.1f", result.fillSeconds)) s")
                try await Task.sleep(for: .milliseconds(500))  // the devices' wake-ups from the crowd are read

                let circles = [empty, crowded]
                var samples = [Samples(), Samples()]  // empty, crowded
                // One uncounted round of each first: it warms the paths the others take.
                for circle in circles {
                    _ = try await restart(circle)
                    _ = try await arrival(circle)
                }
                // Restarts first: each rotation lengthens the account's log, which an unlock reads.
                for i in 0..<restarts {
                    for which in (i % 2 == 0 ? [0, 1] : [1, 0]) {
                        try await Task.sleep(for: .milliseconds(50))  // the last rotation's stragglers (acknowledgements) settle
                        let (up, unlocked, key) = try await restart(circles[which])
                        samples[which].socketUp.append(up)
                        samples[which].unlocked.append(unlocked)
                        samples[which].restart.append(key)
                    }
                }
                for i in 0..<arrivals {
                    for which in (i % 2 == 0 ? [0, 1] : [1, 0]) {
                        try await Task.sleep(for: .milliseconds(20))
                        samples[which].arrival.append(try await arrival(circles[which]))
                    }
                }
                result.empty = samples[0]
                result.crowded = samples[1]
                return result
            }
        }
    }

    /// Writes the crowd through the relay API: `crowdRecords` request and
    /// acknowledgement records with random bodies, `accountsPerBatch` accounts
    /// per batch, `writers` batches at a time. Answers the number of batches.
    static func fill(_ address: BenchRelay, writers: Int) async throws -> Int {
        let relay = try await address.open()
        let perAccount = crowdRecords / crowdAccounts
        let batches = crowdAccounts / accountsPerBatch
        do {
            try await concurrentlyOnRelay(batches, workers: writers) { batch in
                var records: [RelayRecord] = []
                records.reserveCapacity(accountsPerBatch * perAccount)
                for a in 0..<accountsPerBatch {
                    let account = try AccountID(validating: String(format: "other%05d", batch * accountsPerBatch + a))
                    for r in 0..<perAccount {
                        records.append(.raw(r % 2 == 0 ? .request : .ack, account: account, body: Random.bytes(bodyBytes)))
                    }
                }
                try await relay.publish(batch: records)
            }
        } catch {
            await relay.shutdown()
            throw error
        }
        await relay.shutdown()
        return batches
    }

    /// B (device 1) stops; A (device 0) rotates with `promote: now`; B starts
    /// again. Answers seconds from B's start to its socket answering, to its
    /// unlock answered, and to its answer of the new key by key ID.
    static func restart(_ circle: DeviceCircle) async throws -> (Double, Double, Double) {
        try await circle.stopDevice(1)
        let rotated = try await circle.request(0, "POST", "/v1/accounts/\(user)/rotate", #"{"promote":"now"}"#)
        guard rotated.status == 200, let keyID = rotated.object["keyId"] as? String else { throw BenchError("rotate: \(rotated.text)") }
        let start = ContinuousClock.now
        try await circle.startDevice(1)
        guard try await poll(10_000, every: .milliseconds(1), until: { SocketPath.isAnswering(circle.sockets[1]) }) else {
            throw BenchError("the restarted device did not answer within 10 s")
        }
        let up = Load.seconds(ContinuousClock.now - start)
        // A restarted daemon holds its accounts locked: the person unlocks (the bench's KDF is cheap).
        let unlock = try await circle.request(1, "POST", "/v1/accounts/\(user)/unlock", #"{"passphrase":"p1"}"#)
        guard unlock.status == 200 else { throw BenchError("unlock after restart: \(unlock.text)") }
        let unlocked = Load.seconds(ContinuousClock.now - start)
        let key = try await circle.request(1, "GET", "/v1/accounts/\(user)/keys/id/\(keyID)?wait=20")
        guard key.status == 200, key.object["keyId"] as? String == keyID else { throw BenchError("key after restart: \(key.status) \(key.text)") }
        return (up, unlocked, Load.seconds(ContinuousClock.now - start))
    }

    /// With B running: a read of the next generation waits on B, A rotates with
    /// `promote: now`; seconds from the rotate request sent to the read answered.
    static func arrival(_ circle: DeviceCircle) async throws -> Double {
        let current = try await circle.request(0, "GET", "/v1/accounts/\(user)/keys/current")
        guard let generation = (current.object["generation"] as? NSNumber)?.intValue else { throw BenchError("current key: \(current.text)") }
        let waiter = Task { () -> (ContinuousClock.Instant, HTTPResult) in
            let reply = try await circle.request(1, "GET", "/v1/accounts/\(user)/keys/\(generation + 1)?wait=20")
            return (ContinuousClock.now, reply)
        }
        try await Task.sleep(for: .milliseconds(20))  // the waiting read is parked
        let sent = ContinuousClock.now
        let rotated = try await circle.request(0, "POST", "/v1/accounts/\(user)/rotate", #"{"promote":"now"}"#)
        guard rotated.status == 200, let keyID = rotated.object["keyId"] as? String else {
            _ = try? await waiter.value
            throw BenchError("rotate: \(rotated.text)")
        }
        let (answered, reply) = try await waiter.value
        guard reply.status == 200, reply.object["keyId"] as? String == keyID else { throw BenchError("waiting read: \(reply.status) \(reply.text)") }
        return Load.seconds(answered - sent)
    }
}

/// Runs `body` on 0..<count, `workers` at a time.
func concurrentlyOnRelay(_ count: Int, workers: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    let next = Counter()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<max(1, min(workers, count)) {
            group.addTask {
                while true {
                    let index = next.take()
                    guard index < count else { return }
                    try await body(index)
                }
            }
        }
        try await group.waitForAll()
    }
}

extension RelayRecord {
    /// A record of any kind with the bytes given, only to fill a relay.
    static func raw(_ kind: Kind, account: AccountID, recipient: DeviceID? = nil, logSeq: LogSeq? = nil, body: [UInt8]) -> RelayRecord {
        RelayRecord(kind: kind, account: account, recipient: recipient, logSeq: logSeq, body: body)
    }
}

/// 100000 → "100,000".
func grouped(_ n: Int) -> String {
    var digits = Array(String(n)), out = ""
    while digits.count > 3 {
        out = "," + String(digits.suffix(3)) + out
        digits.removeLast(3)
    }
    return String(digits) + out
}

/// One relay kind's crowded-relay figures, or why they are missing.
struct CrowdFigures {
    var kind: BenchRelay.Kind
    var result: CrowdBench.Result?
    var missing: String?
}

extension Report {
    mutating func measureCrowding(in directory: String, logger: Logger) async throws {
        for kind in BenchRelay.Kind.allCases {
            var figures = CrowdFigures(kind: kind)
            do {
                let result = try await CrowdBench.run(kind: kind, relay: { name in
                    try kind == .sqlite ? BenchRelay.sqlite(in: directory + "/" + name) : await BenchRelay.postgresFromEnvironment(service: true).get()
                }, logger: logger)
                figures.result = result
                func line(_ what: String, _ e: [Double], _ c: [Double]) -> String {
                    let p50e = Percentile.of(e, 0.5), p50c = Percentile.of(c, 0.5)
                    return "\(what) p50 \(String(format: "%.1f", p50e * 1000)) ms empty, \(String(format: "%.1f", p50c * 1000)) ms crowded "
                        + "(\(String(format: "%.2f", p50c / p50e)))"
                }
                say("\(kind.rawValue): " + line("restart", result.empty.restart, result.crowded.restart) + "; "
                      + line("arrival", result.empty.arrival, result.crowded.arrival))
            } catch {
                guard kind == .postgres else { throw error }
                figures.missing = "\(error)"
                say("\(kind.rawValue) crowded relay: not measured: \(error)")
            }
            crowding.append(figures)
        }
    }

    var crowdSection: String {
        guard !crowding.isEmpty else { return "" }
        func ms(_ s: Double) -> String { String(format: "%.1f ms", s * 1000) }
        let n = CrowdBench.restarts, m = CrowdBench.arrivals
        var text = """
            ## Restart and key arrival with a crowded relay

            Does what other accounts wrote cost a device anything? Per relay, two circles of two daemons in one process (each \
            daemon with its own vault and its own connection to the relay) run side by side: one on an empty relay, one on a \
            relay that also holds \(grouped(CrowdBench.crowdRecords)) records of \(grouped(CrowdBench.crowdAccounts)) other \
            accounts (request and acknowledgement records with random \(CrowdBench.bodyBytes)-byte bodies, written through \
            `publish(batch:)` with \(CrowdBench.accountsPerBatch) accounts and \(CrowdBench.accountsPerBatch * CrowdBench.crowdRecords / CrowdBench.crowdAccounts) \
            records per batch, after device B enrolled, so the account's own records lie on both sides of them in the relay's \
            order). The measurements alternate between the two circles, so the crowded figure's baseline is the empty one \
            measured a moment before or after.

            **Restart to first sync** (\(n) per circle, after one uncounted): B is stopped (its server and propagation end, its \
            relay connection closes; its vault stays); A rotates with `{"promote":"now"}` while B is down; B starts again \
            as a restarted daemon does (a new relay connection, a new `KeyVaultService` on the same vault, its server on the \
            same socket, propagation). The clock runs from B's start to B answering the new key by key ID \
            (`GET …/keys/id/KEYID?wait=20`). A restarted daemon holds its accounts locked, so the client unlocks B as soon as \
            its socket answers (Argon2id at a minimal cost here; the unlock is not what is measured) and then asks for the key: \
            the figure includes opening the relay and the vault, catching up on the account after its cursor, the unlock \
            taking in the kept share, and the answer. The two rows under it split it: B's socket answering, and B's unlock \
            answered. With \(n) samples, p99 is \(CrowdBench.p99Rank(n)).

            **Key arrival** (\(m) per circle, after one uncounted): with B running, a read of the next generation waits on B \
            (`GET …/keys/N?wait=20`, armed 20 ms before); A rotates with `{"promote":"now"}`; the clock runs from A's rotate \
            request sent to B's waiting read answered (A's log append, sealing and storing the share, B's wake-up, reading \
            the relay after its cursor, verification, opening, storing, the answer). With \(m) samples, p99 is \
            \(CrowdBench.p99Rank(m)).

            Goal (issue): crowded / empty ≤ 1.1 on both relays, read here for each figure. A p99 is a handful of the slowest \
            samples, so one stall of the shared machine moves it; the p50s say more about what the crowd costs.


            """
        for figures in crowding {
            text += "### \(figures.kind.rawValue)\n\n"
            guard let r = figures.result else {
                text += "Not measured: \(figures.missing ?? "unknown reason").\n\n"
                continue
            }
            text += "Writing the crowd took \(String(format: "%.1f", r.fillSeconds)) s (\(r.fillBatches) batches"
                + (figures.kind == .postgres ? ", 4 at a time" : "") + ").\n\n"
            text += "| | empty relay | crowded relay | crowded / empty | goal ≤ 1.1 |\n|---|---:|---:|---:|---|\n"
            func row(_ name: String, _ pick: (CrowdBench.Samples) -> [Double], _ p: Double, goal: Bool) {
                let e = Percentile.of(pick(r.empty), p), c = Percentile.of(pick(r.crowded), p)
                let ratio = c / e
                let verdict = goal ? (ratio <= 1.1 ? "met" : "**not met**") : "-"
                text += "| \(name) | \(ms(e)) | \(ms(c)) | \(goal ? "**" : "")\(String(format: "%.2f", ratio))\(goal ? "**" : "") | \(verdict) |\n"
            }
            row("restart to first sync p50", \.restart, 0.5, goal: true)
            row("restart to first sync p99", \.restart, 0.99, goal: true)
            row("of which: socket answering p50", \.socketUp, 0.5, goal: false)
            row("of which: unlock answered p50", \.unlocked, 0.5, goal: false)
            row("key arrival p50", \.arrival, 0.5, goal: true)
            row("key arrival p99", \.arrival, 0.99, goal: true)
            text += "\n"
        }
        return text
    }
}
