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
#if canImport(Glibc)
import Glibc
#endif

/// `client.key(account)` as an app calls it, beside the same read on one raw
/// keep-alive connection, against one daemon in a process of its own (this
/// binary run as `keyvault-bench --daemon DATA SOCKET`), so the client's event
/// loop shares no thread with the server's. The four take turns read by
/// read, in a shuffled order each round: the raw connection
/// (`SocketHTTPConnection`: a status and a body, nothing decoded); one
/// `KeyVaultClient`, whose kept connection was checked once, through `key`
/// (the answer decoded into `KeyBytes`) and through `send` (the same
/// connection, nothing decoded: the library's transport alone); and a new
/// `KeyVaultClient` per read, which checks the socket's path and peer and
/// connects each time (before connections were kept, every request did that
/// and more: a connection to check the peer, then async-http-client's own).
/// A fifth takes its turn too: ssh-agent's round trip on one kept connection
/// (`SSH_AGENTC_REQUEST_IDENTITIES`, an agent with no keys, started for the
/// run), the floor a key read over a kept connection is set beside.
enum ClientReadsBench {
    struct Result {
        var raw: [Double]
        /// `client.send` on the same kept connection: the library's transport, the answer not decoded.
        var transport: [Double]
        var client: [Double]
        var fresh: [Double]
        /// ssh-agent's round trip on one kept connection.
        var agent: [Double]
        /// A key read on one kept connection, blocking `write` and `read` as for the agent.
        var blocking: [Double]
        var ratio: Double { Percentile.of(client, 0.5) / Percentile.of(raw, 0.5) }
        var blockingOverAgent: Double { Percentile.of(blocking, 0.5) / Percentile.of(agent, 0.5) }
    }

    static let goal = 1.3
    /// A key read on a kept connection at most this many times ssh-agent's round trip.
    static let agentGoal = 2.0

    static func measure(seconds: Double, in directory: String) async throws -> Result {
        let folder = directory + "/client"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let daemon = try await startDaemon(in: folder)
        defer { daemon.stop() }
        let socket = daemon.socket

        let path = "/v1/accounts/bench/keys/current"
        let raw = try await SocketHTTPConnection.connect(path: socket)
        let client = KeyVaultClient(socketPath: socket)
        let agent = try await AgentConnection.start(in: folder)
        defer { agent.stop() }
        let blocking = try BlockingKeyRead(socket: socket, target: path)
        var result = Result(raw: [], transport: [], client: [], fresh: [], agent: [], blocking: [])
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var round = 0
        while round < 300 || ContinuousClock.now < deadline {  // 200 to warm up, then at least 100 of each
            round += 1
            // In a shuffled order each round, so none always follows another (a new client's close, say).
            for kind in [0, 1, 2, 3, 4, 5].shuffled() {
                let start = ContinuousClock.now
                switch kind {
                case 0:
                    let answer = try await raw.request("GET", path)
                    guard answer.status == 200 else { throw BenchError("raw read: \(answer.text)") }
                case 1:
                    guard case .ready = try await client.key("bench") else { throw BenchError("client read: not ready") }
                case 2:
                    let answer = try await client.send("GET", path)
                    guard answer.status == 200 else { throw BenchError("client send: \(answer.text)") }
                case 3:
                    guard case .ready = try await KeyVaultClient(socketPath: socket).key("bench") else { throw BenchError("new client's read: not ready") }
                case 4:
                    try agent.listIdentities()
                default:
                    try blocking.read()
                }
                let elapsed = Load.seconds(ContinuousClock.now - start)
                guard round > 200 else { continue }  // after a warm-up
                switch kind {
                case 0: result.raw.append(elapsed)
                case 1: result.client.append(elapsed)
                case 2: result.transport.append(elapsed)
                case 3: result.fresh.append(elapsed)
                case 4: result.agent.append(elapsed)
                default: result.blocking.append(elapsed)
                }
            }
        }
        await raw.close()
        return result
    }

    /// A daemon in a process of its own (this binary run as `keyvault-bench --daemon DATA SOCKET`)
    /// with the account `bench` made; it exits when `stop` closes its standard input.
    struct ChildDaemon {
        let socket: String
        let process: Process
        let input: Pipe

        func stop() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    static func startDaemon(in folder: String, helloRoute: Bool = false) async throws -> ChildDaemon {
        let socket = folder + "/kv.sock"
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        daemon.arguments = ["--daemon", folder + "/data", socket] + (helloRoute ? ["--hello"] : [])
        let input = Pipe()
        daemon.standardInput = input
        try daemon.run()
        let child = ChildDaemon(socket: socket, process: daemon, input: input)
        guard try await poll(400, every: .milliseconds(25), until: { SocketPath.isAnswering(socket) }) else {
            child.stop()
            throw BenchError("the bench's daemon did not answer")
        }
        let created = try await SocketHTTPClient.request(socket: socket, "POST", "/v1/accounts", body: Array(#"{"user":"bench","passphrase":"bench"}"#.utf8))
        guard created.status == 200 else {
            child.stop()
            throw BenchError("creating the bench's account: \(created.text)")
        }
        return child
    }

    /// The child's side: one daemon (the shipped default policy, its audit log in a file) until standard input closes.
    static func serve(data: String, socket: String, helloRoute: Bool = false) async throws -> Never {
        _ = FileManager.default.createFile(atPath: data + ".log", contents: nil)
        let logFile = FileHandle(forWritingAtPath: data + ".log")!
        LoggingSystem.bootstrap { label in FileLogHandler(label: label, file: logFile) }
        let logger = Logger(label: "keyvaultd")
        let service = try KeyVaultService(vault: try Vault(directory: data), policy: PolicyStore(policy: Policy.builtInDefault(selfUID: geteuid()), directory: nil),
                                          logger: logger)
        var options = KeyVaultServer.Options(socketPath: socket)
        options.benchmarkHelloRoute = helloRoute  // `GET /hello`, for the reads section's bare route
        let app = KeyVaultServer.makeApplication(service: service, options: options, logger: logger)
        let server = Task { try await app.run() }
        // A thread of its own blocks on standard input (empty data at end of file), not a task.
        Thread.detachNewThread {
            while !FileHandle.standardInput.availableData.isEmpty {}
            exit(0)
        }
        try await server.value
        exit(1)
    }
}

extension Report {
    var clientSection: String {
        guard let client = clientReads else {
            return clientReadsMissing.map { "## The client library's key read\n\nNot measured: \($0)\n\n" } ?? ""
        }
        func us(_ samples: [Double], _ p: Double) -> String { String(format: "%.0f µs", Percentile.of(samples, p) * 1e6) }
        let ratio = client.ratio
        return """
            ## The client library's key read

            `client.key(account)` (release build) beside the same read on one raw keep-alive connection, in the same run, \
            against one daemon in a process of its own (the shipped default policy, an audit line per read to a file). \
            They take turns read by read (in a shuffled order each round), \(client.raw.count) reads each after a warm-up: the raw connection \
            (`SocketHTTPConnection`: the status and body, nothing decoded); one `KeyVaultClient`, whose connection is kept \
            and was checked once, through `key` (the answer decoded into `KeyBytes`) and through `send` (the same connection, \
            the answer not decoded: the library's transport alone); a new `KeyVaultClient` per read, which checks the \
            socket's path and peer and connects for each (before connections were kept, every request did that and more: \
            a connection to check the peer, closed unused, then another for the request).

            | read | p50 | p99 | p50 / raw |
            |---|---:|---:|---:|
            | one raw keep-alive connection (baseline) | \(us(client.raw, 0.5)) | \(us(client.raw, 0.99)) | 1.00 |
            | `client.key(account)`, kept connection | \(us(client.client, 0.5)) | \(us(client.client, 0.99)) | **\(String(format: "%.2f", ratio))** |
            | `client.send("GET", …)`, kept connection, not decoded | \(us(client.transport, 0.5)) | \(us(client.transport, 0.99)) | \(String(format: "%.2f", Percentile.of(client.transport, 0.5) / Percentile.of(client.raw, 0.5))) |
            | `KeyVaultClient(…).key(account)`, a new client each read | \(us(client.fresh, 0.5)) | \(us(client.fresh, 0.99)) | \(String(format: "%.2f", Percentile.of(client.fresh, 0.5) / Percentile.of(client.raw, 0.5))) |

            Goal: `client.key(account)` p50 at most \(String(format: "%.1f", ClientReadsBench.goal))× the raw connection's: \
            **\(String(format: "%.2f", ratio))** (\(ratio <= ClientReadsBench.goal ? "met" : "not met")).

            The floor beside it, taking its turns in the same rounds: ssh-agent's round trip on one kept connection \
            (`SSH_AGENTC_REQUEST_IDENTITIES` to an agent with no keys, started for the run; a 5-byte request, a 9-byte answer), \
            and the same key read as above on a kept connection written and read the same way (blocking `write` and `read` on the \
            bench's thread, no event loop: `BlockingKeyRead`), so both round trips carry the same client.

            | round trip | p50 | p99 | p50 / ssh-agent |
            |---|---:|---:|---:|
            | ssh-agent, kept connection (baseline) | \(us(client.agent, 0.5)) | \(us(client.agent, 0.99)) | 1.00 |
            | a key read, kept connection, blocking client | \(us(client.blocking, 0.5)) | \(us(client.blocking, 0.99)) | **\(String(format: "%.2f", client.blockingOverAgent))** |
            | a key read, kept connection, the NIO client above | \(us(client.raw, 0.5)) | \(us(client.raw, 0.99)) | \(String(format: "%.2f", Percentile.of(client.raw, 0.5) / Percentile.of(client.agent, 0.5))) |

            Goal: a key read on a kept connection at most \(String(format: "%.0f", ClientReadsBench.agentGoal))× ssh-agent's round trip: \
            **\(String(format: "%.2f", client.blockingOverAgent))** (\(client.blockingOverAgent <= ClientReadsBench.agentGoal ? "met" : "not met")).


            """
    }
}
