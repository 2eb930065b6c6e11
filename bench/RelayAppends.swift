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
import Logging
import NIOCore
import PostgresNIO

/// Issue: PostgreSQL inserts lock per account (`pg_advisory_xact_lock(space,
/// hashtext(account))`), not the whole relay, so rotations of different
/// accounts append side by side. Writers on the relay API directly, each on
/// its own account, append what a rotation appends, for a fixed time.
enum AppendBench {
    static let deviceB = DeviceID(hash: Random.bytes(16))
    static let deviceC = DeviceID(hash: Random.bytes(16))

    struct Row {
        var writers: Int
        /// One relay (one pool of connections) shared by every writer, as one daemon rotating many accounts.
        var shared: Bool
        /// The machine's limit, not the relay: the same three rows in one plain INSERT statement per
        /// batch, no lock, no NOTIFY, on a pool of its own (the distance from this to the relay is the
        /// relay's own cost).
        var plain = false
        var batches: Int
        var seconds: Double
        var rate: Double { Double(batches) / seconds }
    }

    static let logBytes = 200
    static let shareBytes = 300
    /// Rows measured, in order: the baseline first.
    static let configurations: [(writers: Int, shared: Bool)] = [(1, false), (16, false), (16, true)]

    /// The limit: `writers` writers appending the same rows with one plain INSERT each, for `seconds`.
    static func runPlain(writers: Int, seconds: Double, relay address: BenchRelay) async throws -> Row {
        guard case .postgres(let configuration) = try RelayAddress(parsing: address.storeAddress) else { throw BenchError("not a PostgreSQL relay") }
        // The relay's table, made by opening the relay once.
        await (try await address.open()).shutdown()
        var options = PostgresClient.Configuration(host: configuration.host, port: configuration.port, username: configuration.user,
                                                   password: configuration.password, database: configuration.database, tls: .disable)
        options.options.maximumConnections = writers
        let client = PostgresClient(configuration: options)
        let running = Task { await client.run() }
        defer { running.cancel() }
        let tag = "plain\(writers)-\(UUID().uuidString.prefix(8).lowercased())"
        let logBody = ByteBuffer(bytes: Random.bytes(logBytes)), shareBody = ByteBuffer(bytes: Random.bytes(shareBytes))
        @Sendable func append(_ writer: Int, _ seq: Int64) async throws {
            let account = "append-\(tag)-\(writer)"
            // Each writer's own account, so the cursors are its own too: 3 per batch.
            try await client.query("""
                INSERT INTO keyvault_records (cursor, kind, account, recipient, log_seq, body) VALUES \
                (\(seq * 3 + 1), 'log', \(account), NULL, \(seq), \(logBody)), (\(seq * 3 + 2), 'share', \(account), 'device-b', NULL, \(shareBody)), \
                (\(seq * 3 + 3), 'share', \(account), 'device-c', NULL, \(shareBody))
                """)
        }
        try await concurrentlyOnRelay(writers, workers: writers) { writer in try await append(writer, 0) }
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        let counted = try await withThrowingTaskGroup(of: Int.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var seq: Int64 = 1
                    while ContinuousClock.now < deadline {
                        try await append(writer, seq)
                        seq += 1
                    }
                    return Int(seq - 1)
                }
            }
            return try await group.reduce(0, +)
        }
        return Row(writers: writers, shared: true, plain: true, batches: counted, seconds: Load.seconds(ContinuousClock.now - start))
    }

    /// `writers` writers for `seconds` (after one uncounted batch each): each
    /// appends, in one `publish(batch:)`, a `.log` record with its account's
    /// next `logSeq` and two `.share` records.
    static func run(writers: Int, shared: Bool, seconds: Double, relay address: BenchRelay) async throws -> Row {
        var relays: [any Relay] = []
        do {
            for _ in 0..<(shared ? 1 : writers) { relays.append(try await address.open()) }
            let opened = relays
            let tag = "\(writers)\(shared ? "s" : "o")-\(UUID().uuidString.prefix(8).lowercased())"
            let accounts = try (0..<writers).map { try AccountID(validating: "append-\(tag)-\($0)") }
            let logBody = Random.bytes(logBytes), shareBody = Random.bytes(shareBytes)
            @Sendable func batch(_ writer: Int, _ seq: UInt64) -> [RelayRecord] {
                let account = accounts[writer]
                return [.raw(.log, account: account, logSeq: LogSeq(seq), body: logBody),
                        .share(account: account, recipient: Self.deviceB, sealed: shareBody),
                        .share(account: account, recipient: Self.deviceC, sealed: shareBody)]
            }
            // Uncounted: every connection is made and every writer's first append is in.
            try await concurrentlyOnRelay(writers, workers: writers) { writer in
                try await opened[writer % opened.count].publish(batch: batch(writer, 0))
            }
            let start = ContinuousClock.now
            let deadline = start + .milliseconds(Int(seconds * 1000))
            let counted = try await withThrowingTaskGroup(of: Int.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        let relay = opened[writer % opened.count]
                        var seq: UInt64 = 1
                        while ContinuousClock.now < deadline, seq <= 1_000_000 {
                            try await relay.publish(batch: batch(writer, seq))
                            seq += 1
                        }
                        return Int(seq - 1)
                    }
                }
                var total = 0
                for try await count in group { total += count }
                return total
            }
            let elapsed = Load.seconds(ContinuousClock.now - start)
            for relay in relays { await relay.shutdown() }
            return Row(writers: writers, shared: shared, batches: counted, seconds: elapsed)
        } catch {
            for relay in relays { await relay.shutdown() }
            throw error
        }
    }
}

extension Report {
    mutating func measureAppends(seconds: Double) async {
        switch await BenchRelay.postgresFromEnvironment(service: false) {
        case .failure(let why):
            appendsMissing = why.description
        case .success(let relay):
            defer { relay.remove() }
            do {
                for (writers, shared) in AppendBench.configurations {
                    let row = try await AppendBench.run(writers: writers, shared: shared, seconds: seconds, relay: relay)
                    appends.append(row)
                    say("PostgreSQL appends: \(writers) writer(s)\(shared ? " on one shared relay" : ""): \(Int(row.rate)) batches/s")
                }
                for writers in [1, 16] {
                    let row = try await AppendBench.runPlain(writers: writers, seconds: seconds, relay: relay)
                    appends.append(row)
                    say("PostgreSQL plain INSERTs (the limit): \(writers) writer(s): \(Int(row.rate)) batches/s")
                }
            } catch {
                appendsMissing = "\(error)"
            }
        }
        if let appendsMissing { say("PostgreSQL appends: not measured: \(appendsMissing)") }
    }

    var appendSection: String {
        var text = """
            ## Relay appends per second on PostgreSQL, 1 and 16 accounts at once

            What numbering each account's records on its own buys: writers on the PostgreSQL relay API directly (`PostgresRelay.open`, no \
            daemon), each on its own account, append what a rotation appends: one `.log` record with its account's next \
            `logSeq` (a random \(AppendBench.logBytes)-byte body) and two `.share` records (\(AppendBench.shareBytes) bytes \
            each) in one `publish(batch:)`, that is one transaction sent as one statement (the account's cursor row bumped and locked, \
            three rows, one NOTIFY; docs/PROTOCOL.md), the next as soon as the last is committed, for \(Int(seconds)) s \
            after one uncounted batch per writer. Baseline: one writer, measured first in the same run. In the first two \
            rows each writer opens its own relay, as separate daemons would (its own connection pool, and its own LISTEN \
            connection, which receives every commit's NOTIFY); in the third all 16 share one relay, as one daemon rotating \
            16 accounts at once does (its pool holds at most 8 connections). The last two rows are the limit, measured \
            right after in the same run: the same three rows as one plain `INSERT` per batch from a bare postgres-nio \
            pool, no lock, no NOTIFY, no relay code, by 1 and by 16 writers; their ratio is what this machine allows \
            any design. The test cluster runs with `fsync = off`, `synchronous_commit = off` and \
            `full_page_writes = off` (`scripts/pg-cluster.sh`), so a commit waits for no disk, and the server, the writers \
            and their listeners share the machine's \(ProcessInfo.processInfo.activeProcessorCount) cores: with one writer \
            the server and the client take turns; more writers can only fill the cores.


            """
        if let appendsMissing, appends.isEmpty {
            return text + "Not measured: \(appendsMissing).\n\n"
        }
        let baseline = appends.first { $0.writers == 1 && !$0.plain }?.rate ?? .nan
        let plainBaseline = appends.first { $0.writers == 1 && $0.plain }?.rate ?? .nan
        text += """
            | writers (accounts) | connections | batches committed | seconds | batches /s | records /s | / one writer | goal ≥ 3× |
            |---:|---|---:|---:|---:|---:|---:|---|

            """
        for row in appends {
            let ratio = row.rate / (row.plain ? plainBaseline : baseline)
            let connections = row.plain ? "plain INSERT, one pool (the limit)"
                : row.shared ? "one relay shared" : (row.writers == 1 ? "its own relay" : "one relay each")
            let goal = row.plain ? (row.writers == 1 ? "limit's baseline" : "the machine's limit")
                : row.writers == 1 ? "baseline" : (ratio >= 3 ? "met" : "**not met**")
            text += "| \(row.writers) | \(connections) | \(row.batches) | \(String(format: "%.1f", row.seconds)) | \(Int(row.rate)) | "
            text += "\(Int(row.rate * 3)) | **\(String(format: "%.2f", ratio))** | \(goal) |\n"
        }
        if let appendsMissing { text += "\nThe run stopped early: \(appendsMissing).\n" }
        return text + "\n"
    }
}
