import Foundation
import Testing
import KeyVaultTestSupport
import KeyVaultClient
#if canImport(Glibc)
import Glibc
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore
#endif

/// A real `keyvaultd` in a temporary folder: its own data directory, policy
/// folder, socket and log file.
final class DaemonProcess: @unchecked Sendable {
    /// A policy with a cheap KDF so suites run fast; `kdf-test` exists for this.
    static let testPolicy = """
        [kdf-test]
        passes = 1
        memory_kib = 64

        [[rule]]
        uid = "self"
        accounts = ["*"]
        allow = ["*"]
        """

    let root: String
    var dataDirectory: String { root + "/data" }
    var policyDirectory: String { root + "/policy" }
    var socket: String { root + "/kv.sock" }
    var logPath: String { root + "/daemon.log" }
    private(set) var process: ChildProcess?
    /// `--relay` options for this daemon (several: instances of one relay service).
    var relays: [String] = []
    /// `--relay` for this daemon, if any (the first of several).
    var relay: String? {
        get { relays.first }
        set { relays = newValue.map { [$0] } ?? [] }
    }
    /// With a relay service: the test's issuer, whose tokens this device's
    /// account creations and enrollments carry as a person's sign-in would.
    var identityIssuer: TestIdentityIssuer?
    /// The identity tokens this device's requests carried, for tests that look for them where they must not be.
    private(set) var presentedTokens: [String] = []

    init(policy: String = DaemonProcess.testPolicy, relay: String? = nil) throws {
        relays = relay.map { [$0] } ?? []
        var template = Array("/tmp/kvtest-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
        root = String(cString: made)
        try FileManager.default.createDirectory(atPath: policyDirectory, withIntermediateDirectories: true)
        try writePolicy(policy)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
    }

    func writePolicy(_ text: String, file: String = "test.toml") throws {
        try text.write(toFile: policyDirectory + "/" + file, atomically: true, encoding: .utf8)
    }

    static var binaryDirectory: String {
        if let dir = ProcessInfo.processInfo.environment["KEYVAULT_BIN_DIR"] { return dir }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
        if FileManager.default.fileExists(atPath: beside + "/keyvaultd") { return beside }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.path + "/.build/debug"
    }

    /// Starts the daemon and waits until it answers on its socket. `launcher`: a
    /// command that execs the daemon in the same process (`prlimit … --`), so
    /// `process.pid` is the daemon's.
    func start(extraArguments: [String] = [], environment: [String: String] = [:], launcher: [String] = [], waitUntilReady: Bool = true) async throws {
        let command = launcher + [Self.binaryDirectory + "/keyvaultd"]
            + ["--data-dir", dataDirectory, "--socket", socket, "--policy", policyDirectory] + relays.flatMap { ["--relay", $0] } + extraArguments
        let process = try ChildProcess(command[0], Array(command.dropFirst()), environment: environment, stdoutPath: logPath, stderrPath: logPath)
        self.process = process
        guard waitUntilReady else { return }
        // A start takes about 20 ms: asked every 3 ms, the test goes on as soon as it is ready.
        let end = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < end {
            if let status = process.poll() { throw TestFailure("keyvaultd exited with \(status): \(logText())") }
            if let reply = try? await request("GET", "/v1/health"), reply.status == 200 { return }
            try await Task.sleep(for: .milliseconds(3))
        }
        throw TestFailure("keyvaultd did not become ready: \(logText())")
    }

    /// Waits until the daemon holds at least `count` waiting reads (`/v1/server` counts them): a
    /// condition, where a fixed sleep would guess how long a request takes to arrive.
    func waitUntilHolding(reads count: Int = 1) async throws {
        try await eventually {
            let held = try await self.request("GET", "/v1/server").object["held"] as? [String: Any]
            return (held?["waitingReads"] as? Int ?? 0) >= count
        }
    }

    /// SIGTERM and wait; returns the exit status.
    @discardableResult
    func stop() async -> Int32 {
        guard let process else { return 0 }
        process.signal(SIGTERM)
        return await process.wait()
    }

    func kill9() async {
        guard let process else { return }
        process.signal(SIGKILL)
        _ = await process.wait()
    }

    func signal(_ number: Int32) {
        process?.signal(number)
    }

    func request(_ method: String, _ path: String, json: [String: Any]? = nil, headers: [(String, String)] = []) async throws -> Reply {
        var json = json
        if let issuer = identityIssuer, method == "POST", var fields = json, fields["identityToken"] == nil,
           let account = Self.signInAccount(path: path, fields: fields) {
            // What an app does: ask the daemon for the nonce, sign in with it, pass the token on.
            let nonce = try await request("POST", "/v1/accounts/\(account)/identity-nonce")
            if let value = nonce["nonce"] {
                let token = try await issuer.token(account: account, nonce: value)
                presentedTokens.append(token)
                fields["identityToken"] = token
                json = fields
            }
        }
        let body = try json.map { [UInt8](try JSONSerialization.data(withJSONObject: $0)) }
        let result = try await client.send(method, path, body: body, headers: headers)
        APIRecord.shared?.append(method: method, path: path, result)
        return Reply(result)
    }

    /// The client library, as apps use it.
    var client: KeyVaultClient { KeyVaultClient(socketPath: socket) }

    /// The account a creation or an enrollment names (nil: another request).
    private static func signInAccount(path: String, fields: [String: Any]) -> String? {
        if path == "/v1/accounts" { return fields["user"] as? String }
        let parts = path.split(separator: "/")
        if parts.count == 4, parts[0] == "v1", parts[1] == "accounts", parts[3] == "enroll" || parts[3] == "circle" { return String(parts[2]) }
        return nil
    }

    func logText() -> String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Kills the daemon if it still runs (synchronously: for `defer`) and removes the folder.
    func remove() {
        process?.killAndReap()
        try? FileManager.default.removeItem(atPath: root)
    }
}

struct Reply: @unchecked Sendable {
    let status: Int
    let object: [String: Any]
    let raw: HTTPResult

    init(_ result: HTTPResult) {
        raw = result
        status = result.status
        object = (try? JSONSerialization.jsonObject(with: Data(result.body))) as? [String: Any] ?? [:]
    }

    var state: String? { object["state"] as? String }
    subscript(_ key: String) -> String? { object[key] as? String }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

