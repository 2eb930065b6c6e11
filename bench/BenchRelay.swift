import Foundation
import KeyVault
import KeyVaultCrypto
import KeyVaultProtocol
import KeyVaultStore

/// Where a bench's in-process devices keep their relay: one SQLite file, or a
/// fresh database on the PostgreSQL server named by KEYVAULT_TEST_POSTGRES
/// (`make bench` starts a throwaway cluster and sets it). Each device opens
/// its own connection to it, as separate daemons would.
struct BenchRelay: Sendable {
    enum Kind: String, Sendable, CaseIterable {
        case sqlite = "SQLite (embedded)"
        case postgres = "PostgreSQL (loopback)"
    }

    let kind: Kind
    /// A `--relay` address.
    let address: String
    /// The server and database to drop afterwards (PostgreSQL only).
    private let database: (server: String, name: String)?

    /// A relay file in `directory` (created if missing).
    static func sqlite(in directory: String) throws -> BenchRelay {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return BenchRelay(kind: .sqlite, address: "sqlite:" + directory + "/relay.sqlite", database: nil)
    }

    /// A fresh database on the server, created with psql (as the integration tests do).
    static func postgres(server: String) throws -> BenchRelay {
        guard var url = URLComponents(string: server) else { throw BenchError("KEYVAULT_TEST_POSTGRES is not a URL: \(server)") }
        let name = "kv_bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        try psql(server, "CREATE DATABASE \(name)")
        url.path = "/" + name
        return BenchRelay(kind: .postgres, address: url.string!, database: (server, String(name)))
    }

    /// The PostgreSQL relay if KEYVAULT_TEST_POSTGRES is set and a database can be created; else why not.
    static func postgresFromEnvironment() -> Result<BenchRelay, BenchError> {
        guard let server = ProcessInfo.processInfo.environment["KEYVAULT_TEST_POSTGRES"], !server.isEmpty else {
            return .failure(BenchError("KEYVAULT_TEST_POSTGRES is not set (`make bench` starts a throwaway cluster and sets it)"))
        }
        do {
            return .success(try postgres(server: server))
        } catch {
            return .failure(BenchError("could not create a database on KEYVAULT_TEST_POSTGRES: \(error)"))
        }
    }

    /// One device's own connection to the relay.
    func open() async throws -> any Relay {
        try await RelayAddress(parsing: address).open()
    }

    /// Drops the database (the SQLite file goes with its directory).
    func remove() {
        if let database { try? Self.psql(database.server, "DROP DATABASE IF EXISTS \(database.name) WITH (FORCE)") }
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
