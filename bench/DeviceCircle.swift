import Foundation
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import KeyVaultClient
import KeyVaultTestSupport
import Logging
import Synchronization
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// N daemons on one relay: per device a `KeyVaultService` with its own vault
/// directory, its server on its own socket, its propagation task and its own
/// connection to the relay; all in this process, or one process per device
/// (this binary run with `--device`). Device 0 creates accounts and approves;
/// the others enroll over their sockets, as a person would with the CLI.
/// Cheap KDF: these benches measure propagation, not Argon2id.
final class DeviceCircle: Sendable {
    enum Placement: Sendable {
        case inProcess
        /// One child process per device: each has its own limits (memory mappings).
        case processes
        /// One child process per device, each running `binary` (another build of this bench).
        case processesOf(binary: String)
    }

    /// One in-process device while it runs: its relay connection and its server and propagation tasks.
    private struct Running: Sendable {
        var relay: any Relay
        var tasks: [Task<Void, any Error>]
    }

    let sockets: [String]
    private let relay: BenchRelay
    private let logger: Logger
    /// In-process devices that run now, by index (a stopped one is absent until started again).
    private let running: Mutex<[Int: Running]>
    private let children: [ChildDevice]
    private let directory: String

    private init(sockets: [String], relay: BenchRelay, logger: Logger, running: [Int: Running], children: [ChildDevice], directory: String) {
        self.sockets = sockets
        self.relay = relay
        self.logger = logger
        self.running = Mutex(running)
        self.children = children
        self.directory = directory
    }

    /// Starts `devices` daemons, runs `body`, and stops them whatever happens.
    static func with<T>(devices: Int, relay: BenchRelay, name: String, placement: Placement = .inProcess, logger: Logger,
                        _ body: (DeviceCircle) async throws -> T) async throws -> T {
        let circle = try await start(devices: devices, relay: relay, name: name, placement: placement, logger: logger)
        do {
            let result = try await body(circle)
            await circle.stop()
            return result
        } catch {
            await circle.stop()
            throw error
        }
    }

    static func start(devices: Int, relay: BenchRelay, name: String, placement: Placement, logger: Logger) async throws -> DeviceCircle {
        let directory = NSTemporaryDirectory() + "keyvault-bench-\(name)-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var sockets: [String] = [], running: [Int: Running] = [:], children: [ChildDevice] = []
        for device in 0..<devices {
            let socket = directory + "/device\(device).sock"
            switch placement {
            case .inProcess:
                let opened = try await BenchRelay.deviceRelay(relay.address, logger: logger)
                running[device] = Running(relay: opened.relay, tasks: try startDevice(vault: directory + "/device\(device)", socket: socket,
                                                                                        relay: opened.relay, credentials: opened.credentials, logger: logger))
            case .processes:
                children.append(try ChildDevice(vault: directory + "/device\(device)", socket: socket, relay: relay.address))
            case .processesOf(let binary):
                children.append(try ChildDevice(vault: directory + "/device\(device)", socket: socket, relay: relay.address, binary: binary))
            }
            sockets.append(socket)
            // One at a time: each is serving (its relay file opened) before the next starts. The
            // version 1 baseline dies when two processes switch a new relay file to WAL at once.
            guard try await poll(400, every: .milliseconds(25), until: { SocketPath.isAnswering(socket) }) else {
                await DeviceCircle(sockets: sockets, relay: relay, logger: logger, running: running, children: children, directory: directory).stop()
                throw BenchError("the bench daemon on \(socket) did not start")
            }
        }
        return DeviceCircle(sockets: sockets, relay: relay, logger: logger, running: running, children: children, directory: directory)
    }

    /// One device in this process: its server and its propagation, as tasks to cancel.
    static func startDevice(vault: String, socket: String, relay: any Relay, credentials: RelayCredentials?, logger: Logger) throws -> [Task<Void, any Error>] {
        var policy = Policy.builtInDefault(selfUID: geteuid())
        policy.kdf = try KDFParameters(opsLimit: 1, memLimitBytes: 64 * 1024)
        let service = try KeyVaultService(vault: try Vault(directory: vault), policy: PolicyStore(policy: policy, directory: nil),
                                          logger: logger, relay: relay, relayCredentials: credentials)
        var options = KeyVaultServer.Options(socketPath: socket)
        // Room for the 10,000 waiting reads of the memory section (the daemon's own default is 1,024).
        options.maxConnections = 16_384
        let app = KeyVaultServer.makeApplication(service: service, options: options, logger: logger)
        return [Task { try await app.run() }, Task { await service.propagation.propagate() }]
    }

    /// The child processes' ids (none in process).
    var processIDs: [Int32] { children.map(\.processID) }

    func stop() async {
        let all = running.withLock { running in
            defer { running = [:] }
            return Array(running.values)
        }
        for device in all { device.tasks.forEach { $0.cancel() } }
        _ = try? await Self.ended(all.flatMap(\.tasks))
        for device in all { await device.relay.shutdown() }
        for child in children { await child.stop() }
        // A vault may still be closing its files (a service's last tasks): try again briefly.
        for _ in 0..<20 {
            try? FileManager.default.removeItem(atPath: directory)
            guard FileManager.default.fileExists(atPath: directory) else { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Whether `tasks` all end within 10 s (they were cancelled).
    private static func ended(_ tasks: [Task<Void, any Error>]) async throws -> Bool {
        let ended = Flag()
        Task {
            for task in tasks { _ = await task.result }
            ended.set()
        }
        return try await poll(1000, every: .milliseconds(10), until: { ended.isSet })
    }

    /// Stops one in-process device as a daemon stops: its server and its
    /// propagation end, its relay connection closes and its socket file is
    /// removed; its vault stays. Returns once the tasks have ended (10 s at most).
    /// Nothing may connect to a server being cancelled: a connection it accepts
    /// then and never serves traps in NIO (apple/swift-nio#3481), so this
    /// never probes the old socket, and removes the file as the daemon does.
    func stopDevice(_ device: Int) async throws {
        guard let stopping = running.withLock({ $0.removeValue(forKey: device) }) else { return }
        stopping.tasks.forEach { $0.cancel() }
        guard try await Self.ended(stopping.tasks) else { throw BenchError("device \(device) did not stop within 10 s") }
        await stopping.relay.shutdown()
        unlink(sockets[device])
    }

    /// Starts a stopped in-process device again, as a daemon restarts: its own
    /// new connection to the relay, a new `KeyVaultService` on the same vault
    /// (its accounts come back locked), its server on the same socket and its
    /// propagation. Returns at once; the socket answers shortly after.
    func startDevice(_ device: Int) async throws {
        guard running.withLock({ $0[device] == nil }) else { throw BenchError("device \(device) runs already") }
        try SocketPath.claim(sockets[device])  // as the daemon does; the file is gone already (stopDevice), so nothing is probed
        let opened = try await BenchRelay.deviceRelay(relay.address, logger: logger)
        let tasks: [Task<Void, any Error>]
        do {
            tasks = try Self.startDevice(vault: directory + "/device\(device)", socket: sockets[device], relay: opened.relay,
                                         credentials: opened.credentials, logger: logger)
        } catch {
            await opened.relay.shutdown()
            throw error
        }
        running.withLock { $0[device] = Running(relay: opened.relay, tasks: tasks) }
    }

    /// A JSON object's text, without the fields that are nil.
    static func json(_ fields: [String: String?]) -> String {
        let present = fields.compactMapValues { $0 }
        return String(decoding: (try? JSONSerialization.data(withJSONObject: present)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// One request on a fresh connection to `device`; `body` is JSON text.
    func request(_ device: Int, _ method: String, _ path: String, _ body: String? = nil) async throws -> HTTPResult {
        try await SocketHTTPClient.request(socket: sockets[device], method, path, body: body.map { Array($0.utf8) })
    }

    /// The account's first device: device 0.
    func createAccount(_ user: String) async throws {
        let token = try await relay.identityToken(for: user) { try await self.request(0, "POST", $0) }
        let created = try await request(0, "POST", "/v1/accounts", Self.json(["user": user, "passphrase": "p0", "identityToken": token]))
        guard created.status == 200 else { throw BenchError("create \(user): \(created.text)") }
    }

    /// `device` asks to join; returns once device 0 lists the request.
    func requestEnrollment(_ user: String, device: Int) async throws -> (deviceID: String, code: String) {
        let token = try await relay.identityToken(for: user) { try await self.request(device, "POST", $0) }
        let ticket = try await request(device, "POST", "/v1/accounts/\(user)/enroll",
                                       Self.json(["passphrase": "p\(device)", "deviceName": "device\(device)", "identityToken": token]))
        let fields = ticket.object
        guard let deviceID = fields["deviceId"] as? String, let code = fields["pairingCode"] as? String else {
            throw BenchError("enroll \(user) on device \(device): \(ticket.text)")
        }
        // Device 0 must have seen the request before it can approve it.
        let end = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < end {
            if try await request(0, "GET", "/v1/accounts/\(user)/enrollments").text.contains(deviceID) { return (deviceID, code) }
            try await Task.sleep(for: .milliseconds(2))
        }
        throw BenchError("device 0 never listed the enrollment of device \(device) for \(user)")
    }

    func approve(_ user: String, deviceID: String, code: String) async throws -> HTTPResult {
        try await request(0, "POST", "/v1/accounts/\(user)/enrollments/\(deviceID)/approve", #"{"pairingCode":"\#(code)"}"#)
    }

    /// Enrolls `device` and returns once it holds the account's current key.
    func enroll(_ user: String, device: Int) async throws {
        let (deviceID, code) = try await requestEnrollment(user, device: device)
        let end = ContinuousClock.now + .seconds(20)
        while true {
            let approved = try await approve(user, deviceID: deviceID, code: code)
            if approved.status == 200 { break }
            // The new device's answer to the challenge may not have reached device 0 yet.
            guard approved.status == 400, approved.text.contains("not answered yet"), ContinuousClock.now < end else {
                throw BenchError("approve device \(device) for \(user): \(approved.text)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        let key = try await request(device, "GET", "/v1/accounts/\(user)/keys/current?wait=30")
        guard key.status == 200 else { throw BenchError("device \(device) never got the key of \(user): \(key.text)") }
    }

    /// Device 0 creates the account and every other device enrolls and receives the key.
    func createAndEnrollAll(_ user: String) async throws {
        try await createAccount(user)
        for device in sockets.indices.dropFirst() { try await enroll(user, device: device) }
    }
}

extension HTTPResult {
    /// The body as a JSON object (empty if it is not one).
    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }
}

/// Runs `body` on indices 0..<count with `workers` at a time, each worker with
/// its own keep-alive connection to `socket`; stops taking new indices once
/// `proceed` says no. Returns the results in index order, nil where not run.
func concurrently<R: Sendable>(_ count: Int, workers: Int, socket: String, while proceed: @escaping @Sendable () -> Bool = { true },
                               _ body: @escaping @Sendable (Int, KeepAliveConnection) async throws -> R) async throws -> [R?] {
    let next = Counter()
    let results = try await withThrowingTaskGroup(of: [(Int, R)].self) { group in
        for _ in 0..<min(workers, count) {
            group.addTask {
                let connection = KeepAliveConnection(socket: socket)
                var done: [(Int, R)] = []
                while proceed() {
                    let index = next.take()
                    guard index < count else { break }
                    done.append((index, try await body(index, connection)))
                }
                await connection.close()
                return done
            }
        }
        var all: [(Int, R)] = []
        for try await part in group { all += part }
        return all
    }
    var out = [R?](repeating: nil, count: count)
    for (index, result) in results { out[index] = result }
    return out
}

/// Hands out 0, 1, 2, … to concurrent workers.
final class Counter: Sendable {
    private let value = Mutex(0)

    func take() -> Int {
        value.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}

/// Checks `condition` up to `attempts` times, `interval` apart, until it holds;
/// answers whether it held. (Not `for … where`: that goes on checking, without
/// sleeping, after the condition turns — for a socket, one connection per check.)
func poll(_ attempts: Int, every interval: Duration, until condition: @Sendable () -> Bool) async throws -> Bool {
    for _ in 0..<attempts {
        if condition() { return true }
        try await Task.sleep(for: interval)
    }
    return condition()
}

/// Set once, read from anywhere.
final class Flag: Sendable {
    private let value = Mutex(false)

    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
