import Foundation
import KeyVault
import Testing
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore

/// The relays the multi-device suites run against: each test runs once per kind.
enum RelayKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// One test's relay store: a SQLite file in the test's folder, or a fresh
/// database on the test PostgreSQL server (`make test` starts one and sets
/// KEYVAULT_TEST_POSTGRES; without it the PostgreSQL cases fail, they do not skip).
struct TestRelayStore: Sendable {
    let kind: RelayKind
    /// `--relay` for a daemon.
    let address: String
    /// A `--relay` of the same kind that cannot be reached: a daemon given it is cut off.
    let unreachableAddress: String
    private let sqlitePath: String
    private let databaseURL: String

    /// The records table, as the tests' SQL names it.
    var table: String { kind == .sqlite ? "records" : "keyvault_records" }

    static func make(_ kind: RelayKind, in root: String) async throws -> TestRelayStore {
        let path = root + "/relay.sqlite"
        switch kind {
        case .sqlite:
            return TestRelayStore(kind: kind, address: "sqlite:" + path, unreachableAddress: "sqlite:" + root + "/not-mounted/relay.sqlite",
                                  sqlitePath: path, databaseURL: "")
        case .postgres:
            guard let server = ProcessInfo.processInfo.environment["KEYVAULT_TEST_POSTGRES"], var url = URLComponents(string: server) else {
                throw TestFailure("KEYVAULT_TEST_POSTGRES is not set: run `make test`, or scripts/with-test-postgres.sh swift test …")
            }
            let database = "kv_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            let created = try await run("/usr/bin/psql", [server, "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", "CREATE DATABASE \(database)"])
            guard created.status == 0 else { throw TestFailure("psql: \(created.err)") }
            url.path = "/" + database
            var dead = url
            dead.port = 1  // nothing listens on port 1
            return TestRelayStore(kind: kind, address: url.string!, unreachableAddress: dead.string!, sqlitePath: "", databaseURL: url.string!)
        }
    }

    /// The test's own connection to the store, to play the untrusted relay.
    func open() async throws -> any Relay {
        try await RelayAddress(parsing: address).open()
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
        case .postgres:
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
