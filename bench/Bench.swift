import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import KeyVaultClient
import KeyVaultTestSupport
import Logging
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// `make bench`: the key read against a bare "hello" route on the same server
/// stack (Hummingbird over the Unix socket, peer credentials per connection),
/// with 1, 8 and 64 keep-alive connections; the client library's key read
/// beside one raw keep-alive connection; unlock time at the default KDF
/// cost beside raw Argon2id; memory per waiting read beside an idle
/// connection's; key arrival and delivery per relay (SQLite, and
/// PostgreSQL when KEYVAULT_TEST_POSTGRES is set); restart and key arrival on
/// an empty relay beside a crowded one, per relay; PostgreSQL appends with 1
/// and 16 accounts at once; rotation drills on 3 and 10 devices; bulk
/// rotation; memory per unlocked account. Writes docs/BENCHMARKS.md.
@main
struct Bench {
    static func main() async throws {
        var output = "docs/BENCHMARKS.md"
        var seconds = 3.0
        var drills = 20
        var bulkAccounts = 1000
        var bulkBudget = 300.0
        var waitingReads = 10_000
        var memoryAccounts = 1000
        // For working on one figure: the other sections are skipped (and their tables left empty), so
        // write such a run elsewhere than docs/BENCHMARKS.md.
        var only: Set<String>?
        var baseline: String?
        var arguments = CommandLine.arguments.dropFirst()
        while let flag = arguments.popFirst() {
            switch flag {
            case "--device":  // one device of a bench circle, in its own process (see ChildDevice)
                let vault = arguments.popFirst() ?? "", socket = arguments.popFirst() ?? "", relay = arguments.popFirst() ?? ""
                try await ChildDevice.serve(vault: vault, socket: socket, relay: relay)
            case "--daemon":  // the client and reads benches' daemon, in its own process (see ClientReadsBench)
                let data = arguments.popFirst() ?? "", socket = arguments.popFirst() ?? ""
                try await ClientReadsBench.serve(data: data, socket: socket, helloRoute: arguments.first == "--hello")
            case "--output": output = arguments.popFirst() ?? output
            case "--seconds": seconds = Double(arguments.popFirst() ?? "") ?? seconds
            case "--drills": drills = Int(arguments.popFirst() ?? "") ?? drills
            case "--bulk-accounts": bulkAccounts = Int(arguments.popFirst() ?? "") ?? bulkAccounts
            case "--bulk-setup-budget": bulkBudget = Double(arguments.popFirst() ?? "") ?? bulkBudget
            case "--memory-accounts": memoryAccounts = Int(arguments.popFirst() ?? "") ?? memoryAccounts
            case "--baseline": baseline = arguments.popFirst()
            case "--only": only = Set((arguments.popFirst() ?? "").split(separator: ",").map(String.init))
            case "--waiting-reads": waitingReads = Int(arguments.popFirst() ?? "") ?? waitingReads
            default: fatalError("usage: keyvault-bench [--output FILE] [--seconds S] [--drills N] [--bulk-accounts N] [--bulk-setup-budget S] [--waiting-reads N] [--memory-accounts N] [--baseline DIR] [--only reads,client,cli,unlock,waits,propagation,enrollment,sharding,service-waits,refusals,tenants,crowding,appends,instructions,drills,bulk,memory]")
            }
        }
        // The audit line per key read is part of the cost: it goes to a file, as a daemon's log would.
        let logPath = NSTemporaryDirectory() + "keyvault-bench-\(getpid()).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let logFile = FileHandle(forWritingAtPath: logPath)!
        LoggingSystem.bootstrap { label in FileLogHandler(label: label, file: logFile) }
        let logger = Logger(label: "keyvaultd")

        let dir = NSTemporaryDirectory() + "keyvault-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socket = dir + "/kv.sock"
        let policy = Policy.builtInDefault(selfUID: geteuid())  // the shipped default: MODERATE KDF
        let service = try KeyVaultService(vault: try Vault(directory: dir + "/data"), policy: PolicyStore(policy: policy, directory: nil), logger: logger)
        var options = KeyVaultServer.Options(socketPath: socket)
        options.benchmarkHelloRoute = true
        let app = KeyVaultServer.makeApplication(service: service, options: options, logger: logger)
        let server = Task { try await app.run() }
        _ = try await poll(200, every: .milliseconds(25)) { SocketPath.isAnswering(socket) }

        let passphrase = "bench passphrase"
        let created = try await SocketHTTPClient.request(socket: socket, "POST", "/v1/accounts",
                                                         body: Array(#"{"user":"bench","passphrase":"\#(passphrase)"}"#.utf8))
        precondition(created.status == 200, created.text)

        var report = Report(seconds: seconds)
        func runs(_ section: String) -> Bool { only?.contains(section) ?? true }
        if runs("reads") {
            // A daemon in a process of its own, as an app's is: its event loops are not the load's.
            let folder = dir + "/reads"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let daemon = try await ClientReadsBench.startDaemon(in: folder, helloRoute: true)
            defer { daemon.stop() }
            for connections in [1, 8, 64] {
                let hello = try await Load.run(socket: daemon.socket, path: "/hello", connections: connections, seconds: seconds)
                let key = try await Load.run(socket: daemon.socket, path: "/v1/accounts/bench/keys/current", connections: connections, seconds: seconds)
                report.reads.append((connections, hello, key))
                say("connections \(connections): hello \(Int(hello.rate))/s, key \(Int(key.rate))/s, ratio \(String(format: "%.2f", key.rate / hello.rate))")
            }
        }

        if runs("cli") {
            do {
                let c = try await CLIStartBench.measure(runs: 40, in: dir)
                report.cliStart = c
                say("cli: keyvault key get p50 \(String(format: "%.1f", Percentile.of(c.cli, 0.5) * 1000)) ms vs ssh-add -l \(String(format: "%.1f", Percentile.of(c.sshAdd, 0.5) * 1000)) ms (ratio \(String(format: "%.2f", c.ratio)))")
            } catch {
                report.cliStartMissing = "\(error)"
                say("cli: not measured: \(error)")
            }
        }

        if runs("client") {
            do {
                let c = try await ClientReadsBench.measure(seconds: seconds, in: dir)
                report.clientReads = c
                say("client.key p50 \(Int(Percentile.of(c.client, 0.5) * 1e6)) µs vs raw \(Int(Percentile.of(c.raw, 0.5) * 1e6)) µs (ratio \(String(format: "%.2f", c.ratio))); a new client each read \(Int(Percentile.of(c.fresh, 0.5) * 1e6)) µs; blocking key read \(Int(Percentile.of(c.blocking, 0.5) * 1e6)) µs vs ssh-agent \(Int(Percentile.of(c.agent, 0.5) * 1e6)) µs (ratio \(String(format: "%.2f", c.blockingOverAgent)))")
            } catch {
                report.clientReadsMissing = "\(error)"
                say("client reads: not measured: \(error)")
            }
        }

        // Unlock at the default cost, beside raw Argon2id with the same parameters.
        var unlocks: [Double] = []
        var raws: [Double] = []
        for _ in 0..<(runs("unlock") ? 3 : 0) {
            _ = try await SocketHTTPClient.request(socket: socket, "POST", "/v1/accounts/bench/lock")
            let start = ContinuousClock.now
            let reply = try await SocketHTTPClient.request(socket: socket, "POST", "/v1/accounts/bench/unlock",
                                                           body: Array(#"{"passphrase":"\#(passphrase)"}"#.utf8))
            precondition(reply.status == 200, reply.text)
            unlocks.append(Load.seconds(ContinuousClock.now - start))
            raws.append(try KDFCalibration.measure(policy.kdf).seconds)
        }
        if !unlocks.isEmpty { report.unlock = (unlocks.sorted()[1], raws.sorted()[1], policy.kdf) }
        say("unlock: \(Int(report.unlock.daemon * 1000)) ms, raw Argon2id \(Int(report.unlock.raw * 1000)) ms")

        server.cancel()
        if runs("waits") {
            report.waiting = try await WaitingMemoryBench.measure(count: waitingReads, in: dir + "/waits")
            if let w = report.waiting {
                say("waiting reads: \(String(format: "%.1f", w.waitingPerReadKiB)) KiB each, idle connections \(String(format: "%.1f", w.idlePerConnectionKiB)) KiB each; \(w.waitersAfterClose) waiters left after their clients closed")
            }
        }
        if runs("propagation") || runs("drills") { try await report.measurePropagation(in: dir, logger: logger) }
        if runs("enrollment") { await report.measureEnrollment(baseline: baseline, in: dir, logger: logger) }
        if runs("sharding") { await report.measureSharding(in: dir, logger: logger) }
        if runs("service-waits") {
            do {
                let w = try await ServiceWaitingBench.measure(count: waitingReads, enrollments: 20, logger: logger)
                report.serviceWaiting = w
                say("service with \(w.count) waiting: arrival p50 \(Int(w.loaded.percentile(0.5) * 1000)) ms vs \(Int(w.quiet.percentile(0.5) * 1000)) ms; \(String(format: "%.1f", w.perConnectionKiB)) KiB each")
            } catch {
                report.serviceWaitingMissing = "\(error)"
                say("service waits: not measured: \(error)")
            }
        }
        if runs("refusals") {
            do {
                let r = try await RefusalTimingBench.measure(samples: 2000, logger: logger)
                report.refusalTiming = r
                say("refusals: absent p50 \(Int(r.absent.percentile(0.5) * 1e6)) µs; " + r.others.map { "z \(String(format: "%.2f", $0.z))" }.joined(separator: ", "))
            } catch {
                report.refusalTimingMissing = "\(error)"
                say("refusals: not measured: \(error)")
            }
        }
        if runs("tenants") {
            do {
                let t = try await TenantLimitsBench.measure(logger: logger)
                report.tenantLimits = t
                say("tenants: bystander p50 idle \(Int(t.idle.percentile(0.5) * 1e6)) µs; " + t.loaded.map { "\($0.name): \(Int($0.percentile(0.5) * 1e6)) µs, \($0.failures) failed" }.joined(separator: "; ") + "; peak \(t.peakKiB / 1024) MiB")
            } catch {
                report.tenantLimitsMissing = "\(error)"
                say("tenants: not measured: \(error)")
            }
        }
        if runs("crowding") { try await report.measureCrowding(in: dir, logger: logger) }
        if runs("appends") {
            await report.measureAppends(seconds: seconds)
            await report.measureServiceAppends(seconds: seconds, logger: logger)
        }
        if runs("instructions") { await report.measureAppendInstructions(in: dir, logger: logger) }
        if runs("drills") { try await report.measureDrills(drills, in: dir, logger: logger) }
        if runs("bulk") { try await report.measureBulk(accounts: bulkAccounts, setupBudget: bulkBudget, in: dir, logger: logger) }
        if runs("memory") { try await report.measureMemory(accounts: memoryAccounts, in: dir, logger: logger) }
        try report.write(to: output)
        say("wrote \(output)")
        try? FileManager.default.removeItem(atPath: logPath)
        try? FileManager.default.removeItem(atPath: dir)
        exit(0)
    }
}

/// Closed-loop load: each connection sends its next request when the last is answered.
enum Load {
    struct Result {
        var requests: Int
        var seconds: Double
        var latencies: [Double]
        var rate: Double { Double(requests) / seconds }
        func percentile(_ p: Double) -> Double { Percentile.of(latencies, p) }
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func run(socket: String, path: String, connections: Int, seconds: Double) async throws -> Result {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let start = ContinuousClock.now
        let perConnection = try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<connections {
                group.addTask {
                    let connection = try await SocketHTTPConnection.connect(path: socket)
                    var latencies: [Double] = []
                    while ContinuousClock.now < deadline {
                        let sent = ContinuousClock.now
                        let reply = try await connection.request("GET", path)
                        precondition(reply.status == 200, reply.text)
                        latencies.append(Self.seconds(ContinuousClock.now - sent))
                    }
                    await connection.close()
                    return latencies
                }
            }
            var all: [[Double]] = []
            for try await latencies in group { all.append(latencies) }
            return all
        }
        let latencies = perConnection.flatMap { $0 }
        return Result(requests: latencies.count, seconds: Self.seconds(ContinuousClock.now - start), latencies: latencies)
    }
}

struct Report {
    var seconds: Double
    var reads: [(Int, Load.Result, Load.Result)] = []
    var clientReads: ClientReadsBench.Result?
    var clientReadsMissing: String?
    var cliStart: CLIStartBench.Result?
    var cliStartMissing: String?
    var unlock: (daemon: Double, raw: Double, kdf: KDFParameters) = (0, 0, .moderate)
    /// Arrival and delivery, one entry per relay (SQLite, PostgreSQL).
    var relays: [RelayFigures] = []
    /// Restart and arrival, empty relay beside crowded, one entry per relay.
    var crowding: [CrowdFigures] = []
    /// PostgreSQL appends per second, 1 and 16 writers (or why not measured).
    var appends: [AppendBench.Row] = []
    var appendsMissing: String?
    var drills: [DrillBench.Result] = []
    var bulk: BulkRotationBench.Result?
    var waiting: WaitingMemoryBench.Result?
    var serviceWaiting: ServiceWaitingBench.Result?
    var serviceWaitingMissing: String?
    var serviceAppends: [ServiceAppendsBench.Row] = []
    var appendInstructions: AppendInstructionsBench.Result?
    var appendInstructionsMissing: String?
    var serviceAppendsMissing: String?
    var memory: MemoryBench.Result?
    var enrollment: [EnrollmentBench.Pair] = []
    var enrollmentMissing: String?
    var sharding: ShardingBench.Result?
    var shardingMissing: String?
    var refusalTiming: RefusalTimingBench.Result?
    var refusalTimingMissing: String?
    var tenantLimits: TenantLimitsBench.Result?
    var tenantLimitsMissing: String?

    func write(to path: String) throws {
        func ms(_ s: Double) -> String { String(format: "%.3f", s * 1000) }
        var text = """
            # Benchmarks

            Measured by `make bench` (`keyvault-bench`, release build, run under `scripts/with-test-postgres.sh` so a \
            throwaway PostgreSQL cluster on loopback serves the PostgreSQL figures) on \(ProcessInfo.processInfo.activeProcessorCount) cores, \
            \(RFC3339.string(from: Date())). The machine is shared and noisy: read the ratios, which compare figures \
            measured in the same run, not the absolute numbers.

            ## Key reads against a bare route

            The same server stack serves both routes: Hummingbird's HTTP/1.1 over the Unix socket, peer credentials read \
            once per connection. `GET /hello` returns a constant string and skips the policy; \
            `GET /v1/accounts/bench/keys/current` checks the policy, answers from memory, encodes the JSON answer and writes \
            one audit line (to a file). Closed loop: each keep-alive connection sends its next request when the last is \
            answered, for \(Int(seconds)) s per row; the daemon runs in a process of its own (as an app's does, so its event \
            loops are not the load's), and client and server share the machine's cores.

            | connections | hello req/s | key req/s | key / hello | hello p50 ms | hello p99 ms | key p50 ms | key p99 ms |
            |---:|---:|---:|---:|---:|---:|---:|---:|

            """
        for (connections, hello, key) in reads {
            text += "| \(connections) | \(Int(hello.rate)) | \(Int(key.rate)) | **\(String(format: "%.2f", key.rate / hello.rate))** | "
            text += "\(ms(hello.percentile(0.5))) | \(ms(hello.percentile(0.99))) | \(ms(key.percentile(0.5))) | \(ms(key.percentile(0.99))) |\n"
        }
        let worst = reads.map { $0.2.rate / $0.1.rate }.min() ?? 0
        text += """

            Goal: the key read keeps at least 70% of the bare route's throughput. Lowest ratio in this run: \
            **\(String(format: "%.2f", worst))** (\(worst >= 0.7 ? "met" : "not met")).

            ## Unlock at the default KDF cost

            Argon2id at the shipped policy's cost (\(unlock.kdf.opsLimit) passes over \(unlock.kdf.memLimitBytes >> 20) MiB, \
            libsodium's MODERATE), median of 3.

            | unlock through the daemon | raw `crypto_pwhash` | ratio |
            |---:|---:|---:|
            | \(Int(unlock.daemon * 1000)) ms | \(Int(unlock.raw * 1000)) ms | \(String(format: "%.2f", unlock.daemon / unlock.raw)) |

            The unlock is the KDF plus unwrapping the account's items and one vault write; the KDF is the cost, by design.

            \(clientSection)\(cliStartSection)\(ReleaseSizes.section())\(waitingSection)\(propagationSection)\(enrollmentSection)\(shardingSection)\(serviceWaitingSection)\(refusalTimingSection)\(tenantLimitsSection)\(crowdSection)\(appendSection)\(serviceAppendSection)\(appendInstructionsSection)\(drillSection)\(bulkSection)\(memorySection)
            Reproduce: `make bench` (or `swift build -c release --static-swift-stdlib --product keyvault-bench && scripts/with-test-postgres.sh .build/release/keyvault-bench --seconds 3`).

            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }
}

/// Log lines to a file, as the daemon's stderr would be redirected.
struct FileLogHandler: LogHandler {
    let label: String
    let file: FileHandle
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        file.write(Data("\(Date()) \(event.level) \(label): \(fields) \(event.message)\n".utf8))
    }
}

/// Progress on stdout, written at once (print is block-buffered into a log file, and lost if a daemon dies).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
