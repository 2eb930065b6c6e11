import Foundation
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

@Suite("RelayAddress: parsing --relay")
struct RelayAddressTests {
    let noEnv: [String: String] = [:]

    @Test("sqlite paths as before")
    func sqlite() throws {
        #expect(try RelayAddress(parsing: "sqlite:/x/relay.db", environment: noEnv) == .sqlite(path: "/x/relay.db"))
        #expect(try RelayAddress(parsing: "/x/relay.db", environment: noEnv) == .sqlite(path: "/x/relay.db"))
        #expect(throws: RelayError.badAddress("sqlite: needs a path")) { try RelayAddress(parsing: "sqlite:", environment: noEnv) }
        #expect(throws: RelayError.badAddress("empty")) { try RelayAddress(parsing: "", environment: noEnv) }
        #expect(throws: RelayError.self) { try RelayAddress(parsing: "mysql://h/db", environment: noEnv) }
    }

    @Test("relay service URLs: https anywhere, plain http only on this machine, several to fail over")
    func service() throws {
        #expect(try RelayAddress(parsing: "https://relay.example:8443", environment: noEnv) == .service(urls: ["https://relay.example:8443"]))
        #expect(try RelayAddress(parsing: "http://127.0.0.1:9000", environment: noEnv) == .service(urls: ["http://127.0.0.1:9000"]))
        #expect(throws: RelayError.self) { try RelayAddress(parsing: "http://relay.example:9000", environment: noEnv) }
        #expect(throws: RelayError.self) { try RelayAddress(parsing: "https://relay.example/v1", environment: noEnv) }
        #expect(throws: RelayError.self) { try RelayAddress(parsing: "https://user@relay.example", environment: noEnv) }
        // A port out of range is refused where it enters, not wrapped by the HTTP client (65536 was port 0).
        for port in ["0", "65536", "99999999999999999999", "", "-1", "x"] {
            #expect(throws: RelayError.self) { try RelayAddress(parsing: "https://relay.example:\(port)", environment: noEnv) }
        }
        #expect(try RelayAddress(parsing: "https://[::1]:65535", environment: noEnv) == .service(urls: ["https://[::1]:65535"]))
        #expect(try RelayAddress(parsing: "http://[::1]", environment: noEnv) == .service(urls: ["http://[::1]"]))
        let both = try RelayAddress(parsing: ["https://a.example", "https://b.example"], environment: noEnv)
        #expect(both == .service(urls: ["https://a.example", "https://b.example"]))
        #expect(throws: RelayError.self) { try RelayAddress(parsing: ["https://a.example", "sqlite:/x"], environment: noEnv) }
    }

    @Test("a full postgres URL, percent-decoded")
    func full() throws {
        let address = try RelayAddress(parsing: "postgres://kv%40app:p%3Ass%2Fw@db.example:6543/relay%20one", environment: noEnv)
        #expect(address == .postgres(PostgresRelayConfiguration(
            host: "db.example", port: 6543, user: "kv@app", password: "p:ss/w", database: "relay one")))
        let alias = try RelayAddress(parsing: "postgresql://u@h/d", environment: noEnv)
        #expect(alias == .postgres(PostgresRelayConfiguration(host: "h", port: 5432, user: "u", database: "d")))
    }

    @Test("what the URL leaves out comes from PG* variables, then the defaults")
    func environment() throws {
        let env = ["PGHOST": "pg.internal", "PGPORT": "7000", "PGUSER": "envuser", "PGPASSWORD": "envsecret", "PGDATABASE": "envdb"]
        guard case .postgres(let fromEnv) = try RelayAddress(parsing: "postgres://", environment: env) else { Issue.record("not postgres"); return }
        #expect(fromEnv == PostgresRelayConfiguration(host: "pg.internal", port: 7000, user: "envuser", password: "envsecret", database: "envdb"))

        guard case .postgres(let urlWins) = try RelayAddress(parsing: "postgres://a:b@c:1/d", environment: env) else { Issue.record("not postgres"); return }
        #expect(urlWins == PostgresRelayConfiguration(host: "c", port: 1, user: "a", password: "b", database: "d"))

        guard case .postgres(let defaults) = try RelayAddress(parsing: "postgres://", environment: noEnv) else { Issue.record("not postgres"); return }
        let me = String(cString: getpwuid(geteuid())!.pointee.pw_name)
        #expect(defaults == PostgresRelayConfiguration(host: "localhost", port: 5432, user: me, password: nil, database: me))

        guard case .postgres(let dbIsUser) = try RelayAddress(parsing: "postgres://alice@h", environment: noEnv) else { Issue.record("not postgres"); return }
        #expect(dbIsUser.database == "alice")
    }

    @Test("a host starting with / is a Unix socket directory, from the URL or ?host=")
    func unixSocket() throws {
        guard case .postgres(let viaQuery) = try RelayAddress(parsing: "postgres://kv@/relay?host=/run/postgresql&port=5433", environment: noEnv) else {
            Issue.record("not postgres"); return
        }
        #expect(viaQuery.host == "/run/postgresql")
        #expect(viaQuery.unixSocketPath == "/run/postgresql/.s.PGSQL.5433")
        #expect(viaQuery.database == "relay")
        guard case .postgres(let encoded) = try RelayAddress(parsing: "postgres://kv@%2Ftmp%2Fpg/relay", environment: noEnv) else {
            Issue.record("not postgres"); return
        }
        #expect(encoded.unixSocketPath == "/tmp/pg/.s.PGSQL.5432")
        guard case .postgres(let env) = try RelayAddress(parsing: "postgres://kv@/relay", environment: ["PGHOST": "/var/run/postgresql"]) else {
            Issue.record("not postgres"); return
        }
        #expect(env.unixSocketPath == "/var/run/postgresql/.s.PGSQL.5432")
        guard case .postgres(let tcp) = try RelayAddress(parsing: "postgres://kv@[::1]:5999/relay", environment: noEnv) else {
            Issue.record("not postgres"); return
        }
        #expect(tcp.host == "::1" && tcp.port == 5999 && tcp.unixSocketPath == nil)
    }

    @Test("bad URLs are refused in words")
    func bad() {
        #expect(throws: RelayError.self) { try RelayAddress(parsing: "postgres://u@h:notaport/d", environment: [:]) }
        #expect(throws: RelayError.self) { try RelayAddress(parsing: "postgres://u@h:70000/d", environment: [:]) }
        #expect(throws: RelayError.self) { try RelayAddress(parsing: "postgres://u@h/d?frobnicate=1", environment: [:]) }
        #expect(throws: RelayError.self) { try RelayAddress(parsing: "postgres://u@h/d?sslmode=sometimes", environment: [:]) }
        #expect(throws: RelayError.self) { try RelayAddress(parsing: "postgres://u@[::1/d", environment: [:]) }
    }

    @Test("descriptions never show the password")
    func redaction() throws {
        let secret = "hunter2-Secret"
        let fromURL = try RelayAddress(parsing: "postgres://kv:\(secret)@db:5432/relay", environment: noEnv)
        #expect(!"\(fromURL)".contains(secret))
        #expect(!String(reflecting: fromURL).contains(secret))
        var dumped = ""
        dump(fromURL, to: &dumped)
        #expect(!dumped.contains(secret))
        #expect("\(fromURL)" == "postgres://kv:***@db:5432/relay")
        let fromEnv = try RelayAddress(parsing: "postgres://kv@db/relay", environment: ["PGPASSWORD": secret])
        #expect("\(fromEnv)" == "postgres://kv:***@db:5432/relay")
        guard case .postgres(let configuration) = fromEnv else { Issue.record("not postgres"); return }
        #expect(configuration.password == secret)
        #expect(!configuration.description.contains(secret))
        let bad = #expect(throws: RelayError.self) { try RelayAddress(parsing: "postgres://kv:\(secret)%zz@db/relay", environment: [:]) }
        #expect(!"\(bad.map { "\($0)" } ?? "")".contains(secret))
        let noPassword = try RelayAddress(parsing: "postgres://kv@db/relay", environment: noEnv)
        #expect("\(noPassword)" == "postgres://kv@db:5432/relay")
    }
}
