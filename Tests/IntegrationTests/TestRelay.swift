import Foundation
import KeyVaultTestSupport
#if canImport(Glibc)
import Glibc
#endif
import KeyVault
import KeyVaultEngine
import KeyVaultPolicy
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultAccount
import KeyVaultVault
import KeyVaultRelay
import KeyVaultRelayClient
import KeyVaultRelayStore

/// The relays the multi-device suites run against: each test runs once per kind.
/// `service`: two `keyvault-relay` instances on one PostgreSQL database, the
/// devices spread over both (each lists the other instance to fail over to).
enum RelayKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, service
    var testDescription: String { rawValue }
}

/// One test's relay store: a SQLite file in the test's folder, or a fresh
/// database on the test PostgreSQL server (`make test` starts one and sets
/// KEYVAULT_TEST_POSTGRES; without it the PostgreSQL cases fail, they do not skip).
struct TestRelayStore: Sendable {
    let kind: RelayKind
    /// `--relay` for a daemon (with a service: its first instance).
    var address: String { kind == .sqlite ? "sqlite:" + sqlitePath : services[0].base }
    /// The store itself: the SQLite file, or the PostgreSQL database behind the service.
    var storeAddress: String { kind == .sqlite ? "sqlite:" + sqlitePath : databaseURL }
    /// A `--relay` of the same kind that cannot be reached: a daemon given it is cut off.
    let unreachableAddress: String
    private let sqlitePath: String
    private let databaseURL: String
    /// The service's instances, and the issuer its accounts are bound to.
    let services: [RelayServiceProcess]
    let issuer: TestIdentityIssuer?

    /// The records table, as the tests' SQL names it.
    var table: String { kind == .sqlite ? "records" : "keyvault_records" }

    /// `--relay` options for the `index`th device: with a service, one instance first
    /// and the other to fail over to, alternating, so devices are spread over both.
    func addresses(forDevice index: Int) -> [String] {
        guard kind == .service else { return [address] }
        let first = index % services.count
        return [services[first].base] + services.indices.filter { $0 != first }.map { services[$0].base }
    }

    /// Stops the service's instances (nothing to do for a file).
    func stop() {
        for service in services { service.remove() }
    }

    /// `startingService: false`: only the store (a PostgreSQL database for `.service`), for a test that starts its own.
    /// `serviceArguments`: more options for the service's instances.
    static func make(_ kind: RelayKind, in root: String, startingService: Bool = true, serviceArguments: [String] = []) async throws -> TestRelayStore {
        let path = root + "/relay.sqlite"
        switch kind {
        case .sqlite:
            return TestRelayStore(kind: kind, unreachableAddress: "sqlite:" + root + "/not-mounted/relay.sqlite",
                                  sqlitePath: path, databaseURL: "", services: [], issuer: nil)
        case .service:
            guard let server = ProcessInfo.processInfo.environment["KEYVAULT_TEST_POSTGRES"], var url = URLComponents(string: server) else {
                throw TestFailure("KEYVAULT_TEST_POSTGRES is not set: run `make test`, or scripts/with-test-postgres.sh swift test …")
            }
            let database = "kv_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            let created = try await run("/usr/bin/psql", [server, "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", "CREATE DATABASE \(database)"])
            guard created.status == 0 else { throw TestFailure("psql: \(created.err)") }
            url.path = "/" + database
            let issuer = try await TestIdentityIssuer.make(in: root)
            var services: [RelayServiceProcess] = []
            for index in 0..<(startingService ? 2 : 0) {
                services.append(try await RelayServiceProcess.start(store: url.string!, issuer: issuer, root: root, name: "relay-\(index)",
                                                                    arguments: serviceArguments))
            }
            // Nothing listens on port 1.
            return TestRelayStore(kind: kind, unreachableAddress: "http://127.0.0.1:1", sqlitePath: "", databaseURL: url.string!,
                                  services: services, issuer: issuer)
        }
    }

    /// The test's own connection to the store, to play the untrusted relay (or its operator).
    func open() async throws -> any Relay {
        try await RelayAddress(parsing: storeAddress).openStore()
    }

    /// Everything the store holds, as bytes to scan: the SQLite files, or the
    /// PostgreSQL table as `COPY` writes it (bytea in hex).
    func dump(root: String) async throws -> Data {
        switch kind {
        case .sqlite:
            var out = Data()
            for name in try FileManager.default.contentsOfDirectory(atPath: root) where name.hasPrefix("relay.sqlite") {
                out += try Data(contentsOf: URL(fileURLWithPath: root + "/" + name))
            }
            return out
        case .service:
            let result = try await run("/usr/bin/psql", [databaseURL, "-X", "-qAt", "-c", "COPY \(table) TO STDOUT"])
            #expect(result.status == 0, "psql: \(result.err)")
            return Data(result.out.utf8)
        }
    }

    /// Runs SQL on the store (sqlite3 or psql).
    func sql(_ statement: String) async throws {
        let result = kind == .sqlite
            ? try await run("/usr/bin/sqlite3", [sqlitePath, statement])
            : try await run("/usr/bin/psql", [databaseURL, "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", statement])
        #expect(result.status == 0, "\(kind) SQL failed: \(result.err)")
    }
}
