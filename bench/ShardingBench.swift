import Foundation
import Logging
import NIOCore
import PostgresNIO
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// Issue 24's figures, in one run: what the relay service costs a device beside
/// the embedded relay (enrollment, arrival after a rotation and on approval);
/// what an append costs the relay service and PostgreSQL in CPU time with 1
/// account appending and with 64, and whether any of the 64 waited on a lock;
/// and how many of an enrollment's signed requests made the store commit a write.
enum ShardingBench {
    struct Latencies {
        var embedded: PropagationBench.Arrival
        var service: PropagationBench.Arrival
        var ratio: Double { service.percentile(0.5) / embedded.percentile(0.5) }
    }

    /// CPU time (user + system, from `/proc`) of the relay service and of every PostgreSQL process over one append run.
    struct AppendCost {
        var accounts: Int
        var batches: Int
        var seconds: Double
        var relayCPU: Double
        var postgresCPU: Double
        var perThousand: Double { (relayCPU + postgresCPU) / Double(batches) * 1000 }
        /// Samples of `pg_stat_activity` taken during the run, those in which a backend waited on a lock
        /// between transactions (a row, a transaction, an advisory or object lock: what a design shares), and
        /// those in which one waited only to extend the table's file (`extend`, `page`: one table's storage
        /// growing on one server, which a distributed table spreads over shards).
        var samples = 0
        var samplesWithLockWaits = 0
        var samplesWithExtendWaits = 0
        var lockWaitEvents: Set<String> = []
    }

    struct Commits {
        var enrollments: Int
        var gets: Int
        var posts: Int
        /// Transactions that wrote (took a transaction ID) while the enrollments ran.
        var writingTransactions: Int
        /// Signed reads sent on their own after the enrollments, and the transactions that wrote meanwhile.
        var reads = 0
        var writingTransactionsForReads = 0
    }

    struct Result {
        var enrollment: Latencies
        var rotation: Latencies
        var approval: Latencies
        var costs: [AppendCost]
        var commits: Commits
    }

    static func measure(samples: Int, seconds: Double, in directory: String, logger: Logger) async throws -> Result {
        let embedded = try BenchRelay.sqlite(in: directory + "/sharding-embedded")
        let service = try await BenchRelay.postgresFromEnvironment(service: true).get()
        defer { service.remove() }

        // Enrollment: two device processes per relay, alternating, as EnrollmentBench does.
        var enrollEmbedded: [Double] = [], enrollService: [Double] = []
        var commits = Commits(enrollments: 0, gets: 0, posts: 0, writingTransactions: 0)
        try await DeviceCircle.with(devices: 2, relay: embedded, name: "shard-enroll-e", placement: .processes, logger: logger) { e in
            try await DeviceCircle.with(devices: 2, relay: service, name: "shard-enroll-s", placement: .processes, logger: logger) { s in
                for i in 0..<samples {
                    enrollEmbedded.append(try await EnrollmentBench.requestToKey(e, user: "enrolle\(i)"))
                    // Counted around the whole enrollment (the account's creation included), outside the clock.
                    let log = try service.serviceLog()
                    let before = try await transactionID(service.storeAddress)
                    enrollService.append(try await EnrollmentBench.requestToKey(s, user: "enrolls\(i)"))
                    let after = try await transactionID(service.storeAddress)
                    let requests = try service.serviceLog().dropFirst(log.count)
                    commits.enrollments += 1
                    commits.gets += requests.components(separatedBy: "method=GET").count - 1
                    commits.posts += requests.components(separatedBy: "method=POST").count - 1
                    // The second txid_current() takes the ID after the first's.
                    commits.writingTransactions += Int(after - before - 1)
                }
            }
        }
        // Arrival on approval and after a rotation, in-process devices, one relay after the other.
        let approvalEmbedded = try await PropagationBench.arrival(enrollments: samples, relay: embedded, logger: logger, accountPrefix: "sharde")
        let approvalService = try await PropagationBench.arrival(enrollments: samples, relay: service, logger: logger, accountPrefix: "shards")
        let rotationEmbedded = try await PropagationBench.rotationArrival(rotations: samples, relay: embedded, logger: logger)
        let rotationService = try await PropagationBench.rotationArrival(rotations: samples, relay: service, logger: logger)

        // Reads alone: a device's signed reads of its account, one after another.
        let founded = try await service.foundAccount(try AccountID(validating: "shard-reads"), logger: logger)
        try await Task.sleep(for: .milliseconds(200))  // the genesis's wake-up sent
        let readsBefore = try await transactionID(service.storeAddress)
        for _ in 0..<200 { _ = try await founded.client.rows(account: founded.circle.account, after: .start, limit: 100) }
        commits.reads = 200
        commits.writingTransactionsForReads = Int(try await transactionID(service.storeAddress) - readsBefore - 1)
        await founded.client.shutdown()

        var costs: [AppendCost] = []
        for accounts in [1, 64] {
            costs.append(try await appendCost(accounts: accounts, seconds: seconds, relay: service, logger: logger))
        }
        return Result(enrollment: Latencies(embedded: .init(samples: enrollEmbedded), service: .init(samples: enrollService)),
                      rotation: Latencies(embedded: rotationEmbedded, service: rotationService),
                      approval: Latencies(embedded: approvalEmbedded, service: approvalService),
                      costs: costs, commits: commits)
    }

    /// `ServiceAppendsBench`'s load with the CPU clocks read around it, and `pg_stat_activity`
    /// sampled every 5 ms for backends waiting on a lock.
    static func appendCost(accounts: Int, seconds: Double, relay: BenchRelay, logger: Logger) async throws -> AppendCost {
        guard let relayPID = relay.servicePID else { throw BenchError("no relay service to measure") }
        guard let pgDir = ProcessInfo.processInfo.environment["KEYVAULT_TEST_PG_DIR"] else {
            throw BenchError("KEYVAULT_TEST_PG_DIR is not set (run under scripts/with-test-postgres.sh)")
        }
        let postmaster = try postmasterPID(pgDir)
        guard case .postgres(let configuration) = try RelayAddress(parsing: relay.storeAddress) else { throw BenchError("not PostgreSQL") }
        var options = try PostgresRelay.clientConfiguration(configuration)
        options.options.maximumConnections = 1
        let sampler = PostgresClient(configuration: options)
        let running = Task { await sampler.run() }
        defer { running.cancel() }

        let sampling = Task { () -> (Int, Int, Int, Set<String>) in
            var samples = 0, waiting = 0, extending = 0, events: Set<String> = []
            while !Task.isCancelled {
                var seen = false, seenExtend = false
                if let rows = try? await sampler.query("""
                    SELECT wait_event FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
                    """) {
                    do {
                        for try await event in rows.decode(String.self) {
                            if ["extend", "page"].contains(event) { seenExtend = true } else { seen = true }
                            events.insert(event)
                        }
                        samples += 1
                        if seen { waiting += 1 } else if seenExtend { extending += 1 }
                    } catch {}
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
            return (samples, waiting, extending, events)
        }
        let startRelay = cpuSeconds(of: [relayPID])
        let startPostgres = cpuSeconds(of: postgresProcesses(postmaster))
        let row = try await ServiceAppendsBench.run(writers: accounts, seconds: seconds, relay: relay, tag: "cpu\(accounts)", logger: logger)
        let relayCPU = cpuSeconds(of: [relayPID]).subtracting(startRelay)
        let postgresCPU = cpuSeconds(of: postgresProcesses(postmaster)).subtracting(startPostgres)
        sampling.cancel()
        let (samples, waiting, extending, events) = await sampling.value
        return AppendCost(accounts: accounts, batches: row.batches, seconds: row.seconds, relayCPU: relayCPU, postgresCPU: postgresCPU,
                          samples: samples, samplesWithLockWaits: waiting, samplesWithExtendWaits: extending, lockWaitEvents: events)
    }

    static func transactionID(_ url: String) async throws -> Int64 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = [url, "-X", "-qAt", "-c", "SELECT txid_current()"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard let id = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw BenchError("txid_current(): \(text)") }
        return id
    }

    static func postmasterPID(_ pgDir: String) throws -> Int32 {
        let text = try String(contentsOfFile: pgDir + "/data/postmaster.pid", encoding: .utf8)
        guard let pid = text.split(separator: "\n").first.flatMap({ Int32($0) }) else { throw BenchError("no postmaster.pid in \(pgDir)") }
        return pid
    }

    /// The postmaster and its children (backends, the WAL writer, …).
    static func postgresProcesses(_ postmaster: Int32) -> [Int32] {
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
        return [postmaster] + pids.filter { stat(of: $0)?.parent == postmaster }
    }

    /// CPU seconds (user + system) per process, from `/proc/PID/stat`.
    static func cpuSeconds(of pids: [Int32]) -> [Int32: Double] {
        var out: [Int32: Double] = [:]
        for pid in pids { if let s = stat(of: pid) { out[pid] = s.cpu } }
        return out
    }

    private static func stat(of pid: Int32) -> (parent: Int32, cpu: Double)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After "pid (comm) ": state, ppid, …; utime and stime are fields 14 and 15 (1-based) of the whole line.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let parent = Int32(fields[1]), let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (parent, (user + system) / Double(sysconf(Int32(_SC_CLK_TCK))))
    }
}

extension Dictionary where Key == Int32, Value == Double {
    /// The CPU used since `start`: a process that started since counts from zero.
    func subtracting(_ start: [Int32: Double]) -> Double {
        reduce(0) { $0 + $1.value - (start[$1.key] ?? 0) }
    }
}

extension BenchRelay {
    /// The service's log so far: its access lines say each request's method.
    func serviceLog() throws -> String {
        guard let path = serviceLogPath else { return "" }
        return try String(contentsOfFile: path, encoding: .utf8)
    }
}

extension Report {
    mutating func measureSharding(in directory: String, logger: Logger) async {
        do {
            let result = try await ShardingBench.measure(samples: 30, seconds: seconds, in: directory, logger: logger)
            sharding = result
            say("sharding: enrollment ×\(String(format: "%.2f", result.enrollment.ratio)), rotation ×\(String(format: "%.2f", result.rotation.ratio)), approval ×\(String(format: "%.2f", result.approval.ratio))")
            for cost in result.costs {
                say("sharding: \(cost.accounts) account(s): \(String(format: "%.3f", cost.perThousand)) CPU s per 1000 appends, \(cost.samplesWithLockWaits) of \(cost.samples) samples with a lock wait, \(cost.samplesWithExtendWaits) with an extend wait only")
            }
        } catch {
            shardingMissing = "\(error)"
            say("sharding: not measured: \(error)")
        }
    }

    var shardingSection: String {
        var text = """
            ## The relay service as a distributed engine needs it (issue 24)

            Measured in one run, each figure beside its baseline measured in the same run.

            **What a device waits for, service beside embedded relay.** Enrollment: two device processes per relay \
            (as in "Enrollment from request to key"), alternating between the relays, from device 1's request to its \
            key. Arrival on approval and after a rotation: two in-process devices, as in "Key arrival across devices", \
            the embedded relay measured first. The service is one `keyvault-relay` on PostgreSQL on loopback.


            """
        guard let sharding else { return text + "Not measured: \(shardingMissing ?? "not run").\n\n" }
        func ms(_ s: Double) -> String { String(format: "%.1f ms", s * 1000) }
        text += "| | embedded p50 | service p50 | service p99 | service / embedded (p50) | goal |\n|---|---:|---:|---:|---:|---|\n"
        for (name, figures, goal) in [("enrollment, request to key", sharding.enrollment, 2.0),
                                      ("arrival after a rotation", sharding.rotation, 1.5),
                                      ("arrival on approval", sharding.approval, 2.0)] {
            text += "| \(name) | \(ms(figures.embedded.percentile(0.5))) | \(ms(figures.service.percentile(0.5))) | "
            text += "\(ms(figures.service.percentile(0.99))) | **\(String(format: "%.2f", figures.ratio))** | "
            text += "≤ \(String(format: "%.1f", goal))×: " + (figures.ratio <= goal ? "met" : "**not met**") + " |\n"
        }
        let c = sharding.commits
        text += """

            **Commits per enrollment.** Around each of the \(c.enrollments) service enrollments above (account creation \
            included), the server's transaction ID was read before and after (`txid_current()`: a transaction takes one \
            only when it writes), and the service's access log counted the signed requests it answered. The writes are \
            the POSTs, the pruning some of them cause (a `DELETE` of what no device needs any more), and the wake-ups \
            sent after them (`pg_notify` takes a transaction ID; one batch per moment, for whatever committed). Then, \
            alone, \(c.reads) signed reads by one device of its account, one after another, with the transaction ID \
            read before and after: what a read costs in commits.

            | | signed reads (GET) | signed writes (POST) | transactions that wrote |
            |---|---:|---:|---:|
            | per enrollment (mean) | \(String(format: "%.1f", Double(c.gets) / Double(c.enrollments))) | \(String(format: "%.1f", Double(c.posts) / Double(c.enrollments))) | \(String(format: "%.1f", Double(c.writingTransactions) / Double(c.enrollments))) |
            | \(c.reads) reads alone | \(c.reads) | 0 | **\(c.writingTransactionsForReads)** |

            Goal: only the writes commit. Reads: **\(c.writingTransactionsForReads)** writing transactions for \(c.reads) \
            reads: \(c.writingTransactionsForReads == 0 ? "met" : "**not met**"). (Before this change every signed request, \
            reads included, inserted its nonce in a transaction of its own.)

            **What an append costs, 1 account beside 64.** As in "Appends per second through the relay service": each \
            writer a device of its own account, appending an announce and two shares as one signed request, the next as \
            soon as the last is answered, for \(Int(seconds)) s. The CPU time (user + system, from `/proc/PID/stat`) of the \
            relay service and of every PostgreSQL process (the postmaster and its children) is read before and after. \
            The 1-account run is the baseline. During each run `pg_stat_activity` is sampled every 5 ms for backends of \
            the database waiting on a heavyweight lock (`wait_event_type = 'Lock'`); in the 64-account run every writer \
            is its own account, so any such wait is one account's write waiting on another's. The waits are counted in \
            two kinds: on a lock between transactions (a row, a transaction, an advisory lock, an object such as the \
            NOTIFY queue's: what a design makes writers share), and only on extending the table's file (`extend`, \
            `page`: one table's storage growing on one server, shared by whoever inserts into it; a distributed table \
            has a file per shard).

            | accounts appending | appends | relay CPU | PostgreSQL CPU | CPU s per 1000 appends | / one account | samples | waits on a lock between transactions | waits to extend the file only | goal |
            |---:|---:|---:|---:|---:|---:|---:|---:|---:|---|

            """
        let base = sharding.costs.first?.perThousand ?? .nan
        for cost in sharding.costs {
            let ratio = cost.perThousand / base
            let goal = cost.accounts == 1 ? "baseline"
                : "ratio ≤ 1.1: \(ratio <= 1.1 ? "met" : "**not met**"); no lock waits between transactions: "
                    + (cost.samplesWithLockWaits == 0 ? "met" : "**not met**")
                    + (cost.lockWaitEvents.isEmpty ? "" : " (seen: \(cost.lockWaitEvents.sorted().joined(separator: ", ")))")
            text += "| \(cost.accounts) | \(cost.batches) | \(String(format: "%.2f s", cost.relayCPU)) | \(String(format: "%.2f s", cost.postgresCPU)) | "
            text += "\(String(format: "%.3f", cost.perThousand)) | **\(String(format: "%.2f", ratio))** | \(cost.samples) | \(cost.samplesWithLockWaits) | "
            text += "\(cost.samplesWithExtendWaits) | \(goal) |\n"
        }
        return text + "\n"
    }
}
