import Foundation
import Logging
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

/// Where a bench's devices keep their relay: one SQLite file, or the relay
/// service (`keyvault-relay`, started here) on a fresh database of the
/// PostgreSQL server named by KEYVAULT_TEST_POSTGRES (`make bench` starts a
/// throwaway cluster and sets it). Each device has its own connection to it,
/// as separate daemons would.
struct BenchRelay: Sendable {
    enum Kind: String, Sendable, CaseIterable {
        case sqlite = "SQLite (embedded)"
        case postgres = "relay service (PostgreSQL, loopback)"
    }

    let kind: Kind
    /// A device's `--relay`: the file, or the service's URL.
    let address: String
    /// The store itself, as an operator (or a crowd of other accounts) writes it: the file, or the database.
    let storeAddress: String
    /// The server and database to drop afterwards (PostgreSQL only).
    private let database: (server: String, name: String)?
    /// The service and the issuer its accounts are bound to (the service only).
    private let service: Process?
    let issuer: TestIdentityIssuer?
    /// The service's log (its access lines among it; the service only).
    var serviceLogPath: String? = nil

    /// A relay file in `directory` (created if missing).
    static func sqlite(in directory: String) throws -> BenchRelay {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let address = "sqlite:" + directory + "/relay.sqlite"
        return BenchRelay(kind: .sqlite, address: address, storeAddress: address, database: nil, service: nil, issuer: nil)
    }

    /// A fresh database on the server, created with psql (as the integration tests do); with
    /// `service`, a `keyvault-relay` on it (beside this binary) that the devices reach.
    /// `relayBinary`: the service to start (default: the `keyvault-relay` beside this binary).
    /// `launcher`: a command the service is started under (`valgrind --tool=callgrind …`), its pid the service's.
    static func postgres(server: String, service: Bool, relayBinary: String? = nil, launcher: [String] = []) async throws -> BenchRelay {
        guard var url = URLComponents(string: server) else { throw BenchError("KEYVAULT_TEST_POSTGRES is not a URL: \(server)") }
        let name = "kv_bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        try psql(server, "CREATE DATABASE \(name)")
        url.path = "/" + name
        let store = url.string!
        guard service else {
            return BenchRelay(kind: .postgres, address: store, storeAddress: store, database: (server, String(name)), service: nil, issuer: nil)
        }
        let folder = NSTemporaryDirectory() + "keyvault-bench-issuer-\(name)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let issuer = try await TestIdentityIssuer.make(in: folder)
        let (process, port) = try await startService(store: store, issuer: issuer, log: folder + "/relay.log", binary: relayBinary, launcher: launcher)
        return BenchRelay(kind: .postgres, address: "http://127.0.0.1:\(port)", storeAddress: store, database: (server, String(name)),
                          service: process, issuer: issuer, serviceLogPath: folder + "/relay.log")
    }

    /// The PostgreSQL store (through the service when `service`) if KEYVAULT_TEST_POSTGRES is set and a database can be created; else why not.
    static func postgresFromEnvironment(service: Bool, relayBinary: String? = nil, launcher: [String] = []) async -> Result<BenchRelay, BenchError> {
        guard let server = ProcessInfo.processInfo.environment["KEYVAULT_TEST_POSTGRES"], !server.isEmpty else {
            return .failure(BenchError("KEYVAULT_TEST_POSTGRES is not set (`make bench` starts a throwaway cluster and sets it)"))
        }
        do {
            return .success(try await postgres(server: server, service: service, relayBinary: relayBinary, launcher: launcher))
        } catch {
            return .failure(BenchError("could not start the PostgreSQL relay on KEYVAULT_TEST_POSTGRES: \(error)"))
        }
    }

    /// The service's process id (the service only).
    var servicePID: Int32? { service?.processIdentifier }

    /// A connection to the store itself (not through the service).
    func open() async throws -> any Relay {
        try await RelayAddress(parsing: storeAddress).openStore()
    }

    /// One device's own relay, as `keyvaultd --relay address` makes it.
    static func deviceRelay(_ address: String, logger: Logger) async throws -> (relay: any Relay, credentials: RelayCredentials?) {
        switch try RelayAddress(parsing: address) {
        case .service(let urls):
            let credentials = RelayCredentials()
            return (try HTTPRelay(urls: urls, certificateAuthority: nil, credentials: credentials, logger: logger), credentials)
        case let store:
            return (try await store.openStore(logger: logger), nil)
        }
    }

    /// With the service: the sign-in an app would do for `user` on the device at `socket`.
    func identityToken(for user: String, device request: (String) async throws -> HTTPResult) async throws -> String? {
        guard let issuer else { return nil }
        let answer = try await request("/v1/accounts/\(user)/identity-nonce")
        guard let nonce = answer.object["nonce"] as? String else { throw BenchError("identity-nonce for \(user): \(answer.text)") }
        return try await issuer.token(account: user, nonce: nonce)
    }

    /// A device of its own that founds `account` through the service, as a daemon does: its
    /// signer, the person's token for its keys (a candidacy), then its genesis. Answers its
    /// client (to shut down), its circle, and its key and device ID to sign with.
    func foundAccount(_ account: AccountID, logger: Logger) async throws -> (client: HTTPRelay, circle: CircleState, signing: SigningKey, deviceID: DeviceID) {
        guard let issuer else { throw BenchError("founding through the service needs the service") }
        let signing = SigningKey.generate(), box = BoxSecretKey.generate()
        let keys = DeviceKeys(signing: signing.publicKey, box: box.publicKey, name: account.rawValue)
        let credentials = RelayCredentials()
        credentials.set(account, signer: .init(key: signing, box: box.publicKey, deviceID: keys.deviceID))
        credentials.present(identityToken: try await issuer.token(account: account.rawValue, nonce: IdentityNonce.of(signing: keys.signing, box: keys.box)),
                            for: account)
        let client = try HTTPRelay(urls: [address], certificateAuthority: nil, credentials: credentials, logger: logger)
        var circle = CircleState(account: account)
        let genesis = circle.nextEntry(.genesis(device: keys, generation: 1, keyID: KeyID(hash: Random.bytes(16)), keyCreatedAt: 0),
                                       signer: signing, signerID: keys.deviceID, at: Date())
        try circle.apply(genesis)
        try await client.publish(.log(genesis))
        credentials.present(identityToken: nil, for: account)
        return (client, circle, signing, keys.deviceID)
    }

    /// Stops the service and drops the database (the SQLite file goes with its directory).
    func remove() {
        if let service, service.isRunning {
            service.terminate()
            service.waitUntilExit()
        }
        if let database { try? Self.psql(database.server, "DROP DATABASE IF EXISTS \(database.name) WITH (FORCE)") }
    }

    /// `keyvault-relay` on 127.0.0.1, an ephemeral port read from its "listening on" line.
    private static func startService(store: String, issuer: TestIdentityIssuer, log: String, binary: String?, launcher: [String]) async throws -> (Process, Int) {
        let binary = binary ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/keyvault-relay"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        let command = launcher + [binary, "--store", store, "--listen", "127.0.0.1:0", "--plain-http"] + issuer.relayArguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardOutput = FileHandle(forWritingAtPath: log)
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        // Under valgrind a start takes many times as long.
        for _ in 0..<(launcher.isEmpty ? 400 : 6000) {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains("listening on") }),
               let port = line.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
                return (process, port)
            }
            guard process.isRunning else { throw BenchError("keyvault-relay exited: \(text)") }
            try await Task.sleep(for: .milliseconds(25))
        }
        process.terminate()
        throw BenchError("keyvault-relay did not start listening (\(binary))")
    }

    private static func psql(_ server: String, _ statement: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = [server, "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", statement]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw BenchError("psql \(statement): \(text.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
